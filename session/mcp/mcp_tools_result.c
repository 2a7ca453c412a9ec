/* The results of the tools' calls (MCP CallToolResult objects), made of
 * what the service answered: a text for the model (exit status, output,
 * what was cut, the rule behind a refusal) and the same as
 * structuredContent for programs.  The service's answers are read as
 * untrusted text (bounded nesting, strings re-checked as UTF-8). */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "json_gen.h"
#include "json_walk.h"
#include "mcp_tools_priv.h"
#include "utf8.h"
#include "utils.h"

/* The JSON nesting an answer of the service may have (a denial's trail
 * record is the deepest). */
#define ANSWER_DEPTH_MAX 32

/* A growing text. */
struct text
{
  char *s;
  size_t len, cap;
};

static void
text_add (struct text *t, const char *s, size_t n)
{
  if (t->len + n + 1 > t->cap)
    {
      t->cap = (t->len + n + 1) * 2;
      t->s = xrealloc (t->s, t->cap);
    }
  memcpy (t->s + t->len, s, n);
  t->len += n;
  t->s[t->len] = '\0';
}

static void __attribute__ ((format (printf, 2, 3)))
text_printf (struct text *t, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *s = NULL;
  if (vasprintf (&s, fmt, ap) < 0)
    abort ();
  va_end (ap);
  text_add (t, s, strlen (s));
  free (s);
}

/* The result's head: {"content":[{"type":"text","text":TEXT}],"isError":B,
 * and the generator left open for structuredContent (or nothing). */
static yajl_gen
result_open (const char *text, bool is_error)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_str (g, "content");
  yajl_gen_array_open (g);
  yajl_gen_map_open (g);
  jg_kv (g, "type", "text");
  jg_kv_utf8 (g, "text", text);
  yajl_gen_map_close (g);
  yajl_gen_array_close (g);
  jg_str (g, "isError");
  yajl_gen_bool (g, is_error);
  return g;
}

static char *
result_close (yajl_gen g)
{
  yajl_gen_map_close (g);
  return jg_finish (g);
}

char *
hv_mcp_tool_error (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *text = NULL;
  if (vasprintf (&text, fmt, ap) < 0)
    abort ();
  va_end (ap);
  char *r = result_close (result_open (text, true));
  free (text);
  return r;
}

void
hv_mcp_tools_refused (hv_mcp_tools *t, const char *kind, const char *what, const char *rule)
{
  struct hv_mcp_refusal *r;
  if (t->n_refusals == HV_MCP_REFUSALS_MAX)
    {
      r = &t->refusals[t->first_refusal];
      free (r->time);
      free (r->kind);
      free (r->what);
      free (r->rule);
      t->first_refusal = (t->first_refusal + 1) % HV_MCP_REFUSALS_MAX;
    }
  else
    r = &t->refusals[(t->first_refusal + t->n_refusals++) % HV_MCP_REFUSALS_MAX];
  r->time = now_rfc3339 ();
  r->kind = xstrdup (kind);
  r->what = xstrdup (what);
  r->rule = xstrdup (rule);
}

/* A parsed answer body (NULL when it is no JSON object). */
static yajl_val
parse_answer (const char *body, size_t len)
{
  if (body == NULL || strlen (body) != len || jw_too_deep (body, ANSWER_DEPTH_MAX))
    return NULL;
  yajl_val v = yajl_tree_parse (body, NULL, 0);
  if (v && !YAJL_IS_OBJECT (v))
    {
      yajl_tree_free (v);
      return NULL;
    }
  return v;
}

static yajl_val
member (yajl_val obj, const char *key)
{
  return obj ? yajl_tree_get (obj, (const char *[]){ key, NULL }, yajl_t_any) : NULL;
}

static const char *
member_string (yajl_val obj, const char *key)
{
  yajl_val v = member (obj, key);
  return v && YAJL_IS_STRING (v) ? v->u.string : NULL;
}

static bool
member_true (yajl_val obj, const char *key)
{
  yajl_val v = member (obj, key);
  return v && YAJL_IS_TRUE (v);
}

