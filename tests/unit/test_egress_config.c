/* Unit tests of the run.haven.egress annotation (egress_config.c):
 * what parses, what generate writes and parses back to, and that each
 * error names the JSON path of what is wrong. */
#include "config.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "egress_config.h"
#include "egress_resolver.h"

#define PREFIX "config.json: .annotations[\"run.haven.egress\"]"

static hv_egress_config *
parse_ok (const char *json)
{
  hv_egress_config *c = NULL;
  hv_error *err = NULL;
  if (hv_egress_config_parse (json, "config.json", &c, &err) < 0)
    fail_msg ("%s", err->msg);
  return c;
}

static void
expect_error (const char *json, const char *expected)
{
  hv_egress_config *c = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_egress_config_parse (json, "config.json", &c, &err), -1);
  assert_null (c);
  assert_non_null (err);
  if (strcmp (err->msg, expected) != 0)
    fail_msg ("expected \"%s\"\n          got \"%s\"", expected, err->msg);
  hv_error_free (&err);
}

static void
test_parse_full (void **state)
{
  (void) state;
  hv_egress_config *c = parse_ok (
      "{\"policy\": \"agent\", \"connect\": \"engine\","
      " \"allow\": [{\"cidr\": \"192.0.2.0/24\", \"ports\": \"443\"}, {\"cidr\": \"2001:db8::/32\", \"ports\": \"any\"},"
      "            {\"cidr\": \"198.51.100.7\", \"ports\": \"1000-2000\"}],"
      " \"deny\": [{\"cidr\": \"192.0.2.8/29\", \"ports\": \"any\"}],"
      " \"names\": [{\"name\": \"api.github.com\", \"subdomains\": false, \"ports\": \"443\"},"
      "            {\"name\": \"example.com\", \"subdomains\": true, \"ports\": \"80\"}],"
      " \"deny_names\": [{\"name\": \"gist.github.com\", \"ports\": \"any\"}]}");
  assert_string_equal (c->policy, "agent");
  assert_int_equal (c->connect, HV_EGRESS_CONNECT_ENGINE);
  assert_int_equal (c->n_allow, 3);
  assert_int_equal (c->allow[0].family, AF_INET);
  assert_int_equal (c->allow[0].prefix_len, 24);
  assert_int_equal (c->allow[0].port_min, 443);
  assert_int_equal (c->allow[0].port_max, 443);
  assert_int_equal (c->allow[1].family, AF_INET6);
  assert_int_equal (c->allow[1].port_min, 0);
  assert_int_equal (c->allow[1].port_max, 65535);
  assert_int_equal (c->allow[2].prefix_len, 32);
  assert_int_equal (c->allow[2].port_min, 1000);
  assert_int_equal (c->allow[2].port_max, 2000);
  assert_int_equal (c->n_deny, 1);
  assert_int_equal (c->deny[0].prefix_len, 29);
  assert_int_equal (c->n_names, 2);
  assert_string_equal (c->names[0].name, "api.github.com");
  assert_false (c->names[0].subdomains);
  assert_true (c->names[1].subdomains);
  assert_int_equal (c->names[1].port_min, 80);
  assert_int_equal (c->n_deny_names, 1);
  assert_false (c->deny_names[0].subdomains);
  assert_int_equal (c->deny_names[0].port_max, 65535);
  hv_egress_config_free (c);
}

static void
test_minimal_and_pasta (void **state)
{
  (void) state;
  hv_egress_config *c = parse_ok ("{\"policy\": \"p\", \"connect\": \"pasta\"}");
  assert_int_equal (c->connect, HV_EGRESS_CONNECT_PASTA);
  assert_int_equal (c->n_allow + c->n_deny + c->n_names + c->n_deny_names, 0);
  hv_egress_config_free (c);
}

