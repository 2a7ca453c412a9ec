/* Unit tests of haven mcp's tools (session/mcp/mcp_tools*.c): the
 * tools/list a client sees, the argument checks through a real session
 * (each a tool error naming the argument; an unknown tool a -32602), and
 * the results made of canned answers of the service (a run's text and
 * structuredContent, an exec the policy refused, truncation, a file that
 * is not UTF-8, `why` merging the trail's denials with the session's own
 * refusals, newest last, a sandbox destroyed under the session).  No
 * service runs: the endpoint's socket does not exist, so a call that
 * passes its checks is answered as not taken. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include <cmocka.h>

#include "mcp_proto.h"
#include "mcp_session.h"
#include "mcp_tools_priv.h"
#include "utils.h"

static struct hv_svc_endpoint endpoint = { .socket = (char *) "/nonexistent/h-mcp-unit/haven.sock" };

static hv_mcp_tools *
tools_new (int shell, uint64_t max_output)
{
  struct hv_mcp_tools_conf c = {
    .endpoint = &endpoint,
    .sandbox = { .id = "hvs-0000abcd", .policy = "strict", .workspace = "/ws/hvs-0000abcd", .shell = shell,
                 .about = "no network; no shell" },
    .max_output = max_output,
    .timeout_s = 120,
  };
  return hv_mcp_tools_new (&c);
}

static yajl_val
parse (const char *text)
{
  char err[256];
  yajl_val v = yajl_tree_parse (text, err, sizeof (err));
  if (v == NULL)
    fail_msg ("not JSON (%s): %s", err, text);
  return v;
}

static yajl_val
get (yajl_val v, const char *a, const char *b)
{
  const char *path[] = { a, b, NULL };
  return yajl_tree_get (v, path, yajl_t_any);
}

/* The result's first text, copied. */
static char *
result_text (yajl_val result)
{
  yajl_val content = get (result, "content", NULL);
  assert_true (content && YAJL_IS_ARRAY (content) && content->u.array.len == 1);
  yajl_val text = get (content->u.array.values[0], "text", NULL);
  assert_true (text && YAJL_IS_STRING (text));
  return xstrdup (text->u.string);
}

static bool
is_error (yajl_val result)
{
  yajl_val e = get (result, "isError", NULL);
  assert_non_null (e);
  return YAJL_IS_TRUE (e);
}

/* --- tools/list ---------------------------------------------------------- */

static void
test_list (void **state)
{
  (void) state;
  static const char *const names[] = { "run_command", "run_code", "read_file", "write_file", "list_files", "why" };
  for (int shell = -1; shell <= 1; shell++)
    {
      hv_mcp_tools *t = tools_new (shell, 32768);
      yajl_val list = parse (hv_mcp_tools_session_ops.list_json (t));
      assert_true (YAJL_IS_ARRAY (list));
      assert_int_equal (6, list->u.array.len);
      for (size_t i = 0; i < 6; i++)
        {
          yajl_val tool = list->u.array.values[i];
          assert_string_equal (names[i], YAJL_GET_STRING (get (tool, "name", NULL)));
          assert_non_null (YAJL_GET_STRING (get (tool, "title", NULL)));
          const char *desc = YAJL_GET_STRING (get (tool, "description", NULL));
          /* What an agent must know: the policy, what it allows, where. */
          assert_non_null (strstr (desc, "policy \"strict\""));
          assert_non_null (strstr (desc, "no network"));
          assert_non_null (strstr (desc, "/ws/hvs-0000abcd"));
          yajl_val schema = get (tool, "inputSchema", NULL);
          assert_string_equal ("object", YAJL_GET_STRING (get (schema, "type", NULL)));
          assert_true (YAJL_IS_FALSE (get (schema, "additionalProperties", NULL)));
          assert_true (YAJL_IS_OBJECT (get (schema, "properties", NULL)));
        }
      const char *run = YAJL_GET_STRING (get (list->u.array.values[0], "description", NULL));
      assert_true ((strstr (run, "process.block_shell") != NULL) == (shell == 0));
      yajl_val req = get (get (list->u.array.values[3], "inputSchema", NULL), "required", NULL);
      assert_true (req && YAJL_IS_ARRAY (req) && req->u.array.len == 2);
      yajl_tree_free (list);
      hv_mcp_tools_free (t);
    }
}

/* --- calls through a session --------------------------------------------- */

