/* Unit tests of the service's API parsing and answers (session/service/
 * service_api_*.c) and of the UTF-8 and base64 helpers they share
 * (base/utf8.c, base/base64.c): every route, every refusal with its
 * message, and results that must stay JSON whatever bytes a command
 * wrote, with those bytes recoverable exactly. */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "base64.h"
#include "keeper.h"
#include "service_api.h"
#include "utf8.h"

/* --- routes ---------------------------------------------------------------- */

static void
expect_route (const char *method, const char *target, enum hv_api_route route, const char *id, const char *path)
{
  struct hv_api_target t;
  hv_error *err = NULL;
  if (hv_api_route (method, target, &t, &err) < 0)
    fail_msg ("%s %s refused: %s", method, target, err->msg);
  if (t.route != route)
    fail_msg ("%s %s: route %d, expected %d", method, target, (int) t.route, (int) route);
  if ((id == NULL) != (t.sandbox_id == NULL) || (id && strcmp (id, t.sandbox_id) != 0))
    fail_msg ("%s %s: id \"%s\", expected \"%s\"", method, target, t.sandbox_id ? t.sandbox_id : "(null)",
              id ? id : "(null)");
  if ((path == NULL) != (t.path == NULL) || (path && strcmp (path, t.path) != 0))
    fail_msg ("%s %s: path \"%s\", expected \"%s\"", method, target, t.path ? t.path : "(null)",
              path ? path : "(null)");
  hv_api_target_free (&t);
}

static void
expect_route_error (const char *method, const char *target, const char *msg)
{
  struct hv_api_target t;
  hv_error *err = NULL;
  if (hv_api_route (method, target, &t, &err) == 0)
    fail_msg ("%s %s taken (route %d), expected: %s", method, target, (int) t.route, msg);
  assert_non_null (err);
  if (strcmp (err->msg, msg) != 0)
    fail_msg ("%s %s: \"%s\", expected \"%s\"", method, target, err->msg, msg);
  assert_null (t.sandbox_id);
  assert_null (t.path);
  hv_error_free (&err);
}

static void
test_routes (void **state)
{
  (void) state;
  expect_route ("GET", "/v1/version", HV_API_VERSION_GET, NULL, NULL);
  expect_route ("GET", "/v1/version?", HV_API_VERSION_GET, NULL, NULL);
  expect_route ("POST", "/v1/sandboxes", HV_API_SANDBOX_CREATE, NULL, NULL);
  expect_route ("GET", "/v1/sandboxes", HV_API_SANDBOX_LIST, NULL, NULL);
  expect_route ("GET", "/v1/sandboxes/hvs-0a1b2c3d", HV_API_SANDBOX_GET, "hvs-0a1b2c3d", NULL);
  expect_route ("DELETE", "/v1/sandboxes/A_z-9", HV_API_SANDBOX_DELETE, "A_z-9", NULL);
  expect_route ("POST", "/v1/sandboxes/s1/run", HV_API_SANDBOX_RUN, "s1", NULL);
  expect_route ("PUT", "/v1/sandboxes/s1/files/in.txt", HV_API_FILE_PUT, "s1", "in.txt");
  expect_route ("GET", "/v1/sandboxes/s1/files/src/main.c", HV_API_FILE_GET, "s1", "src/main.c");
  expect_route ("GET", "/v1/sandboxes/s1/list", HV_API_FILE_LIST, "s1", NULL);
  expect_route ("GET", "/v1/sandboxes/s1/list?path=src", HV_API_FILE_LIST, "s1", "src");
  expect_route ("GET", "/v1/sandboxes/s1/list?path=", HV_API_FILE_LIST, "s1", NULL);
  expect_route ("GET", "/v1/sandboxes/s1/list?", HV_API_FILE_LIST, "s1", NULL);
  /* Percent-decoding: UTF-8 names, a space, an encoded '/' (a path
   * separator once decoded), '+' literal in a path and a space in a query. */
  expect_route ("GET", "/v1/sandboxes/s1/files/d%C3%A9j%C3%a0/a%20b+c", HV_API_FILE_GET, "s1", "d\xc3\xa9j\xc3\xa0/a b+c");
  expect_route ("PUT", "/v1/sandboxes/s1/files/a%2Fb", HV_API_FILE_PUT, "s1", "a/b");
  expect_route ("GET", "/v1/sandboxes/s1/list?path=a+b/c%2Bd", HV_API_FILE_LIST, "s1", "a b/c+d");
  expect_route ("GET", "/v1/sandboxes/s1/list?p%61th=x", HV_API_FILE_LIST, "s1", "x");
  expect_route ("GET", "/v1/sandboxes/%41bc", HV_API_SANDBOX_GET, "Abc", NULL);
  expect_route ("GET", "/v1/sandboxes/s1/denials", HV_API_SANDBOX_DENIALS, "s1", NULL);
  expect_route ("POST", "/v1/sandboxes/s1/denials", HV_API_METHOD_NOT_ALLOWED, NULL, NULL);
  {
    /* The limit: 50 when not given, else what the query says. */
    static const struct
    {
      const char *target;
      unsigned limit;
    } limits[] = { { "/v1/sandboxes/s1/denials", 50 },          { "/v1/sandboxes/s1/denials?", 50 },
                   { "/v1/sandboxes/s1/denials?limit=1", 1 },    { "/v1/sandboxes/s1/denials?limit=1000", 1000 },
                   { "/v1/sandboxes/s1/denials?limit=%37", 7 },   { "/v1/sandboxes/s1", 0 } };
    for (size_t i = 0; i < sizeof (limits) / sizeof (limits[0]); i++)
      {
        struct hv_api_target t;
        hv_error *err = NULL;
        assert_int_equal (hv_api_route ("GET", limits[i].target, &t, &err), 0);
        assert_int_equal (t.limit, limits[i].limit);
        hv_api_target_free (&t);
      }
  }
  char id64[128];
  snprintf (id64, sizeof (id64), "/v1/sandboxes/%s", "0123456789012345678901234567890123456789012345678901234567890123");
  expect_route ("GET", id64, HV_API_SANDBOX_GET, id64 + strlen ("/v1/sandboxes/"), NULL);

  /* A known path with another method: 405. */
  expect_route ("PUT", "/v1/version", HV_API_METHOD_NOT_ALLOWED, NULL, NULL);
  expect_route ("HEAD", "/v1/version", HV_API_METHOD_NOT_ALLOWED, NULL, NULL);
  expect_route ("DELETE", "/v1/sandboxes", HV_API_METHOD_NOT_ALLOWED, NULL, NULL);
  expect_route ("POST", "/v1/sandboxes/s1", HV_API_METHOD_NOT_ALLOWED, NULL, NULL);
  expect_route ("GET", "/v1/sandboxes/s1/run", HV_API_METHOD_NOT_ALLOWED, NULL, NULL);
  expect_route ("POST", "/v1/sandboxes/s1/list", HV_API_METHOD_NOT_ALLOWED, NULL, NULL);
  expect_route ("DELETE", "/v1/sandboxes/s1/files/x", HV_API_METHOD_NOT_ALLOWED, NULL, NULL);
  expect_route ("get", "/v1/sandboxes", HV_API_METHOD_NOT_ALLOWED, NULL, NULL);

  /* Unknown paths: 404, whatever the method. */
  static const char *const unknown[] = {
    "/", "/v1", "/v1/", "/v2/version", "/v1/version/", "/v1/Version", "/v1/sandboxes/s1/",
    "/v1/sandboxes/s1/files", "/v1/sandboxes/s1/run/x", "/v1/sandboxes/s1/list/x", "/v1/other",
    "/v1/sandboxes/s1/foo", "/v1/sandboxes/s1/foo/bar", "//v1/version", "/v1//sandboxes",
    "/v1/%73andboxes", "/v1/version/?path=x",
  };
  for (size_t i = 0; i < sizeof (unknown) / sizeof (unknown[0]); i++)
    {
      expect_route ("GET", unknown[i], HV_API_NOT_FOUND, NULL, NULL);
      expect_route ("POST", unknown[i], HV_API_NOT_FOUND, NULL, NULL);
    }
}

