/* The restricted ssh-agent view in the monitor: its annotation read
 * strictly at create, its socket bound in the caller's directory, its
 * connections served by the monitor's service runner, its sign requests
 * recorded.  See ssh_agent_service.h. */
#include "config.h"
#include "ssh_agent_service.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "haven_annotations.h"
#include "json_gen.h"
#include "json_walk.h"
#include "log.h"
#include "monitor_service.h"
#include "service_socket.h"
#include "utils.h"

#define WHAT "annotations[\"" HV_SSH_AGENT_VIEW_ANNOTATION "\"]"
/* How long the view waits for the sandbox's next message, and for the
 * agent's answer: a key added with ssh-add -c waits for a person. */
#define IDLE_TIMEOUT_MS 30000
#define UPSTREAM_TIMEOUT_MS 60000

static int
parse_annotation (const char *json, hv_ssh_agent_service *s, char **dir, hv_error **err)
{
  json_walk w;
  jw_init (&w, "config.json", err);
  jw_push_key (&w, WHAT);
  if (jw_too_deep (json, 4))
    return jw_fail (&w, "nested too deep");
  yajl_val root = NULL;
  if (jw_parse (&w, json, &root) < 0)
    return -1;
  static const char *const known[] = { "dir", "keys", NULL };
  int r = jw_expect_object (&w, root);
  if (r == 0)
    r = jw_only_keys (&w, root, known);
  if (r == 0)
    r = jw_field_required_string (&w, root, "dir", dir);
  if (r == 0 && (*dir)[0] != '/')
    r = jw_fail_key (&w, "dir", "\"%s\" is not an absolute path", *dir);
  yajl_val keys = r == 0 ? jw_lookup (root, "keys") : NULL;
  if (r == 0 && jw_absent (keys))
    r = jw_fail_key (&w, "keys", "required field is missing");
  if (r == 0)
    {
      size_t saved = jw_push_key (&w, "keys");
      r = jw_expect_array (&w, keys);
      if (r == 0 && (keys->u.array.len == 0 || keys->u.array.len > HV_SSH_AGENT_VIEW_MAX_KEYS))
        r = jw_fail (&w, "expected 1 to %d keys", HV_SSH_AGENT_VIEW_MAX_KEYS);
      if (r == 0)
        s->keys = xmalloc0 (keys->u.array.len * sizeof (*s->keys));
      for (size_t i = 0; r == 0 && i < keys->u.array.len; i++)
        {
          size_t at = jw_push_index (&w, i);
          yajl_val k = keys->u.array.values[i];
          if (!YAJL_IS_STRING (k) || !hv_ssh_fingerprint_valid (k->u.string))
            r = jw_fail (&w, "expected a fingerprint \"SHA256:\" and 43 base64 digits");
          for (size_t j = 0; r == 0 && j < s->n_keys; j++)
            if (strcmp (s->keys[j], k->u.string) == 0)
              r = jw_fail (&w, "%s is listed twice", k->u.string);
          if (r == 0)
            strcpy (s->keys[s->n_keys++], k->u.string);
          jw_pop (&w, at);
        }
      jw_pop (&w, saved);
    }
  yajl_tree_free (root);
  return r;
}

/* The agent the view asks: $SSH_AUTH_SOCK, a socket now (a run whose
 * agent is gone should fail at its start, not at its first git push). */
static int
find_upstream (hv_ssh_agent_service *s, hv_error **err)
{
  const char *sock = getenv ("SSH_AUTH_SOCK");
  if (sock == NULL || sock[0] != '/')
    return hv_error_set (err, 0, "config.json: " WHAT ": the ssh-agent view needs SSH_AUTH_SOCK, an absolute path, "
                                 "in the runtime's environment (it is %s)", sock ? sock : "not set");
  struct stat st;
  if (stat (sock, &st) < 0)
    return hv_error_set (err, errno, "config.json: " WHAT ": SSH_AUTH_SOCK=%s", sock);
  if (!S_ISSOCK (st.st_mode))
    return hv_error_set (err, 0, "config.json: " WHAT ": SSH_AUTH_SOCK=%s is not a socket", sock);
  /* The view connects by the path itself, as the session checked it. */
  if (strlen (sock) >= sizeof (((struct sockaddr_un *) 0)->sun_path))
    return hv_error_set (err, 0, "config.json: " WHAT ": SSH_AUTH_SOCK=%s: path too long", sock);
  s->upstream = xstrdup (sock);
  return 0;
}

