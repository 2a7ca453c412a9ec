/* The tools' calls: a call's arguments checked against what its schema
 * says (mcp_tools_table.c), turned into one request to the service
 * (docs/api.md) on a connection of its own, and kept until the service
 * answers, the call is cancelled or its deadline passes.
 *
 * Arguments that are wrong are a tool error naming the argument (the
 * MCP spec: the model can correct them); only an unknown tool is a
 * protocol error. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_gen.h>

#include "base64.h"
#include "json_gen.h"
#include "mcp_tools_priv.h"
#include "utils.h"

/* How long past its own time limit a run's answer may take (the service
 * kills the command at the limit, then reads what is left), and how long
 * any other request may take, before the call is answered as failed. */
#define RUN_GRACE_MS 60000
#define REQUEST_MS 120000

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

hv_mcp_tools *
hv_mcp_tools_new (const struct hv_mcp_tools_conf *conf)
{
  hv_mcp_tools *t = xmalloc0 (sizeof (*t));
  t->endpoint = conf->endpoint;
  t->id = xstrdup (conf->sandbox.id);
  t->policy = xstrdup (conf->sandbox.policy);
  t->workspace = xstrdup (conf->sandbox.workspace);
  t->about = conf->sandbox.about ? xstrdup (conf->sandbox.about) : NULL;
  t->shell = conf->sandbox.shell;
  t->max_output = conf->max_output;
  t->timeout_s = conf->timeout_s;
  t->verbose = conf->verbose;
  t->list_json = hv_mcp_tools_list_make (t);
  t->instructions = hv_mcp_tools_instructions_make (t);
  return t;
}

static void
pending_clear (struct hv_mcp_pending *p)
{
  if (p->call)
    hv_svc_call_free (p->call);
  free (p->id_json);
  free (p->what);
  memset (p, 0, sizeof (*p));
}

void
hv_mcp_tools_free (hv_mcp_tools *t)
{
  if (t == NULL)
    return;
  hv_mcp_tools_cancel_all (t);
  for (size_t i = 0; i < t->n_refusals; i++)
    {
      struct hv_mcp_refusal *r = &t->refusals[(t->first_refusal + i) % HV_MCP_REFUSALS_MAX];
      free (r->time);
      free (r->kind);
      free (r->what);
      free (r->rule);
    }
  free (t->id);
  free (t->policy);
  free (t->workspace);
  free (t->about);
  free (t->gone);
  free (t->list_json);
  free (t->instructions);
  free (t);
}

void
hv_mcp_tools_set_session (hv_mcp_tools *t, hv_mcp_session *s)
{
  t->session = s;
}

const char *
hv_mcp_tools_instructions (const hv_mcp_tools *t)
{
  return t->instructions;
}

static void
answer (hv_mcp_tools *t, const char *id_json, char *result)
{
  hv_mcp_session_complete (t->session, id_json, result);
  free (result);
}

/* --- arguments ----------------------------------------------------------- */

/* A problem with the arguments, as the tool error's text (malloc'd). */
typedef char *problem;

static problem
only_keys (yajl_val args, const char *tool, const char *const *known)
{
  for (size_t i = 0; args && i < args->u.object.len; i++)
    {
      bool ok = false;
      for (size_t k = 0; known[k] && !ok; k++)
        ok = strcmp (args->u.object.keys[i], known[k]) == 0;
      if (!ok)
        {
          cleanup_free char *list = xstrdup ("");
          for (size_t k = 0; known[k]; k++)
            {
              char *n = xasprintf ("%s%s%s", list, k ? ", " : "", known[k]);
              free (list);
              list = n;
            }
          return xasprintf ("%s: unknown argument \"%s\" (it takes: %s)", tool, args->u.object.keys[i], list);
        }
    }
  return NULL;
}

/* args[key] as a string: *out NULL when absent (JSON null counts as
 * absent, as everywhere in haven). */