char *
hv_mcp_service_message (int status, const char *body, size_t len)
{
  yajl_val v = parse_answer (body, len);
  const char *msg = member_string (member (v, "error"), "message");
  char *r = msg ? xasprintf ("%s (%d)", msg, status)
                : xasprintf ("status %d%s%.*s", status, len ? ": " : "", (int) (len > 512 ? 512 : len),
                             body ? body : "");
  if (v)
    yajl_tree_free (v);
  /* The message goes to the model as text: valid UTF-8. */
  size_t n;
  char *clean = hv_utf8_sanitize (r, strlen (r), &n);
  free (r);
  return clean;
}

/* An error answer of the service: a tool error naming what it said; the
 * refusals (not a missing file) are remembered for `why`. */
static char *
service_error (hv_mcp_tools *t, const struct hv_mcp_pending *p, int status, const char *body, size_t len)
{
  cleanup_free char *msg = hv_mcp_service_message (status, body, len);
  const char *tool = hv_mcp_tool_names[p->tool];
  const char *kind = status == 403 ? "env" : status == 413 ? "size" : status == 429 ? "limit" : "request";
  if (status == 400 || status == 403 || status == 413 || status == 429)
    hv_mcp_tools_refused (t, kind, p->what ? p->what : tool, msg);
  /* The sandbox itself gone (it ended on its own, or someone destroyed
   * it): the later calls say so without asking. */
  if (status == 404 && strstr (msg, " ended"))
    hv_mcp_tools_sandbox_gone (t, "it ended: killed, or out of memory");
  else if (status == 404 && strncmp (msg, "no sandbox ", 11) == 0)
    hv_mcp_tools_sandbox_gone (t, "it was destroyed");
  return hv_mcp_tool_error ("%s%s%s: the sandbox service refused it: %s", tool, p->what ? " " : "",
                            p->what ? p->what : "", msg);
}

static void
add_stream (struct text *x, const char *s)
{
  if (s == NULL || s[0] == '\0')
    return;
  size_t n = strlen (s);
  text_add (x, s, n);
  if (s[n - 1] != '\n')
    text_add (x, "\n", 1);
}

