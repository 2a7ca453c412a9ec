/* The service's sandboxes: create (from the pool, or by a maker in a
 * child process, answered when its fd says it is done), list, get,
 * delete, idle timeouts, a keeper that ended, and the reaping of the
 * processes that become ours (the service is a child subreaper). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json_gen.h"
#include "policy.h"
#include "policy_load.h"
#include "service_internal.h"
#include "utils.h"

static bool
id_taken (struct svc *s, const char *id)
{
  for (struct svc_sandbox *x = s->sandboxes; x; x = x->next)
    if (strcmp (x->id, id) == 0)
      return true;
  for (struct svc_maker *m = s->makers; m; m = m->next)
    if (strcmp (m->id, id) == 0)
      return true;
  for (size_t i = 0; i < s->n_ended && i < SVC_ENDED_KEEP; i++)
    if (strcmp (s->ended[i], id) == 0)
      return true;
  return false;
}

/* A new id, none of the live, being made or ended sandboxes'. */
void
svc_new_id (struct svc *s, char id[SVC_ID_LEN + 1])
{
  do
    {
      uint16_t v = 0;
      if (getrandom (&v, sizeof (v), 0) != (ssize_t) sizeof (v))
        v = (uint16_t) (svc_now_ms () ^ (uint64_t) getpid ());
      snprintf (id, SVC_ID_LEN + 1, "%s%04x", s->id_prefix, (unsigned) v);
    }
  while (id_taken (s, id));
}

unsigned
svc_user_count (struct svc *s)
{
  unsigned n = 0;
  for (struct svc_sandbox *x = s->sandboxes; x; x = x->next)
    n += x->pool == NULL;
  for (struct svc_maker *m = s->makers; m; m = m->next)
    n += m->pool == NULL;
  return n;
}

/* The pid of a pidfd ("Pid:" in its fdinfo): the sweep must not reap
 * the init of a live sandbox, whose exit its pidfd reports. */
static pid_t
pidfd_pid (int pidfd)
{
  char path[64], line[256];
  snprintf (path, sizeof (path), "/proc/self/fdinfo/%d", pidfd);
  FILE *f = fopen (path, "re");
  pid_t pid = -1;
  if (f == NULL)
    return -1;
  while (fgets (line, sizeof (line), f))
    if (strncmp (line, "Pid:", 4) == 0)
      pid = (pid_t) strtol (line + 4, NULL, 10);
  fclose (f);
  return pid;
}

/* Reap the children that are no one else's: processes of destroyed
 * sandboxes reparented to us.  Never a maker (make_finish reaps it) nor a
 * live sandbox's init (destroy waits for it), so not waitpid (-1). */
static bool
reaped_by_others (struct svc *s, pid_t pid)
{
  for (struct svc_maker *m = s->makers; m; m = m->next)
    if (m->m.pid == pid)
      return true;
  for (struct svc_sandbox *x = s->sandboxes; x; x = x->next)
    if (x->init_pid == pid)
      return true;
  return false;
}

