/* One MCP session's lifecycle over the wire of mcp_proto.c: what each
 * message a client sends does, the calls in flight, and the queue of
 * lines to write (mcp_session.h).  No I/O: the server loop reads and
 * writes, the tools layer answers calls. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "json_gen.h"
#include "mcp_session.h"

const char *const HV_MCP_VERSIONS[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" };
const size_t HV_MCP_N_VERSIONS = sizeof (HV_MCP_VERSIONS) / sizeof (HV_MCP_VERSIONS[0]);

struct hv_mcp_session
{
  struct hv_mcp_server_info info;
  const struct hv_mcp_tools_ops *ops;
  void *ctx;
  const char *version; /* one of HV_MCP_VERSIONS once initialized */
  bool ready;          /* notifications/initialized seen */
  char *calls[HV_MCP_CALLS_MAX]; /* ids of the calls in flight */
  size_t n_calls;
  char *out;
  size_t out_start, out_end, out_cap;
};

hv_mcp_session *
hv_mcp_session_new (const struct hv_mcp_server_info *info, const struct hv_mcp_tools_ops *ops, void *ctx)
{
  hv_mcp_session *s = xmalloc0 (sizeof (*s));
  s->info = *info;
  s->ops = ops;
  s->ctx = ctx;
  return s;
}

void
hv_mcp_session_free (hv_mcp_session *s)
{
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->n_calls; i++)
    free (s->calls[i]);
  free (s->out);
  free (s);
}

/* --- the output queue ----------------------------------------------------- */

static void
queue (hv_mcp_session *s, char *line)
{
  size_t n = strlen (line);
  if (s->out_start == s->out_end)
    s->out_start = s->out_end = 0;
  if (s->out_end + n > s->out_cap)
    {
      /* What was written goes first, then the queue grows. */
      if (s->out_start > 0)
        {
          memmove (s->out, s->out + s->out_start, s->out_end - s->out_start);
          s->out_end -= s->out_start;
          s->out_start = 0;
        }
      if (s->out_end + n > s->out_cap)
        {
          size_t cap = s->out_cap ? s->out_cap : 4096;
          while (cap < s->out_end + n)
            cap *= 2;
          s->out = xrealloc (s->out, cap);
          s->out_cap = cap;
        }
    }
  memcpy (s->out + s->out_end, line, n);
  s->out_end += n;
  free (line);
}

static void
answer_error (hv_mcp_session *s, const char *id, int code, const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));

static void
answer_error (hv_mcp_session *s, const char *id, int code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *msg = xvasprintf (fmt, ap);
  va_end (ap);
  queue (s, hv_mcp_error_line (id, code, msg));
}

static void
answer_result (hv_mcp_session *s, const char *id, const char *result_json)
{
  char *line = hv_mcp_result_line (id, result_json);
  /* An error line is short; a result may be long, and a server that does
   * not stop reading when the client does not read would queue without
   * end. */
  if (s->out_end - s->out_start + strlen (line) > HV_MCP_OUTPUT_MAX)
    {
      free (line);
      line = hv_mcp_error_line (id, HV_JSONRPC_INTERNAL_ERROR, "the answer does not fit haven's output queue");
    }
  queue (s, line);
}

const char *
hv_mcp_session_output (hv_mcp_session *s, size_t *len)
{
  *len = s->out_end - s->out_start;
  return s->out ? s->out + s->out_start : "";
}

void
hv_mcp_session_output_consumed (hv_mcp_session *s, size_t n)
{
  if (n > s->out_end - s->out_start)
    n = s->out_end - s->out_start;
  s->out_start += n;
}

bool
hv_mcp_session_output_full (const hv_mcp_session *s)
{
  return s->out_end - s->out_start > HV_MCP_OUTPUT_HIGH;
}

/* --- calls in flight ------------------------------------------------------ */

static ssize_t
call_index (const hv_mcp_session *s, const char *id)
{
  for (size_t i = 0; i < s->n_calls; i++)
    if (strcmp (s->calls[i], id) == 0)
      return (ssize_t) i;
  return -1;
}

