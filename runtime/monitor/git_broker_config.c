/* The git credential broker's set-up at create: its annotation read
 * strictly, its secrets taken from create's memory, its socket bound in
 * the caller's directory.  See git_broker.h. */
#include "config.h"
#include "git_broker.h"

#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "container.h"
#include "haven_annotations.h"
#include "json_walk.h"
#include "service_socket.h"
#include "utils.h"

#define MAX_HOSTS 64
#define NAME_MAX_LEN 253
#define PATH_MAX_LEN 1024

/* What the policy layer writes for a host: lower case, no port, nothing
 * a URL or git's credential matching would read differently. */
static bool
valid_host (const char *s)
{
  size_t n = strlen (s);
  if (n == 0 || n > NAME_MAX_LEN || s[0] == '.' || s[0] == '-')
    return false;
  for (; *s; s++)
    if (!(*s >= 'a' && *s <= 'z') && !(*s >= '0' && *s <= '9') && *s != '.' && *s != '-')
      return false;
  return true;
}

/* A repository path prefix as git sends a path: segments, none empty,
 * "." or "..", no control character, no leading or trailing '/'. */
static bool
valid_path_prefix (const char *p)
{
  return strlen (p) <= PATH_MAX_LEN && hv_git_credential_path_valid (p);
}

static const struct hv_service_secret *
find_secret (const struct hv_service_secret *secrets, size_t n, const char *host)
{
  for (size_t i = 0; i < n; i++)
    if (secrets[i].service && str_has_prefix (secrets[i].service, "git:") && strcmp (secrets[i].service + 4, host) == 0)
      return &secrets[i];
  return NULL;
}

static int
take_host (json_walk *w, yajl_val v, hv_git_broker *b, const struct hv_service_secret *secrets, size_t n_secrets)
{
  static const char *const known[] = { "host", "path", "from", NULL };
  const char *host, *path, *from;
  if (jw_expect_object (w, v) < 0 || jw_only_keys (w, v, known) < 0 || jw_member_string (w, v, "host", true, &host) < 0
      || jw_member_string (w, v, "path", false, &path) < 0 || jw_member_string (w, v, "from", true, &from) < 0)
    return -1;
  if (!valid_host (host))
    return jw_fail_key (w, "host", "\"%s\" is not a lower-case host name without a port", host);
  if (path && !valid_path_prefix (path))
    return jw_fail_key (w, "path", "\"%s\" is not a repository path (segments, none empty, \".\" or \"..\")", path);
  bool from_host = strcmp (from, "host") == 0;
  if (!from_host && strcmp (from, "token") != 0)
    return jw_fail_key (w, "from", "\"%s\" is neither \"token\" nor \"host\"", from);
  for (size_t i = 0; i < b->n_hosts; i++)
    if (strcmp (b->match[i].host, host) == 0)
      return jw_fail_key (w, "host", "%s is listed twice", host);
  const struct hv_service_secret *s = NULL;
  if (!from_host)
    {
      s = find_secret (secrets, n_secrets, host);
      if (s == NULL || s->secret == NULL || s->secret[0] == '\0')
        return jw_fail_key (w, "from", "no token for %s was given to create (service \"git:%s\")", host, host);
      if (strpbrk (s->secret, "\r\n") || (s->username && strpbrk (s->username, "\r\n")))
        return jw_fail_key (w, "from", "the token or username for %s holds a line break", host);
    }
  size_t i = b->n_hosts++;
  b->match[i] = (hv_git_credential_host){ .host = xstrdup (host), .port = 0, .path_prefix = path ? xstrdup (path) : NULL };
  b->hosts[i] = (struct hv_git_broker_host){ .from_host = from_host };
  if (s)
    {
      b->hosts[i].username = xstrdup (s->username && s->username[0] ? s->username : "x-access-token");
      b->hosts[i].secret = xstrdup (s->secret);
    }
  return 0;
}

static int
parse_annotation (const char *json, hv_git_broker *b, const struct hv_service_secret *secrets, size_t n_secrets,
                  char **dir, hv_error **err)
{
  static const char *const known[] = { "dir", "hosts", NULL };
  json_walk w;
  jw_init (&w, "config.json", err);
  jw_push_key (&w, "annotations[\"" HV_GIT_CREDENTIALS_ANNOTATION "\"]");
  if (jw_too_deep (json, 8))
    return jw_fail (&w, "nested too deep");
  yajl_val root = NULL;
  if (jw_parse (&w, json, &root) < 0)
    return -1;
  const char *d;
  int r = jw_expect_object (&w, root);
  if (r == 0)
    r = jw_only_keys (&w, root, known);
  if (r == 0)
    r = jw_member_string (&w, root, "dir", true, &d);
  if (r == 0 && d[0] != '/')
    r = jw_fail_key (&w, "dir", "\"%s\" is not an absolute path", d);
  yajl_val hosts = r == 0 ? jw_lookup (root, "hosts") : NULL;
  if (r == 0 && jw_absent (hosts))
    r = jw_fail_key (&w, "hosts", "required field is missing");
  if (r == 0)
    {
      size_t saved = jw_push_key (&w, "hosts");
      r = jw_expect_array (&w, hosts);
      if (r == 0 && (hosts->u.array.len == 0 || hosts->u.array.len > MAX_HOSTS))
        r = jw_fail (&w, "expected 1 to %d hosts", MAX_HOSTS);
      if (r == 0)
        {
          b->match = xmalloc0 (hosts->u.array.len * sizeof (*b->match));
          b->hosts = xmalloc0 (hosts->u.array.len * sizeof (*b->hosts));
        }
      for (size_t i = 0; r == 0 && i < hosts->u.array.len; i++)
        {
          size_t at = jw_push_index (&w, i);
          r = take_host (&w, hosts->u.array.values[i], b, secrets, n_secrets);
          jw_pop (&w, at);
        }
      jw_pop (&w, saved);
    }
  if (r == 0)
    *dir = xstrdup (d);
  yajl_tree_free (root);
  return r;
}

int
hv_git_broker_prepare (const oci_spec *spec, const struct hv_service_secret *secrets, size_t n_secrets,
                       hv_git_broker **out, hv_error **err)
{
  *out = NULL;
  const char *json = oci_kv_get (&spec->annotations, HV_GIT_CREDENTIALS_ANNOTATION);
  if (json == NULL)
    return 0;
  hv_git_broker *b = xmalloc0 (sizeof (*b));
  b->listen_fd = -1;
  b->read_timeout_ms = 5000;
  b->fill_timeout_ms = 30000;
  cleanup_free char *dir = NULL;
  if (parse_annotation (json, b, secrets, n_secrets, &dir, err) < 0 || (b->listen_fd = hv_service_listen_in (dir, HV_GIT_BROKER_SOCKET, "annotations[\"" HV_GIT_CREDENTIALS_ANNOTATION "\"].dir",
                                                 "git credential broker", err)) < 0)
    {
      hv_git_broker_free (b);
      return -1;
    }
  *out = b;
  return 0;
}

int
hv_git_broker_fd (const hv_git_broker *b)
{
  return b->listen_fd;
}

void
hv_git_broker_set_fd (hv_git_broker *b, int fd)
{
  b->listen_fd = fd;
}
