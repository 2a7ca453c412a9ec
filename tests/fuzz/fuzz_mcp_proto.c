/* Fuzz target: haven mcp's protocol layer (session/mcp/mcp_proto.c,
 * mcp_session.c), which reads whatever a client writes to its stdin.
 *
 * The first byte: bits 0-3 the size of the pieces the stream is fed in
 * (0: all at once), bit 4 a line bound of 64 bytes (else
 * HV_MCP_LINE_MAX), bit 5 whether the oldest call in flight is answered
 * after each line (else all at the end).  The rest is the stream.  Each
 * line goes to hv_mcp_parse (which fails exactly when it sets an error,
 * with a code it may give; a message taken has the parts its kind has,
 * an id that is JSON, and only strings of valid UTF-8 without NUL,
 * no member name twice) and to a session whose tools are a fake:
 * "now" is answered from inside the call with its arguments, "nope" is no
 * tool, any other is answered later with the input's bytes (as a
 * string, or at the end as the whole result's text).  The session may
 * call the tools only for an id not in flight, cancel only one that is,
 * and every line it writes is one JSON-RPC answer: one line, valid UTF-8,
 * an object with "jsonrpc":"2.0", an id, and a result object or an error
 * with a known code and a message.  Each request line is answered exactly
 * once with its id unless cancelled, each line refused with a code once
 * (with its id, or null), nothing else. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "fuzz_util.h"
#include "json_gen.h"
#include "mcp_proto.h"
#include "mcp_session.h"
#include "utf8.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

struct fake
{
  hv_mcp_session *s;
  char *pending[HV_MCP_CALLS_MAX]; /* taken, not answered nor cancelled */
  size_t n_pending;
  const char *raw; /* the stream, for answers */
  size_t raw_len;
  /* The ids ("null" for none) of the answers owed: one per request line
   * and per line refused with a code, taken off by each answer written
   * and by a cancel.  Every answer must be owed, and none owed at the end. */
  char **owed;
  size_t n_owed;
};

static void
owe (struct fake *f, const char *id)
{
  f->owed = xrealloc (f->owed, (f->n_owed + 1) * sizeof (*f->owed));
  f->owed[f->n_owed++] = xstrdup (id ? id : "null");
}

static void
paid (struct fake *f, const char *id)
{
  for (size_t i = 0; i < f->n_owed; i++)
    if (strcmp (f->owed[i], id) == 0)
      {
        free (f->owed[i]);
        f->owed[i] = f->owed[--f->n_owed];
        return;
      }
  fuzz_fail ("an answer for %s, which nothing asked for (or asked once)", id);
}

static const char *
fake_list (void *ctx)
{
  (void) ctx;
  return "[{\"name\":\"now\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"later\",\"inputSchema\":{\"type\":"
         "\"object\"}}]";
}

static ssize_t
pending_index (struct fake *f, const char *id)
{
  for (size_t i = 0; i < f->n_pending; i++)
    if (strcmp (f->pending[i], id) == 0)
      return (ssize_t) i;
  return -1;
}

static void
pending_drop (struct fake *f, size_t i)
{
  free (f->pending[i]);
  memmove (f->pending + i, f->pending + i + 1, (f->n_pending - i - 1) * sizeof (f->pending[0]));
  f->n_pending--;
}

/* Every string and member name of v is valid UTF-8 without NUL (the
 * tree's strings end at their NUL: a length is not kept, so the check
 * is that the NUL-terminated text is valid), no name twice in an object. */
static void
check_tree (yajl_val v)
{
  if (YAJL_IS_STRING (v) && !hv_utf8_valid (v->u.string, strlen (v->u.string)))
    fuzz_fail ("a string taken that is not UTF-8");
  if (YAJL_IS_ARRAY (v))
    for (size_t i = 0; i < v->u.array.len; i++)
      check_tree (v->u.array.values[i]);
  if (YAJL_IS_OBJECT (v))
    for (size_t i = 0; i < v->u.object.len; i++)
      {
        const char *k = v->u.object.keys[i];
        if (!hv_utf8_valid (k, strlen (k)))
          fuzz_fail ("a member name taken that is not UTF-8");
        for (size_t j = 0; j < i; j++)
          if (strcmp (k, v->u.object.keys[j]) == 0)
            fuzz_fail ("the member name \"%s\" taken twice", k);
        check_tree (v->u.object.values[i]);
      }
}

