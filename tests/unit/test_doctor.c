/* Unit tests of `haven doctor`'s pure parts: what container haven runs
 * in, told from a fixture root and environment (runtime/host_probe_host.c),
 * the Landlock line from an ABI, and the report's lines and JSON
 * (cli/doctor_report.c) built from a hand-made report. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "doctor_report.h"
#include "host_probe_host.h"
#include "tmp_tree.h"
#include "utils.h"

/* The fixture environment: NAME=VALUE pairs, NULL-terminated. */
static const char *const *fake_env;

static const char *
env_get (const char *name)
{
  size_t l = strlen (name);
  for (size_t i = 0; fake_env && fake_env[i]; i++)
    if (strncmp (fake_env[i], name, l) == 0 && fake_env[i][l] == '=')
      return fake_env[i] + l + 1;
  return NULL;
}

static const char *
container_with (const char *root, const char *const *env)
{
  fake_env = env;
  return hv_probe_container_in (root, env_get);
}

static void
test_container (void **state)
{
  (void) state;
  char *root = tree_make ("doctor");
  static const char *const none[] = { NULL };
  assert_null (container_with (root, none));
  static const char *const lxc[] = { "container=lxc", NULL };
  assert_string_equal (container_with (root, lxc), "container");
  static const char *const podman_var[] = { "container=podman", NULL };
  assert_string_equal (container_with (root, podman_var), "podman");
  static const char *const empty[] = { "container=", "REMOTE_CONTAINERS=", NULL };
  assert_null (container_with (root, empty));

  tree_put (root, ".dockerenv", "");
  assert_string_equal (container_with (root, none), "docker");
  static const char *const vscode[] = { "REMOTE_CONTAINERS=true", NULL };
  assert_string_equal (container_with (root, vscode), "devcontainer");
  static const char *const codespaces[] = { "CODESPACES=true", NULL };
  assert_string_equal (container_with (root, codespaces), "devcontainer");
  static const char *const k8s[] = { "KUBERNETES_SERVICE_HOST=10.0.0.1", NULL };
  assert_string_equal (container_with (root, k8s), "kubernetes");

  tree_mkdir (root, "run");
  tree_put (root, "run/.containerenv", "");
  /* Podman's marker wins over Docker's (a Podman container may carry both). */
  assert_string_equal (container_with (root, none), "podman");

  tree_mkdir (root, "var");
  tree_mkdir (root, "var/run");
  tree_mkdir (root, "var/run/secrets");
  tree_mkdir (root, "var/run/secrets/kubernetes.io");
  tree_mkdir (root, "var/run/secrets/kubernetes.io/serviceaccount");
  assert_string_equal (container_with (root, none), "kubernetes");
  assert_string_equal (container_with (root, vscode), "devcontainer");
  tree_remove (root);
}

static void
test_landlock_line (void **state)
{
  (void) state;
  hv_probe p;
  hv_doctor_landlock_probe (-1, &p);
  assert_false (p.ok);
  assert_non_null (strstr (p.why, "no Landlock"));

  hv_doctor_landlock_probe (3, &p);
  assert_true (p.ok);
  assert_non_null (strstr (p.why, "ABI 3: files, refer"));
  assert_non_null (strstr (p.why, "truncate; missing: network (TCP bind and connect) (ABI 4)"));
  assert_non_null (strstr (p.why, "scopes (abstract Unix sockets and signals) (ABI 6)"));

  hv_doctor_landlock_probe (6, &p);
  assert_non_null (strstr (p.why, "device ioctl, scopes (abstract Unix sockets and signals); missing: audit "
                              "logging of denials (ABI 7)"));

  hv_doctor_landlock_probe (7, &p);
  assert_true (p.ok);
  assert_null (strstr (p.why, "missing"));
  assert_non_null (strstr (p.why, "audit logging of denials"));
}

/* A report with one policy of each verdict. */
static void
make_report (struct hv_doctor_report *r)
{
  memset (r, 0, sizeof (*r));
  r->uid = 65534;
  r->container = "docker";
  for (int m = 0; m < HV_DOCTOR_N_MECH; m++)
    r->mech[m].ok = true;
  r->mech[HV_DOCTOR_TUN].ok = false;
  snprintf (r->mech[HV_DOCTOR_TUN].why, sizeof (r->mech[HV_DOCTOR_TUN].why), "open /dev/net/tun: Permission denied");
  r->landlock_abi = 6;
  hv_doctor_landlock_probe (6, &r->mech[HV_DOCTOR_LANDLOCK]);
  r->namespaces = false;
  snprintf (r->isolation_why, sizeof (r->isolation_why), "HAVEN_ISOLATION=landlock");
  r->egress = "forwarder";
  r->project = "/work/p";
  r->policies = xmalloc0 (4 * sizeof (*r->policies));
  r->n_policies = 4;
  struct hv_doctor_policy *p = r->policies;
  p[0].name = xstrdup ("default");
  p[0].verdict = HV_DOCTOR_RUNS;
  p[1].name = xstrdup ("claude-code");
  p[1].verdict = HV_DOCTOR_WEAKER;
  hv_doctor_rules_add (&p[1].weaker, &p[1].n_weaker, "network.allow", "TCP to its ports at any address");
  hv_doctor_rules_add (&p[1].weaker, &p[1].n_weaker, "filesystem.tmpfs /tmp", "TMPDIR is a scratch directory");
  p[2].name = xstrdup ("strict");
  p[2].verdict = HV_DOCTOR_REFUSED;
  hv_doctor_rules_add (&p[2].refused, &p[2].n_refused, "filesystem.tmpfs /tmp",
                       "needs a mount (best_effort: private_tmp would accept a weaker form)");
  hv_doctor_rules_add (&p[2].refused, &p[2].n_refused, "credentials.api", "no weaker form");
  p[3].name = xstrdup ("/x/bad.yaml");
  p[3].verdict = HV_DOCTOR_INVALID;
  p[3].error = xstrdup ("/x/bad.yaml:3:1: unknown key \"netwrk\"");
}