static problem
arg_string (yajl_val args, const char *tool, const char *key, bool required, const char **out)
{
  yajl_val v = args ? yajl_tree_get (args, (const char *[]){ key, NULL }, yajl_t_any) : NULL;
  *out = NULL;
  if (v == NULL || YAJL_IS_NULL (v))
    return required ? xasprintf ("%s: the argument \"%s\" is required", tool, key) : NULL;
  if (!YAJL_IS_STRING (v))
    return xasprintf ("%s: the argument \"%s\" must be a string", tool, key);
  *out = v->u.string;
  return NULL;
}

static problem
arg_int (yajl_val args, const char *tool, const char *key, long min, long max, long dflt, long *out)
{
  yajl_val v = args ? yajl_tree_get (args, (const char *[]){ key, NULL }, yajl_t_any) : NULL;
  *out = dflt;
  if (v == NULL || YAJL_IS_NULL (v))
    return NULL;
  if (!YAJL_IS_INTEGER (v) || v->u.number.i < min || v->u.number.i > max)
    return xasprintf ("%s: the argument \"%s\" must be an integer from %ld to %ld", tool, key, min, max);
  *out = (long) v->u.number.i;
  return NULL;
}

/* A workspace path as the service takes it: relative, percent-encoded
 * (each byte but the unreserved ones and '/').  An absolute path inside
 * the workspace is made relative (agents often name the path commands
 * see); anything else is left for the service to judge, which resolves
 * it beneath the workspace without following links. */
static char *
encode_path (const hv_mcp_tools *t, const char *path)
{
  size_t wl = strlen (t->workspace);
  if (strncmp (path, t->workspace, wl) == 0 && (path[wl] == '/' || path[wl] == '\0'))
    path += wl + (path[wl] == '/');
  while (strncmp (path, "./", 2) == 0)
    path += 2;
  if (strcmp (path, ".") == 0)
    path = "";
  size_t n = strlen (path);
  char *out = xmalloc0 (n * 3 + 1), *o = out;
  for (const unsigned char *p = (const unsigned char *) path; *p; p++)
    if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr ("-._~/", *p))
      *o++ = (char) *p;
    else
      o += sprintf (o, "%%%02X", *p);
  *o = '\0';
  return out;
}

/* --- requests ------------------------------------------------------------ */

struct request
{
  const char *method;
  char *target;
  const char *content_type;
  char *body;
  size_t len;
  char *what;
  unsigned timeout_s;
  unsigned limit;
};

static void
request_free (struct request *r)
{
  free (r->target);
  free (r->body);
  free (r->what);
}

/* The run request's body: argv (NULL-terminated), the call's optional
 * members, the session's max_output (so truncation is the service's). */
static problem
run_request (hv_mcp_tools *t, const char *tool, const char *const *argv, yajl_val args, struct request *r)
{
  const char *stdin_text = NULL, *cwd = NULL;
  long timeout = 0;
  problem pb;
  if ((pb = arg_string (args, tool, "stdin", false, &stdin_text)) || (pb = arg_string (args, tool, "cwd", false, &cwd))
      || (pb = arg_int (args, tool, "timeout_s", 1, 3600, t->timeout_s, &timeout)))
    return pb;
  yajl_val env = args ? yajl_tree_get (args, (const char *[]){ "env", NULL }, yajl_t_any) : NULL;
  if (env && YAJL_IS_NULL (env))
    env = NULL;
  if (env && !YAJL_IS_OBJECT (env))
    return xasprintf ("%s: the argument \"env\" must be an object of strings (NAME: value)", tool);
  for (size_t i = 0; env && i < env->u.object.len; i++)
    if (!YAJL_IS_STRING (env->u.object.values[i]))
      return xasprintf ("%s: the argument \"env\": the value of \"%s\" must be a string", tool,
                        env->u.object.keys[i]);

  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_str (g, "argv");
  yajl_gen_array_open (g);
  for (size_t i = 0; argv[i]; i++)
    jg_str (g, argv[i]);
  yajl_gen_array_close (g);
  if (stdin_text)
    jg_kv (g, "stdin", stdin_text);
  if (cwd)
    jg_kv (g, "cwd", cwd);
  if (env)
    {
      jg_str (g, "env");
      yajl_gen_map_open (g);
      for (size_t i = 0; i < env->u.object.len; i++)
        jg_kv (g, env->u.object.keys[i], env->u.object.values[i]->u.string);
      yajl_gen_map_close (g);
    }
  jg_str (g, "timeout_s");
  yajl_gen_integer (g, timeout);
  jg_str (g, "max_output");
  yajl_gen_integer (g, (long long) t->max_output);
  yajl_gen_map_close (g);
  r->method = "POST";
  r->target = xasprintf ("/v1/sandboxes/%s/run", t->id);
  r->content_type = "application/json";
  r->body = jg_finish (g);
  r->len = strlen (r->body);
  r->what = xstrdup (argv[0]);
  r->timeout_s = (unsigned) timeout;
  return NULL;
}

