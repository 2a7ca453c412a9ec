/* Unit tests of haven mcp's protocol layer (session/mcp/mcp_proto.c,
 * mcp_session.c): lines framed from any split of the stream, the size
 * bound, every JSON-RPC error a client can get and with which id, version
 * negotiation, the lifecycle's order, calls and their cancellation, and
 * that every line written is one JSON object on one line. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "mcp_proto.h"
#include "mcp_session.h"
#include "utf8.h"

/* --- framing -------------------------------------------------------------- */

/* Every line the reader gives for stream fed in pieces of at most `piece`
 * bytes then EOF, joined as "line|line|" with a too-long line as "!". */
static char *
frame (const char *stream, size_t len, size_t line_max, size_t piece)
{
  hv_mcp_reader *r = hv_mcp_reader_new (line_max);
  char *out = NULL;
  size_t out_len = 0;
  FILE *f = open_memstream (&out, &out_len);
  size_t off = 0;
  for (bool done = false; !done;)
    {
      if (off < len)
        {
          size_t n = len - off < piece ? len - off : piece;
          hv_mcp_reader_feed (r, stream + off, n);
          off += n;
        }
      else
        hv_mcp_reader_eof (r);
      const char *line;
      size_t n;
      int rc;
      while ((rc = hv_mcp_reader_next (r, &line, &n)) > 0)
        {
          if (rc == 2)
            fputs ("!|", f);
          else
            {
              assert_int_equal (strlen (line), n); /* NUL-terminated in place */
              fprintf (f, "%.*s|", (int) n, line);
            }
        }
      done = rc < 0;
    }
  fclose (f);
  hv_mcp_reader_free (r);
  return out;
}

static void
expect_frames (const char *stream, size_t line_max, const char *expected)
{
  size_t len = strlen (stream);
  for (size_t piece = 1; piece <= len + 1; piece++)
    {
      char *got = frame (stream, len, line_max, piece);
      if (strcmp (got, expected) != 0)
        fail_msg ("pieces of %zu: \"%s\", expected \"%s\"", piece, got, expected);
      free (got);
    }
}

static void
test_reader_splits (void **state)
{
  (void) state;
  expect_frames ("a\nbc\r\n\n{x}", 100, "a|bc|{x}|");
  /* A '\r' is dropped only before the '\n' (and at EOF). */
  expect_frames ("a\rb\n\r\r\n\rc\r", 100, "a\rb|\r|\rc|");
  expect_frames ("\n\n\r\n", 100, "");
  expect_frames ("", 100, "");
  expect_frames ("{\"a\":1}\n{\"b\":2}\n", 100, "{\"a\":1}|{\"b\":2}|");
}

static void
test_reader_limits (void **state)
{
  (void) state;
  /* Exactly line_max is a line, with or without its '\r'; one more is not. */
  expect_frames ("12345678\n12345678\r\nx\n", 8, "12345678|12345678|x|");
  expect_frames ("123456789\nok\n", 8, "!|ok|");
  expect_frames ("123456789\r\nok\n", 8, "!|ok|");
  /* Reported once however long, the rest skipped to its newline. */
  expect_frames ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nok\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n", 8,
                 "!|ok|!|");
  /* Cut by EOF while too long: reported once, nothing more. */
  expect_frames ("ok\naaaaaaaaaaaaaaaaaaaaaaaaaa", 8, "ok|!|");
  /* Two long lines in a row: each reported. */
  expect_frames ("aaaaaaaaaaaaaaaa\nbbbbbbbbbbbbbbbb\nc\n", 8, "!|!|c|");

  /* A long line fed in large pieces never held whole: the reader keeps
   * at most line_max and a piece (its buffer is not seen, but a
   * 64 MiB line with a 16-byte bound must come and go quickly). */
  hv_mcp_reader *r = hv_mcp_reader_new (16);
  static char chunk[1 << 16];
  memset (chunk, 'x', sizeof (chunk));
  const char *line;
  size_t n;
  int reported = 0;
  for (int i = 0; i < 1024; i++)
    {
      hv_mcp_reader_feed (r, chunk, sizeof (chunk));
      int rc;
      while ((rc = hv_mcp_reader_next (r, &line, &n)) != 0)
        {
          assert_int_equal (rc, 2);
          reported++;
        }
    }
  hv_mcp_reader_feed (r, "\n{}\n", 4);
  assert_int_equal (hv_mcp_reader_next (r, &line, &n), 1);
  assert_string_equal (line, "{}");
  assert_int_equal (hv_mcp_reader_next (r, &line, &n), 0);
  hv_mcp_reader_eof (r);
  assert_int_equal (hv_mcp_reader_next (r, &line, &n), -1);
  assert_int_equal (reported, 1);
  hv_mcp_reader_free (r);
}

/* --- parsing -------------------------------------------------------------- */

static void
expect_refused_n (const char *line, size_t len, int code, const char *id, const char *msg_part)
{
  struct hv_mcp_message m;
  int c = 12345;
  char *id_out = (char *) "x";
  hv_error *err = NULL;
  if (hv_mcp_parse (line, len, &m, &c, &id_out, &err) == 0)
    fail_msg ("%s: taken, expected code %d", line, code);
  if (c != code)
    fail_msg ("%s: code %d, expected %d (%s)", line, c, code, err ? err->msg : "");
  if ((id == NULL) != (id_out == NULL) || (id && strcmp (id, id_out) != 0))
    fail_msg ("%s: id %s, expected %s", line, id_out ? id_out : "(none)", id ? id : "(none)");
  assert_non_null (err);
  if (msg_part && strstr (err->msg, msg_part) == NULL)
    fail_msg ("%s: \"%s\" does not say \"%s\"", line, err->msg, msg_part);
  assert_null (m.root);
  assert_null (m.id);
  assert_null (m.method);
  free (id_out);
  hv_error_free (&err);
}