void
svc_reap (struct svc *s)
{
  char path[64];
  snprintf (path, sizeof (path), "/proc/self/task/%d/children", (int) getpid ());
  FILE *f = fopen (path, "re");
  if (f == NULL)
    {
      /* A kernel without the children file: reap the exited children in
       * turn until one that is someone else's comes first. */
      siginfo_t si;
      for (;;)
        {
          si.si_pid = 0;
          if (waitid (P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0
              || reaped_by_others (s, si.si_pid))
            return;
          waitpid (si.si_pid, NULL, WNOHANG);
        }
    }
  long pid;
  pid_t pids[512];
  size_t n = 0;
  while (n < 512 && fscanf (f, "%ld", &pid) == 1)
    pids[n++] = (pid_t) pid;
  fclose (f);
  for (size_t i = 0; i < n; i++)
    if (!reaped_by_others (s, pids[i]))
      waitpid (pids[i], NULL, WNOHANG);
}

struct svc_sandbox *
svc_sandbox_find (struct svc *s, struct svc_conn *c, const char *id)
{
  for (struct svc_sandbox *x = s->sandboxes; x; x = x->next)
    if (x->pool == NULL && strcmp (x->id, id) == 0)
      {
        x->active_ms = svc_now_ms ();
        return x;
      }
  for (size_t i = 0; i < s->n_ended && i < SVC_ENDED_KEEP; i++)
    if (strcmp (s->ended[i], id) == 0)
      {
        svc_reply_error (c, 404, "not_found", "sandbox %s ended (its processes were killed or it ran out of memory)",
                         id);
        return NULL;
      }
  svc_reply_error (c, 404, "not_found", "no sandbox %s", id);
  return NULL;
}

static void
unlink_sandbox (struct svc *s, struct svc_sandbox *x)
{
  for (struct svc_sandbox **p = &s->sandboxes; *p; p = &(*p)->next)
    if (*p == x)
      {
        *p = x->next;
        return;
      }
}

void
svc_sandbox_destroy (struct svc *s, struct svc_sandbox *x, oci_strv *notes, const char *why)
{
  unlink_sandbox (s, x);
  svc_forget (x);
  svc_run_sandbox_gone (s, x);
  cleanup_error hv_error *err = NULL;
  cleanup_strv oci_strv own = { 0 };
  if (notes == NULL)
    notes = &own;
  svc_signals_open ();
  int r = hv_sandbox_destroy (x->sb, notes, &err);
  svc_signals_close (s);
  svc_log (s, x->pool != NULL, "sandbox %s (%s) destroyed: %s%s%s", x->id, x->policy, why, r < 0 ? "; " : "",
           r < 0 ? err->msg : "");
  for (size_t i = 0; i < notes->n; i++)
    svc_log (s, false, "sandbox %s: %s", x->id, notes->v[i]);
  free (x->policy);
  free (x);
  svc_reap (s);
}

void
svc_sandbox_ended (struct svc *s, struct svc_sandbox *x)
{
  /* Remembered, so that its user learns what happened, not "no sandbox". */
  if (x->pool == NULL)
    snprintf (s->ended[s->n_ended++ % SVC_ENDED_KEEP], SVC_ID_LEN + 1, "%s", x->id);
  svc_sandbox_destroy (s, x, NULL, "its keeper ended");
}

/* --- makers ----------------------------------------------------------- */

int
svc_maker_start (struct svc *s, struct svc_maker *mk, hv_error **err)
{
  struct hv_sandbox_opts so = { .policy = mk->policy,
                                .project = mk->project,
                                .scratch_dir = s->scratch_dir,
                                .haven_argv0 = s->o->haven_argv0,
                                .label = mk->id };
  mk->m = (struct hv_sandbox_maker) HV_SANDBOX_MAKER_INIT;
  svc_signals_open ();
  int r = hv_sandbox_make_start (&so, &mk->m, err);
  svc_signals_close (s);
  if (r < 0)
    return -1;
  mk->next = s->makers;
  s->makers = mk;
  return 0;
}

static void
maker_unlink (struct svc *s, struct svc_maker *mk)
{
  for (struct svc_maker **p = &s->makers; *p; p = &(*p)->next)
    if (*p == mk)
      {
        *p = mk->next;
        break;
      }
  svc_forget (mk);
  if (mk->pool)
    mk->pool->making--;
  if (mk->conn)
    mk->conn->maker = NULL;
}

static void
maker_free (struct svc_maker *mk)
{
  free (mk->policy);
  free (mk->project);
  free (mk);
}

void
svc_maker_abort (struct svc *s, struct svc_maker *mk)
{
  maker_unlink (s, mk);
  svc_signals_open ();
  hv_sandbox_make_abort (&mk->m);
  svc_signals_close (s);
  maker_free (mk);
}

/* What create answers, and the start of each list entry. */
static void
sandbox_members (yajl_gen g, struct svc_sandbox *x)
{
  jg_kv (g, "id", x->id);
  jg_kv (g, "policy", x->policy);
  jg_kv (g, "workspace", hv_sandbox_workspace (x->sb));
  jg_str (g, "pooled");
  yajl_gen_bool (g, x->pooled);
  jg_str (g, "project");
  yajl_gen_bool (g, x->project);
}

static void
create_answer (struct svc_conn *c, struct svc_sandbox *x)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  sandbox_members (g, x);
  yajl_gen_map_close (g);
  svc_reply_json (c, 201, jg_finish (g));
}