static void
test_route_refusals (void **state)
{
  (void) state;
  expect_route_error ("GET", "v1/version", "target: not a path (it must start with '/')");
  expect_route_error ("GET", "", "target: not a path (it must start with '/')");
  expect_route_error ("GET", "*", "target: not a path (it must start with '/')");
  expect_route_error ("GET", "/v1/version#x",
                      "target: a character that is not allowed in a URI path or query (byte 0x23)");
  expect_route_error ("GET", "/v1/sandboxes/a b",
                      "target: a character that is not allowed in a URI path or query (byte 0x20)");
  expect_route_error ("GET", "/v1/sandboxes/\xff",
                      "target: a character that is not allowed in a URI path or query (byte 0xff)");
  expect_route_error ("GET", "/v1/sandboxes/s1/files/a\tb",
                      "target: a character that is not allowed in a URI path or query (byte 0x09)");
  expect_route_error ("GET", "/v1/sandboxes/s1/files/a\\b",
                      "target: a character that is not allowed in a URI path or query (byte 0x5c)");

  const char *bad_id = "sandbox id: not 1 to 64 of A-Z, a-z, 0-9, '_' and '-'";
  expect_route_error ("GET", "/v1/sandboxes/", bad_id);
  expect_route_error ("DELETE", "/v1/sandboxes/a.b", bad_id);
  expect_route_error ("GET", "/v1/sandboxes/a%2Fb", bad_id);
  expect_route_error ("GET", "/v1/sandboxes/a%00", bad_id);
  expect_route_error ("POST", "/v1/sandboxes/a~/run", bad_id);
  expect_route_error ("GET", "/v1/sandboxes/01234567890123456789012345678901234567890123456789012345678901234", bad_id);
  expect_route_error ("GET", "/v1/sandboxes/a%2", "sandbox id: a '%' not followed by two hex digits");
  expect_route_error ("GET", "/v1/sandboxes/a%zz", "sandbox id: a '%' not followed by two hex digits");
  expect_route_error ("GET", "/v1/sandboxes/%", "sandbox id: a '%' not followed by two hex digits");

  expect_route_error ("PUT", "/v1/sandboxes/s1/files/", "file path: empty");
  const char *empty_comp = "file path: an empty component (\"//\" or a '/' at the end)";
  expect_route_error ("PUT", "/v1/sandboxes/s1/files/a//b", empty_comp);
  expect_route_error ("PUT", "/v1/sandboxes/s1/files/a/", empty_comp);
  expect_route_error ("GET", "/v1/sandboxes/s1/files/a%2F", empty_comp);
  expect_route_error ("GET", "/v1/sandboxes/s1/files//etc/passwd", "file path: not relative (it starts with '/')");
  expect_route_error ("GET", "/v1/sandboxes/s1/files/%2Fetc/passwd", "file path: not relative (it starts with '/')");
  expect_route_error ("GET", "/v1/sandboxes/s1/files/a/../../b", "file path: a \"..\" component");
  expect_route_error ("GET", "/v1/sandboxes/s1/files/..", "file path: a \"..\" component");
  expect_route_error ("GET", "/v1/sandboxes/s1/files/a/%2E%2e/b", "file path: a \"..\" component");
  expect_route_error ("GET", "/v1/sandboxes/s1/files/a%2F..%2Fb", "file path: a \"..\" component");
  expect_route_error ("GET", "/v1/sandboxes/s1/files/./a", "file path: a \".\" component");
  expect_route_error ("GET", "/v1/sandboxes/s1/files/a/.", "file path: a \".\" component");
  expect_route_error ("GET", "/v1/sandboxes/s1/files/a%00b", "file path: holds a NUL byte");
  expect_route_error ("GET", "/v1/sandboxes/s1/files/a%G0", "file path: a '%' not followed by two hex digits");

  char target[8192];
  int n = snprintf (target, sizeof (target), "/v1/sandboxes/s1/files/");
  memset (target + n, 'a', 256);
  target[n + 256] = '\0';
  expect_route_error ("GET", target, "file path: a component longer than 255 bytes");
  target[n + 255] = '\0';
  expect_route ("GET", target, HV_API_FILE_GET, "s1", target + n);
  /* 16 components and their slashes: 4095 bytes, the most. */
  size_t at = (size_t) n;
  for (int i = 0; i < 16; i++)
    {
      memset (target + at, 'b', i == 15 ? 255 : 254);
      at += i == 15 ? 255 : 254;
      if (i < 15)
        target[at++] = '/';
    }
  target[at] = '\0';
  assert_int_equal (at - (size_t) n, 4080);
  memcpy (target + at, "/cccccccccccccc", 15);
  target[at + 15] = '\0';
  expect_route ("GET", target, HV_API_FILE_GET, "s1", target + n);
  target[at + 15] = 'c';
  target[at + 16] = '\0';
  expect_route_error ("GET", target, "file path: longer than 4095 bytes");

  expect_route_error ("GET", "/v1/sandboxes/s1/list?path=..", "query: path: a \"..\" component");
  expect_route_error ("GET", "/v1/sandboxes/s1/list?path=/etc", "query: path: not relative (it starts with '/')");
  expect_route_error ("GET", "/v1/sandboxes/s1/list?path=a%2F%2Fb",
                      "query: path: an empty component (\"//\" or a '/' at the end)");
  expect_route_error ("GET", "/v1/sandboxes/s1/list?path=%00", "query: path: holds a NUL byte");
  expect_route_error ("GET", "/v1/sandboxes/s1/list?path=%ZZ", "query: path: a '%' not followed by two hex digits");
  expect_route_error ("GET", "/v1/sandboxes/s1/list?x=1", "query: unknown parameter \"x\" (only \"path\" is taken)");
  expect_route_error ("GET", "/v1/sandboxes/s1/list?pat%0Ah=1",
                      "query: unknown parameter \"pat?h\" (only \"path\" is taken)");
  expect_route_error ("GET", "/v1/sandboxes/s1/list?path=a&path=b", "query: \"path\" given twice");
  expect_route_error ("GET", "/v1/sandboxes/s1/list?path=&path=", "query: \"path\" given twice");
  expect_route_error ("GET", "/v1/sandboxes/s1/list?path", "query: \"path\" without a value (\"path=DIR\")");
  const char *empty_param = "query: an empty parameter (\"&&\" or a '&' at an end)";
  expect_route_error ("GET", "/v1/sandboxes/s1/list?path=a&", empty_param);
  expect_route_error ("GET", "/v1/sandboxes/s1/list?&path=a", empty_param);
  expect_route_error ("GET", "/v1/sandboxes/s1/list?&", empty_param);
  const char *limit_range = "query: limit: not a number from 1 to 1000";
  expect_route_error ("GET", "/v1/sandboxes/s1/denials?limit=0", limit_range);
  expect_route_error ("GET", "/v1/sandboxes/s1/denials?limit=1001", limit_range);
  expect_route_error ("GET", "/v1/sandboxes/s1/denials?limit=", limit_range);
  expect_route_error ("GET", "/v1/sandboxes/s1/denials?limit=-1", limit_range);
  expect_route_error ("GET", "/v1/sandboxes/s1/denials?limit=00001", limit_range);
  expect_route_error ("GET", "/v1/sandboxes/s1/denials?limit=1x", limit_range);
  expect_route_error ("GET", "/v1/sandboxes/s1/denials?limit=5&limit=6", "query: \"limit\" given twice");
  expect_route_error ("GET", "/v1/sandboxes/s1/denials?path=a", "query: only \"limit=N\" is taken");
  expect_route_error ("GET", "/v1/sandboxes/s1/denials?limit=5&", "query: an empty parameter (\"&&\" or a '&' at an end)");
  expect_route_error ("GET", "/v1/sandboxes/s1/list?limit=5", "query: unknown parameter \"limit\" (only \"path\" is taken)");
  const char *no_query = "query: this endpoint takes no query parameters";
  expect_route_error ("GET", "/v1/version?x", no_query);
  expect_route_error ("GET", "/v1/sandboxes?path=a", no_query);
  expect_route_error ("POST", "/v1/sandboxes/s1/run?stream=1", no_query);
  expect_route_error ("GET", "/v1/sandboxes/s1/files/a?path=b", no_query);
}

