/* Unit tests of credentials.ssh_agent's restricted form, {keys: [...]}:
 * what it takes and refuses, an extending policy's ssh_agent replacing
 * its base's whole, the variable a run gets, and what `explain` says. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy.h"
#include "policy_env.h"
#include "policy_load.h"
#include "policy_parse.h"
#include "utils.h"
#include "policy_parse_check.h"

#define FP "SHA256:TL0x2eDPUnTgzcrOr98O+URbPnPWFK3NbgdSEynspLQ"

static void
test_keys (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("credentials:\n  ssh_agent:\n    keys: ['" FP "', ~/.ssh/id_ed25519.pub, /etc/deploy.pub]\n", &p);
  assert_true (p.ssh_agent.value);
  assert_int_equal (p.ssh_agent_keys.n, 3);
  assert_string_equal (p.ssh_agent_keys.v[0], FP);
  assert_string_equal (p.ssh_agent_keys.v[1], "~/.ssh/id_ed25519.pub");
  assert_string_equal (p.ssh_agent_keys.v[2], "/etc/deploy.pub");
  assert_string_equal (p.ssh_agent_keys_where.v[1], "t.yaml:3:66");
  hv_policy_free_fields (&p);
  /* true and false keep their meaning: the whole agent, none. */
  parse_ok ("credentials: {ssh_agent: true}\n", &p);
  assert_true (p.ssh_agent.value);
  assert_int_equal (p.ssh_agent_keys.n, 0);
  hv_policy_free_fields (&p);
  parse_ok ("credentials: {ssh_agent: false}\n", &p);
  assert_false (p.ssh_agent.value);
  hv_policy_free_fields (&p);
}

static void
test_key_errors (void **state)
{
  (void) state;
  expect_error ("credentials: {ssh_agent: {keys: []}}\n",
                "t.yaml:1:33: credentials.ssh_agent: keys: expected 1 to 32 keys (false: no agent at all)");
  expect_error ("credentials: {ssh_agent: {}}\n",
                "t.yaml:1:26: credentials.ssh_agent: expected true, false or {keys: [...]}");
  expect_error ("credentials: {ssh_agent: {keys: " FP "}}\n",
                "t.yaml:1:33: credentials.ssh_agent: keys: expected a list of \"SHA256:...\" fingerprints or public "
                "key files");
  expect_error ("credentials: {ssh_agent: {keys: ['" FP "'], confirm: true}}\n",
                "t.yaml:1:89: credentials.ssh_agent: unknown key \"confirm\" (expected keys: a list of fingerprints "
                "or public key files)");
  /* A fingerprint one digit short, one long, with padding bits set. */
  expect_error ("credentials: {ssh_agent: {keys: ['SHA256:TL0x2eDPUnTgzcrOr98O+URbPnPWFK3NbgdSEynspL']}}\n",
                "t.yaml:1:34: credentials.ssh_agent: keys: \"SHA256:TL0x2eDPUnTgzcrOr98O+URbPnPWFK3NbgdSEynspL\" is "
                "not a SHA-256 fingerprint as ssh-keygen -l prints it (SHA256: and 43 base64 digits)");
  expect_error ("credentials: {ssh_agent: {keys: ['" FP "=']}}\n",
                "t.yaml:1:34: credentials.ssh_agent: keys: \"" FP "=\" is not a SHA-256 fingerprint as ssh-keygen -l "
                "prints it (SHA256: and 43 base64 digits)");
  expect_error ("credentials: {ssh_agent: {keys: ['SHA256:TL0x2eDPUnTgzcrOr98O+URbPnPWFK3NbgdSEynspLR']}}\n",
                "t.yaml:1:34: credentials.ssh_agent: keys: \"SHA256:TL0x2eDPUnTgzcrOr98O+URbPnPWFK3NbgdSEynspLR\" is "
                "not a SHA-256 fingerprint as ssh-keygen -l prints it (SHA256: and 43 base64 digits)");
  expect_error ("credentials: {ssh_agent: {keys: ['MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48']}}\n",
                "t.yaml:1:34: credentials.ssh_agent: keys: \"MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48\": "
                "only SHA256: fingerprints are taken (ssh-keygen -l -E sha256)");
  expect_error ("credentials: {ssh_agent: {keys: [~/.ssh/id_ed25519]}}\n",
                "t.yaml:1:34: credentials.ssh_agent: keys: \"~/.ssh/id_ed25519\": a key file must be a public key "
                "(*.pub): the private key stays in your agent");
  expect_error ("credentials: {ssh_agent: {keys: [id.pub]}}\n",
                "t.yaml:1:34: credentials.ssh_agent: \"id.pub\": expected an absolute path or ~/...");
  expect_error ("credentials: {ssh_agent: {keys: ['']}}\n",
                "t.yaml:1:34: credentials.ssh_agent: keys: expected \"SHA256:...\" or the path of a public key file");
  expect_error ("credentials: {ssh_agent: {keys: [[" FP "]]}}\n",
                "t.yaml:1:34: credentials.ssh_agent: keys: expected \"SHA256:...\" or the path of a public key file");
  expect_error ("credentials:\n  ssh_agent:\n    keys:\n      - " FP "\n      - " FP "\n",
                "t.yaml:5:9: credentials.ssh_agent: keys: " FP " is listed twice (also at t.yaml:4:9)");
  /* 33 keys */
  char yaml[4096] = "credentials: {ssh_agent: {keys: [";
  for (int i = 0; i < 33; i++)
    snprintf (yaml + strlen (yaml), sizeof yaml - strlen (yaml), "%s/k%d.pub", i ? ", " : "", i);
  strcat (yaml, "]}}\n");
  expect_error (yaml, "t.yaml:1:33: credentials.ssh_agent: keys: expected 1 to 32 keys (false: no agent at all)");
}