static void
expect_refused (const char *line, int code, const char *id, const char *msg_part)
{
  expect_refused_n (line, strlen (line), code, id, msg_part);
}

/* A request whose JSON nests depth levels (the message itself is one). */
static char *
deep_message (int depth)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  fputs ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":", f);
  for (int i = 2; i < depth; i++)
    fputc ('[', f);
  for (int i = 2; i < depth; i++)
    fputc (']', f);
  fputs ("}}", f);
  fclose (f);
  return text;
}

static void
test_parse_errors (void **state)
{
  (void) state;
  /* Not JSON, or JSON haven will not read: no id can be trusted. */
  expect_refused ("not json", HV_JSONRPC_PARSE_ERROR, NULL, "invalid JSON");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", HV_JSONRPC_PARSE_ERROR, NULL, "invalid JSON");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} {}", HV_JSONRPC_PARSE_ERROR, NULL, NULL);
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"/* c */}", HV_JSONRPC_PARSE_ERROR, NULL, NULL);
  /* yajl takes a token still open at the end as one more may come. */
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\"", HV_JSONRPC_PARSE_ERROR, NULL, "trailing");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} \"\\u00", HV_JSONRPC_PARSE_ERROR, NULL,
                  "trailing");
  expect_refused ("[]\"", HV_JSONRPC_PARSE_ERROR, NULL, "trailing");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}", HV_JSONRPC_PARSE_ERROR, NULL, "UTF-8");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc0\xae\"}", HV_JSONRPC_PARSE_ERROR, NULL, "UTF-8");
  expect_refused_n ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\0{}", 43, HV_JSONRPC_PARSE_ERROR, NULL, "NUL");
  /* Nesting: 64 levels are read, 65 are not (the tree is recursive). */
  char *deep = deep_message (64);
  struct hv_mcp_message m;
  int code;
  char *id;
  hv_error *err = NULL;
  assert_int_equal (hv_mcp_parse (deep, strlen (deep), &m, &code, &id, &err), 0);
  hv_mcp_message_free (&m);
  free (deep);
  deep = deep_message (65);
  expect_refused (deep, HV_JSONRPC_PARSE_ERROR, NULL, "nested deeper than 64");
  free (deep);

  /* JSON, but no message. */
  expect_refused ("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", HV_JSONRPC_INVALID_REQUEST, NULL, "batch");
  expect_refused ("[]", HV_JSONRPC_INVALID_REQUEST, NULL, "batch");
  expect_refused ("1", HV_JSONRPC_INVALID_REQUEST, NULL, "not a JSON object");
  expect_refused ("\"ping\"", HV_JSONRPC_INVALID_REQUEST, NULL, "not a JSON object");
  expect_refused ("null", HV_JSONRPC_INVALID_REQUEST, NULL, "not a JSON object");
  expect_refused ("{}", HV_JSONRPC_INVALID_REQUEST, NULL, "neither");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":3}", HV_JSONRPC_INVALID_REQUEST, NULL, "neither");

  /* A request's refusal carries its id. */
  expect_refused ("{\"id\":5,\"method\":\"ping\"}", HV_JSONRPC_INVALID_REQUEST, "5", "\"jsonrpc\" must be \"2.0\"");
  expect_refused ("{\"jsonrpc\":\"1.0\",\"id\":\"a\",\"method\":\"ping\"}", HV_JSONRPC_INVALID_REQUEST, "\"a\"",
                  "\"jsonrpc\"");
  expect_refused ("{\"jsonrpc\":2.0,\"id\":5,\"method\":\"ping\"}", HV_JSONRPC_INVALID_REQUEST, "5", "\"jsonrpc\"");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":7}", HV_JSONRPC_INVALID_REQUEST, "5", "\"method\"");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"params\":[1]}", HV_JSONRPC_INVALID_REQUEST, "5",
                  "\"params\"");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"params\":null}", HV_JSONRPC_INVALID_REQUEST, "5",
                  "\"params\"");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"params\":\"p\"}", HV_JSONRPC_INVALID_REQUEST,
                  "5", "\"params\"");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"extra\":1}", HV_JSONRPC_INVALID_REQUEST, "5",
                  "unknown member \"extra\"");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"result\":{}}", HV_JSONRPC_INVALID_REQUEST, "5",
                  "unknown member \"result\"");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"params\":{\"a\":{\"b\":1,\"c\":2,\"b\":3}}}",
                  HV_JSONRPC_INVALID_REQUEST, "5", "\"b\" is given twice");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\"}", HV_JSONRPC_INVALID_REQUEST,
                  "5", "\"jsonrpc\" is given twice");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"params\":{\"s\":\"a\\u0000b\"}}",
                  HV_JSONRPC_INVALID_REQUEST, "5", "U+0000");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"params\":{\"a\\u0000\":1}}",
                  HV_JSONRPC_INVALID_REQUEST, "5", "U+0000");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"params\":{\"s\":\"\\udc00\"}}",
                  HV_JSONRPC_INVALID_REQUEST, "5", "lone low surrogate");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"params\":{\"s\":\"\\ud800x\"}}",
                  HV_JSONRPC_INVALID_REQUEST, "5", "lone high surrogate");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"params\":{\"s\":\"\\uD800\\u0041\"}}",
                  HV_JSONRPC_INVALID_REQUEST, "5", "without its low one");

  /* Ids that are no ids: answered with id null. */
  static const char *const bad_ids[] = { "true", "null", "1.5", "1.0", "1e2", "{}", "[1]", "-", "99999999999999999999" };
  for (size_t i = 0; i < sizeof (bad_ids) / sizeof (bad_ids[0]); i++)
    {
      char line[128];
      snprintf (line, sizeof (line), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", bad_ids[i]);
      expect_refused (line, i == 7 ? HV_JSONRPC_PARSE_ERROR : HV_JSONRPC_INVALID_REQUEST, NULL, NULL);
    }
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":1,\"method\":\"ping\"}", HV_JSONRPC_INVALID_REQUEST, NULL,
                  "\"id\" is given twice");
  char long_id[HV_MCP_ID_MAX + 100];
  int l = snprintf (long_id, sizeof (long_id), "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"");
  memset (long_id + l, 'i', HV_MCP_ID_MAX + 1);
  strcpy (long_id + l + HV_MCP_ID_MAX + 1, "\"}");
  expect_refused (long_id, HV_JSONRPC_INVALID_REQUEST, NULL, "\"id\" must be");

  /* Notifications and responses are never answered, valid or not. */
  expect_refused ("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":[1]}", 0, NULL, "\"params\"");
  expect_refused ("{\"jsonrpc\":\"1.0\",\"method\":\"x\"}", 0, NULL, "\"jsonrpc\"");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"method\":5}", 0, NULL, "\"method\"");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{}}", 0, NULL, "either");
  expect_refused ("{\"jsonrpc\":\"2.0\",\"id\":true,\"result\":{}}", 0, NULL, "\"id\"");
  expect_refused ("{\"result\":{}}", 0, NULL, NULL);
}