static char *
run_result (hv_mcp_tools *t, const struct hv_mcp_pending *p, yajl_val v)
{
  yajl_val code = member (v, "exit_code"), dur = member (v, "duration_s");
  if (code == NULL || !YAJL_IS_INTEGER (code))
    return hv_mcp_tool_error ("%s: the sandbox service's answer has no exit status", hv_mcp_tool_names[p->tool]);
  long long exit_code = code->u.number.i;
  double duration = dur && YAJL_IS_NUMBER (dur) ? YAJL_GET_DOUBLE (dur) : 0;
  bool timed_out = member_true (v, "timed_out");
  bool out_cut = member_true (v, "stdout_truncated"), err_cut = member_true (v, "stderr_truncated");
  const char *out = member_string (v, "stdout"), *errs = member_string (v, "stderr");
  /* 126 or 127 with the sandbox's "haven: exec ARGV0: REASON": the
   * program never ran (docs/api.md). */
  bool not_started = (exit_code == 126 || exit_code == 127) && errs && strncmp (errs, "haven: exec ", 12) == 0;

  struct text x = { 0 };
  text_printf (&x, "exit status %lld", exit_code);
  if (timed_out)
    text_printf (&x, " (timed out after %.0f s)", duration);
  text_add (&x, "\n", 1);
  if (not_started && exit_code == 126)
    {
      /* A shell where the service said none may run: that rule alone. */
      const char *base = strrchr (p->what, '/') ? strrchr (p->what, '/') + 1 : p->what;
      static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", NULL };
      bool shell = false;
      for (size_t i = 0; shells[i] && !shell; i++)
        shell = t->shell == 0 && strcmp (base, shells[i]) == 0;
      cleanup_free char *rule = xasprintf ("%s of policy \"%s\"",
                                           shell ? "process.block_shell" : "process.allow_exec / process.block_shell",
                                           t->policy);
      hv_mcp_tools_refused (t, "exec", p->what, rule);
      if (shell)
        text_printf (&x, "%s could not be executed: policy \"%s\" lets no shell run (process.block_shell): run "
                         "the program itself with argv\n",
                     p->what, t->policy);
      else
        text_printf (&x, "%s could not be executed: policy \"%s\" does not let it run (process.allow_exec or "
                         "process.block_shell: haven policy explain %s lists what may run), or it is not an "
                         "executable file\n",
                     p->what, t->policy, t->policy);
    }
  else if (not_started)
    text_printf (&x, "%s was not found in the sandbox (the PATH of its environment)\n", p->what);
  if (timed_out)
    {
      cleanup_free char *rule = xasprintf ("timeout_s %u (or the resources.timeout of policy \"%s\")", p->timeout_s,
                                           t->policy);
      hv_mcp_tools_refused (t, "timeout", p->what, rule);
    }
  add_stream (&x, out);
  if (errs && errs[0])
    {
      text_add (&x, "--- stderr ---\n", 15);
      add_stream (&x, errs);
    }
  if (out_cut || err_cut)
    text_printf (&x, "[output truncated: %s%s%s cut at %" PRIu64 " bytes; the rest was dropped]\n",
                 out_cut ? "stdout" : "", out_cut && err_cut ? " and " : "", err_cut ? "stderr" : "", t->max_output);

  yajl_gen g = result_open (x.s, not_started);
  free (x.s);
  jg_str (g, "structuredContent");
  yajl_gen_map_open (g);
  jg_str (g, "exit_code");
  yajl_gen_integer (g, exit_code);
  jg_str (g, "timed_out");
  yajl_gen_bool (g, timed_out);
  jg_str (g, "duration_s");
  yajl_gen_double (g, duration);
  jg_kv_utf8 (g, "stdout", out ? out : "");
  jg_kv_utf8 (g, "stderr", errs ? errs : "");
  jg_str (g, "stdout_truncated");
  yajl_gen_bool (g, out_cut);
  jg_str (g, "stderr_truncated");
  yajl_gen_bool (g, err_cut);
  yajl_gen_map_close (g);
  return result_close (g);
}

static char *
read_result (hv_mcp_tools *t, const struct hv_mcp_pending *p, const char *body, size_t len)
{
  if (!hv_utf8_valid (body, len) || memchr (body, '\0', len))
    return hv_mcp_tool_error ("read_file %s: the file is not UTF-8 text (%zu bytes): read it through run_command, "
                              "e.g. argv [\"base64\", \"%s\"]",
                              p->what, len, p->what);
  size_t shown = len;
  if (shown > t->max_output)
    {
      /* Cut at a character's start, so the text stays UTF-8. */
      shown = t->max_output;
      while (shown > 0 && ((unsigned char) body[shown] & 0xC0) == 0x80)
        shown--;
    }
  struct text x = { 0 };
  text_add (&x, body, shown);
  if (shown < len)
    text_printf (&x, "\n[file truncated: %zu of %zu bytes shown; read the rest through run_command, e.g. argv "
                     "[\"tail\", \"-c\", \"+%zu\", \"%s\"]]\n",
                 shown, len, shown + 1, p->what);
  yajl_gen g = result_open (x.s ? x.s : "", false);
  jg_str (g, "structuredContent");
  yajl_gen_map_open (g);
  jg_kv_utf8 (g, "text", x.s ? x.s : "");
  free (x.s);
  jg_kv_utf8 (g, "path", p->what);
  jg_str (g, "size");
  yajl_gen_integer (g, (long long) len);
  jg_str (g, "truncated");
  yajl_gen_bool (g, shown < len);
  yajl_gen_map_close (g);
  return result_close (g);
}

static char *
write_result (const struct hv_mcp_pending *p, yajl_val v)
{
  yajl_val size = member (v, "size");
  long long n = size && YAJL_IS_INTEGER (size) ? size->u.number.i : -1;
  cleanup_free char *text = xasprintf ("wrote %lld bytes to %s", n, p->what);
  yajl_gen g = result_open (text, false);
  jg_str (g, "structuredContent");
  yajl_gen_map_open (g);
  jg_kv_utf8 (g, "path", p->what);
  jg_str (g, "size");
  yajl_gen_integer (g, n);
  yajl_gen_map_close (g);
  return result_close (g);
}

