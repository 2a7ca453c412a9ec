/* Kubernetes' service-account token under a policy (k8s_token.h): the
 * key kubernetes.service_account_token parsed, inherited through
 * `extends`, false in the shipped policies; which mount destinations
 * bring the token; and the config filter replacing those mounts by an
 * empty read-only tmpfs, or leaving them under true. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "unit_skip.h"

#include "k8s_token.h"
#include "policy.h"
#include "policy_apply.h"
#include "policy_load.h"
#include "policy_parse.h"
#include "utils.h"
#include "policy_parse_check.h"

static void
test_parse (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("kubernetes: {service_account_token: true}\n", &p);
  assert_true (p.k8s_service_account_token.set && p.k8s_service_account_token.value);
  assert_false (hv_k8s_token_hidden (&p));
  hv_policy_free_fields (&p);
  parse_ok ("kubernetes:\n  service_account_token: false\n", &p);
  assert_true (p.k8s_service_account_token.set && !p.k8s_service_account_token.value);
  assert_true (hv_k8s_token_hidden (&p));
  hv_policy_free_fields (&p);
  /* Not said: hidden (secrets stay hidden unless a policy lets them). */
  parse_ok ("kubernetes: {}\n", &p);
  assert_false (p.k8s_service_account_token.set);
  assert_true (hv_k8s_token_hidden (&p));
  hv_policy_free_fields (&p);
  expect_error ("kubernetes: {service_account_token: maybe}\n",
                "t.yaml:1:37: kubernetes.service_account_token: expected true or false");
  expect_error ("kubernetes:\n  service_account_token: [true]\n",
                "t.yaml:2:26: kubernetes.service_account_token: expected true or false");
  expect_error ("kubernetes:\n  token: true\n",
                "t.yaml:2:3: kubernetes.token: unknown key (expected one of: service_account_token)");
  expect_error ("kubernetes: true\n", "t.yaml:1:13: kubernetes: expected a mapping");
}

/* A child inherits its base's value unless it sets its own; every
 * shipped policy hides the token (default.yaml's false). */