static void
expect_taken (const char *line, enum hv_mcp_kind kind, const char *id, const char *method)
{
  struct hv_mcp_message m;
  int code;
  char *id_out = NULL;
  hv_error *err = NULL;
  if (hv_mcp_parse (line, strlen (line), &m, &code, &id_out, &err) < 0)
    fail_msg ("%s: refused (%d): %s", line, code, err->msg);
  assert_null (id_out);
  assert_int_equal (m.kind, kind);
  if ((id == NULL) != (m.id == NULL) || (id && strcmp (id, m.id) != 0))
    fail_msg ("%s: id %s, expected %s", line, m.id ? m.id : "(none)", id ? id : "(none)");
  if ((method == NULL) != (m.method == NULL) || (method && strcmp (method, m.method) != 0))
    fail_msg ("%s: method %s, expected %s", line, m.method ? m.method : "(none)", method ? method : "(none)");
  assert_non_null (m.root);
  hv_mcp_message_free (&m);
}

static void
test_parse_taken (void **state)
{
  (void) state;
  expect_taken ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", HV_MCP_REQUEST, "1", "ping");
  expect_taken (" { \"method\" : \"ping\" , \"id\" : -0 , \"jsonrpc\" : \"2.0\" } ", HV_MCP_REQUEST, "-0", "ping");
  expect_taken ("{\"jsonrpc\":\"2.0\",\"id\":9223372036854775807,\"method\":\"ping\"}", HV_MCP_REQUEST,
                "9223372036854775807", "ping");
  expect_taken ("{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"tools/call\",\"params\":{}}", HV_MCP_REQUEST,
                "\"r-1\"", "tools/call");
  /* A string id is written again by yajl: escapes read, '"' escaped. */
  expect_taken ("{\"jsonrpc\":\"2.0\",\"id\":\"\\u00e9\\\"\\ud83d\\ude00\",\"method\":\"ping\"}", HV_MCP_REQUEST,
                "\"\xc3\xa9\\\"\xf0\x9f\x98\x80\"", "ping");
  expect_taken ("{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"\"}", HV_MCP_REQUEST, "\"\"", "");
  expect_taken ("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", HV_MCP_NOTIFICATION, NULL,
                "notifications/initialized");
  expect_taken ("{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{}}", HV_MCP_RESPONSE, "\"7\"", NULL);
  expect_taken ("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":1,\"message\":\"m\"}}", HV_MCP_RESPONSE, NULL,
                NULL);

  /* params: an object, members as json_walk reads them (null: absent). */
  const char *line = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"m\",\"params\":{\"a\":\"x\",\"n\":null}}";
  struct hv_mcp_message m;
  int code;
  char *id = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_mcp_parse (line, strlen (line), &m, &code, &id, &err), 0);
  assert_non_null (m.params);
  assert_true (YAJL_IS_OBJECT (m.params));
  yajl_val a = hv_mcp_param (m.params, "a");
  assert_non_null (a);
  assert_string_equal (a->u.string, "x");
  assert_null (hv_mcp_param (m.params, "n"));
  assert_null (hv_mcp_param (m.params, "z"));
  assert_null (hv_mcp_param (NULL, "a"));
  hv_mcp_message_free (&m);
}

