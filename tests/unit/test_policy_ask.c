/* network.ask, network.mode: ask, network.ask_timeout: parsed with
 * file:line:column errors, layered through `extends`, compiled into the
 * egress annotation the resolver reads, described by explain, refused
 * for engine containers. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "egress_ask.h"
#include "egress_config.h"
#include "egress_resolver_config.h"
#include "policy.h"
#include "offline.h"
#include "policy_apply.h"
#include "policy_approved.h"
#include "policy_egress.h"
#include "policy_load.h"
#include "policy_network_explain.h"
#include "policy_parse.h"
#include "utils.h"
#include "policy_parse_check.h"

static void
assert_has (const char *text, const char *part)
{
  if (strstr (text, part) == NULL)
    fail_msg ("\"%s\" not in:\n%s", part, text);
}

static void
test_parse (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("network:\n  ask: ['*.githubusercontent.com', 'example.org:8443']\n  ask_timeout: 2s\n", &p);
  assert_int_equal (p.net_mode, HV_NET_ALLOWLIST); /* ask alone asks for an allowlist */
  assert_int_equal (p.net_ask.n, 3);               /* a wildcard's 443 and 80, one port */
  assert_int_equal (p.net_ask.v[0].kind, HV_NET_RULE_WILDCARD);
  assert_string_equal (p.net_ask.v[0].where, "t.yaml:2:9");
  assert_int_equal (p.net_ask.v[2].port_lo, 8443);
  assert_true (p.net_ask_timeout_s.set);
  assert_int_equal (p.net_ask_timeout_s.value, 2);
  assert_false (p.net_ask_all.set && p.net_ask_all.value);
  hv_policy_free_fields (&p);

  parse_ok ("network: {mode: ask, allow: [api.github.com]}\n", &p);
  assert_int_equal (p.net_mode, HV_NET_ALLOWLIST);
  assert_true (p.net_ask_all.set && p.net_ask_all.value);
  assert_string_equal (p.net_ask_all_where, "t.yaml:1:17");
  assert_true (hv_policy_asks (&p));
  hv_policy_free_fields (&p);
  parse_ok ("network: {mode: allowlist}\n", &p);
  assert_false (hv_policy_asks (&p));
  hv_policy_free_fields (&p);

  expect_error ("network:\n  ask: ['192.0.2.0/24']\n",
                "t.yaml:2:9: network.ask: \"192.0.2.0/24\": an address cannot be asked for (only a name's lookup is "
                "held): list it under network.allow, or ask for the name");
  expect_error ("network:\n  ask: ['a.example:0']\n", "t.yaml:2:9: network.ask: \"a.example:0\": port 0 is not a port (ports are 1 to 65535)");
  expect_error ("network:\n  ask: a.example\n",
                "t.yaml:2:8: network.ask: expected a list of names, *.zones, addresses or CIDRs, each with an "
                "optional :PORT");
  expect_error ("network:\n  ask_timeout: 11m\n",
                "t.yaml:2:16: network.ask_timeout: expected a duration such as 30s or 2m (at least 1s, at most "
                "600s = 10m)");
  expect_error ("network:\n  ask_timeout: soon\n",
                "t.yaml:2:16: network.ask_timeout: expected a duration such as 30s or 2m (at least 1s, at most "
                "600s = 10m)");
  expect_error ("network: {mode: none, ask: [a.example]}\n",
                "t.yaml:1:17: network.mode: none, but network.ask lists \"a.example\": only an allowlist asks (write "
                "mode: allowlist or ask, or drop ask)");
  expect_error ("network: {mode: open, ask: [a.example]}\n",
                "t.yaml:1:17: network.mode: open, but network.ask lists \"a.example\": only an allowlist asks (write "
                "mode: allowlist or ask, or drop ask)");
  expect_error ("network: {mode: maybe}\n", "t.yaml:1:17: network.mode: expected none, open, allowlist or ask");
}

static void
put_policy (const char *dir, const char *name, const char *text)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, name);
  write_text (path, text);
}

static hv_policy *
load_ok (const char *dir, const char *name)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, name);
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (path, &p, &err) < 0)
    fail_msg ("%s: %s", name, err->msg);
  return p;
}