static void
on_sign (const char *fingerprint, bool allowed, void *data)
{
  hv_ssh_agent_service *s = data;
  if (s->trail == NULL)
    return;
  /* Past the cap the trail takes only what is new and the final
   * summaries; a sandbox asking in a loop is counted instead. */
  if (s->trail->capped)
    {
      atomic_fetch_add (&s->suppressed, 1);
      return;
    }
  yajl_gen g = hv_audit_trail_record (s->trail, "ssh-sign");
  hv_audit_put_kv (g, "key", fingerprint);
  jg_str (g, "allowed");
  yajl_gen_bool (g, allowed);
  hv_audit_trail_emit (s->trail, g);
}

int
hv_ssh_agent_service_prepare (const oci_spec *spec, hv_ssh_agent_service **out, hv_error **err)
{
  *out = NULL;
  const char *json = oci_kv_get (&spec->annotations, HV_SSH_AGENT_VIEW_ANNOTATION);
  if (json == NULL)
    return 0;
  hv_ssh_agent_service *s = xmalloc0 (sizeof (*s));
  s->listen_fd = -1;
  cleanup_free char *dir = NULL;
  if (parse_annotation (json, s, &dir, err) < 0 || find_upstream (s, err) < 0
      || (s->listen_fd = hv_service_listen_in (dir, HV_SSH_AGENT_VIEW_SOCKET_NAME, WHAT ".dir", "ssh-agent view", err)) < 0)
    {
      hv_ssh_agent_service_free (s);
      return -1;
    }
  s->view = (hv_ssh_agent_view){
    .upstream = s->upstream,
    .allowed = s->keys,
    .n_allowed = s->n_keys,
    .idle_timeout_ms = IDLE_TIMEOUT_MS,
    .upstream_timeout_ms = UPSTREAM_TIMEOUT_MS,
    .on_sign = on_sign,
    .data = s,
  };
  *out = s;
  return 0;
}

int
hv_ssh_agent_service_fd (const hv_ssh_agent_service *s)
{
  return s->listen_fd;
}

void
hv_ssh_agent_service_set_fd (hv_ssh_agent_service *s, int fd)
{
  s->listen_fd = fd;
}

void
hv_ssh_agent_service_serve (int conn, void *data)
{
  hv_ssh_agent_service *s = data;
  cleanup_error hv_error *err = NULL;
  /* Why the view closed a connection is the sandbox's doing, not a
   * failure of the monitor's: said at debug level only. */
  if (hv_ssh_agent_view_serve (conn, &s->view, &err) < 0)
    hv_log (HV_LOG_DEBUG, "ssh-agent view: connection closed: %s", err->msg);
}

int
hv_ssh_agent_service_start (hv_ssh_agent_service *s, struct hv_audit_trail *trail, hv_error **err)
{
  s->trail = trail;
  /* The runner takes the listener, on success and on failure alike. */
  int fd = steal_fd (&s->listen_fd);
  s->service = hv_monitor_service_start ("ssh-agent view", fd, HV_SSH_AGENT_SERVICE_MAX_CONNS,
                                         hv_ssh_agent_service_serve, s, err);
  return s->service ? 0 : -1;
}

void
hv_ssh_agent_service_stop (hv_ssh_agent_service *s)
{
  if (s == NULL || s->service == NULL)
    return;
  hv_monitor_service_stop (s->service);
  s->service = NULL;
  unsigned long n = atomic_exchange (&s->suppressed, 0);
  if (n && s->trail)
    {
      yajl_gen g = hv_audit_trail_record (s->trail, "ssh-sign-suppressed");
      jg_str (g, "count");
      yajl_gen_integer (g, (long long) n);
      hv_audit_trail_emit (s->trail, g);
    }
}

void
hv_ssh_agent_service_free (hv_ssh_agent_service *s)
{
  if (s == NULL)
    return;
  hv_ssh_agent_service_stop (s);
  if (s->listen_fd >= 0)
    close (s->listen_fd);
  free (s->keys);
  free (s->upstream);
  free (s);
}