void
svc_maker_done (struct svc *s, struct svc_maker *mk)
{
  maker_unlink (s, mk);
  hv_sandbox *sb = NULL;
  cleanup_error hv_error *err = NULL;
  uint64_t t0 = svc_now_ms ();
  int r = hv_sandbox_make_finish (&mk->m, &sb, &err);
  struct svc_conn *c = mk->conn;
  if (r < 0)
    {
      svc_log (s, false, "sandbox %s (%s) not made: %s", mk->id, mk->policy, err->msg);
      if (mk->pool)
        svc_pool_maker_failed (mk->pool);
      if (c)
        {
          svc_reply_error (c, 500, "internal", "%s", err->msg);
          svc_request_done (s, c);
        }
      maker_free (mk);
      return;
    }
  struct svc_sandbox *x = xmalloc0 (sizeof (*x));
  memcpy (x->id, mk->id, sizeof (x->id));
  x->sb = sb;
  x->policy = steal_pointer (&mk->policy);
  x->init_pid = pidfd_pid (hv_sandbox_pidfd (sb));
  x->project = mk->project != NULL;
  x->created_ms = x->active_ms = svc_now_ms ();
  x->idle_timeout_s = mk->idle_timeout_s ? mk->idle_timeout_s : s->o->idle_timeout_s;
  x->next = s->sandboxes;
  s->sandboxes = x;
  (void) t0;
  if (mk->pool)
    {
      svc_pool_made (s, mk->pool, x);
      maker_free (mk);
      return;
    }
  if (c == NULL)
    {
      /* Its client left before it was made: no one knows its id. */
      svc_sandbox_destroy (s, x, NULL, "its client left before it was made");
      maker_free (mk);
      return;
    }
  if (mk->destroy_on_disconnect)
    x->owner = c;
  svc_log (s, false, "sandbox %s (%s) made", x->id, x->policy);
  create_answer (c, x);
  if (mk->want_pool)
    svc_pool_want (s, x->policy, hv_sandbox_config (sb));
  maker_free (mk);
  svc_request_done (s, c);
}

/* --- handlers --------------------------------------------------------- */