/* --- writing -------------------------------------------------------------- */

/* line is one '\n'-terminated JSON object of valid UTF-8 with
 * "jsonrpc":"2.0": its tree (the caller frees it). */
static yajl_val
check_line (const char *line)
{
  size_t n = strlen (line);
  if (n == 0 || line[n - 1] != '\n' || memchr (line, '\n', n - 1) || memchr (line, '\r', n))
    fail_msg ("not one line: \"%s\"", line);
  if (!hv_utf8_valid (line, n))
    fail_msg ("not UTF-8: \"%s\"", line);
  char ebuf[256];
  yajl_val v = yajl_tree_parse (line, ebuf, sizeof (ebuf));
  if (v == NULL || !YAJL_IS_OBJECT (v))
    fail_msg ("not a JSON object: \"%s\" (%s)", line, ebuf);
  const char *path[] = { "jsonrpc", NULL };
  yajl_val ver = yajl_tree_get (v, path, yajl_t_string);
  if (ver == NULL || strcmp (ver->u.string, "2.0") != 0)
    fail_msg ("no \"jsonrpc\":\"2.0\": %s", line);
  return v;
}

static yajl_val
get (yajl_val v, const char *a, const char *b, const char *c)
{
  const char *path[] = { a, b, c, NULL };
  return yajl_tree_get (v, path, yajl_t_any);
}

static void
test_writers (void **state)
{
  (void) state;
  /* Bytes that are not UTF-8 become U+FFFD; a U+0000 stays, escaped; a
   * newline in a string is escaped. */
  char *line = hv_mcp_result_line ("\"a\"", "{\"text\":\"x\xff\\u0000y\\nz\",\"n\":12345678901234567890}");
  yajl_val v = check_line (line);
  assert_string_equal (get (v, "id", NULL, NULL)->u.string, "a");
  assert_non_null (strstr (line, "\"x\xef\xbf\xbd\\u0000y\\nz\""));
  assert_non_null (strstr (line, "12345678901234567890")); /* as written, not rounded */
  yajl_tree_free (v);
  free (line);

  line = hv_mcp_result_line ("42", "{}");
  assert_string_equal (line, "{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{}}\n");
  free (line);

  /* Not an object, not JSON, nested past yajl_gen: an error instead. */
  char deep[300] = "{\"a\":";
  size_t d = strlen (deep);
  memset (deep + d, '[', 130);
  memset (deep + d + 130, ']', 130);
  strcpy (deep + d + 260, "}");
  const char *bad[] = { "[]", "{", "{} {}", "{/**/}", "", deep, NULL };
  for (size_t i = 0; i < 7; i++)
    {
      line = hv_mcp_result_line ("1", bad[i]);
      v = check_line (line);
      yajl_val code = get (v, "error", "code", NULL);
      if (code == NULL || YAJL_GET_INTEGER (code) != HV_JSONRPC_INTERNAL_ERROR)
        fail_msg ("result %zu: %s", i, line);
      assert_int_equal (get (v, "id", NULL, NULL)->u.number.i, 1);
      yajl_tree_free (v);
      free (line);
    }

  line = hv_mcp_error_line (NULL, HV_JSONRPC_PARSE_ERROR, "bad \xc3(");
  assert_string_equal (line, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"bad \xef\xbf\xbd(\"}}\n");
  free (line);
  /* An id that is not one (a caller's mistake): null. */
  line = hv_mcp_error_line ("{\"a\":1}", 1, "m");
  v = check_line (line);
  assert_true (YAJL_IS_NULL (get (v, "id", NULL, NULL)));
  yajl_tree_free (v);
  free (line);

  line = hv_mcp_notification_line ("notifications/message", "{\"level\":\"info\"}");
  assert_string_equal (line, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\"}}\n");
  free (line);
  line = hv_mcp_notification_line ("n", NULL);
  assert_string_equal (line, "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n");
  free (line);
  assert_null (hv_mcp_notification_line ("n", "[1]"));
}

/* --- the session ---------------------------------------------------------- */

struct fake
{
  int calls;
  char last_id[64];
  char last_name[64];
  bool last_had_args;
  int cancels;
  char cancelled[64];
  hv_mcp_session *s;
  const char *tools;
};

static const char *
fake_list (void *ctx)
{
  return ((struct fake *) ctx)->tools;
}

/* "now": answered from inside the call; "nope": no such tool; any
 * other: taken, answered later. */
static int
fake_call (void *ctx, const char *id, const char *name, yajl_val args, int *code, char **message)
{
  struct fake *f = ctx;
  f->calls++;
  snprintf (f->last_id, sizeof (f->last_id), "%s", id);
  snprintf (f->last_name, sizeof (f->last_name), "%s", name);
  f->last_had_args = args != NULL;
  if (strcmp (name, "nope") == 0)
    {
      *code = HV_JSONRPC_INVALID_PARAMS;
      *message = xstrdup ("unknown tool: nope");
      return -1;
    }
  if (strcmp (name, "now") == 0)
    hv_mcp_session_complete (f->s, id, "{\"content\":[{\"type\":\"text\",\"text\":\"done\"}],\"isError\":false}");
  return 0;
}