static problem
tool_run_command (hv_mcp_tools *t, yajl_val args, struct request *r)
{
  static const char *const known[] = { "argv", "command", "stdin", "cwd", "env", "timeout_s", NULL };
  const char *tool = "run_command", *command = NULL;
  problem pb;
  if ((pb = only_keys (args, tool, known)) || (pb = arg_string (args, tool, "command", false, &command)))
    return pb;
  yajl_val argv = args ? yajl_tree_get (args, (const char *[]){ "argv", NULL }, yajl_t_any) : NULL;
  if (argv && YAJL_IS_NULL (argv))
    argv = NULL;
  if (argv && command)
    return xasprintf ("%s: give \"argv\" or \"command\", not both", tool);
  if (argv == NULL && command == NULL)
    return xasprintf ("%s: the argument \"argv\" (the program and its arguments) or \"command\" (a shell line) is "
                      "required",
                      tool);
  if (command)
    {
      if (command[0] == '\0')
        return xasprintf ("%s: the argument \"command\" is empty", tool);
      if (t->shell == 0)
        {
          cleanup_free char *rule = xasprintf ("process.block_shell of policy \"%s\"", t->policy);
          hv_mcp_tools_refused (t, "shell", "a command line (sh -c)", rule);
          return xasprintf ("%s: the argument \"command\" needs a shell, and policy \"%s\" lets no shell run "
                            "(process.block_shell): give \"argv\" instead",
                            tool, t->policy);
        }
      const char *v[] = { "sh", "-c", command, NULL };
      return run_request (t, tool, v, args, r);
    }
  if (!YAJL_IS_ARRAY (argv) || argv->u.array.len == 0)
    return xasprintf ("%s: the argument \"argv\" must be an array of at least one string", tool);
  if (argv->u.array.len > 4096)
    return xasprintf ("%s: the argument \"argv\" has more than 4096 elements", tool);
  cleanup_free const char **v = xmalloc0 ((argv->u.array.len + 1) * sizeof (*v));
  for (size_t i = 0; i < argv->u.array.len; i++)
    {
      if (!YAJL_IS_STRING (argv->u.array.values[i]))
        return xasprintf ("%s: the argument \"argv\": element %zu must be a string", tool, i);
      v[i] = argv->u.array.values[i]->u.string;
    }
  if (v[0][0] == '\0')
    return xasprintf ("%s: the argument \"argv\": the program (element 0) is empty", tool);
  return run_request (t, tool, v, args, r);
}