struct fixture
{
  hv_mcp_tools *t;
  hv_mcp_session *s;
};

static void
fixture_open (struct fixture *f, int shell)
{
  f->t = tools_new (shell, 32768);
  struct hv_mcp_server_info info = { .name = "haven", .version = "0", .instructions = "x" };
  f->s = hv_mcp_session_new (&info, &hv_mcp_tools_session_ops, f->t);
  hv_mcp_tools_set_session (f->t, f->s);
  const char *init = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                     "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}";
  hv_mcp_session_input (f->s, init, strlen (init), false);
  const char *ready = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  hv_mcp_session_input (f->s, ready, strlen (ready), false);
  size_t len;
  hv_mcp_session_output (f->s, &len);
  hv_mcp_session_output_consumed (f->s, len);
}

static void
fixture_close (struct fixture *f)
{
  hv_mcp_session_free (f->s);
  hv_mcp_tools_free (f->t);
}

/* Call TOOL with ARGS (JSON text); the one answer line, parsed. */
static yajl_val
call (struct fixture *f, const char *tool, const char *args)
{
  static int id = 1;
  cleanup_free char *line = xasprintf ("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
                                       "\"%s\",\"arguments\":%s}}",
                                       ++id, tool, args);
  hv_mcp_session_input (f->s, line, strlen (line), false);
  size_t len;
  const char *out = hv_mcp_session_output (f->s, &len);
  if (len == 0)
    fail_msg ("no answer to %s", line);
  const char *nl = memchr (out, '\n', len);
  assert_non_null (nl);
  assert_int_equal (len, (size_t) (nl - out) + 1); /* one line, at once */
  cleanup_free char *text = strndup (out, len);
  hv_mcp_session_output_consumed (f->s, len);
  return parse (text);
}

/* A call answered with a tool error whose text has every one of the
 * NULL-terminated words. */
static void
expect_tool_error (struct fixture *f, const char *tool, const char *args, ...)
{
  yajl_val answer = call (f, tool, args);
  yajl_val result = get (answer, "result", NULL);
  if (result == NULL)
    fail_msg ("%s %s: no result", tool, args);
  assert_true (is_error (result));
  cleanup_free char *text = result_text (result);
  va_list ap;
  va_start (ap, args);
  for (const char *w; (w = va_arg (ap, const char *));)
    if (strstr (text, w) == NULL)
      fail_msg ("%s %s: \"%s\" not in: %s", tool, args, w, text);
  va_end (ap);
  yajl_tree_free (answer);
}

static void
test_arguments (void **state)
{
  (void) state;
  struct fixture f;
  fixture_open (&f, 1);
  expect_tool_error (&f, "run_command", "{}", "argv", "command", NULL);
  expect_tool_error (&f, "run_command", "{\"argv\":[\"a\"],\"command\":\"b\"}", "not both", NULL);
  expect_tool_error (&f, "run_command", "{\"argv\":\"ls\"}", "\"argv\"", NULL);
  expect_tool_error (&f, "run_command", "{\"argv\":[]}", "\"argv\"", NULL);
  expect_tool_error (&f, "run_command", "{\"argv\":[\"ls\",3]}", "\"argv\"", "element 1", NULL);
  expect_tool_error (&f, "run_command", "{\"argv\":[\"\"]}", "\"argv\"", "empty", NULL);
  expect_tool_error (&f, "run_command", "{\"argv\":[\"ls\"],\"bogus\":1}", "\"bogus\"", NULL);
  expect_tool_error (&f, "run_command", "{\"argv\":[\"ls\"],\"timeout_s\":0}", "timeout_s", NULL);
  expect_tool_error (&f, "run_command", "{\"argv\":[\"ls\"],\"timeout_s\":3601}", "timeout_s", NULL);
  expect_tool_error (&f, "run_command", "{\"argv\":[\"ls\"],\"timeout_s\":1.5}", "timeout_s", NULL);
  expect_tool_error (&f, "run_command", "{\"argv\":[\"ls\"],\"env\":{\"A\":1}}", "env", "\"A\"", NULL);
  expect_tool_error (&f, "run_command", "{\"argv\":[\"ls\"],\"cwd\":7}", "\"cwd\"", NULL);
  expect_tool_error (&f, "run_code", "{\"language\":\"cobol\",\"code\":\"x\"}", "cobol", "python", "node", NULL);
  expect_tool_error (&f, "run_code", "{\"language\":\"python\"}", "\"code\"", NULL);
  expect_tool_error (&f, "read_file", "{}", "\"path\"", NULL);
  expect_tool_error (&f, "write_file", "{\"path\":\"a\"}", "\"content\"", NULL);
  expect_tool_error (&f, "write_file", "{\"path\":\"a\",\"content\":\"!!\",\"encoding\":\"base64\"}", "base64", NULL);
  expect_tool_error (&f, "write_file", "{\"path\":\"a\",\"content\":\"x\",\"encoding\":\"latin1\"}", "encoding",
                     NULL);
  expect_tool_error (&f, "why", "{\"limit\":0}", "limit", NULL);
  expect_tool_error (&f, "why", "{\"limit\":101}", "limit", NULL);
  /* Checks passed, no service: a tool error, not a crash or silence. */
  expect_tool_error (&f, "run_command", "{\"argv\":[\"ls\"]}", "did not take the request", NULL);
  expect_tool_error (&f, "list_files", "{}", "did not take the request", NULL);
  assert_int_equal (0, hv_mcp_tools_in_flight (f.t));

  /* An unknown tool is the protocol's error. */
  yajl_val answer = call (&f, "no_such_tool", "{}");
  yajl_val code = get (answer, "error", "code");
  assert_non_null (code);
  assert_int_equal (HV_JSONRPC_INVALID_PARAMS, YAJL_GET_INTEGER (code));
  yajl_tree_free (answer);
  fixture_close (&f);
}