static void
fake_cancel (void *ctx, const char *id)
{
  struct fake *f = ctx;
  f->cancels++;
  snprintf (f->cancelled, sizeof (f->cancelled), "%s", id);
}

static const struct hv_mcp_tools_ops fake_ops = { .list_json = fake_list, .call = fake_call, .cancel = fake_cancel };
static const struct hv_mcp_server_info info = { .name = "haven", .version = "9.9", .instructions = "Run things." };

static hv_mcp_session *
session (struct fake *f)
{
  *f = (struct fake) { .tools = "[{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"}}]" };
  f->s = hv_mcp_session_new (&info, &fake_ops, f);
  return f->s;
}

static void
send_line (hv_mcp_session *s, const char *line)
{
  hv_mcp_session_input (s, line, strlen (line), false);
}

/* The lines queued (each checked), as trees, consumed; at most 80. */
static size_t
take (hv_mcp_session *s, yajl_val *out)
{
  size_t len;
  const char *text = hv_mcp_session_output (s, &len);
  size_t n = 0;
  for (size_t off = 0; off < len;)
    {
      const char *nl = memchr (text + off, '\n', len - off);
      if (nl == NULL)
        fail_msg ("output ends without a newline");
      size_t l = (size_t) (nl - (text + off)) + 1;
      char *line = strndup (text + off, l);
      assert_true (n < 80);
      out[n++] = check_line (line);
      free (line);
      off += l;
    }
  hv_mcp_session_output_consumed (s, len);
  hv_mcp_session_output (s, &len);
  assert_int_equal (len, 0);
  return n;
}

static void
free_all (yajl_val *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    yajl_tree_free (v[i]);
}

static void
expect_nothing (hv_mcp_session *s, const char *line)
{
  send_line (s, line);
  size_t len;
  hv_mcp_session_output (s, &len);
  if (len != 0)
    fail_msg ("%s: answered: %s", line, hv_mcp_session_output (s, &len));
}

/* The one answer to line: an error with code (its message holding
 * msg_part) or, code 0, a result (returned; the caller frees it). */
static yajl_val
expect_answer (hv_mcp_session *s, const char *line, yajl_type id_type, const char *id, int code, const char *msg_part)
{
  if (line)
    send_line (s, line);
  yajl_val v[80];
  size_t n = take (s, v);
  if (n != 1)
    fail_msg ("%s: %zu answers", line, n);
  yajl_val got_id = get (v[0], "id", NULL, NULL);
  if (id == NULL ? !YAJL_IS_NULL (got_id)
                 : got_id == NULL || got_id->type != id_type
                       || strcmp (id_type == yajl_t_string ? got_id->u.string : got_id->u.number.r, id) != 0)
    fail_msg ("%s: not the id %s", line, id ? id : "null");
  yajl_val err = get (v[0], "error", NULL, NULL);
  yajl_val result = get (v[0], "result", NULL, NULL);
  if (code == 0)
    {
      if (err || result == NULL || !YAJL_IS_OBJECT (result))
        fail_msg ("%s: no result", line);
      return v[0];
    }
  yajl_val c = get (v[0], "error", "code", NULL);
  yajl_val m = get (v[0], "error", "message", NULL);
  if (result || c == NULL || !YAJL_IS_INTEGER (c) || YAJL_GET_INTEGER (c) != code || m == NULL || !YAJL_IS_STRING (m))
    fail_msg ("%s: not the error %d", line, code);
  if (msg_part && strstr (m->u.string, msg_part) == NULL)
    fail_msg ("%s: \"%s\" does not say \"%s\"", line, m->u.string, msg_part);
  yajl_tree_free (v[0]);
  return NULL;
}

#define INIT(version)                                                                                               \
  "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"" version             \
  "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"

static void
initialize (hv_mcp_session *s)
{
  yajl_val v = expect_answer (s, INIT ("2025-06-18"), yajl_t_number, "0", 0, NULL);
  yajl_tree_free (v);
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static void
test_negotiation (void **state)
{
  (void) state;
  struct
  {
    const char *asked, *answered;
  } cases[] = {
    { "2025-11-25", "2025-11-25" }, { "2025-06-18", "2025-06-18" }, { "2025-03-26", "2025-03-26" },
    { "2024-11-05", "2024-11-05" }, { "2099-01-01", "2025-11-25" }, { "", "2025-11-25" },
  };
  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      struct fake f;
      hv_mcp_session *s = session (&f);
      char line[512];
      snprintf (line, sizeof (line),
                "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\","
                "\"capabilities\":{\"roots\":{}},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}",
                cases[i].asked);
      yajl_val v = expect_answer (s, line, yajl_t_string, "init", 0, NULL);
      yajl_val pv = get (v, "result", "protocolVersion", NULL);
      if (pv == NULL || !YAJL_IS_STRING (pv) || strcmp (pv->u.string, cases[i].answered) != 0)
        fail_msg ("asked %s: answered %s, expected %s", cases[i].asked, pv ? pv->u.string : "nothing",
                  cases[i].answered);
      assert_string_equal (hv_mcp_session_version (s), cases[i].answered);
      const char *list_changed[] = { "result", "capabilities", "tools", "listChanged", NULL };
      assert_true (YAJL_IS_FALSE (yajl_tree_get (v, list_changed, yajl_t_any)));
      assert_string_equal (get (v, "result", "serverInfo", "name")->u.string, "haven");
      assert_string_equal (get (v, "result", "serverInfo", "version")->u.string, "9.9");
      assert_string_equal (get (v, "result", "instructions", NULL)->u.string, "Run things.");
      assert_int_equal (get (v, "result", NULL, NULL)->u.object.len, 4);
      yajl_tree_free (v);
      hv_mcp_session_free (s);
    }

  /* An initialize without a version (or not a string) is not taken: the
   * session stays uninitialized. */
  struct fake f;
  hv_mcp_session *s = session (&f);
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}", yajl_t_number, "1",
                 HV_JSONRPC_INVALID_PARAMS, "protocolVersion");
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}", yajl_t_number, "1",
                 HV_JSONRPC_INVALID_PARAMS, "protocolVersion");
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":20250618}}",
                 yajl_t_number, "1", HV_JSONRPC_INVALID_PARAMS, "protocolVersion");
  expect_answer (s,
                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                 "\"capabilities\":[]}}",
                 yajl_t_number, "1", HV_JSONRPC_INVALID_PARAMS, "capabilities");
  assert_null (hv_mcp_session_version (s));
  hv_mcp_session_free (s);
}