static void
free_report (struct hv_doctor_report *r)
{
  for (size_t i = 0; i < r->n_policies; i++)
    hv_doctor_policy_release (&r->policies[i]);
  free (r->policies);
}

static void
test_print (void **state)
{
  (void) state;
  struct hv_doctor_report r;
  make_report (&r);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  assert_non_null (f);
  hv_doctor_print (f, &r);
  assert_int_equal (fclose (f), 0);
  static const char *const lines[] = {
    "haven doctor: uid 65534 in a Docker container\n",
    "\n  /dev/net/tun     missing: open /dev/net/tun: Permission denied\n",
    "\n  pasta            ok\n",
    "\nhaven run uses: Landlock and seccomp only (no namespaces): HAVEN_ISOLATION=landlock\n",
    "\nAllowlists go out through: forwarder\n",
    "\nPolicies, for the project /work/p:\n",
    "\n  default: runs without namespaces, every rule enforced\n",
    "\n  claude-code: runs without namespaces, 2 rules in a weaker form: network.allow, filesystem.tmpfs /tmp\n"
    "    network.allow: TCP to its ports at any address\n"
    "    filesystem.tmpfs /tmp: TMPDIR is a scratch directory\n",
    "\n  strict: refused here: filesystem.tmpfs /tmp: needs a mount (best_effort: private_tmp would accept a "
    "weaker form)\n  strict: refused here: credentials.api: no weaker form\n",
    "\n  /x/bad.yaml: cannot be used: /x/bad.yaml:3:1: unknown key \"netwrk\"\n",
  };
  for (size_t i = 0; i < sizeof (lines) / sizeof (lines[0]); i++)
    if (strstr (text, lines[i]) == NULL)
      fail_msg ("missing %s in:\n%s", lines[i], text);
  free (text);
  free_report (&r);
}

static const char *
str_at (yajl_val root, const char **path)
{
  yajl_val v = yajl_tree_get (root, path, yajl_t_string);
  if (v == NULL)
    fail_msg ("no string at %s", path[0]);
  return YAJL_GET_STRING (v);
}

static void
test_json (void **state)
{
  (void) state;
  struct hv_doctor_report r;
  make_report (&r);
  cleanup_free char *text = hv_doctor_json (&r);
  char errbuf[256];
  yajl_val root = yajl_tree_parse (text, errbuf, sizeof (errbuf));
  if (root == NULL)
    fail_msg ("not JSON (%s): %s", errbuf, text);
  const char *iso[] = { "isolation", NULL };
  assert_string_equal (str_at (root, iso), "landlock");
  const char *eg[] = { "egress", NULL };
  assert_string_equal (str_at (root, eg), "forwarder");
  const char *tun_ok[] = { "mechanisms", "tun", "ok", NULL };
  assert_true (YAJL_IS_FALSE (yajl_tree_get (root, tun_ok, yajl_t_any)));
  const char *abi[] = { "mechanisms", "landlock", "abi", NULL };
  assert_int_equal (YAJL_GET_INTEGER (yajl_tree_get (root, abi, yajl_t_number)), 6);
  const char *cont[] = { "container", NULL };
  assert_string_equal (str_at (root, cont), "docker");
  const char *pols[] = { "policies", NULL };
  yajl_val a = yajl_tree_get (root, pols, yajl_t_array);
  assert_non_null (a);
  assert_int_equal (YAJL_GET_ARRAY (a)->len, 4);
  static const char *const verdicts[] = { "runs", "weaker", "refused", "invalid" };
  for (size_t i = 0; i < 4; i++)
    {
      yajl_val p = YAJL_GET_ARRAY (a)->values[i];
      const char *vk[] = { "verdict", NULL };
      assert_string_equal (str_at (p, vk), verdicts[i]);
    }
  yajl_val strict = YAJL_GET_ARRAY (a)->values[2];
  const char *refused[] = { "refused", NULL };
  yajl_val rv = yajl_tree_get (strict, refused, yajl_t_array);
  assert_int_equal (YAJL_GET_ARRAY (rv)->len, 2);
  const char *rule[] = { "rule", NULL };
  assert_string_equal (str_at (YAJL_GET_ARRAY (rv)->values[1], rule), "credentials.api");
  yajl_val bad = YAJL_GET_ARRAY (a)->values[3];
  const char *err[] = { "error", NULL };
  assert_non_null (strstr (str_at (bad, err), "bad.yaml:3:1"));
  const char *file[] = { "file", NULL };
  assert_true (YAJL_IS_NULL (yajl_tree_get (bad, file, yajl_t_any)));
  yajl_tree_free (root);
  free_report (&r);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_container),
    cmocka_unit_test (test_landlock_line),
    cmocka_unit_test (test_print),
    cmocka_unit_test (test_json),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