static char *
result_with (const char *text, size_t len, yajl_val args)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_str (g, "content");
  yajl_gen_array_open (g);
  yajl_gen_map_open (g);
  jg_kv (g, "type", "text");
  jg_str (g, "text");
  /* The bytes as they are: the session's writer must make them UTF-8. */
  yajl_gen_string (g, (const unsigned char *) text, len);
  yajl_gen_map_close (g);
  yajl_gen_array_close (g);
  if (args)
    {
      jg_str (g, "structuredContent");
      jg_value (g, args);
    }
  yajl_gen_map_close (g);
  return jg_finish (g);
}

static int
fake_call (void *ctx, const char *id, const char *name, yajl_val args, int *code, char **message)
{
  struct fake *f = ctx;
  if (pending_index (f, id) >= 0 || hv_mcp_session_in_flight (f->s, id) == false)
    fuzz_fail ("a call for %s, %s", id, pending_index (f, id) >= 0 ? "already in flight" : "not in flight");
  if (f->n_pending >= HV_MCP_CALLS_MAX)
    fuzz_fail ("more than %d calls in flight", HV_MCP_CALLS_MAX);
  if (!hv_utf8_valid (name, strlen (name)) || (args && !YAJL_IS_OBJECT (args)))
    fuzz_fail ("a call with a bad name or arguments");
  if (strcmp (name, "nope") == 0)
    {
      *code = HV_JSONRPC_INVALID_PARAMS;
      *message = xasprintf ("unknown tool: %s", name);
      return -1;
    }
  if (strcmp (name, "now") == 0)
    {
      char *result = result_with (name, strlen (name), args);
      hv_mcp_session_complete (f->s, id, result);
      free (result);
      if (hv_mcp_session_in_flight (f->s, id))
        fuzz_fail ("a call answered is still in flight");
      return 0;
    }
  f->pending[f->n_pending++] = xstrdup (id);
  return 0;
}

static void
fake_cancel (void *ctx, const char *id)
{
  struct fake *f = ctx;
  ssize_t i = pending_index (f, id);
  if (i < 0)
    fuzz_fail ("a cancel for %s, not in flight", id);
  if (hv_mcp_session_in_flight (f->s, id))
    fuzz_fail ("a call cancelled is still in flight");
  pending_drop (f, (size_t) i);
  paid (f, id); /* a cancelled call is never answered */
}

static const struct hv_mcp_tools_ops fake_ops = { .list_json = fake_list, .call = fake_call, .cancel = fake_cancel };

static void
answer_oldest (struct fake *f, bool whole_text)
{
  cleanup_free char *result = NULL;
  if (whole_text)
    result = strndup (f->raw, f->raw_len); /* any text: not JSON is haven's INTERNAL_ERROR */
  else
    result = result_with (f->raw, f->raw_len, NULL);
  hv_mcp_session_complete (f->s, f->pending[0], result);
  pending_drop (f, 0);
}

static yajl_val
member (yajl_val obj, const char *key)
{
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return obj->u.object.values[i];
  return NULL;
}

/* The answer's id as the session's texts spell ids, "null" for null
 * (malloc'd). */