static problem
tool_run_code (hv_mcp_tools *t, yajl_val args, struct request *r)
{
  static const char *const known[] = { "language", "code", "stdin", "timeout_s", NULL };
  static const struct
  {
    const char *name, *exe, *flag;
    bool shell;
  } langs[] = { { "python", "python3", "-c", false }, { "python3", "python3", "-c", false },
                { "bash", "bash", "-c", true },       { "sh", "sh", "-c", true },
                { "node", "node", "-e", false },      { "javascript", "node", "-e", false },
                { "js", "node", "-e", false } };
  const char *tool = "run_code", *language, *code;
  problem pb;
  if ((pb = only_keys (args, tool, known)) || (pb = arg_string (args, tool, "language", true, &language))
      || (pb = arg_string (args, tool, "code", true, &code)))
    return pb;
  for (size_t i = 0; i < sizeof (langs) / sizeof (langs[0]); i++)
    if (strcmp (language, langs[i].name) == 0)
      {
        if (langs[i].shell && t->shell == 0)
          {
            cleanup_free char *rule = xasprintf ("process.block_shell of policy \"%s\"", t->policy);
            hv_mcp_tools_refused (t, "shell", langs[i].exe, rule);
            return xasprintf ("%s: the language \"%s\" is a shell, and policy \"%s\" lets no shell run "
                              "(process.block_shell)",
                              tool, language, t->policy);
          }
        const char *v[] = { langs[i].exe, langs[i].flag, code, NULL };
        return run_request (t, tool, v, args, r);
      }
  return xasprintf ("%s: the argument \"language\": \"%s\" is not one it knows (python, python3, bash, sh, node, "
                    "javascript, js)",
                    tool, language);
}

static problem
tool_read_file (hv_mcp_tools *t, yajl_val args, struct request *r)
{
  static const char *const known[] = { "path", NULL };
  const char *path;
  problem pb;
  if ((pb = only_keys (args, "read_file", known)) || (pb = arg_string (args, "read_file", "path", true, &path)))
    return pb;
  cleanup_free char *enc = encode_path (t, path);
  r->method = "GET";
  r->target = xasprintf ("/v1/sandboxes/%s/files/%s", t->id, enc);
  r->what = xstrdup (path);
  return NULL;
}

static problem
tool_write_file (hv_mcp_tools *t, yajl_val args, struct request *r)
{
  static const char *const known[] = { "path", "content", "encoding", NULL };
  const char *tool = "write_file", *path, *content, *encoding;
  problem pb;
  if ((pb = only_keys (args, tool, known)) || (pb = arg_string (args, tool, "path", true, &path))
      || (pb = arg_string (args, tool, "content", true, &content))
      || (pb = arg_string (args, tool, "encoding", false, &encoding)))
    return pb;
  if (encoding && strcmp (encoding, "base64") == 0)
    {
      unsigned char *bytes = NULL;
      size_t n = 0;
      if (hv_base64_decode (content, strlen (content), &bytes, &n) < 0)
        return xasprintf ("%s: the argument \"content\" is not base64 (RFC 4648, padded)", tool);
      r->body = (char *) bytes;
      r->len = n;
    }
  else if (encoding == NULL || strcmp (encoding, "utf-8") == 0)
    {
      r->body = xstrdup (content);
      r->len = strlen (content);
    }
  else
    return xasprintf ("%s: the argument \"encoding\" must be \"utf-8\" or \"base64\"", tool);
  cleanup_free char *enc = encode_path (t, path);
  r->method = "PUT";
  r->target = xasprintf ("/v1/sandboxes/%s/files/%s", t->id, enc);
  r->content_type = "application/octet-stream";
  r->what = xstrdup (path);
  return NULL;
}

static problem
tool_list_files (hv_mcp_tools *t, yajl_val args, struct request *r)
{
  static const char *const known[] = { "path", NULL };
  const char *path;
  problem pb;
  if ((pb = only_keys (args, "list_files", known)) || (pb = arg_string (args, "list_files", "path", false, &path)))
    return pb;
  cleanup_free char *enc = encode_path (t, path ? path : "");
  r->method = "GET";
  /* In a query '+' is a space (docs/api.md): encode_path left none. */
  r->target = enc[0] ? xasprintf ("/v1/sandboxes/%s/list?path=%s", t->id, enc)
                     : xasprintf ("/v1/sandboxes/%s/list", t->id);
  r->what = xstrdup (path && path[0] ? path : ".");
  return NULL;
}