static void
test_lifecycle (void **state)
{
  (void) state;
  struct fake f;
  hv_mcp_session *s = session (&f);
  /* Before initialize: ping only; notifications ignored. */
  yajl_val v = expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", yajl_t_number, "1", 0, NULL);
  assert_int_equal (get (v, "result", NULL, NULL)->u.object.len, 0);
  yajl_tree_free (v);
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", yajl_t_number, "2",
                 HV_MCP_NOT_INITIALIZED, "initialize first");
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"now\"}}",
                 yajl_t_number, "3", HV_MCP_NOT_INITIALIZED, NULL);
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/list\"}", yajl_t_number, "4",
                 HV_MCP_NOT_INITIALIZED, NULL);
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  assert_false (hv_mcp_session_ready (s));
  assert_int_equal (f.calls, 0);

  v = expect_answer (s, INIT ("2025-11-25"), yajl_t_number, "0", 0, NULL);
  yajl_tree_free (v);
  assert_false (hv_mcp_session_ready (s));
  /* Requests are answered from initialize's answer on (a client may
   * send them before its notifications/initialized arrives). */
  v = expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}", yajl_t_number, "5", 0, NULL);
  yajl_tree_free (v);
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  assert_true (hv_mcp_session_ready (s));
  expect_answer (s, INIT ("2025-11-25"), yajl_t_number, "0", HV_JSONRPC_INVALID_REQUEST, "already initialized");
  assert_string_equal (hv_mcp_session_version (s), "2025-11-25");
  v = expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":{}}", yajl_t_number, "6", 0,
                     NULL);
  yajl_tree_free (v);
  hv_mcp_session_free (s);
}

static void
test_errors (void **state)
{
  (void) state;
  struct fake f;
  hv_mcp_session *s = session (&f);
  initialize (s);
  /* Each code a client can get. */
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,", 0, NULL, HV_JSONRPC_PARSE_ERROR, "invalid JSON");
  hv_mcp_session_input (s, "", 0, true);
  expect_answer (s, NULL, 0, NULL, HV_JSONRPC_PARSE_ERROR, "longer than");
  expect_answer (s, "[]", 0, NULL, HV_JSONRPC_INVALID_REQUEST, "batch");
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":[]}", yajl_t_string, "q",
                 HV_JSONRPC_INVALID_REQUEST, NULL);
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}", yajl_t_number, "1",
                 HV_JSONRPC_METHOD_NOT_FOUND, "resources/list");
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"notifications/initialized\"}", yajl_t_number, "1",
                 HV_JSONRPC_METHOD_NOT_FOUND, NULL);
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}", yajl_t_number, "1",
                 HV_JSONRPC_INVALID_PARAMS, "params.name");
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", yajl_t_number, "1",
                 HV_JSONRPC_INVALID_PARAMS, "params.name");
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":3}}", yajl_t_number,
                 "1", HV_JSONRPC_INVALID_PARAMS, "params.name");
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":[]}}",
                 yajl_t_number, "1", HV_JSONRPC_INVALID_PARAMS, "params.arguments");
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":\"a\"}}",
                 yajl_t_number, "1", HV_JSONRPC_INVALID_PARAMS, "params.arguments");
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":5}}", yajl_t_number,
                 "1", HV_JSONRPC_INVALID_PARAMS, "cursor");
  assert_int_equal (f.calls, 0);
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}",
                 yajl_t_number, "1", HV_JSONRPC_INVALID_PARAMS, "unknown tool: nope");
  assert_false (hv_mcp_session_in_flight (s, "1"));
  /* A tool list that is not an array is haven's fault. */
  f.tools = "{\"name\":\"t\"}";
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", yajl_t_number, "1",
                 HV_JSONRPC_INTERNAL_ERROR, "not a JSON array");
  f.tools = "[{\"name\":";
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", yajl_t_number, "1",
                 HV_JSONRPC_INTERNAL_ERROR, "not a JSON object");
  /* Silence: an unknown notification, a response, a bad notification. */
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"}");
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"now\"}}");
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-1,\"message\":\"x\"}}");
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":7}");
  assert_int_equal (f.calls, 1); /* "nope"'s only: a notification calls no tool */
  hv_mcp_session_free (s);
}