/* Layers: ask lists add up, a later mode decides whether unlisted names
 * ask, the timeout is the last layer's; the annotation carries it all. */
static void
test_extends_and_annotation (void **state)
{
  (void) state;
  char dir[] = "/tmp/haven-ask-test.XXXXXX";
  assert_non_null (mkdtemp (dir));
  put_policy (dir, "base.yaml", "extends: none\nname: base\nnetwork:\n  mode: ask\n  allow: [api.github.com]\n"
                                "  ask: [a.example]\n  deny: ['*.bad.example']\n  ask_timeout: 5s\n");
  put_policy (dir, "child.yaml", "extends: base.yaml\nname: child\nnetwork:\n  ask: ['b.example:22']\n");
  put_policy (dir, "strict.yaml", "extends: base.yaml\nname: strict\nnetwork:\n  mode: allowlist\n  ask_timeout: 1m\n");
  put_policy (dir, "none.yaml", "extends: base.yaml\nname: nonet\nnetwork:\n  mode: none\n");
  hv_policy *p = load_ok (dir, "child.yaml");
  assert_int_equal (p->net_ask.n, 3);
  assert_true (p->net_ask_all.value);
  assert_int_equal (p->net_ask_timeout_s.value, 5);
  cleanup_free char *ann = hv_policy_egress_annotation (p, HV_EGRESS_CONNECT_PASTA);
  assert_has (ann, "\"ask_names\":[{\"name\":\"a.example\",\"subdomains\":false,\"ports\":\"443\"},"
                   "{\"name\":\"a.example\",\"subdomains\":false,\"ports\":\"80\"},"
                   "{\"name\":\"b.example\",\"subdomains\":false,\"ports\":\"22\"}]");
  assert_has (ann, "\"ask_all\":true,\"ask_timeout_ms\":5000");
  /* The runtime reads back what the policy wrote. */
  hv_egress_config *c = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_egress_config_parse (ann, "config.json", &c, &err), 0);
  assert_int_equal (c->n_ask_names, 3);
  assert_true (c->ask_all);
  assert_int_equal (c->ask_timeout_ms, 5000);
  hv_egress_config_free (c);
  /* An engine container cannot ask: refused by name. */
  char *applied = NULL;
  assert_int_equal (hv_policy_apply (p, "{\"ociVersion\":\"1.0.2\",\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
                                        "\"root\":{\"path\":\"rootfs\"},\"linux\":{\"namespaces\":[{\"type\":\"network\"}]}}",
                                     "config.json", &applied, NULL, &err),
                    -1);
  assert_null (applied);
  assert_has (err->msg, "engine containers cannot ask for names");
  assert_has (err->msg, "network.ask (");
  hv_error_free (&err);
  hv_policy_free (p);

  p = load_ok (dir, "strict.yaml");
  assert_false (p->net_ask_all.value); /* mode: allowlist stops unlisted names asking */
  assert_int_equal (p->net_ask.n, 2);  /* a.example still asks */
  assert_int_equal (p->net_ask_timeout_s.value, 60);
  hv_policy_free (p);
  cleanup_free char *path = xasprintf ("%s/none.yaml", dir);
  assert_int_equal (hv_policy_load (path, &p, &err), -1);
  cleanup_free char *want = xasprintf ("%s/none.yaml: network.mode is none, but network.ask lists \"a.example\" "
                                       "(%s/base.yaml:6:9): only an allowlist asks (use mode: allowlist or ask)",
                                       dir, dir);
  assert_string_equal (err->msg, want);
  hv_error_free (&err);

  /* Without ask, the annotation is as before (no ask members). */
  put_policy (dir, "plain.yaml", "extends: none\nname: plain\nnetwork: {allow: [a.example]}\n");
  p = load_ok (dir, "plain.yaml");
  cleanup_free char *plain = hv_policy_egress_annotation (p, HV_EGRESS_CONNECT_PASTA);
  assert_null (strstr (plain, "ask"));
  hv_policy_free (p);
  const char *names[] = { "base", "child", "strict", "none", "plain" };
  for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
    {
      cleanup_free char *f = xasprintf ("%s/%s.yaml", dir, names[i]);
      unlink (f);
    }
  rmdir (dir);
}