/* --- request bodies -------------------------------------------------------- */

static void
expect_create_error (const char *body, size_t len, const char *msg)
{
  struct hv_api_create c;
  hv_error *err = NULL;
  if (hv_api_parse_create (body, len, &c, &err) == 0)
    fail_msg ("create body taken: %s", body);
  if (strcmp (err->msg, msg) != 0)
    fail_msg ("create %s: \"%s\", expected \"%s\"", body, err->msg, msg);
  assert_null (c.policy);
  assert_null (c.project);
  hv_error_free (&err);
}
#define CREATE_ERROR(body, msg) expect_create_error (body, strlen (body), msg)

static void
test_create (void **state)
{
  (void) state;
  struct hv_api_create c;
  hv_error *err = NULL;
  const char *min = "{\"policy\": \"offline\"}";
  assert_int_equal (hv_api_parse_create (min, strlen (min), &c, &err), 0);
  assert_string_equal (c.policy, "offline");
  assert_null (c.project);
  assert_true (c.pool);
  assert_false (c.destroy_on_disconnect);
  assert_int_equal (c.idle_timeout_s, 0);
  hv_api_create_free (&c);

  /* The body need not be NUL-terminated: only len bytes are read. */
  const char full[] = "{\"policy\":\"/etc/haven/x.yaml\",\"project\":\"/home/u/p\",\"pool\":false,"
                      "\"destroy_on_disconnect\":true,\"idle_timeout_s\":86400}XXXX";
  assert_int_equal (hv_api_parse_create (full, strlen (full) - 4, &c, &err), 0);
  assert_string_equal (c.policy, "/etc/haven/x.yaml");
  assert_string_equal (c.project, "/home/u/p");
  assert_false (c.pool);
  assert_true (c.destroy_on_disconnect);
  assert_int_equal (c.idle_timeout_s, 86400);
  hv_api_create_free (&c);

  /* null is absent. */
  const char *nulls = "{\"policy\":\"p\",\"project\":null,\"pool\":null,\"idle_timeout_s\":null}";
  assert_int_equal (hv_api_parse_create (nulls, strlen (nulls), &c, &err), 0);
  assert_null (c.project);
  assert_true (c.pool);
  hv_api_create_free (&c);

  expect_create_error ("", 0, "request body: empty (a JSON object is expected)");
  expect_create_error ("{\"policy\":\"a\"}\0", 15, "request body: a NUL byte (JSON text has none)");
  expect_create_error ("{}", HV_API_BODY_MAX + 1, "request body: more than 16777216 bytes");
  CREATE_ERROR ("[]", "request body: .: expected an object");
  CREATE_ERROR ("\"policy\"", "request body: .: expected an object");
  CREATE_ERROR ("{}", "request body: .policy: required field is missing");
  CREATE_ERROR ("{\"policy\":null}", "request body: .policy: required field is missing");
  CREATE_ERROR ("{\"policy\":1}", "request body: .policy: expected a string");
  CREATE_ERROR ("{\"policy\":\"\"}", "request body: .policy: empty");
  CREATE_ERROR ("{\"policy\":\"p\",\"extra\":1}", "request body: .extra: unknown field");
  CREATE_ERROR ("{\"policy\":\"p\",\"Pool\":true}", "request body: .Pool: unknown field");
  CREATE_ERROR ("{\"policy\":\"p\",\"policy\":\"q\"}", "request body: .policy: given twice");
  CREATE_ERROR ("{\"policy\":\"p\",\"project\":\"rel/dir\"}", "request body: .project: not an absolute path");
  CREATE_ERROR ("{\"policy\":\"p\",\"project\":\"\"}", "request body: .project: empty");
  CREATE_ERROR ("{\"policy\":\"p\",\"pool\":\"yes\"}", "request body: .pool: expected a boolean");
  CREATE_ERROR ("{\"policy\":\"p\",\"destroy_on_disconnect\":1}",
                "request body: .destroy_on_disconnect: expected a boolean");
  CREATE_ERROR ("{\"policy\":\"p\",\"idle_timeout_s\":86401}", "request body: .idle_timeout_s: 86401 is more than 86400");
  CREATE_ERROR ("{\"policy\":\"p\",\"idle_timeout_s\":-1}", "request body: .idle_timeout_s: expected an unsigned integer");
  CREATE_ERROR ("{\"policy\":\"p\",\"idle_timeout_s\":1e3}",
                "request body: .idle_timeout_s: expected an unsigned integer");
  CREATE_ERROR ("{\"policy\":\"p\",\"idle_timeout_s\":99999999999999999999999}",
                "request body: .idle_timeout_s: integer 99999999999999999999999 out of range");
  CREATE_ERROR ("{\"policy\":\"a\\u0000b\"}", "request body: .policy: the string holds a NUL character (\\u0000)");
  CREATE_ERROR ("{\"pol\\u0000icy\":\"x\"}", "request body: .pol: a member name holds a NUL character (\\u0000)");
  CREATE_ERROR ("[1,{\"a\":[\"x\",\"\\u0000\"]}]",
                "request body: [1].a[1]: the string holds a NUL character (\\u0000)");
  CREATE_ERROR ("[[[[[[[[[[[[[[[[[\"policy\"]]]]]]]]]]]]]]]]]", "request body: nested deeper than 16 levels");
  /* Malformed JSON: yajl's message on one line. */
  const char *bad_json[] = { "{", "{\"policy\":\"p\"} x", "{\"policy\":\"\xff\"}", "{\"policy\":'p'}", "{\"policy\":\"p\",}" };
  for (size_t i = 0; i < sizeof (bad_json) / sizeof (bad_json[0]); i++)
    {
      assert_int_equal (hv_api_parse_create (bad_json[i], strlen (bad_json[i]), &c, &err), -1);
      if (strncmp (err->msg, "request body: invalid JSON: ", 28) != 0 || strchr (err->msg, '\n'))
        fail_msg ("%s: %s", bad_json[i], err->msg);
      hv_error_free (&err);
    }
}