static char *
check_answer (const char *line, size_t len)
{
  if (!hv_utf8_valid (line, len))
    fuzz_fail ("an answer that is not UTF-8: %.*s", (int) len, line);
  if (memchr (line, '\r', len))
    fuzz_fail ("an answer with a CR");
  cleanup_free char *text = strndup (line, len);
  if (strlen (text) != len)
    fuzz_fail ("an answer with a NUL byte");
  char ebuf[256];
  yajl_val v = yajl_tree_parse (text, ebuf, sizeof (ebuf));
  if (v == NULL || !YAJL_IS_OBJECT (v))
    fuzz_fail ("an answer that is not a JSON object (%s): %s", ebuf, text);
  yajl_val ver = member (v, "jsonrpc"), id = member (v, "id"), result = member (v, "result"),
           error = member (v, "error");
  if (ver == NULL || !YAJL_IS_STRING (ver) || strcmp (ver->u.string, "2.0") != 0)
    fuzz_fail ("an answer without \"jsonrpc\":\"2.0\": %s", text);
  if (id == NULL || !(YAJL_IS_NULL (id) || YAJL_IS_STRING (id) || YAJL_IS_INTEGER (id)))
    fuzz_fail ("an answer without an id: %s", text);
  if (v->u.object.len != 3 || (result == NULL) == (error == NULL))
    fuzz_fail ("an answer with other members: %s", text);
  if (result && !YAJL_IS_OBJECT (result))
    fuzz_fail ("a result that is not an object: %s", text);
  if (error)
    {
      yajl_val code = YAJL_IS_OBJECT (error) ? member (error, "code") : NULL;
      yajl_val msg = YAJL_IS_OBJECT (error) ? member (error, "message") : NULL;
      if (code == NULL || !YAJL_IS_INTEGER (code) || msg == NULL || !YAJL_IS_STRING (msg))
        fuzz_fail ("an error without code or message: %s", text);
      long long c = YAJL_GET_INTEGER (code);
      if (c != HV_JSONRPC_PARSE_ERROR && c != HV_JSONRPC_INVALID_REQUEST && c != HV_JSONRPC_METHOD_NOT_FOUND
          && c != HV_JSONRPC_INVALID_PARAMS && c != HV_JSONRPC_INTERNAL_ERROR && c != HV_MCP_NOT_INITIALIZED)
        fuzz_fail ("an unknown error code: %s", text);
    }
  char *id_text = YAJL_IS_NULL (id) ? xstrdup ("null") : hv_mcp_id_json (id);
  if (id_text == NULL)
    fuzz_fail ("an answer's id that no request could have had: %s", text);
  yajl_tree_free (v);
  return id_text;
}

static void
drain (struct fake *f)
{
  hv_mcp_session *s = f->s;
  size_t len;
  const char *out = hv_mcp_session_output (s, &len);
  if (len > 0 && out[len - 1] != '\n')
    fuzz_fail ("output that does not end a line");
  for (size_t off = 0; off < len;)
    {
      const char *nl = memchr (out + off, '\n', len - off);
      cleanup_free char *id = check_answer (out + off, (size_t) (nl - (out + off)));
      paid (f, id);
      off = (size_t) (nl - out) + 1;
    }
  hv_mcp_session_output_consumed (s, len);
}

/* Checks hv_mcp_parse on line; whether an answer is owed for it, and
 * its id in *id_owed (NULL: null). */