static problem
tool_why (hv_mcp_tools *t, yajl_val args, struct request *r)
{
  static const char *const known[] = { "limit", NULL };
  long limit;
  problem pb;
  if ((pb = only_keys (args, "why", known)) || (pb = arg_int (args, "why", "limit", 1, 100, 20, &limit)))
    return pb;
  r->method = "GET";
  r->target = xasprintf ("/v1/sandboxes/%s/denials?limit=%ld", t->id, limit);
  r->limit = (unsigned) limit;
  return NULL;
}

/* --- the session's ops --------------------------------------------------- */

static const char *
tools_list_json (void *ctx)
{
  hv_mcp_tools *t = ctx;
  return t->list_json;
}

static int
tools_call (void *ctx, const char *id_json, const char *name, yajl_val args, int *code, char **message)
{
  hv_mcp_tools *t = ctx;
  size_t tool = 0;
  while (tool < HV_TOOL_N && strcmp (name, hv_mcp_tool_names[tool]) != 0)
    tool++;
  if (tool == HV_TOOL_N)
    {
      *code = HV_JSONRPC_INVALID_PARAMS;
      *message = xasprintf ("unknown tool \"%s\" (run_command, run_code, read_file, write_file, list_files, why)",
                            name);
      return -1;
    }
  if (args && !YAJL_IS_OBJECT (args))
    {
      answer (t, id_json, hv_mcp_tool_error ("%s: the arguments must be an object", name));
      return 0;
    }
  if (t->gone)
    {
      answer (t, id_json, hv_mcp_tool_error ("%s: the sandbox is gone (%s): nothing can run until haven mcp is "
                                             "started again",
                                             name, t->gone));
      return 0;
    }
  struct hv_mcp_pending *slot = NULL;
  for (size_t i = 0; i < HV_MCP_CALLS_MAX && slot == NULL; i++)
    if (t->calls[i].id_json == NULL)
      slot = &t->calls[i];
  if (slot == NULL)
    {
      answer (t, id_json, hv_mcp_tool_error ("%s: %d calls are in flight already: wait for one to finish", name,
                                             HV_MCP_CALLS_MAX));
      return 0;
    }

  struct request r = { 0 };
  problem pb = NULL;
  switch ((enum hv_mcp_tool) tool)
    {
    case HV_TOOL_RUN_COMMAND:
      pb = tool_run_command (t, args, &r);
      break;
    case HV_TOOL_RUN_CODE:
      pb = tool_run_code (t, args, &r);
      break;
    case HV_TOOL_READ_FILE:
      pb = tool_read_file (t, args, &r);
      break;
    case HV_TOOL_WRITE_FILE:
      pb = tool_write_file (t, args, &r);
      break;
    case HV_TOOL_LIST_FILES:
      pb = tool_list_files (t, args, &r);
      break;
    case HV_TOOL_WHY:
    case HV_TOOL_N:
      pb = tool_why (t, args, &r);
      break;
    }
  if (pb)
    {
      request_free (&r);
      answer (t, id_json, hv_mcp_tool_error ("%s", pb));
      free (pb);
      return 0;
    }
  hv_svc_call *call = NULL;
  cleanup_error hv_error *err = NULL;
  if (hv_svc_call_start (t->endpoint, r.method, r.target, r.content_type, r.body, r.len, &call, &err) < 0)
    {
      request_free (&r);
      answer (t, id_json, hv_mcp_tool_error ("%s: the sandbox service did not take the request: %s", name, err->msg));
      return 0;
    }
  if (t->verbose)
    fprintf (stderr, "haven mcp: %s %s (call %s)\n", r.method, r.target, id_json);
  slot->id_json = xstrdup (id_json);
  slot->tool = (enum hv_mcp_tool) tool;
  slot->call = call;
  slot->what = steal_pointer (&r.what);
  slot->timeout_s = r.timeout_s;
  slot->limit = r.limit;
  slot->deadline_ms
      = now_ms () + (tool <= HV_TOOL_RUN_CODE ? (int64_t) r.timeout_s * 1000 + RUN_GRACE_MS : REQUEST_MS);
  request_free (&r);
  return 0;
}