static void
expect_run_error (const char *body, const char *msg)
{
  struct hv_api_run r;
  hv_error *err = NULL;
  if (hv_api_parse_run (body, strlen (body), &r, &err) == 0)
    fail_msg ("run body taken: %s", body);
  if (strcmp (err->msg, msg) != 0)
    fail_msg ("run %s: \"%s\", expected \"%s\"", body, err->msg, msg);
  assert_int_equal (r.argv.n, 0);
  assert_null (r.argv.v);
  assert_null (r.env.v);
  assert_null (r.cwd);
  assert_null (r.stdin_data);
  hv_error_free (&err);
}

static void
test_run (void **state)
{
  (void) state;
  struct hv_api_run r;
  hv_error *err = NULL;
  const char *full = "{\"argv\":[\"sh\",\"-c\",\"echo $A\"],\"env\":{\"A\":\"1=2\",\"_b9\":\"\"},\"cwd\":\"src/x\","
                     "\"stdin\":\"hi\\n\",\"timeout_s\":86400,\"max_output\":16777216,\"stream\":true}";
  if (hv_api_parse_run (full, strlen (full), &r, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_int_equal (r.argv.n, 3);
  assert_string_equal (r.argv.v[2], "echo $A");
  assert_null (r.argv.v[3]);
  assert_int_equal (r.env.n, 2);
  assert_string_equal (r.env.v[0], "A=1=2");
  assert_string_equal (r.env.v[1], "_b9=");
  assert_string_equal (r.cwd, "src/x");
  assert_int_equal (r.stdin_len, 3);
  assert_memory_equal (r.stdin_data, "hi\n", 3);
  assert_int_equal (r.timeout_s, 86400);
  assert_int_equal (r.max_output, 16777216);
  assert_true (r.stream);
  hv_api_run_free (&r);
  hv_api_run_free (&r); /* twice: nothing left to free */

  const char *min = "{\"argv\":[\"true\"]}";
  assert_int_equal (hv_api_parse_run (min, strlen (min), &r, &err), 0);
  assert_int_equal (r.argv.n, 1);
  assert_int_equal (r.env.n, 0);
  assert_null (r.cwd);
  assert_null (r.stdin_data);
  assert_int_equal (r.timeout_s, 0);
  assert_int_equal (r.max_output, 0);
  assert_false (r.stream);
  hv_api_run_free (&r);

  /* stdin_b64: the exact bytes, NUL and 0xff included. */
  const char *b64 = "{\"argv\":[\"cat\"],\"stdin_b64\":\"AAEC/w==\",\"cwd\":\"/tmp\"}";
  assert_int_equal (hv_api_parse_run (b64, strlen (b64), &r, &err), 0);
  assert_int_equal (r.stdin_len, 4);
  assert_memory_equal (r.stdin_data, "\x00\x01\x02\xff", 4);
  assert_string_equal (r.cwd, "/tmp");
  hv_api_run_free (&r);
  const char *b64_empty = "{\"argv\":[\"cat\"],\"stdin_b64\":\"\"}";
  assert_int_equal (hv_api_parse_run (b64_empty, strlen (b64_empty), &r, &err), 0);
  assert_non_null (r.stdin_data);
  assert_int_equal (r.stdin_len, 0);
  hv_api_run_free (&r);

  expect_run_error ("{}", "request body: .argv: required field is missing");
  expect_run_error ("[\"ls\"]", "request body: .: expected an object");
  expect_run_error ("{\"argv\":[]}", "request body: .argv: empty (the command and its arguments)");
  expect_run_error ("{\"argv\":\"ls\"}", "request body: .argv: expected an array");
  expect_run_error ("{\"argv\":[\"ls\",1]}", "request body: .argv[1]: expected a string");
  expect_run_error ("{\"argv\":[\"ls\",\"a\",[\"x\"]]}", "request body: .argv[2]: expected a string");
  expect_run_error ("{\"argv\":[\"ls\",\"a\",null]}", "request body: .argv[2]: expected a string");
  expect_run_error ("{\"argv\":[\"\"]}", "request body: .argv[0]: empty (the program to run)");
  expect_run_error ("{\"argv\":[\"ls\",\"a\\u0000\"]}",
                    "request body: .argv[1]: the string holds a NUL character (\\u0000)");
  expect_run_error ("{\"argv\":[\"ls\"],\"Argv\":[]}", "request body: .Argv: unknown field");
  expect_run_error ("{\"argv\":[\"ls\"],\"argv\":[\"rm\"]}", "request body: .argv: given twice");
  const char *bad_name = "not a variable name ([A-Za-z_][A-Za-z0-9_]*)";
  char msg[256];
  static const char *const names[] = { "1A", "A-B", "", "A B", "\xc3\xa9" };
  for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
    {
      char body[256];
      snprintf (body, sizeof (body), "{\"argv\":[\"x\"],\"env\":{\"%s\":\"v\"}}", names[i]);
      snprintf (msg, sizeof (msg), "request body: .env.%s: %s", names[i], bad_name);
      expect_run_error (body, msg);
    }
  expect_run_error ("{\"argv\":[\"x\"],\"env\":{\"A=B\":\"v\"}}", "request body: .env.A=B: not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
  expect_run_error ("{\"argv\":[\"x\"],\"env\":{\"A\":1}}", "request body: .env.A: expected a string");
  expect_run_error ("{\"argv\":[\"x\"],\"env\":{\"A\":null}}", "request body: .env.A: expected a string");
  expect_run_error ("{\"argv\":[\"x\"],\"env\":{\"A\":\"v\\u0000w\"}}",
                    "request body: .env.A: the string holds a NUL character (\\u0000)");
  expect_run_error ("{\"argv\":[\"x\"],\"env\":{\"A\\u0000B\":\"v\"}}",
                    "request body: .env.A: a member name holds a NUL character (\\u0000)");
  expect_run_error ("{\"argv\":[\"x\"],\"env\":[\"A=1\"]}", "request body: .env: expected an object");
  expect_run_error ("{\"argv\":[\"x\"],\"env\":{\"A\":\"1\",\"B\":\"2\",\"A\":\"3\"}}", "request body: .env.A: given twice");
  expect_run_error ("{\"argv\":[\"x\"],\"stdin\":\"a\",\"stdin_b64\":\"YQ==\"}",
                    "request body: .stdin_b64: given with .stdin (one of them)");
  expect_run_error ("{\"argv\":[\"x\"],\"stdin\":1}", "request body: .stdin: expected a string");
  expect_run_error ("{\"argv\":[\"x\"],\"stdin\":\"a\\u0000\"}",
                    "request body: .stdin: the string holds a NUL character (\\u0000)");
  static const char *const not_b64[] = { "AAE", "AA=A", "QR==", "QUJ=", "A B=", "YQ", "=YQ=", "YQ==YQ==", "YQ\\n==" };
  for (size_t i = 0; i < sizeof (not_b64) / sizeof (not_b64[0]); i++)
    {
      char body[256];
      snprintf (body, sizeof (body), "{\"argv\":[\"x\"],\"stdin_b64\":\"%s\"}", not_b64[i]);
      expect_run_error (body, "request body: .stdin_b64: not base64 (RFC 4648's alphabet, padded)");
    }
  expect_run_error ("{\"argv\":[\"x\"],\"timeout_s\":86401}", "request body: .timeout_s: 86401 is more than 86400");
  expect_run_error ("{\"argv\":[\"x\"],\"timeout_s\":1.5}", "request body: .timeout_s: expected an unsigned integer");
  expect_run_error ("{\"argv\":[\"x\"],\"timeout_s\":\"10\"}", "request body: .timeout_s: expected an unsigned integer");
  expect_run_error ("{\"argv\":[\"x\"],\"max_output\":16777217}",
                    "request body: .max_output: 16777217 is more than 16777216");
  expect_run_error ("{\"argv\":[\"x\"],\"stream\":\"yes\"}", "request body: .stream: expected a boolean");
  expect_run_error ("{\"argv\":[\"x\"],\"cwd\":\"\"}", "request body: .cwd: empty");
  expect_run_error ("{\"argv\":[\"x\"],\"cwd\":\"../x\"}", "request body: .cwd: a \"..\" component");
  expect_run_error ("{\"argv\":[\"x\"],\"cwd\":\"a//b\"}", "request body: .cwd: an empty component (\"//\" or a '/' at the end)");
  expect_run_error ("{\"argv\":[\"x\"],\"cwd\":\"a/./b\"}", "request body: .cwd: a \".\" component");
  expect_run_error ("{\"argv\":[\"x\"],\"cwd\":7}", "request body: .cwd: expected a string");

  /* What the keeper is sent must fit its request (keeper.h). */
  size_t big = HV_KEEPER_MAX_REQUEST;
  char *body = malloc (big + 64);
  size_t n = (size_t) snprintf (body, 64, "{\"argv\":[\"");
  memset (body + n, 'a', big - 1);
  strcpy (body + n + big - 1, "\"]}");
  assert_int_equal (hv_api_parse_run (body, strlen (body), &r, &err), 0); /* big - 1 bytes and the NUL */
  hv_api_run_free (&r);
  body[n + big - 1] = 'a';
  strcpy (body + n + big, "\"]}");
  snprintf (msg, sizeof (msg), "request body: .argv, .env and .cwd hold %zu bytes together, more than %d", big + 1,
            HV_KEEPER_MAX_REQUEST);
  expect_run_error (body, msg);
  free (body);
}

/* --- answers --------------------------------------------------------------- */

/* text is one JSON value yajl reads strictly (valid UTF-8); the tree. */
static yajl_val
parse_json (const char *text)
{
  char ebuf[256];
  assert_true (hv_utf8_valid (text, strlen (text)));
  yajl_val v = yajl_tree_parse (text, ebuf, sizeof (ebuf));
  if (v == NULL)
    fail_msg ("not JSON (%s): %s", ebuf, text);
  return v;
}

static yajl_val
get (yajl_val obj, const char *key)
{
  const char *path[] = { key, NULL };
  return yajl_tree_get (obj, path, yajl_t_any);
}

/* "key_b64" decodes to exactly len bytes of data. */
static void
expect_b64 (yajl_val obj, const char *key, const char *data, size_t len)
{
  yajl_val v = get (obj, key);
  if (v == NULL || !YAJL_IS_STRING (v))
    fail_msg ("no %s", key);
  unsigned char *bytes;
  size_t n;
  assert_int_equal (hv_base64_decode (v->u.string, strlen (v->u.string), &bytes, &n), 0);
  assert_int_equal (n, len);
  assert_memory_equal (bytes, data, len);
  free (bytes);
}

static void
test_result (void **state)
{
  (void) state;
  struct hv_api_run_result r = {
    .exit_code = 0, .duration_s = 0.0123456789, .stdout_data = "h\xc3\xa9llo\n", .stdout_len = 7,
    .stderr_data = "", .stderr_len = 0,
  };
  char *text = hv_api_run_result_json (&r);
  assert_string_equal (text, "{\"exit_code\":0,\"timed_out\":false,\"duration_s\":0.012346,\"stdout\":\"h\xc3\xa9llo\\n\","
                             "\"stdout_truncated\":false,\"stderr\":\"\",\"stderr_truncated\":false}");
  yajl_val v = parse_json (text);
  assert_string_equal (get (v, "stdout")->u.string, "h\xc3\xa9llo\n");
  assert_null (get (v, "stdout_b64"));
  assert_null (get (v, "stderr_b64"));
  yajl_tree_free (v);
  free (text);

  /* Invalid UTF-8: U+FFFD in the text, the bytes in *_b64; a time limit. */
  struct hv_api_run_result bad = {
    .exit_code = 124, .timed_out = true, .duration_s = 1.5, .stdout_data = "a\xff" "b\xc3", .stdout_len = 4,
    .stderr_data = "\xed\xa0\x80x", .stderr_len = 4, .stdout_truncated = true,
  };
  text = hv_api_run_result_json (&bad);
  v = parse_json (text);
  assert_int_equal (get (v, "exit_code")->u.number.i, 124);
  assert_true (YAJL_IS_TRUE (get (v, "timed_out")));
  assert_string_equal (get (v, "duration_s")->u.number.r, "1.500000");
  assert_string_equal (get (v, "stdout")->u.string, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
  expect_b64 (v, "stdout_b64", "a\xff" "b\xc3", 4);
  assert_true (YAJL_IS_TRUE (get (v, "stdout_truncated")));
  /* A surrogate's encoding is three invalid bytes. */
  assert_string_equal (get (v, "stderr")->u.string, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx");
  expect_b64 (v, "stderr_b64", "\xed\xa0\x80x", 4);
  assert_true (YAJL_IS_FALSE (get (v, "stderr_truncated")));
  yajl_tree_free (v);
  free (text);

  /* NUL bytes are valid UTF-8 (U+0000): escaped, no *_b64; with an invalid
   * byte beside them, the b64 keeps them too. */
  struct hv_api_run_result nul = {
    .exit_code = 1, .stdout_data = "a\0b", .stdout_len = 3, .stderr_data = "\0\xff", .stderr_len = 2,
    .duration_s = NAN,
  };
  text = hv_api_run_result_json (&nul);
  v = parse_json (text);
  assert_non_null (strstr (text, "\"stdout\":\"a\\u0000b\""));
  assert_null (get (v, "stdout_b64"));
  assert_non_null (strstr (text, "\"stderr\":\"\\u0000\xef\xbf\xbd\""));
  expect_b64 (v, "stderr_b64", "\0\xff", 2);
  assert_string_equal (get (v, "duration_s")->u.number.r, "0.000000");
  yajl_tree_free (v);
  free (text);

  /* No output at all (NULL), a signal's status, a duration out of range. */
  struct hv_api_run_result none = { .exit_code = 137, .duration_s = -1, .stdout_data = NULL, .stdout_len = 5 };
  text = hv_api_run_result_json (&none);
  assert_string_equal (text, "{\"exit_code\":137,\"timed_out\":false,\"duration_s\":0.000000,\"stdout\":\"\","
                             "\"stdout_truncated\":false,\"stderr\":\"\",\"stderr_truncated\":false}");
  free (text);
  none.duration_s = INFINITY;
  text = hv_api_run_result_json (&none);
  yajl_tree_free (parse_json (text));
  free (text);
  none.duration_s = 1e300;
  text = hv_api_run_result_json (&none);
  yajl_tree_free (parse_json (text));
  free (text);

  /* Every byte value, in one output: the text is JSON and the b64 exact. */
  char all[256];
  for (int i = 0; i < 256; i++)
    all[i] = (char) i;
  struct hv_api_run_result every = { .stdout_data = all, .stdout_len = 256, .stderr_data = all + 128, .stderr_len = 128 };
  text = hv_api_run_result_json (&every);
  v = parse_json (text);
  expect_b64 (v, "stdout_b64", all, 256);
  expect_b64 (v, "stderr_b64", all + 128, 128);
  yajl_tree_free (v);
  free (text);
}

static void
test_stream_line (void **state)
{
  (void) state;
  char *line = hv_api_stream_line ("stdout", "hi\n", 3);
  assert_string_equal (line, "{\"stream\":\"stdout\",\"data\":\"hi\\n\"}\n");
  free (line);
  line = hv_api_stream_line ("stderr", "", 0);
  assert_string_equal (line, "{\"stream\":\"stderr\",\"data\":\"\"}\n");
  free (line);
  line = hv_api_stream_line ("stderr", "x\xfe\0", 3);
  /* One line: the only newline is the last byte. */
  assert_ptr_equal (strchr (line, '\n'), line + strlen (line) - 1);
  yajl_val v = parse_json (line);
  assert_string_equal (get (v, "stream")->u.string, "stderr");
  expect_b64 (v, "data_b64", "x\xfe\0", 3);
  yajl_tree_free (v);
  free (line);
  line = hv_api_stream_line ("\xff", "\n\n", 2);
  assert_ptr_equal (strchr (line, '\n'), line + strlen (line) - 1);
  yajl_tree_free (parse_json (line));
  free (line);
}

static void
test_error_json (void **state)
{
  (void) state;
  char *text = hv_api_error_json ("not_found", "sandbox ended");
  assert_string_equal (text, "{\"error\":{\"code\":\"not_found\",\"message\":\"sandbox ended\"}}");
  free (text);
  text = hv_api_error_json ("bad_request", NULL);
  assert_string_equal (text, "{\"error\":{\"code\":\"bad_request\",\"message\":\"\"}}");
  free (text);
  /* A message quoting the caller's bytes stays JSON. */
  text = hv_api_error_json ("policy_error", "p.yaml:3:1: \"\xff\"\n\t\\");
  yajl_val v = parse_json (text);
  const char *path[] = { "error", "message", NULL };
  assert_string_equal (yajl_tree_get (v, path, yajl_t_string)->u.string, "p.yaml:3:1: \"\xef\xbf\xbd\"\n\t\\");
  yajl_tree_free (v);
  free (text);
}

/* --- the shared helpers ---------------------------------------------------- */

static void
test_utf8 (void **state)
{
  (void) state;
  assert_true (hv_utf8_valid ("", 0));
  assert_true (hv_utf8_valid ("a\0b", 3));
  assert_true (hv_utf8_valid ("\xf0\x9f\x98\x80\xe2\x82\xac\xc3\xa9\x7f", 10));
  assert_true (hv_utf8_valid ("\xf4\x8f\xbf\xbf", 4));    /* U+10FFFF */
  assert_false (hv_utf8_valid ("\xf4\x90\x80\x80", 4));   /* above U+10FFFF */
  assert_false (hv_utf8_valid ("\xc0\x80", 2));           /* overlong NUL */
  assert_false (hv_utf8_valid ("\xe0\x80\xaf", 3));       /* overlong '/' */
  assert_false (hv_utf8_valid ("\xed\xa0\x80", 3));       /* a surrogate */
  assert_false (hv_utf8_valid ("\x80", 1));
  assert_false (hv_utf8_valid ("\xc3", 1));
  assert_false (hv_utf8_valid ("\xf8\x88\x80\x80\x80", 5));

  size_t n;
  /* Each byte that does not belong is one U+FFFD (the cut \xe2\x82: two). */
  char *s = hv_utf8_sanitize ("a\xc3\xa9\xff\xe2\x82z\0", 8, &n);
  assert_int_equal (n, 14);
  assert_memory_equal (s, "a\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz\0", 15);
  free (s);

  /* A character cut at the end of a piece: how many bytes to hold back. */
  assert_int_equal (hv_utf8_partial_tail ("", 0), 0);
  assert_int_equal (hv_utf8_partial_tail ("ab", 2), 0);
  assert_int_equal (hv_utf8_partial_tail ("a\xc3", 2), 1);
  assert_int_equal (hv_utf8_partial_tail ("a\xc3\xa9", 3), 0);
  assert_int_equal (hv_utf8_partial_tail ("a\xe2\x82", 3), 2);
  assert_int_equal (hv_utf8_partial_tail ("\xf0\x9f\x98", 3), 3);
  assert_int_equal (hv_utf8_partial_tail ("\xf0\x9f\x98\x80", 4), 0);
  assert_int_equal (hv_utf8_partial_tail ("a\xff", 2), 0);      /* never valid: nothing to wait for */
  assert_int_equal (hv_utf8_partial_tail ("\xed\xa0", 2), 0);   /* a surrogate's start */
  assert_int_equal (hv_utf8_partial_tail ("\x80\x80\x80", 3), 0);
}

static void
test_base64 (void **state)
{
  (void) state;
  static const char *const known[][2] = { { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
                                          { "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" } };
  for (size_t i = 0; i < sizeof (known) / sizeof (known[0]); i++)
    {
      char *e = hv_base64_encode (known[i][0], strlen (known[i][0]));
      assert_string_equal (e, known[i][1]);
      free (e);
      unsigned char *d;
      size_t n;
      assert_int_equal (hv_base64_decode (known[i][1], strlen (known[i][1]), &d, &n), 0);
      assert_int_equal (n, strlen (known[i][0]));
      assert_memory_equal (d, known[i][0], n);
      free (d);
    }
  unsigned char bytes[64];
  for (size_t i = 0; i < sizeof (bytes); i++)
    bytes[i] = (unsigned char) (i * 37 + 200);
  for (size_t len = 0; len <= sizeof (bytes); len++)
    {
      char *e = hv_base64_encode (bytes, len);
      unsigned char *d;
      size_t n;
      assert_int_equal (hv_base64_decode (e, strlen (e), &d, &n), 0);
      assert_int_equal (n, len);
      assert_memory_equal (d, bytes, len);
      free (d);
      free (e);
    }
  assert_int_equal (hv_base64_value ('A'), 0);
  assert_int_equal (hv_base64_value ('/'), 63);
  assert_int_equal (hv_base64_value ('='), -1);
  assert_int_equal (hv_base64_value ('-'), -1);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_routes),      cmocka_unit_test (test_route_refusals), cmocka_unit_test (test_create),
    cmocka_unit_test (test_run),         cmocka_unit_test (test_result),         cmocka_unit_test (test_stream_line),
    cmocka_unit_test (test_error_json),  cmocka_unit_test (test_utf8),           cmocka_unit_test (test_base64),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