/* generate, parse, generate: the same text, the same rules. */
static void
test_round_trip (void **state)
{
  (void) state;
  hv_egress_config *c = parse_ok (
      "{\"policy\": \"x\\\"y\", \"connect\": \"pasta\","
      " \"allow\": [{\"cidr\": \"203.0.113.0/24\", \"ports\": \"22\"}, {\"cidr\": \"::/0\", \"ports\": \"any\"}],"
      " \"deny\": [{\"cidr\": \"2001:db8::1\", \"ports\": \"5-6\"}],"
      " \"names\": [{\"name\": \"a-b_c.example\", \"subdomains\": true, \"ports\": \"1-65535\"}]}");
  char *text = hv_egress_config_generate (c);
  hv_egress_config *d = parse_ok (text);
  char *again = hv_egress_config_generate (d);
  assert_string_equal (text, again);
  assert_string_equal (d->policy, "x\"y");
  assert_int_equal (d->connect, HV_EGRESS_CONNECT_PASTA);
  assert_int_equal (d->n_allow, 2);
  assert_memory_equal (d->allow, c->allow, 2 * sizeof (hv_egress_cidr));
  assert_int_equal (d->n_deny, 1);
  assert_memory_equal (d->deny, c->deny, sizeof (hv_egress_cidr));
  assert_int_equal (d->n_names, 1);
  assert_string_equal (d->names[0].name, "a-b_c.example");
  assert_true (d->names[0].subdomains);
  assert_true (strstr (text, "\"ports\":\"any\"") != NULL);
  free (text);
  free (again);
  hv_egress_config_free (c);
  hv_egress_config_free (d);
}

static void
test_errors_name_the_path (void **state)
{
  (void) state;
  expect_error ("[]", PREFIX ": expected an object");
  expect_error ("{\"connect\": \"engine\"}", PREFIX ".policy: required field is missing");
  expect_error ("{\"policy\": \"p\"}", PREFIX ".connect: required field is missing");
  expect_error ("{\"policy\": \"p\", \"connect\": \"slirp\"}",
                PREFIX ".connect: \"slirp\" is neither \"engine\" nor \"pasta\"");
  expect_error ("{\"policy\": \"p\", \"connect\": \"engine\", \"allowed\": []}", PREFIX ".allowed: unknown field");
  expect_error ("{\"policy\": \"p\", \"connect\": \"engine\", \"allow\": {}}", PREFIX ".allow: expected an array");
  expect_error ("{\"policy\": \"p\", \"connect\": \"engine\", \"allow\": [{\"cidr\": \"192.0.2.0/24\", \"ports\": "
                "\"any\"}, {\"cidr\": \"192.0.2.0/24\", \"ports\": \"1\"}, {\"cidr\": \"10.0.0.1/8\", \"ports\": "
                "\"any\"}]}",
                PREFIX ".allow[2].cidr: \"10.0.0.1/8\": address has bits set beyond the /8 prefix");
  expect_error ("{\"policy\": \"p\", \"connect\": \"engine\", \"deny\": [{\"cidr\": \"192.0.2.0/24\"}]}",
                PREFIX ".deny[0].ports: required field is missing");
  expect_error ("{\"policy\": \"p\", \"connect\": \"engine\", \"deny\": [{\"cidr\": \"192.0.2.0/24\", \"ports\": "
                "\"0\"}]}",
                PREFIX ".deny[0].ports: \"0\": a port is a number from 1 to 65535 (or a range LOW-HIGH, or any)");
  expect_error ("{\"policy\": \"p\", \"connect\": \"engine\", \"allow\": [{\"cidr\": \"192.0.2.0/24\", \"ports\": "
                "\"any\", \"proto\": \"udp\"}]}",
                PREFIX ".allow[0].proto: unknown field");
  expect_error ("{\"policy\": \"p\", \"connect\": \"engine\", \"names\": [{\"name\": \"Example.com\", \"ports\": "
                "\"443\"}]}",
                PREFIX ".names[0].name: \"Example.com\": a name has only lower-case letters, digits, '-', '_' and "
                       "dots");
  expect_error ("{\"policy\": \"p\", \"connect\": \"engine\", \"names\": [{\"name\": \"example.com.\", \"ports\": "
                "\"443\"}]}",
                PREFIX ".names[0].name: \"example.com.\": a name has no leading or trailing dot");
  expect_error ("{\"policy\": \"p\", \"connect\": \"engine\", \"deny_names\": [{\"name\": \"a..b\", \"ports\": "
                "\"443\"}]}",
                PREFIX ".deny_names[0].name: \"a..b\": a name has no empty label");
  expect_error ("{\"policy\": \"p\", \"connect\": \"engine\", \"names\": [{\"name\": \"a.b\", \"subdomains\": "
                "\"yes\", \"ports\": \"443\"}]}",
                PREFIX ".names[0].subdomains: expected a boolean");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_parse_full),
    cmocka_unit_test (test_minimal_and_pasta),
    cmocka_unit_test (test_round_trip),
    cmocka_unit_test (test_errors_name_the_path),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