static char *
explain (const char *yaml)
{
  hv_policy p;
  parse_ok (yaml, &p);
  p.name = xstrdup ("mine");
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  assert_non_null (f);
  hv_net_explain (&p, f);
  fclose (f);
  hv_policy_free_fields (&p);
  return text;
}

static void
test_explain (void **state)
{
  (void) state;
  cleanup_free char *t = explain ("network:\n  allow: [api.github.com]\n  ask: ['*.example.com']\n  ask_timeout: 45s\n");
  assert_has (t, "  Asked for (network.ask), on these ports once approved:\n"
                 "    *.example.com: TCP 443, 80 (names below example.com at any depth, not example.com itself)\n");
  assert_has (t, "~/.config/haven/approved/mine.yaml");
  assert_has (t, "Unanswered within 45s (network.ask_timeout), the name is denied");
  assert_has (t, "refuses unlisted names (but those it asks for, above)");
  cleanup_free char *all = explain ("network: {mode: ask}\n");
  assert_has (all, "Asked for (mode: ask, t.yaml:1:17): every name the list above does not allow.\n");
  assert_has (all, "Unanswered within 30s");
  cleanup_free char *none = explain ("network: {allow: [a.example]}\n");
  assert_null (strstr (none, "Asked for"));
}

/* The approved file: only `network: {allow: [names]}` lines as
 * session/approvals.c writes them; anything else names file:line. */
static void
test_merge_approved (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("network: {allow: [api.github.com]}\n", &p);
  hv_error *err = NULL;
  const char *good = "# Names approved \"always\"\nnetwork:\n  allow:\n    # approved by approve at 2026-01-01T00:00:00Z\n"
                     "    - \"kept.example\"\n";
  assert_int_equal (hv_policy_merge_approved (&p, good, strlen (good), "/h/approved/mine.yaml", &err), 0);
  assert_int_equal (p.net_allow.n, 4); /* api.github.com and kept.example, 443 and 80 each */
  assert_true (hv_net_name_allowed (&p.net_allow, &p.net_deny, "kept.example", 443));
  assert_string_equal (p.net_allow.v[2].where, "/h/approved/mine.yaml:5:7");
  assert_string_equal (p.approved_file, "/h/approved/mine.yaml");
  static const struct
  {
    const char *text, *error;
  } bad[] = {
    { "network:\n  deny:\n", "f.yaml:2:3: approved names: not a line haven writes there (only `network:`, "
                              "`  allow:` and `    - \"NAME\"` lines, and comments)" },
    { "network:\n  allow:\n    - \"192.0.2.1\"\n",
      "f.yaml:3:7: approved names: \"192.0.2.1\": an address is never approved (only names are)" },
    { "network:\n  allow:\n    - \"a b\"\n", NULL },
    { "filesystem:\n  read_write: [/]\n", "f.yaml:1:1: approved names: not a line haven writes there (only "
                                          "`network:`, `  allow:` and `    - \"NAME\"` lines, and comments)" },
    { "    - \"x.example\"\n", NULL }, /* not under network.allow */
  };
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    {
      size_t before = p.net_allow.n;
      if (hv_policy_merge_approved (&p, bad[i].text, strlen (bad[i].text), "f.yaml", &err) == 0)
        fail_msg ("accepted: %s", bad[i].text);
      if (bad[i].error)
        assert_string_equal (err->msg, bad[i].error);
      hv_error_free (&err);
      assert_int_equal (p.net_allow.n, before);
    }
  hv_policy_free_fields (&p);
  /* Not an allowlist: nothing merged. */
  parse_ok ("network: {mode: none}\n", &p);
  assert_int_equal (hv_policy_merge_approved (&p, good, strlen (good), "f.yaml", &err), 0);
  assert_int_equal (p.net_allow.n, 0);
  hv_policy_free_fields (&p);
}