static bool
check_parse (const char *line, size_t len, char **id_owed)
{
  *id_owed = NULL;
  struct hv_mcp_message m;
  int code = -1;
  char *id = NULL;
  hv_error *err = NULL;
  int r = hv_mcp_parse (line, len, &m, &code, &id, &err);
  if ((r < 0) != (err != NULL) || (r != 0 && r != -1))
    fuzz_fail ("parse: %d with%s an error", r, err ? "" : "out");
  if (r < 0)
    {
      if (code != 0 && code != HV_JSONRPC_PARSE_ERROR && code != HV_JSONRPC_INVALID_REQUEST)
        fuzz_fail ("parse: code %d", code);
      if (id && code != HV_JSONRPC_INVALID_REQUEST)
        fuzz_fail ("parse: an id with code %d", code);
      if (m.root || m.id || m.method || m.params)
        fuzz_fail ("parse: a refusal kept a message");
      if (code != 0)
        {
          /* The answer the session gives (its message may hold a cut
           * character of the line's). */
          char *l = hv_mcp_error_line (id, code, err->msg);
          free (check_answer (l, strlen (l) - 1));
          free (l);
        }
      *id_owed = id;
      hv_error_free (&err);
      return code != 0;
    }
  if (id || code != 0)
    fuzz_fail ("parse: taken with an id or a code out");
  if ((m.method == NULL) != (m.kind == HV_MCP_RESPONSE) || (m.kind == HV_MCP_REQUEST && m.id == NULL)
      || (m.kind == HV_MCP_NOTIFICATION && m.id != NULL) || (m.params && !YAJL_IS_OBJECT (m.params))
      || m.root == NULL)
    fuzz_fail ("parse: a message of kind %d without its parts", (int) m.kind);
  check_tree (m.root);
  if (m.id)
    {
      /* The id is JSON text, a string or an integer, within its bound. */
      yajl_val v = yajl_tree_parse (m.id, NULL, 0);
      if (v == NULL || !(YAJL_IS_STRING (v) || YAJL_IS_INTEGER (v)) || strlen (m.id) > HV_MCP_ID_MAX * 6 + 2)
        fuzz_fail ("parse: an id that is not one: %s", m.id);
      cleanup_free char *again = hv_mcp_id_json (v);
      if (again == NULL || strcmp (again, m.id) != 0)
        fuzz_fail ("parse: the id %s is written again as %s", m.id, again ? again : "nothing");
      yajl_tree_free (v);
    }
  bool owed = m.kind == HV_MCP_REQUEST;
  if (owed)
    *id_owed = steal_pointer (&m.id);
  hv_mcp_message_free (&m);
  return owed;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  uint8_t sel = data[0];
  const char *stream = (const char *) data + 1;
  size_t len = size - 1;
  size_t piece = sel & 15 ? sel & 15 : (len ? len : 1);
  size_t line_max = sel & 16 ? 64 : HV_MCP_LINE_MAX;
  bool answer_each = sel & 32;

  struct fake f = { .raw = stream, .raw_len = len };
  struct hv_mcp_server_info info = { .name = "haven", .version = "0", .instructions = "fuzz" };
  f.s = hv_mcp_session_new (&info, &fake_ops, &f);
  hv_mcp_reader *r = hv_mcp_reader_new (line_max);
  for (size_t off = 0;; off += piece)
    {
      if (off < len)
        {
          /* Each piece in a buffer of exactly its size: a read past it is seen. */
          size_t n = len - off < piece ? len - off : piece;
          char *buf = malloc (n);
          memcpy (buf, stream + off, n);
          hv_mcp_reader_feed (r, buf, n);
          free (buf);
        }
      else
        hv_mcp_reader_eof (r);
      const char *line;
      size_t n;
      int rc;
      while ((rc = hv_mcp_reader_next (r, &line, &n)) > 0)
        {
          if (rc == 1)
            {
              if (n == 0 || n > line_max || memchr (line, '\n', n) || line[n] != '\0')
                fuzz_fail ("the reader gave a line it should not have");
              cleanup_free char *id = NULL;
              if (check_parse (line, n, &id))
                owe (&f, id);
            }
          else
            owe (&f, NULL);
          hv_mcp_session_input (f.s, rc == 1 ? line : "", rc == 1 ? n : 0, rc == 2);
          if (answer_each && f.n_pending > 0)
            answer_oldest (&f, false);
          drain (&f);
        }
      if (rc < 0)
        break;
    }
  while (f.n_pending > 0)
    {
      answer_oldest (&f, f.n_pending & 1);
      drain (&f);
    }
  if (f.n_owed > 0)
    fuzz_fail ("%zu answers never written (the first for %s)", f.n_owed, f.owed[0]);
  free (f.owed);
  hv_mcp_reader_free (r);
  hv_mcp_session_free (f.s);
  return 0;
}
