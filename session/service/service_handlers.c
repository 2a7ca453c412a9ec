/* The requests on sandboxes themselves: create (claimed from the pool,
 * or made by a maker and answered when it is done), list, get, delete.
 * A run's and the files API's handlers are with their parts
 * (service_run.c, service_files.c): they need only the sandbox that the
 * router found. */
#include "config.h"

#include <string.h>

#include "json_gen.h"
#include "policy.h"
#include "policy_load.h"
#include "service_handlers.h"
#include "service_pool.h"
#include "service_reply.h"
#include "service_sandbox.h"
#include "utils.h"

/* Sandboxes and creates that count against max_sandboxes. */
static unsigned
user_count (struct svc *s)
{
  unsigned n = 0;
  for (struct svc_sandbox *x = s->sandboxes; x; x = x->next)
    n += x->pool == NULL;
  for (struct svc_maker *m = s->makers; m; m = m->next)
    n += m->pool == NULL;
  return n;
}

/* What create answers, and the start of each list entry. */
static void
sandbox_members (yajl_gen g, struct svc_sandbox *x)
{
  jg_kv (g, "id", x->id);
  jg_kv_utf8 (g, "policy", x->policy);
  jg_kv_utf8 (g, "workspace", hv_sandbox_workspace (x->sb));
  jg_str (g, "pooled");
  yajl_gen_bool (g, x->pooled);
  jg_str (g, "project");
  yajl_gen_bool (g, x->project);
  /* Whether sh may run (a client that runs shell lines asks first). */
  jg_str (g, "shell");
  yajl_gen_bool (g, hv_sandbox_shell (x->sb));
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

/* A create's maker is done: answer it, unless its client left. */
static void
create_made (struct svc *s, struct svc_maker *mk, struct svc_sandbox *x, hv_error *err)
{
  struct svc_conn *c = mk->conn;
  if (x == NULL)
    {
      if (c == NULL)
        return;
      /* What the maker refused without a system error (a policy that
       * does not compile here, a project haven run would refuse, a trust
       * check) is the request's: 422 with the reason.  A system call
       * that failed is ours: 500. */
      if (err->errno_code == 0)
        svc_reply_error (c, 422, "policy_error", "%s", err->msg);
      else
        svc_reply_error (c, 500, "internal", "%s", err->msg);
      svc_request_done (s, c);
      return;
    }
  if (c == NULL)
    {
      /* Its client left before it was made: no one knows its id. */
      svc_sandbox_destroy (s, x, NULL, "its client left before it was made");
      return;
    }
  if (mk->destroy_on_disconnect)
    x->owner = c;
  svc_log (s, false, "sandbox %s (%s) made", x->id, x->policy);
  create_answer (c, x);
  if (mk->want_pool)
    svc_pool_want (s, x->policy, hv_sandbox_config (x->sb));
  svc_request_done (s, c);
}

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
          hv_sandbox_trail_claimed (x->sb);
          create_answer (c, x);
          goto out;
        }
    }
  if (user_count (s) >= s->o->max_sandboxes)
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
  mk->made = create_made;
  if (svc_maker_start (s, mk, &err) < 0)
    {
      svc_log (s, false, "sandbox %s (%s): %s", mk->id, mk->policy, err->msg);
      svc_reply_error (c, 500, "internal", "%s", err->msg);
      svc_maker_free (mk);
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
    jg_utf8 (g, notes.v[i]);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  svc_reply_json (c, 200, jg_finish (g));
}

/* The sandbox's denials in its policy's trail (sandbox_denials.c): the
 * trail is read here, in the loop, but bounded (its last few MiB). */
void
svc_handle_denials (struct svc *s, struct svc_conn *c, const char *id, unsigned limit)
{
  struct svc_sandbox *x = svc_sandbox_find (s, c, id);
  if (x == NULL)
    return;
  cleanup_error hv_error *err = NULL;
  char *json = hv_sandbox_denials_json (x->sb, limit, &err);
  if (json == NULL)
    {
      svc_reply_error (c, 500, "internal", "%s", err->msg);
      return;
    }
  svc_reply_json (c, 200, json);
}