/* glibc waits for a held lookup: RES_OPTIONS from ask_timeout, unless set. */
static void
test_res_options (void **state)
{
  (void) state;
  static const struct
  {
    const char *yaml, *want;
  } cases[] = {
    { "network: {ask: [a.example]}\n", "RES_OPTIONS=timeout:30 attempts:2" },
    { "network: {ask: [a.example], ask_timeout: 2s}\n", "RES_OPTIONS=timeout:3 attempts:2" },
    { "network: {mode: ask, ask_timeout: 90s}\n", "RES_OPTIONS=timeout:30 attempts:4" },
    { "network: {mode: ask, ask_timeout: 10m}\n", "RES_OPTIONS=timeout:30 attempts:5" },
  };
  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      hv_policy p;
      parse_ok (cases[i].yaml, &p);
      char **env = xmalloc0 (sizeof (char *));
      env = hv_ask_env (env, &p);
      assert_non_null (env[0]);
      assert_string_equal (env[0], cases[i].want);
      assert_null (env[1]);
      free (env[0]);
      free (env);
      hv_policy_free_fields (&p);
    }
  hv_policy p;
  parse_ok ("network: {ask: [a.example]}\n", &p);
  char **env = xmalloc0 (2 * sizeof (char *));
  env[0] = xstrdup ("RES_OPTIONS=ndots:1");
  env = hv_ask_env (env, &p);
  assert_string_equal (env[0], "RES_OPTIONS=ndots:1");
  assert_null (env[1]);
  free (env[0]);
  free (env);
  hv_policy_free_fields (&p);
  parse_ok ("network: {allow: [a.example]}\n", &p);
  env = xmalloc0 (sizeof (char *));
  env = hv_ask_env (env, &p);
  assert_null (env[0]);
  free (env);
  hv_policy_free_fields (&p);
}

/* run.haven.ask, read strictly by the monitor. */
static void
test_ask_annotation (void **state)
{
  (void) state;
  hv_egress_ask_config *c = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_egress_ask_config_parse ("{\"dir\":\"/h/.local/state/haven/approvals\",\"project\":\"/p\","
                                                "\"command\":[\"curl\",\"x\"],\"haven_pid\":7}",
                                                "config.json", &c, &err),
                    0);
  assert_string_equal (c->dir, "/h/.local/state/haven/approvals");
  assert_string_equal (c->command[1], "x");
  assert_null (c->command[2]);
  assert_int_equal (c->haven_pid, 7);
  assert_string_equal (c->run, ""); /* none given: the monitor makes one */
  hv_egress_ask_config_free (c);
  assert_int_equal (hv_egress_ask_config_parse ("{\"dir\":\"/d\",\"run\":\"0123456789abcdef\"}", "config.json", &c, &err), 0);
  assert_string_equal (c->run, "0123456789abcdef");
  hv_egress_ask_config_free (c);
  assert_int_equal (hv_egress_ask_config_parse ("{\"dir\":\"/d\",\"run\":\"../../x\"}", "config.json", &c, &err), -1);
  assert_string_equal (err->msg, "config.json: .annotations[\"run.haven.ask\"].run: \"../../x\" is not 16 lower-case hex "
                                 "digits");
  hv_error_free (&err);
  assert_int_equal (hv_egress_ask_config_parse ("{\"dir\":\"rel\"}", "config.json", &c, &err), -1);
  assert_string_equal (err->msg, "config.json: .annotations[\"run.haven.ask\"].dir: \"rel\" is not an absolute path");
  hv_error_free (&err);
  assert_int_equal (hv_egress_ask_config_parse ("{\"dir\":\"/d\",\"answer\":\"always\"}", "config.json", &c, &err), -1);
  hv_error_free (&err);
  assert_int_equal (hv_egress_ask_config_parse ("{\"dir\":\"/d\",\"command\":[1]}", "config.json", &c, &err), -1);
  hv_error_free (&err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_parse),
    cmocka_unit_test (test_extends_and_annotation),
    cmocka_unit_test (test_explain),
    cmocka_unit_test (test_merge_approved),
    cmocka_unit_test (test_res_options),
    cmocka_unit_test (test_ask_annotation),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