/* A child's ssh_agent replaces its base's, keys included. */
static void
test_extends (void **state)
{
  (void) state;
  char dir[] = "/tmp/haven-sshview-test.XXXXXX";
  assert_non_null (mkdtemp (dir));
  cleanup_free char *base = xasprintf ("%s/base.yaml", dir);
  cleanup_free char *child = xasprintf ("%s/child.yaml", dir);
  write_text (base, "extends: none\ncredentials: {ssh_agent: {keys: ['" FP "', /a.pub]}}\n");
  write_text (child, "extends: base.yaml\ncredentials: {ssh_agent: {keys: [/b.pub]}}\n");
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (child, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_int_equal (p->ssh_agent_keys.n, 1);
  assert_string_equal (p->ssh_agent_keys.v[0], "/b.pub");
  hv_policy_free (p);
  write_text (child, "extends: base.yaml\ncredentials: {ssh_agent: true}\n");
  if (hv_policy_load (child, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_true (p->ssh_agent.value);
  assert_int_equal (p->ssh_agent_keys.n, 0);
  hv_policy_free (p);
  /* Not written in the child: the base's keys stay. */
  write_text (child, "extends: base.yaml\nenv: {pass: [PATH]}\n");
  if (hv_policy_load (child, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_int_equal (p->ssh_agent_keys.n, 2);
  cleanup_free char *want = xasprintf ("%s:2:34", base);
  assert_string_equal (p->ssh_agent_keys_where.v[0], want);
  hv_policy_free (p);
  unlink (base);
  unlink (child);
  rmdir (dir);
}

/* The run's SSH_AUTH_SOCK is the view's socket, whatever is passed. */
static void
test_run_env (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("env: {pass: [PATH]}\ncredentials: {ssh_agent: {keys: ['" FP "']}}\n", &p);
  char *host[] = { (char *) "PATH=/bin", (char *) "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", NULL };
  oci_strv keys = { 0 };
  oci_strv_push (&keys, FP);
  struct hv_run_ctx ctx = { .host_env = host, .ssh_agent_view_dir = "/b/ssh-agent", .ssh_agent_view_keys = &keys };
  char **env = hv_policy_run_env (&p, &ctx);
  assert_string_equal (env[0], "PATH=/bin");
  assert_string_equal (env[1], "SSH_AUTH_SOCK=/run/haven/ssh-agent/agent.sock");
  assert_null (env[2]);
  for (char **e = env; *e; e++)
    free (*e);
  free (env);
  oci_strv_free (&keys);
  hv_policy_free_fields (&p);
}

static void
test_explain (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("credentials: {ssh_agent: {keys: ['" FP "', ~/.ssh/deploy.pub]}}\n", &p);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&text, &len);
  hv_env_explain (&p, NULL, out);
  fclose (out);
  assert_non_null (strstr (text, "A view of your ssh-agent ($SSH_AUTH_SOCK) is at /run/haven/ssh-agent/agent.sock"));
  assert_non_null (strstr (text, "    " FP "\n"));
  assert_non_null (strstr (text, "    ~/.ssh/deploy.pub (the key in this file, read at each run)\n"));
  assert_non_null (strstr (text, "it never gets a key"));
  assert_null (strstr (text, "every key it holds"));
  free (text);
  hv_policy_free_fields (&p);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_keys),    cmocka_unit_test (test_key_errors), cmocka_unit_test (test_extends),
    cmocka_unit_test (test_run_env), cmocka_unit_test (test_explain),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