/* Take id out of the calls in flight: whether it was there. */
static bool
call_remove (hv_mcp_session *s, const char *id)
{
  ssize_t i = id ? call_index (s, id) : -1;
  if (i < 0)
    return false;
  free (s->calls[i]);
  s->calls[i] = s->calls[--s->n_calls];
  s->calls[s->n_calls] = NULL;
  return true;
}

bool
hv_mcp_session_in_flight (const hv_mcp_session *s, const char *id_json)
{
  return id_json != NULL && call_index (s, id_json) >= 0;
}

void
hv_mcp_session_complete (hv_mcp_session *s, const char *id_json, const char *result_json)
{
  /* A cancelled call, or one never taken: the client waits for nothing. */
  if (!call_remove (s, id_json))
    return;
  answer_result (s, id_json, result_json);
}

/* --- the requests --------------------------------------------------------- */

const char *
hv_mcp_session_version (const hv_mcp_session *s)
{
  return s->version;
}

bool
hv_mcp_session_ready (const hv_mcp_session *s)
{
  return s->ready;
}

static void
do_initialize (hv_mcp_session *s, const struct hv_mcp_message *m)
{
  if (s->version != NULL)
    {
      answer_error (s, m->id, HV_JSONRPC_INVALID_REQUEST, "the session is already initialized");
      return;
    }
  yajl_val asked = hv_mcp_param (m->params, "protocolVersion");
  if (asked == NULL || !YAJL_IS_STRING (asked))
    {
      answer_error (s, m->id, HV_JSONRPC_INVALID_PARAMS, "initialize: params.protocolVersion must be a string");
      return;
    }
  yajl_val caps = hv_mcp_param (m->params, "capabilities");
  yajl_val client = hv_mcp_param (m->params, "clientInfo");
  if ((caps && !YAJL_IS_OBJECT (caps)) || (client && !YAJL_IS_OBJECT (client)))
    {
      answer_error (s, m->id, HV_JSONRPC_INVALID_PARAMS,
                    "initialize: params.capabilities and params.clientInfo must be objects");
      return;
    }
  /* The spec: the revision asked for if haven speaks it, else the newest
   * haven speaks; a client that cannot speak that one disconnects. */
  s->version = HV_MCP_VERSIONS[0];
  for (size_t i = 0; i < HV_MCP_N_VERSIONS; i++)
    if (strcmp (asked->u.string, HV_MCP_VERSIONS[i]) == 0)
      s->version = HV_MCP_VERSIONS[i];

  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv (g, "protocolVersion", s->version);
  jg_str (g, "capabilities");
  yajl_gen_map_open (g);
  jg_str (g, "tools");
  yajl_gen_map_open (g);
  jg_str (g, "listChanged");
  yajl_gen_bool (g, 0);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  jg_str (g, "serverInfo");
  yajl_gen_map_open (g);
  jg_kv_utf8 (g, "name", s->info.name);
  jg_kv_utf8 (g, "version", s->info.version);
  yajl_gen_map_close (g);
  if (s->info.instructions)
    jg_kv_utf8 (g, "instructions", s->info.instructions);
  yajl_gen_map_close (g);
  cleanup_free char *result = jg_finish (g);
  answer_result (s, m->id, result);
}

static void
do_tools_list (hv_mcp_session *s, const struct hv_mcp_message *m)
{
  /* One page holds every tool: a cursor can only be the one never given
   * out, and is read past. */
  yajl_val cursor = hv_mcp_param (m->params, "cursor");
  if (cursor && !YAJL_IS_STRING (cursor))
    {
      answer_error (s, m->id, HV_JSONRPC_INVALID_PARAMS, "tools/list: params.cursor must be a string");
      return;
    }
  const char *tools = s->ops->list_json (s->ctx);
  /* answer_result checks the whole is JSON; that tools is an array is
   * for here to check. */
  if (tools == NULL || tools[strspn (tools, " \t\r\n")] != '[')
    {
      answer_error (s, m->id, HV_JSONRPC_INTERNAL_ERROR, "haven's tool list is not a JSON array");
      return;
    }
  cleanup_free char *result = xasprintf ("{\"tools\":%s}", tools);
  answer_result (s, m->id, result);
}