static void
tools_cancel (void *ctx, const char *id_json)
{
  hv_mcp_tools *t = ctx;
  for (size_t i = 0; i < HV_MCP_CALLS_MAX; i++)
    if (t->calls[i].id_json && strcmp (t->calls[i].id_json, id_json) == 0)
      {
        if (t->verbose)
          fprintf (stderr, "haven mcp: call %s cancelled\n", id_json);
        /* Closing the connection is the cancel: the service kills a
         * run's process group when its connection closes. */
        pending_clear (&t->calls[i]);
      }
}

const struct hv_mcp_tools_ops hv_mcp_tools_session_ops = {
  .list_json = tools_list_json,
  .call = tools_call,
  .cancel = tools_cancel,
};

/* --- the loop's side ----------------------------------------------------- */

size_t
hv_mcp_tools_pollfds (hv_mcp_tools *t, struct pollfd *fds, size_t max, int *timeout_ms)
{
  size_t n = 0;
  int64_t now = now_ms ();
  *timeout_ms = -1;
  for (size_t i = 0; i < HV_MCP_CALLS_MAX && n < max; i++)
    if (t->calls[i].id_json)
      {
        fds[n++] = (struct pollfd) { .fd = hv_svc_call_fd (t->calls[i].call), .events = POLLIN };
        int64_t left = t->calls[i].deadline_ms - now;
        int ms = left < 0 ? 0 : left > 86400000 ? 86400000 : (int) left;
        if (*timeout_ms < 0 || ms < *timeout_ms)
          *timeout_ms = ms;
      }
  return n;
}

void
hv_mcp_tools_progress (hv_mcp_tools *t)
{
  int64_t now = now_ms ();
  for (size_t i = 0; i < HV_MCP_CALLS_MAX; i++)
    {
      struct hv_mcp_pending *p = &t->calls[i];
      if (p->id_json == NULL)
        continue;
      cleanup_error hv_error *err = NULL;
      int r = hv_svc_call_progress (p->call, &err);
      char *result = NULL;
      if (r > 0)
        {
          size_t len = 0;
          const char *body = hv_svc_call_body (p->call, &len);
          result = hv_mcp_tools_answer (t, p, hv_svc_call_status (p->call), body, len);
        }
      else if (r < 0)
        result = hv_mcp_tool_error ("%s: the sandbox service's answer failed: %s", hv_mcp_tool_names[p->tool],
                                    err ? err->msg : "unknown error");
      else if (now >= p->deadline_ms)
        result = hv_mcp_tool_error ("%s: the sandbox service did not answer in time (%lld s); the call was "
                                    "abandoned and its command killed",
                                    hv_mcp_tool_names[p->tool],
                                    (long long) (p->tool <= HV_TOOL_RUN_CODE
                                                     ? p->timeout_s + RUN_GRACE_MS / 1000
                                                     : REQUEST_MS / 1000));
      if (result == NULL)
        continue;
      if (t->verbose)
        fprintf (stderr, "haven mcp: call %s answered\n", p->id_json);
      /* The slot is cleared before the answer goes out: the session may
       * call back into the tools from hv_mcp_session_complete. */
      cleanup_free char *id = steal_pointer (&p->id_json);
      pending_clear (p);
      answer (t, id, result);
    }
}

void
hv_mcp_tools_cancel_all (hv_mcp_tools *t)
{
  for (size_t i = 0; i < HV_MCP_CALLS_MAX; i++)
    if (t->calls[i].id_json)
      pending_clear (&t->calls[i]);
}

size_t
hv_mcp_tools_in_flight (const hv_mcp_tools *t)
{
  size_t n = 0;
  for (size_t i = 0; i < HV_MCP_CALLS_MAX; i++)
    n += t->calls[i].id_json != NULL;
  return n;
}
