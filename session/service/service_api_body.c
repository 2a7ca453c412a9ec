/* The JSON bodies of POST /v1/sandboxes and POST /v1/sandboxes/ID/run
 * (docs/api.md).  Strict: an unknown or repeated member, a value of the
 * wrong type or out of bounds is refused with its JSON path, never
 * dropped or guessed at, since each member decides what runs where. */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "base64.h"
#include "json_walk.h"
#include "keeper.h"
#include "service_api.h"
#include "service_api_internal.h"
#include "utils.h"

/* The service's own bounds on a run (docs/api.md, "Limits"). */
#define RUN_TIMEOUT_MAX (24 * 3600)
#define RUN_OUTPUT_MAX (16 * 1024 * 1024)
#define IDLE_TIMEOUT_MAX (24 * 3600)

static void
cleanup_treep (yajl_val *v)
{
  yajl_tree_free (*v);
}
#define cleanup_tree __attribute__ ((cleanup (cleanup_treep)))

static int
key_cmp (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* A member given twice: yajl keeps both and jw_lookup reads the last, but
 * which one a reader takes is not something to leave to readers. */
static int
no_repeated_members (json_walk *w, yajl_val obj)
{
  size_t n = obj->u.object.len;
  if (n < 2)
    return 0;
  cleanup_free const char **keys = xmalloc0 (n * sizeof (*keys));
  memcpy (keys, obj->u.object.keys, n * sizeof (*keys));
  qsort (keys, n, sizeof (*keys), key_cmp);
  for (size_t i = 1; i < n; i++)
    if (strcmp (keys[i - 1], keys[i]) == 0)
      return jw_fail_key (w, keys[i], "given twice");
  return 0;
}

/* The body as an object holding only known members, each once. */
static int
body_object (const char *body, size_t len, json_walk *w, const char *const *known, yajl_val *root)
{
  cleanup_free char *text = NULL;
  if (hv_api_body_scan (body, len, &text, w->err) < 0 || jw_parse (w, text, root) < 0)
    return -1;
  if (jw_expect_object (w, *root) < 0 || jw_only_keys (w, *root, known) < 0 || no_repeated_members (w, *root) < 0)
    return -1;
  return 0;
}

/* obj[key] as a non-empty string (NULL left when absent). */
static int
nonempty_string (json_walk *w, yajl_val obj, const char *key, bool required, char **out)
{
  const char *s;
  if (jw_member_string (w, obj, key, required, &s) < 0)
    return -1;
  if (s == NULL)
    return 0;
  if (*s == '\0')
    return jw_fail_key (w, key, "empty");
  *out = xstrdup (s);
  return 0;
}

/* obj[key] as an unsigned integer of at most max (left when absent). */
static int
bounded_u64 (json_walk *w, yajl_val obj, const char *key, uint64_t max, uint64_t *out)
{
  yajl_val v = jw_lookup (obj, key);
  if (jw_absent (v))
    return 0;
  size_t saved = jw_push_key (w, key);
  uint64_t x;
  if (jw_as_u64 (w, v, &x) < 0)
    return -1;
  if (x > max)
    return jw_fail (w, "%" PRIu64 " is more than %" PRIu64, x, max);
  jw_pop (w, saved);
  *out = x;
  return 0;
}

static int
create_fields (json_walk *w, yajl_val root, struct hv_api_create *out)
{
  uint64_t idle = 0;
  if (nonempty_string (w, root, "policy", true, &out->policy) < 0
      || nonempty_string (w, root, "project", false, &out->project) < 0
      || jw_field_bool (w, root, "pool", &out->pool) < 0
      || jw_field_bool (w, root, "destroy_on_disconnect", &out->destroy_on_disconnect) < 0
      || bounded_u64 (w, root, "idle_timeout_s", IDLE_TIMEOUT_MAX, &idle) < 0)
    return -1;
  /* The service has no idea of the caller's working directory. */
  if (out->project && out->project[0] != '/')
    return jw_fail_key (w, "project", "not an absolute path");
  out->idle_timeout_s = (uint32_t) idle;
  return 0;
}

int
hv_api_parse_create (const char *body, size_t len, struct hv_api_create *out, hv_error **err)
{
  static const char *const known[]
      = { "policy", "project", "pool", "destroy_on_disconnect", "idle_timeout_s", NULL };
  memset (out, 0, sizeof (*out));
  out->pool = true;
  json_walk w;
  jw_init (&w, "request body", err);
  cleanup_tree yajl_val root = NULL;
  if (body_object (body, len, &w, known, &root) < 0 || create_fields (&w, root, out) < 0)
    {
      hv_api_create_free (out);
      return -1;
    }
  return 0;
}

void
hv_api_create_free (struct hv_api_create *c)
{
  free (c->policy);
  free (c->project);
  c->policy = NULL;
  c->project = NULL;
}

static int
run_argv (json_walk *w, yajl_val root, oci_strv *argv)
{
  yajl_val v = jw_lookup (root, "argv");
  if (jw_absent (v))
    return jw_fail_key (w, "argv", "required field is missing");
  size_t saved = jw_push_key (w, "argv");
  if (jw_expect_array (w, v) < 0)
    return -1;
  if (v->u.array.len == 0)
    return jw_fail (w, "empty (the command and its arguments)");
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      size_t at = jw_push_index (w, i);
      yajl_val a = v->u.array.values[i];
      if (!YAJL_IS_STRING (a))
        return jw_fail (w, "expected a string");
      if (i == 0 && a->u.string[0] == '\0')
        return jw_fail (w, "empty (the program to run)");
      oci_strv_push (argv, a->u.string);
      jw_pop (w, at);
    }
  jw_pop (w, saved);
  return 0;
}