static void
test_tools (void **state)
{
  (void) state;
  struct fake f;
  hv_mcp_session *s = session (&f);
  initialize (s);
  yajl_val v = expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":\"c\"}}",
                              yajl_t_number, "1", 0, NULL);
  yajl_val tools = get (v, "result", "tools", NULL);
  assert_true (YAJL_IS_ARRAY (tools));
  assert_int_equal (tools->u.array.len, 1);
  assert_null (get (v, "result", "nextCursor", NULL));
  yajl_tree_free (v);

  /* Answered at once, from inside the call. */
  v = expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"now\",\"arguments\":{\"a\":1}}}",
                     yajl_t_number, "2", 0, NULL);
  assert_true (YAJL_IS_FALSE (get (v, "result", "isError", NULL)));
  yajl_tree_free (v);
  assert_string_equal (f.last_id, "2");
  assert_string_equal (f.last_name, "now");
  assert_true (f.last_had_args);
  assert_false (hv_mcp_session_in_flight (s, "2"));

  /* Answered later; arguments absent or null: NULL. */
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"id\":\"L\",\"method\":\"tools/call\",\"params\":{\"name\":\"later\",\"arguments\":null}}");
  assert_false (f.last_had_args);
  assert_true (hv_mcp_session_in_flight (s, "\"L\""));
  assert_false (hv_mcp_session_in_flight (s, "L"));
  /* Its id again while it is in flight: refused, the call untouched. */
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":\"L\",\"method\":\"ping\"}", yajl_t_string, "L",
                 HV_JSONRPC_INVALID_REQUEST, "in flight");
  assert_true (hv_mcp_session_in_flight (s, "\"L\""));
  /* The same text as a number is another id. */
  v = expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", yajl_t_number, "3", 0, NULL);
  yajl_tree_free (v);
  hv_mcp_session_complete (s, "\"L\"", "{\"content\":[],\"isError\":true}");
  v = expect_answer (s, NULL, yajl_t_string, "L", 0, NULL);
  assert_true (YAJL_IS_TRUE (get (v, "result", "isError", NULL)));
  yajl_tree_free (v);
  assert_false (hv_mcp_session_in_flight (s, "\"L\""));
  /* A second answer, or one for a call never taken, is dropped. */
  hv_mcp_session_complete (s, "\"L\"", "{\"content\":[]}");
  hv_mcp_session_complete (s, "99", "{\"content\":[]}");
  size_t len;
  hv_mcp_session_output (s, &len);
  assert_int_equal (len, 0);

  /* The bound on calls in flight. */
  char line[256];
  for (int i = 0; i < HV_MCP_CALLS_MAX; i++)
    {
      snprintf (line, sizeof (line), "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"later\"}}",
                100 + i);
      expect_nothing (s, line);
    }
  int calls = f.calls;
  expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":\"over\",\"method\":\"tools/call\",\"params\":{\"name\":\"later\"}}",
                 yajl_t_string, "over", HV_JSONRPC_INTERNAL_ERROR, "too many calls in flight");
  assert_int_equal (f.calls, calls);
  /* One done: room for one more. */
  hv_mcp_session_complete (s, "150", "{\"content\":[]}");
  v = expect_answer (s, NULL, yajl_t_number, "150", 0, NULL);
  yajl_tree_free (v);
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"id\":\"over\",\"method\":\"tools/call\",\"params\":{\"name\":\"later\"}}");
  assert_true (hv_mcp_session_in_flight (s, "\"over\""));
  assert_false (hv_mcp_session_output_full (s));
  hv_mcp_session_free (s);
}

static void
test_cancel (void **state)
{
  (void) state;
  struct fake f;
  hv_mcp_session *s = session (&f);
  initialize (s);
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"tools/call\",\"params\":{\"name\":\"later\"}}");
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"later\"}}");
  /* Ids that are not in flight: ignored (7 as a string, an unknown one,
   * no id, initialize's). */
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"7\"}}");
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":8}}");
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{}}");
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":0}}");
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}");
  assert_int_equal (f.cancels, 0);
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"c1\","
                     "\"reason\":\"user\"}}");
  assert_int_equal (f.cancels, 1);
  assert_string_equal (f.cancelled, "\"c1\"");
  assert_false (hv_mcp_session_in_flight (s, "\"c1\""));
  assert_true (hv_mcp_session_in_flight (s, "7"));
  /* No answer for it, ever. */
  hv_mcp_session_complete (s, "\"c1\"", "{\"content\":[]}");
  size_t len;
  hv_mcp_session_output (s, &len);
  assert_int_equal (len, 0);
  /* Cancelled again: nothing more. */
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"c1\"}}");
  assert_int_equal (f.cancels, 1);
  expect_nothing (s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7}}");
  assert_int_equal (f.cancels, 2);
  assert_string_equal (f.cancelled, "7");
  /* The id is free again. */
  yajl_val v = expect_answer (s, "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"tools/call\",\"params\":{\"name\":\"now\"}}",
                              yajl_t_string, "c1", 0, NULL);
  yajl_tree_free (v);
  hv_mcp_session_free (s);
}