static void
test_block_shell (void **state)
{
  (void) state;
  struct fixture f;
  fixture_open (&f, 0);
  expect_tool_error (&f, "run_command", "{\"command\":\"echo hi\"}", "process.block_shell", "\"strict\"", NULL);
  expect_tool_error (&f, "run_code", "{\"language\":\"bash\",\"code\":\"echo hi\"}", "process.block_shell", NULL);
  /* A language that is no shell passes the check (and finds no service). */
  expect_tool_error (&f, "run_code", "{\"language\":\"python\",\"code\":\"1\"}", "did not take the request", NULL);
  /* The refusals are `why`'s. */
  struct hv_mcp_pending p = { .tool = HV_TOOL_WHY, .limit = 20 };
  const char *old = "{\"error\":{\"code\":\"not_found\",\"message\":\"no such resource: /v1/x\"}}";
  cleanup_free char *r = hv_mcp_tools_answer (f.t, &p, 404, old, strlen (old));
  yajl_val result = parse (r);
  assert_false (is_error (result));
  cleanup_free char *text = result_text (result);
  assert_non_null (strstr (text, "shell"));
  assert_non_null (strstr (text, "process.block_shell"));
  assert_non_null (strstr (text, "no per-sandbox denials"));
  yajl_tree_free (result);
  fixture_close (&f);
}

/* --- results ------------------------------------------------------------- */

static yajl_val
answer_of (hv_mcp_tools *t, enum hv_mcp_tool tool, const char *what, int status, const char *body)
{
  struct hv_mcp_pending p = { .tool = tool, .what = (char *) what, .timeout_s = 5, .limit = 20 };
  cleanup_free char *r = hv_mcp_tools_answer (t, &p, status, body, strlen (body));
  return parse (r);
}