static char *
list_result (const struct hv_mcp_pending *p, yajl_val v)
{
  yajl_val entries = member (v, "entries");
  bool cut = member_true (v, "truncated");
  struct text x = { 0 };
  size_t n = entries && YAJL_IS_ARRAY (entries) ? entries->u.array.len : 0;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val e = entries->u.array.values[i], size = member (e, "size");
      const char *type = member_string (e, "type"), *name = member_string (e, "name");
      text_printf (&x, "%-5s %10lld %s\n", type ? type : "?", size && YAJL_IS_INTEGER (size) ? size->u.number.i : 0,
                   name ? name : "?");
    }
  if (n == 0)
    text_printf (&x, "(%s is empty)\n", p->what);
  if (cut)
    text_printf (&x, "[listing truncated at %zu entries: the service's limit]\n", n);
  yajl_gen g = result_open (x.s, false);
  free (x.s);
  jg_str (g, "structuredContent");
  yajl_gen_map_open (g);
  jg_kv_utf8 (g, "path", p->what);
  jg_str (g, "entries");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      yajl_val e = entries->u.array.values[i], size = member (e, "size");
      const char *type = member_string (e, "type"), *name = member_string (e, "name");
      yajl_gen_map_open (g);
      jg_kv_utf8 (g, "name", name ? name : "");
      jg_kv_utf8 (g, "type", type ? type : "other");
      jg_str (g, "size");
      yajl_gen_integer (g, size && YAJL_IS_INTEGER (size) ? size->u.number.i : 0);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
  jg_str (g, "truncated");
  yajl_gen_bool (g, cut);
  yajl_gen_map_close (g);
  return result_close (g);
}

/* One entry of `why`: from the trail (a service denial) or from this
 * session's refusals. */
struct denial
{
  const char *time, *kind, *what, *rule, *source;
  const char *allow, *why_not; /* the trail's: the policy line that would allow it, or why none should */
};

static int
denial_cmp (const void *a, const void *b)
{
  const struct denial *x = a, *y = b;
  /* Both sources write RFC 3339 UTC times of the same form: their text
   * sorts as the times do.  An entry without a time goes first. */
  int c = strcmp (x->time ? x->time : "", y->time ? y->time : "");
  return c ? c : strcmp (x->source, y->source);
}

/* denials: the service's answer (NULL: it has no denials endpoint);
 * note: what to say of the trail. */