static int
run_env (json_walk *w, yajl_val root, oci_strv *env)
{
  yajl_val v = jw_lookup (root, "env");
  if (jw_absent (v))
    return 0;
  size_t saved = jw_push_key (w, "env");
  if (jw_expect_object (w, v) < 0 || no_repeated_members (w, v) < 0)
    return -1;
  for (size_t i = 0; i < v->u.object.len; i++)
    {
      const char *name = v->u.object.keys[i];
      yajl_val val = v->u.object.values[i];
      if (!hv_env_name_valid (name))
        return jw_fail_key (w, name, "not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
      if (!YAJL_IS_STRING (val))
        return jw_fail_key (w, name, "expected a string");
      oci_strv_pushf (env, "%s=%s", name, val->u.string);
    }
  jw_pop (w, saved);
  return 0;
}

/* stdin as text or as base64, not both. */
static int
run_stdin (json_walk *w, yajl_val root, struct hv_api_run *out)
{
  const char *text, *b64;
  if (jw_member_string (w, root, "stdin", false, &text) < 0 || jw_member_string (w, root, "stdin_b64", false, &b64) < 0)
    return -1;
  if (text && b64)
    return jw_fail_key (w, "stdin_b64", "given with .stdin (one of them)");
  if (text)
    {
      out->stdin_len = strlen (text);
      out->stdin_data = xstrdup (text);
    }
  else if (b64)
    {
      unsigned char *bytes;
      if (hv_base64_decode (b64, strlen (b64), &bytes, &out->stdin_len) < 0)
        return jw_fail_key (w, "stdin_b64", "not base64 (RFC 4648's alphabet, padded)");
      out->stdin_data = (char *) bytes;
    }
  return 0;
}

/* What the keeper is sent of the request must fit in one of its
 * messages (keeper.h): argv, env and cwd with their NULs. */
static int
run_fits (json_walk *w, const struct hv_api_run *r)
{
  size_t n = r->cwd ? strlen (r->cwd) + 1 : 0;
  for (size_t i = 0; i < r->argv.n; i++)
    n += strlen (r->argv.v[i]) + 1;
  for (size_t i = 0; i < r->env.n; i++)
    n += strlen (r->env.v[i]) + 1;
  if (n > HV_KEEPER_MAX_REQUEST)
    return hv_error_set (w->err, 0, "request body: .argv, .env and .cwd hold %zu bytes together, more than %d", n,
                         HV_KEEPER_MAX_REQUEST);
  return 0;
}

static int
run_fields (json_walk *w, yajl_val root, struct hv_api_run *out)
{
  uint64_t timeout = 0;
  if (run_argv (w, root, &out->argv) < 0 || run_env (w, root, &out->env) < 0
      || nonempty_string (w, root, "cwd", false, &out->cwd) < 0 || run_stdin (w, root, out) < 0
      || bounded_u64 (w, root, "timeout_s", RUN_TIMEOUT_MAX, &timeout) < 0
      || bounded_u64 (w, root, "max_output", RUN_OUTPUT_MAX, &out->max_output) < 0
      || jw_field_bool (w, root, "stream", &out->stream) < 0)
    return -1;
  out->timeout_s = (uint32_t) timeout;
  if (out->cwd && out->cwd[0] != '/')
    {
      /* Relative: beneath the workspace, and only there. */
      if (hv_api_relative_path_check (out->cwd, strlen (out->cwd), "request body: .cwd", w->err) < 0)
        return -1;
    }
  else if (out->cwd && strlen (out->cwd) > HV_API_PATH_MAX)
    return jw_fail_key (w, "cwd", "longer than %d bytes", HV_API_PATH_MAX);
  return run_fits (w, out);
}

int
hv_api_parse_run (const char *body, size_t len, struct hv_api_run *out, hv_error **err)
{
  static const char *const known[]
      = { "argv", "env", "cwd", "stdin", "stdin_b64", "timeout_s", "max_output", "stream", NULL };
  memset (out, 0, sizeof (*out));
  json_walk w;
  jw_init (&w, "request body", err);
  cleanup_tree yajl_val root = NULL;
  if (body_object (body, len, &w, known, &root) < 0 || run_fields (&w, root, out) < 0)
    {
      hv_api_run_free (out);
      return -1;
    }
  return 0;
}

void
hv_api_run_free (struct hv_api_run *r)
{
  oci_strv_free (&r->argv);
  oci_strv_free (&r->env);
  free (r->cwd);
  free (r->stdin_data);
  r->cwd = NULL;
  r->stdin_data = NULL;
  r->stdin_len = 0;
}