static void
test_ids_echoed (void **state)
{
  (void) state;
  struct fake f;
  hv_mcp_session *s = session (&f);
  struct
  {
    const char *sent;
    yajl_type type;
    const char *value;
  } ids[] = {
    { "0", yajl_t_number, "0" },
    { "-12", yajl_t_number, "-12" },
    { "9223372036854775807", yajl_t_number, "9223372036854775807" },
    { "\"abc\"", yajl_t_string, "abc" },
    { "\"\"", yajl_t_string, "" },
    { "\"\\u00e9t\\u00e9 \\\"q\\\" \\\\ \\/\"", yajl_t_string, "\xc3\xa9t\xc3\xa9 \"q\" \\ /" },
    { "\"a\\nb\"", yajl_t_string, "a\nb" },
    { "\"550e8400-e29b-41d4-a716-446655440000\"", yajl_t_string, "550e8400-e29b-41d4-a716-446655440000" },
  };
  for (size_t i = 0; i < sizeof (ids) / sizeof (ids[0]); i++)
    {
      char line[256];
      snprintf (line, sizeof (line), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", ids[i].sent);
      yajl_val v = expect_answer (s, line, ids[i].type, ids[i].value, 0, NULL);
      yajl_tree_free (v);
      /* And in an error (before initialize: not initialized). */
      snprintf (line, sizeof (line), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/list\"}", ids[i].sent);
      expect_answer (s, line, ids[i].type, ids[i].value, HV_MCP_NOT_INITIALIZED, NULL);
    }
  hv_mcp_session_free (s);
}

static void
test_output_queue (void **state)
{
  (void) state;
  struct fake f;
  hv_mcp_session *s = session (&f);
  for (int i = 0; i < 3; i++)
    send_line (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
  size_t len;
  const char *out = hv_mcp_session_output (s, &len);
  const char *one = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";
  size_t l = strlen (one);
  assert_int_equal (len, 3 * l);
  /* Written in pieces: what is left is what was not written. */
  hv_mcp_session_output_consumed (s, l + 5);
  out = hv_mcp_session_output (s, &len);
  assert_int_equal (len, 2 * l - 5);
  assert_memory_equal (out, one + 5, l - 5);
  send_line (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
  out = hv_mcp_session_output (s, &len);
  assert_int_equal (len, 3 * l - 5);
  assert_memory_equal (out + 2 * l - 5, one, l);
  hv_mcp_session_output_consumed (s, len + 100);
  hv_mcp_session_output (s, &len);
  assert_int_equal (len, 0);

  /* Past HIGH the server is told to stop reading. */
  for (size_t i = 0; i * l <= HV_MCP_OUTPUT_HIGH; i++)
    send_line (s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
  assert_true (hv_mcp_session_output_full (s));
  hv_mcp_session_output (s, &len);
  hv_mcp_session_output_consumed (s, len);
  assert_false (hv_mcp_session_output_full (s));
  hv_mcp_session_free (s);
}

/* A whole session through the reader, the stream cut everywhere. */
static void
test_stream (void **state)
{
  (void) state;
  const char *stream = INIT ("2024-11-05") "\r\n"
                                           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                                           "\n"
                                           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\r\n"
                                           "garbage\n"
                                           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"now\"}}";
  size_t len = strlen (stream);
  char *first = NULL;
  for (size_t piece = 1; piece <= len; piece += 7)
    {
      struct fake f;
      hv_mcp_session *s = session (&f);
      hv_mcp_reader *r = hv_mcp_reader_new (HV_MCP_LINE_MAX);
      for (size_t off = 0;; off += piece)
        {
          if (off < len)
            hv_mcp_reader_feed (r, stream + off, len - off < piece ? len - off : piece);
          else
            hv_mcp_reader_eof (r);
          const char *line;
          size_t n;
          int rc;
          while ((rc = hv_mcp_reader_next (r, &line, &n)) > 0)
            hv_mcp_session_input (s, line, n, rc == 2);
          if (rc < 0)
            break;
        }
      size_t out_len;
      const char *out = hv_mcp_session_output (s, &out_len);
      if (first == NULL)
        first = strndup (out, out_len);
      else if (strlen (first) != out_len || memcmp (first, out, out_len) != 0)
        fail_msg ("pieces of %zu: another output", piece);
      yajl_val v[80];
      size_t n = take (s, v);
      assert_int_equal (n, 4);
      assert_string_equal (get (v[0], "result", "protocolVersion", NULL)->u.string, "2024-11-05");
      assert_true (YAJL_IS_ARRAY (get (v[1], "result", "tools", NULL)));
      assert_int_equal (YAJL_GET_INTEGER (get (v[2], "error", "code", NULL)), HV_JSONRPC_PARSE_ERROR);
      assert_string_equal (get (v[3], "result", "content", NULL)->u.array.values[0]->u.object.values[1]->u.string,
                           "done");
      assert_true (hv_mcp_session_ready (s));
      free_all (v, n);
      hv_mcp_reader_free (r);
      hv_mcp_session_free (s);
    }
  free (first);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_reader_splits), cmocka_unit_test (test_reader_limits), cmocka_unit_test (test_parse_errors),
    cmocka_unit_test (test_parse_taken),   cmocka_unit_test (test_writers),       cmocka_unit_test (test_negotiation),
    cmocka_unit_test (test_lifecycle),     cmocka_unit_test (test_errors),        cmocka_unit_test (test_tools),
    cmocka_unit_test (test_cancel),        cmocka_unit_test (test_ids_echoed),    cmocka_unit_test (test_output_queue),
    cmocka_unit_test (test_stream),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