static void
test_run_result (void **state)
{
  (void) state;
  hv_mcp_tools *t = tools_new (1, 4);
  const char *body = "{\"exit_code\":3,\"timed_out\":false,\"duration_s\":0.5,\"stdout\":\"outp\","
                     "\"stdout_truncated\":true,\"stderr\":\"err\\n\",\"stderr_truncated\":false}";
  yajl_val r = answer_of (t, HV_TOOL_RUN_COMMAND, "ls", 200, body);
  assert_false (is_error (r));
  cleanup_free char *text = result_text (r);
  assert_string_equal ("exit status 3\noutp\n--- stderr ---\nerr\n[output truncated: stdout cut at 4 bytes; the rest "
                       "was dropped]\n",
                       text);
  assert_int_equal (3, YAJL_GET_INTEGER (get (r, "structuredContent", "exit_code")));
  assert_string_equal ("outp", YAJL_GET_STRING (get (r, "structuredContent", "stdout")));
  assert_true (YAJL_IS_TRUE (get (r, "structuredContent", "stdout_truncated")));
  assert_true (YAJL_IS_FALSE (get (r, "structuredContent", "stderr_truncated")));
  yajl_tree_free (r);

  /* A time limit: said on the first line, the command ran (no error). */
  body = "{\"exit_code\":124,\"timed_out\":true,\"duration_s\":5.0,\"stdout\":\"\",\"stdout_truncated\":false,"
         "\"stderr\":\"\",\"stderr_truncated\":false}";
  r = answer_of (t, HV_TOOL_RUN_CODE, "python3", 200, body);
  assert_false (is_error (r));
  cleanup_free char *text2 = result_text (r);
  assert_string_equal ("exit status 124 (timed out after 5 s)\n", text2);
  yajl_tree_free (r);

  /* An exec the policy refused: not started, an error naming the rule. */
  body = "{\"exit_code\":126,\"timed_out\":false,\"duration_s\":0.001,\"stdout\":\"\",\"stdout_truncated\":false,"
         "\"stderr\":\"haven: exec sh: Permission denied\\n\",\"stderr_truncated\":false}";
  r = answer_of (t, HV_TOOL_RUN_COMMAND, "sh", 200, body);
  assert_true (is_error (r));
  cleanup_free char *text3 = result_text (r);
  assert_non_null (strstr (text3, "process.block_shell"));
  assert_non_null (strstr (text3, "haven: exec sh"));
  yajl_tree_free (r);
  /* A program's own 126 is its exit status, not a refusal. */
  body = "{\"exit_code\":126,\"timed_out\":false,\"duration_s\":0.001,\"stdout\":\"\",\"stdout_truncated\":false,"
         "\"stderr\":\"mine\\n\",\"stderr_truncated\":false}";
  r = answer_of (t, HV_TOOL_RUN_COMMAND, "sh", 200, body);
  assert_false (is_error (r));
  yajl_tree_free (r);

  /* The service's refusal: its message, as an error. */
  r = answer_of (t, HV_TOOL_RUN_COMMAND, "env", 403,
                 "{\"error\":{\"code\":\"forbidden\",\"message\":\"env SECRET: not passed by the policy\"}}");
  assert_true (is_error (r));
  cleanup_free char *text4 = result_text (r);
  assert_non_null (strstr (text4, "env SECRET: not passed by the policy"));
  yajl_tree_free (r);
  /* An answer that is not the JSON it should be. */
  r = answer_of (t, HV_TOOL_RUN_COMMAND, "ls", 200, "[[[");
  assert_true (is_error (r));
  yajl_tree_free (r);
  hv_mcp_tools_free (t);
}

static void
test_read_result (void **state)
{
  (void) state;
  hv_mcp_tools *t = tools_new (1, 4);
  yajl_val r = answer_of (t, HV_TOOL_READ_FILE, "a.txt", 200, "abc");
  assert_false (is_error (r));
  cleanup_free char *text = result_text (r);
  assert_string_equal ("abc", text);
  /* The text in structuredContent too: a client that gives the model
   * structuredContent when there is one (Claude Code) shows it. */
  assert_string_equal ("abc", YAJL_GET_STRING (get (r, "structuredContent", "text")));
  yajl_tree_free (r);
  /* Cut at --max-output (4), at a character's start: "ab" and "é". */
  r = answer_of (t, HV_TOOL_READ_FILE, "b.txt", 200, "abc\xc3\xa9xyz");
  cleanup_free char *text2 = result_text (r);
  const char *cut = "abc\n[file truncated: 3 of 8 bytes shown";
  assert_int_equal (0, strncmp (text2, cut, strlen (cut)));
  assert_true (YAJL_IS_TRUE (get (r, "structuredContent", "truncated")));
  assert_int_equal (8, YAJL_GET_INTEGER (get (r, "structuredContent", "size")));
  yajl_tree_free (r);
  /* Not UTF-8: its size and how to read it. */
  r = answer_of (t, HV_TOOL_READ_FILE, "c.bin", 200, "\xff\xfe\x01");
  assert_true (is_error (r));
  cleanup_free char *text3 = result_text (r);
  assert_non_null (strstr (text3, "3 bytes"));
  assert_non_null (strstr (text3, "base64"));
  yajl_tree_free (r);
  hv_mcp_tools_free (t);
}