static void
test_extends_and_shipped (void **state)
{
  (void) state;
  char dir[] = "/tmp/haven-k8s-token.XXXXXX";
  assert_non_null (mkdtemp (dir));
  cleanup_free char *base = xasprintf ("%s/base.yaml", dir);
  cleanup_free char *child = xasprintf ("%s/child.yaml", dir);
  cleanup_free char *strict = xasprintf ("%s/strict-child.yaml", dir);
  write_text (base, "name: base\nextends: none\nkubernetes: {service_account_token: true}\n");
  write_text (child, "name: child\nextends: base.yaml\n");
  write_text (strict, "name: strict-child\nextends: base.yaml\nkubernetes: {service_account_token: false}\n");
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (child, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_false (hv_k8s_token_hidden (p));
  hv_policy_free (p);
  p = NULL;
  if (hv_policy_load (strict, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_true (hv_k8s_token_hidden (p));
  hv_policy_free (p);
  p = NULL;
  static const char *const shipped[] = { "default", "strict", "ci", "offline", "claude-code", "codex",
                                         "gemini-cli", "aider", "devcontainer" };
  for (size_t i = 0; i < N_ELEMENTS (shipped); i++)
    {
      if (hv_policy_load (shipped[i], &p, &err) < 0)
        fail_msg ("%s: %s", shipped[i], err->msg);
      if (!p->k8s_service_account_token.set || p->k8s_service_account_token.value)
        fail_msg ("policy %s does not set kubernetes.service_account_token: false", shipped[i]);
      hv_policy_free (p);
      p = NULL;
    }
  unlink (base);
  unlink (child);
  unlink (strict);
  rmdir (dir);
}

static int
token_at (const char *dest)
{
  hv_error *err = NULL;
  int r = hv_k8s_token_destination (dest, "config.json", NULL, &err);
  if (r < 0)
    hv_error_free (&err);
  return r;
}

/* Both spellings (/var/run is a link to /run in most images), below
 * them, with the slashes and dots a runtime skips; not beside them, not
 * above them; ".." refused. */
static void
test_destinations (void **state)
{
  (void) state;
  assert_int_equal (token_at ("/var/run/secrets/kubernetes.io/serviceaccount"), 1);
  assert_int_equal (token_at ("/run/secrets/kubernetes.io/serviceaccount"), 1);
  assert_int_equal (token_at ("/var/run/secrets/kubernetes.io/serviceaccount/token"), 1);
  assert_int_equal (token_at ("/run/secrets/kubernetes.io/serviceaccount/..data/token"), 1);
  assert_int_equal (token_at ("//var//run/./secrets/kubernetes.io/serviceaccount/"), 1);
  assert_int_equal (token_at ("run/secrets/kubernetes.io/serviceaccount"), 1);
  assert_int_equal (token_at ("/var/run/secrets/kubernetes.io/serviceaccount2"), 0);
  assert_int_equal (token_at ("/var/run/secrets/kubernetes.io"), 0);
  assert_int_equal (token_at ("/var/run/secrets/other"), 0);
  assert_int_equal (token_at ("/srv/run/secrets/kubernetes.io/serviceaccount"), 0);
  assert_int_equal (token_at ("/etc/hosts"), 0);
  assert_int_equal (token_at ("/"), 0);
  hv_error *err = NULL;
  assert_int_equal (
      hv_k8s_token_destination ("/x/../run/secrets/kubernetes.io/serviceaccount", "config.json", NULL, &err), -1);
  assert_non_null (strstr (err->msg, "config.json: mount destination \"/x/../run/secrets/kubernetes.io/serviceaccount\" "
                                     "has a \"..\""));
  hv_error_free (&err);
  /* A name that only starts with dots is a name. */
  assert_int_equal (token_at ("/run/secrets/kubernetes.io/serviceaccount/...x"), 1);
  /* The part below the directory, the same in both spellings. */
  char *rest = NULL;
  assert_int_equal (hv_k8s_token_destination ("/run//secrets/kubernetes.io/serviceaccount/./token", "c", &rest, NULL), 1);
  assert_string_equal (rest, "/token");
  free (rest);
  rest = NULL;
  assert_int_equal (hv_k8s_token_destination ("/var/run/secrets/kubernetes.io/serviceaccount/", "c", &rest, NULL), 1);
  assert_string_equal (rest, "");
  free (rest);
}

/* A pod's container as containerd writes it: kubelet's token bind, the
 * same directory in the other spelling, a file bound into it, beside an
 * ordinary volume and /etc/hosts. */
static const char *const POD_CONFIG
    = "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}, \"root\": {\"path\": \"/\"}, "
      "\"mounts\": ["
      "{\"destination\": \"/etc/hosts\", \"type\": \"bind\", \"source\": \"/k/hosts\", \"options\": [\"rbind\", \"ro\"]},"
      "{\"destination\": \"/var/run/secrets/kubernetes.io/serviceaccount\", \"type\": \"bind\", "
      "\"source\": \"/k/token\", \"options\": [\"rbind\", \"ro\"]},"
      "{\"destination\": \"/run//secrets/kubernetes.io/serviceaccount\", \"type\": \"bind\", "
      "\"source\": \"/k/token-run\", \"options\": [\"rbind\"]},"
      "{\"destination\": \"/run/secrets/kubernetes.io/serviceaccount/token\", \"type\": \"bind\", "
      "\"source\": \"/k/token-file\", \"options\": [\"rbind\"]},"
      "{\"destination\": \"/data\", \"type\": \"bind\", \"source\": \"/k/data\", \"options\": [\"rbind\"]}],"
      "\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"mount\"}, {\"type\": \"network\"}]}}";

static char *
applied (const hv_policy *p, const char *cfg)
{
  char *out = NULL;
  hv_error *err = NULL;
  if (hv_policy_apply (p, cfg, "config.json", &out, NULL, &err) < 0)
    fail_msg ("%s", err->msg);
  compact (out);
  return out;
}

static void
test_apply_hides_and_leaves (void **state)
{
  (void) state;
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load ("default", &p, &err) < 0)
    fail_msg ("%s", err->msg);
  cleanup_free char *out = applied (p, POD_CONFIG);
  const char *tmpfs_opts = "\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"ro\",\"nosuid\",\"nodev\",\"noexec\","
                           "\"mode=0555\",\"size=4k\"]";
  cleanup_free char *var = xasprintf ("\"destination\":\"/var/run/secrets/kubernetes.io/serviceaccount\",%s", tmpfs_opts);
  cleanup_free char *run = xasprintf ("\"destination\":\"/run//secrets/kubernetes.io/serviceaccount\",%s", tmpfs_opts);
  if (strstr (out, var) == NULL || strstr (out, run) == NULL)
    fail_msg ("the token's mounts are not empty read-only tmpfs in %s", out);
  /* The file bound into the directory: left out (its mount point could
   * not be made in the read-only tmpfs, which covers it anyway). */
  assert_null (strstr (out, "serviceaccount/token"));
  assert_null (strstr (out, "/k/token"));
  /* The others stay as they were. */
  assert_non_null (strstr (out, "\"destination\":\"/etc/hosts\",\"type\":\"bind\",\"source\":\"/k/hosts\""));
  assert_non_null (strstr (out, "\"destination\":\"/data\",\"type\":\"bind\",\"source\":\"/k/data\""));
  /* Applied again (stacked policies): the same. */
  cleanup_free char *again = applied (p, out);
  assert_non_null (strstr (again, var));
  assert_null (strstr (again, "/k/token"));

  /* true: kubelet's mounts stay. */
  p->k8s_service_account_token = (oci_opt_bool){ true, true };
  cleanup_free char *open = applied (p, POD_CONFIG);
  assert_non_null (strstr (open, "\"destination\":\"/var/run/secrets/kubernetes.io/serviceaccount\",\"type\":\"bind\","
                                 "\"source\":\"/k/token\""));
  assert_non_null (strstr (open, "\"source\":\"/k/token-run\""));
  assert_non_null (strstr (open, "\"destination\":\"/run/secrets/kubernetes.io/serviceaccount/token\",\"type\":\"bind\","
                                 "\"source\":\"/k/token-file\""));
  assert_null (strstr (open, "\"size=4k\""));

  /* A file bound before the directory (the runtime mounts in order): its
   * own tmpfs, made while the image's directory was writable, then the
   * directory's over it. */
  p->k8s_service_account_token = (oci_opt_bool){ true, false };
  const char *file_first
      = "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}, \"root\": {\"path\": \"/\"}, "
        "\"mounts\": [{\"destination\": \"/var/run/secrets/kubernetes.io/serviceaccount/token\", \"type\": \"bind\", "
        "\"source\": \"/k/token-file\", \"options\": [\"rbind\"]},"
        "{\"destination\": \"/var/run/secrets/kubernetes.io/serviceaccount\", \"type\": \"bind\", "
        "\"source\": \"/k/token\", \"options\": [\"rbind\"]}],"
        "\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"mount\"}, {\"type\": \"network\"}]}}";
  cleanup_free char *both = applied (p, file_first);
  cleanup_free char *file
      = xasprintf ("\"destination\":\"/var/run/secrets/kubernetes.io/serviceaccount/token\",%s", tmpfs_opts);
  const char *f = strstr (both, file), *d = strstr (both, var);
  if (f == NULL || d == NULL || d < f)
    fail_msg ("not the file's tmpfs then the directory's: %s", both);
  assert_null (strstr (both, "/k/token"));
  hv_policy_free (p);
}

/* A destination with ".." under a policy that hides the token: refused
 * (a link in the image could take it to the token's directory). */
static void
test_apply_refuses_dotdot (void **state)
{
  (void) state;
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load ("default", &p, &err) < 0)
    fail_msg ("%s", err->msg);
  const char *cfg = "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}, "
                    "\"root\": {\"path\": \"/\"}, \"mounts\": [{\"destination\": \"/l/../secrets/kubernetes.io/x\", "
                    "\"type\": \"bind\", \"source\": \"/k/token\", \"options\": [\"rbind\"]}], "
                    "\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"mount\"}, {\"type\": \"network\"}]}}";
  char *out = NULL;
  assert_int_equal (hv_policy_apply (p, cfg, "config.json", &out, NULL, &err), -1);
  assert_null (out);
  if (strstr (err->msg, "policy default: config.json: mount destination \"/l/../secrets/kubernetes.io/x\" has a \"..\"")
      == NULL)
    fail_msg ("%s", err->msg);
  hv_error_free (&err);
  /* With the token allowed, nothing to judge: the filter takes it. */
  p->k8s_service_account_token = (oci_opt_bool){ true, true };
  if (hv_policy_apply (p, cfg, "config.json", &out, NULL, &err) < 0)
    fail_msg ("%s", err->msg);
  free (out);
  hv_policy_free (p);
}

static char *
explained (const hv_policy *p)
{
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&text, &len);
  assert_non_null (out);
  hv_k8s_token_explain (p, out);
  fclose (out);
  return text;
}

/* haven policy explain says which. */
static void
test_explain (void **state)
{
  (void) state;
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load ("claude-code", &p, &err) < 0)
    fail_msg ("%s", err->msg);
  cleanup_free char *hidden = explained (p);
  if (strstr (hidden, "The service-account token is hidden") == NULL)
    fail_msg ("%s", hidden);
  p->k8s_service_account_token = (oci_opt_bool){ true, true };
  cleanup_free char *visible = explained (p);
  if (strstr (visible, "The service-account token is visible") == NULL)
    fail_msg ("%s", visible);
  hv_policy_free (p);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_parse),
    cmocka_unit_test (test_extends_and_shipped),
    cmocka_unit_test (test_destinations),
    cmocka_unit_test (test_apply_hides_and_leaves),
    cmocka_unit_test (test_apply_refuses_dotdot),
    cmocka_unit_test (test_explain),
  };
  setenv ("HAVEN_POLICY_PATH", HAVEN_SRCDIR "/policies", 1);
  return unit_tests_status (cmocka_run_group_tests (tests, NULL, NULL), N_ELEMENTS (tests));
}