static char *
why_result (hv_mcp_tools *t, const struct hv_mcp_pending *p, yajl_val v, const char *note)
{
  yajl_val list = member (v, "denials");
  size_t n_trail = list && YAJL_IS_ARRAY (list) ? list->u.array.len : 0;
  size_t n = 0;
  struct denial *d = xmalloc0 ((n_trail + t->n_refusals + 1) * sizeof (*d));
  for (size_t i = 0; i < n_trail; i++)
    {
      yajl_val e = list->u.array.values[i];
      d[n++] = (struct denial) { member_string (e, "time"), member_string (e, "kind"), member_string (e, "what"),
                                 member_string (e, "rule"), "trail", member_string (e, "allow"),
                                 member_string (e, "why_not") };
    }
  for (size_t i = 0; i < t->n_refusals; i++)
    {
      const struct hv_mcp_refusal *r = &t->refusals[(t->first_refusal + i) % HV_MCP_REFUSALS_MAX];
      d[n++] = (struct denial) { r->time, r->kind, r->what, r->rule, "session", NULL, NULL };
    }
  qsort (d, n, sizeof (*d), denial_cmp);
  size_t first = n > p->limit ? n - p->limit : 0;

  struct text x = { 0 };
  const char *trail = member_string (v, "trail");
  if (n == first)
    text_printf (&x, "Nothing was refused in sandbox %s (policy \"%s\") that haven knows of.\n", t->id, t->policy);
  else
    text_printf (&x, "The last %zu refusals in sandbox %s (policy \"%s\"), newest last:\n", n - first, t->id,
                 t->policy);
  for (size_t i = first; i < n; i++)
    {
      text_printf (&x, "%s  %s  %s  (rule: %s)%s\n", d[i].time ? d[i].time : "-", d[i].kind ? d[i].kind : "?",
                   d[i].what ? d[i].what : "?", d[i].rule ? d[i].rule : "not named",
                   strcmp (d[i].source, "session") == 0 ? " [refused by the service to this session]" : "");
      if (d[i].why_not && d[i].why_not[0])
        text_printf (&x, "    no policy line should allow it: %s\n", d[i].why_not);
      else if (d[i].allow && d[i].allow[0])
        text_printf (&x, "    allowed by this line in a policy that extends \"%s\": %s\n", t->policy, d[i].allow);
    }
  if (trail)
    text_printf (&x, "The policy's audit trail: %s\n", trail);
  if (note && note[0])
    text_printf (&x, "%s\n", note);

  yajl_gen g = result_open (x.s, false);
  free (x.s);
  jg_str (g, "structuredContent");
  yajl_gen_map_open (g);
  jg_str (g, "trail");
  if (trail)
    jg_utf8 (g, trail);
  else
    yajl_gen_null (g);
  jg_str (g, "denials");
  yajl_gen_array_open (g);
  for (size_t i = first; i < n; i++)
    {
      yajl_gen_map_open (g);
      jg_kv_utf8 (g, "time", d[i].time ? d[i].time : "");
      jg_kv_utf8 (g, "kind", d[i].kind ? d[i].kind : "");
      jg_kv_utf8 (g, "what", d[i].what ? d[i].what : "");
      jg_kv_utf8 (g, "rule", d[i].rule ? d[i].rule : "");
      if (d[i].allow)
        jg_kv_utf8 (g, "allow", d[i].allow);
      if (d[i].why_not)
        jg_kv_utf8 (g, "why_not", d[i].why_not);
      jg_kv (g, "source", d[i].source);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
  jg_kv_utf8 (g, "note", note ? note : "");
  yajl_gen_map_close (g);
  free (d);
  return result_close (g);
}

char *
hv_mcp_tools_answer (hv_mcp_tools *t, const struct hv_mcp_pending *p, int status, const char *body, size_t len)
{
  if (p->tool == HV_TOOL_WHY && status == 404 && strstr (body ? body : "", "no such resource"))
    {
      /* A service older than GET .../denials: no path of that name. */
      return why_result (t, p, NULL,
                         "This haven serve keeps no per-sandbox denials (it has no GET /v1/sandboxes/ID/denials: "
                         "an older version); only this session's own refusals are listed.");
    }
  if (status < 200 || status > 299)
    return service_error (t, p, status, body, len);
  if (p->tool == HV_TOOL_READ_FILE)
    return read_result (t, p, body ? body : "", body ? len : 0);
  yajl_val v = parse_answer (body, len);
  if (v == NULL)
    return hv_mcp_tool_error ("%s: the sandbox service's answer is not the JSON it should be",
                              hv_mcp_tool_names[p->tool]);
  char *r = NULL;
  switch (p->tool)
    {
    case HV_TOOL_RUN_COMMAND:
    case HV_TOOL_RUN_CODE:
      r = run_result (t, p, v);
      break;
    case HV_TOOL_WRITE_FILE:
      r = write_result (p, v);
      break;
    case HV_TOOL_LIST_FILES:
      r = list_result (p, v);
      break;
    case HV_TOOL_WHY:
      r = why_result (t, p, v, member_string (v, "note"));
      break;
    case HV_TOOL_READ_FILE:
    case HV_TOOL_N:
      break;
    }
  yajl_tree_free (v);
  return r;
}

/* The sandbox is gone (a call's answer said so, or the service closed
 * the held connection): every later call is answered with why. */
void
hv_mcp_tools_sandbox_gone (hv_mcp_tools *t, const char *why_gone)
{
  if (t->gone == NULL)
    t->gone = xstrdup (why_gone);
}