static void
do_tools_call (hv_mcp_session *s, const struct hv_mcp_message *m)
{
  yajl_val name = hv_mcp_param (m->params, "name");
  if (name == NULL || !YAJL_IS_STRING (name))
    {
      answer_error (s, m->id, HV_JSONRPC_INVALID_PARAMS, "tools/call: params.name must be a string");
      return;
    }
  yajl_val args = hv_mcp_param (m->params, "arguments");
  if (args && !YAJL_IS_OBJECT (args))
    {
      answer_error (s, m->id, HV_JSONRPC_INVALID_PARAMS, "tools/call: params.arguments must be an object");
      return;
    }
  if (s->n_calls >= HV_MCP_CALLS_MAX)
    {
      answer_error (s, m->id, HV_JSONRPC_INTERNAL_ERROR, "too many calls in flight (at most %d)",
                    HV_MCP_CALLS_MAX);
      return;
    }
  /* In flight before the tools see it: they may complete it at once,
   * from inside call. */
  s->calls[s->n_calls++] = xstrdup (m->id);
  int code = 0;
  cleanup_free char *message = NULL;
  if (s->ops->call (s->ctx, m->id, name->u.string, args, &code, &message) < 0)
    {
      call_remove (s, m->id);
      answer_error (s, m->id, code ? code : HV_JSONRPC_INVALID_PARAMS, "%s",
                    message ? message : "tools/call: the call was refused");
    }
}

static void
do_request (hv_mcp_session *s, const struct hv_mcp_message *m)
{
  /* An answer to this id would be taken for the call's. */
  if (call_index (s, m->id) >= 0)
    {
      answer_error (s, m->id, HV_JSONRPC_INVALID_REQUEST, "the id %.64s is a call's still in flight", m->id);
      return;
    }
  if (strcmp (m->method, "ping") == 0)
    answer_result (s, m->id, "{}");
  else if (strcmp (m->method, "initialize") == 0)
    do_initialize (s, m);
  else if (s->version == NULL)
    answer_error (s, m->id, HV_MCP_NOT_INITIALIZED, "the session is not initialized (send initialize first)");
  else if (strcmp (m->method, "tools/list") == 0)
    do_tools_list (s, m);
  else if (strcmp (m->method, "tools/call") == 0)
    do_tools_call (s, m);
  else
    answer_error (s, m->id, HV_JSONRPC_METHOD_NOT_FOUND, "method not found: %.100s", m->method);
}

static void
do_notification (hv_mcp_session *s, const struct hv_mcp_message *m)
{
  if (strcmp (m->method, "notifications/initialized") == 0)
    {
      /* Before initialize it means nothing; ignored like any other. */
      if (s->version)
        s->ready = true;
      return;
    }
  if (strcmp (m->method, "notifications/cancelled") == 0)
    {
      /* An id that is not in flight (done, never sent, initialize's) is
       * ignored, as the spec says. */
      cleanup_free char *id = hv_mcp_id_json (hv_mcp_param (m->params, "requestId"));
      if (call_remove (s, id))
        s->ops->cancel (s->ctx, id);
      return;
    }
  /* Any other notification: nothing to answer, nothing to do. */
}

void
hv_mcp_session_input (hv_mcp_session *s, const char *line, size_t len, bool too_long)
{
  if (too_long)
    {
      answer_error (s, NULL, HV_JSONRPC_PARSE_ERROR, "a message longer than %d bytes", HV_MCP_LINE_MAX);
      return;
    }
  struct hv_mcp_message m;
  int code;
  cleanup_free char *id = NULL;
  cleanup_error hv_error *err = NULL;
  if (hv_mcp_parse (line, len, &m, &code, &id, &err) < 0)
    {
      if (code != 0)
        answer_error (s, id, code, "%s", err->msg);
      return;
    }
  if (m.kind == HV_MCP_REQUEST)
    do_request (s, &m);
  else if (m.kind == HV_MCP_NOTIFICATION)
    do_notification (s, &m);
  /* A response: haven sends no requests, so there is nothing it answers. */
  hv_mcp_message_free (&m);
}