void
svc_handle_create (struct svc *s, struct svc_conn *c)
{
  struct hv_api_create req = { 0 };
  cleanup_error hv_error *err = NULL;
  if (hv_api_parse_create (c->body.data ? c->body.data : "", c->body.len, &req, &err) < 0)
    {
      svc_reply_error (c, 400, "bad_request", "%s", err->msg);
      return;
    }
  if (req.idle_timeout_s > HV_SERVICE_MAX_IDLE_S)
    {
      svc_reply_error (c, 400, "bad_request", "idle_timeout_s: at most %d", HV_SERVICE_MAX_IDLE_S);
      goto out;
    }
  if (req.project && req.project[0] != '/')
    {
      /* The service's working directory is not the client's. */
      svc_reply_error (c, 400, "bad_request", "project: an absolute path, not \"%s\"", req.project);
      goto out;
    }
  bool pool = req.pool && req.project == NULL;
  if (pool)
    {
      struct svc_sandbox *x = svc_pool_claim (s, req.policy);
      if (x)
        {
          x->owner = req.destroy_on_disconnect ? c : NULL;
          x->idle_timeout_s = req.idle_timeout_s ? req.idle_timeout_s : s->o->idle_timeout_s;
          x->active_ms = svc_now_ms ();
          svc_log (s, false, "sandbox %s (%s) claimed from the pool", x->id, x->policy);
          create_answer (c, x);
          goto out;
        }
    }
  if (svc_user_count (s) >= s->o->max_sandboxes)
    {
      svc_reply_error (c, 429, "limit", "at most %u sandboxes (--max-sandboxes)", s->o->max_sandboxes);
      goto out;
    }
  {
    /* A policy that does not load is the request's fault, with its
     * FILE:LINE:COL; the maker would only say so later. */
    cleanup_policy hv_policy *p = NULL;
    if (hv_policy_load (req.policy, &p, &err) < 0)
      {
        svc_reply_error (c, 422, "policy_error", "%s", err->msg);
        goto out;
      }
  }
  struct svc_maker *mk = xmalloc0 (sizeof (*mk));
  svc_new_id (s, mk->id);
  mk->policy = xstrdup (req.policy);
  mk->project = req.project ? xstrdup (req.project) : NULL;
  mk->conn = c;
  mk->destroy_on_disconnect = req.destroy_on_disconnect;
  mk->idle_timeout_s = req.idle_timeout_s;
  mk->want_pool = pool && s->o->pool_size > 0;
  if (svc_maker_start (s, mk, &err) < 0)
    {
      svc_log (s, false, "sandbox %s (%s): %s", mk->id, mk->policy, err->msg);
      svc_reply_error (c, 500, "internal", "%s", err->msg);
      maker_free (mk);
      goto out;
    }
  c->maker = mk;
out:
  hv_api_create_free (&req);
}

static void
sandbox_json (yajl_gen g, struct svc_sandbox *x, uint64_t now)
{
  yajl_gen_map_open (g);
  sandbox_members (g, x);
  jg_str (g, "created_s");
  yajl_gen_integer (g, (long long) ((now - x->created_ms) / 1000));
  jg_str (g, "idle_s");
  yajl_gen_integer (g, x->runs ? 0 : (long long) ((now - x->active_ms) / 1000));
  jg_str (g, "runs");
  yajl_gen_integer (g, x->runs);
  yajl_gen_map_close (g);
}

void
svc_handle_list (struct svc *s, struct svc_conn *c)
{
  uint64_t now = svc_now_ms ();
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_str (g, "sandboxes");
  yajl_gen_array_open (g);
  for (struct svc_sandbox *x = s->sandboxes; x; x = x->next)
    if (x->pool == NULL)
      sandbox_json (g, x, now);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  svc_reply_json (c, 200, jg_finish (g));
}

void
svc_handle_get (struct svc *s, struct svc_conn *c, const char *id)
{
  struct svc_sandbox *x = svc_sandbox_find (s, c, id);
  if (x == NULL)
    return;
  yajl_gen g = yajl_gen_alloc (NULL);
  sandbox_json (g, x, svc_now_ms ());
  svc_reply_json (c, 200, jg_finish (g));
}

void
svc_handle_delete (struct svc *s, struct svc_conn *c, const char *id)
{
  struct svc_sandbox *x = svc_sandbox_find (s, c, id);
  if (x == NULL)
    return;
  cleanup_strv oci_strv notes = { 0 };
  svc_sandbox_destroy (s, x, &notes, "deleted");
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv (g, "id", id);
  jg_str (g, "destroyed");
  yajl_gen_bool (g, 1);
  jg_str (g, "notes");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < notes.n; i++)
    jg_str (g, notes.v[i]);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  svc_reply_json (c, 200, jg_finish (g));
}

void
svc_idle_check (struct svc *s, uint64_t now, uint64_t *next)
{
  for (struct svc_sandbox *x = s->sandboxes, *nx; x; x = nx)
    {
      nx = x->next;
      if (x->pool || x->runs || x->idle_timeout_s == 0)
        continue;
      uint64_t at = x->active_ms + (uint64_t) x->idle_timeout_s * 1000;
      if (at <= now)
        {
          svc_sandbox_destroy (s, x, NULL, "idle timeout");
          /* The list changed under us: the next round checks the rest. */
          *next = now;
          return;
        }
      if (at < *next)
        *next = at;
    }
}