static void
test_why_merge (void **state)
{
  (void) state;
  hv_mcp_tools *t = tools_new (1, 32768);
  /* The session's refusal is now: after the trail's old denials and
   * before one written in the future. */
  hv_mcp_tools_refused (t, "env", "env", "env SECRET: not passed");
  const char *body = "{\"trail\":\"/var/log/t.jsonl\",\"denials\":["
                     "{\"time\":\"2000-01-01T00:00:01.000000000Z\",\"kind\":\"net\",\"what\":\"connect to "
                     "203.0.113.9:80\",\"rule\":\"network: none\"},"
                     "{\"time\":\"2000-01-01T00:00:02.000000000Z\",\"kind\":\"syscall\",\"what\":\"ptrace\","
                     "\"rule\":\"syscalls.profile: agent\",\"allow\":\"syscalls: {allow: [ptrace]}\"},"
                     "{\"time\":\"2999-01-01T00:00:00.000000000Z\",\"kind\":\"exec\",\"what\":\"/bin/sh\","
                     "\"rule\":\"filesystem.block: ~/.ssh\",\"allow\":\"\",\"never\":true,\"why_not\":\"a secret\"}],"
                     "\"note\":\"\"}";
  struct hv_mcp_pending p = { .tool = HV_TOOL_WHY, .limit = 3 };
  cleanup_free char *r = hv_mcp_tools_answer (t, &p, 200, body, strlen (body));
  yajl_val v = parse (r);
  assert_false (is_error (v));
  yajl_val list = get (v, "structuredContent", "denials");
  assert_int_equal (3, list->u.array.len); /* the last 3 of 4 */
  assert_string_equal ("ptrace", YAJL_GET_STRING (get (list->u.array.values[0], "what", NULL)));
  assert_string_equal ("session", YAJL_GET_STRING (get (list->u.array.values[1], "source", NULL)));
  assert_string_equal ("/bin/sh", YAJL_GET_STRING (get (list->u.array.values[2], "what", NULL)));
  cleanup_free char *text = result_text (v);
  assert_true (strstr (text, "ptrace") < strstr (text, "env SECRET"));
  assert_true (strstr (text, "env SECRET") < strstr (text, "/bin/sh"));
  assert_null (strstr (text, "203.0.113.9"));
  /* The records' policy line that would allow each, or why none should. */
  assert_non_null (strstr (text, "allowed by this line in a policy that extends \"strict\": syscalls: {allow: [ptrace]}"));
  assert_non_null (strstr (text, "no policy line should allow it: a secret"));
  assert_string_equal ("syscalls: {allow: [ptrace]}", YAJL_GET_STRING (get (list->u.array.values[0], "allow", NULL)));
  assert_non_null (strstr (text, "/var/log/t.jsonl"));
  yajl_tree_free (v);

  /* No trail: the service's note is said. */
  const char *none = "{\"trail\":null,\"denials\":[],\"note\":\"the policy keeps no audit trail\"}";
  p.limit = 20;
  cleanup_free char *r2 = hv_mcp_tools_answer (t, &p, 200, none, strlen (none));
  v = parse (r2);
  cleanup_free char *text2 = result_text (v);
  assert_non_null (strstr (text2, "the policy keeps no audit trail"));
  assert_true (YAJL_IS_NULL (get (v, "structuredContent", "trail")));
  yajl_tree_free (v);
  hv_mcp_tools_free (t);
}

static void
test_sandbox_gone (void **state)
{
  (void) state;
  struct fixture f;
  fixture_open (&f, 1);
  yajl_val r = answer_of (f.t, HV_TOOL_RUN_COMMAND, "ls", 404,
                          "{\"error\":{\"code\":\"not_found\",\"message\":\"no sandbox hvs-0000abcd\"}}");
  assert_true (is_error (r));
  yajl_tree_free (r);
  /* Later calls say so without asking the service. */
  expect_tool_error (&f, "run_command", "{\"argv\":[\"ls\"]}", "the sandbox is gone", NULL);
  expect_tool_error (&f, "read_file", "{\"path\":\"a\"}", "the sandbox is gone", NULL);
  fixture_close (&f);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_list),        cmocka_unit_test (test_arguments),  cmocka_unit_test (test_block_shell),
    cmocka_unit_test (test_run_result),  cmocka_unit_test (test_read_result), cmocka_unit_test (test_why_merge),
    cmocka_unit_test (test_sandbox_gone),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
