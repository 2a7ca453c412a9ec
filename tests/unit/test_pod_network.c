/* One network policy per pod (runtime/egress/pod_network.c): what a
 * container of a pod finds in its sandbox's record, and when it is
 * refused.  The tables themselves are tested with a real kernel by
 * tests/cri/test_cri_network.sh. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "egress_config.h"
#include "oci_spec.h"
#include "pod_network.h"
#include "utils.h"

#include "oci_spec_check.h"

#define FP "0123456789abcdef"
#define SANDBOX "0a1b2c"

static char root[] = "/tmp/test_pod_network.XXXXXX";

#define CONTAINER_OF_POD                                                                                       \
  "\"io.kubernetes.cri.container-type\":\"container\",\"io.kubernetes.cri.sandbox-id\":\"" SANDBOX "\","      \
  "\"io.kubernetes.cri.sandbox-name\":\"agent\",\"io.kubernetes.cri.sandbox-namespace\":\"team\","            \
  "\"io.kubernetes.cri.container-name\":\"box\""

static hv_egress_config *
allowlist (const char *policy, const char *name)
{
  cleanup_free char *json = xasprintf ("{\"policy\":\"%s\",\"connect\":\"engine\",\"allow\":[],\"deny\":[],"
                                       "\"names\":[{\"name\":\"%s\",\"subdomains\":false,\"ports\":\"443\"}],"
                                       "\"deny_names\":[]}",
                                       policy, name);
  hv_egress_config *c = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_egress_config_parse (json, "test", &c, &err), 0);
  return c;
}

/* The sandbox's record, as its create writes it, for these rules. */
static void
write_record (const char *policy, const hv_egress_config *c, bool none)
{
  cleanup_free char *dir = xasprintf ("%s/%s", root, SANDBOX);
  mkdir (dir, 0700);
  cleanup_free char *rules = NULL;
  if (none)
    rules = xstrdup (HV_POD_NETWORK_NONE);
  else
    {
      hv_egress_config unnamed = *c;
      unnamed.policy = (char *) "";
      rules = hv_egress_config_generate (&unnamed);
    }
  cleanup_free char *text = hv_pod_network_record_text (7, 42, FP, policy, rules);
  hv_error *err = NULL;
  assert_int_equal (write_file_atomic (dir, HV_POD_NETWORK_RECORD_FILE, text, strlen (text), &err), 0);
}

static void
remove_record (void)
{
  cleanup_free char *f = xasprintf ("%s/%s/%s", root, SANDBOX, HV_POD_NETWORK_RECORD_FILE);
  cleanup_free char *d = xasprintf ("%s/%s", root, SANDBOX);
  unlink (f);
  unlink (d);
  rmdir (d);
}

static int
setup (void **state)
{
  (void) state;
  return mkdtemp (root) ? 0 : -1;
}

static int
teardown (void **state)
{
  (void) state;
  remove_record ();
  cleanup_free char *real = xasprintf ("%s/real", root);
  cleanup_free char *rf = xasprintf ("%s/%s", real, HV_POD_NETWORK_RECORD_FILE);
  unlink (rf);
  rmdir (real);
  return rmdir (root);
}

static void
test_record_round_trip (void **state)
{
  (void) state;
  cleanup_free char *text = hv_pod_network_record_text (7, 42, FP, "claude-code", "{\"policy\":\"\"}");
  struct hv_pod_network p = HV_POD_NETWORK_INIT;
  cleanup_free char *policy = NULL;
  cleanup_free char *rules = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_pod_network_record_parse (text, "r", &p, &policy, &rules, &err), 0);
  assert_int_equal (p.netns_dev, 7);
  assert_int_equal (p.netns_ino, 42);
  assert_string_equal (p.fingerprint, FP);
  assert_string_equal (policy, "claude-code");
  assert_string_equal (rules, "{\"policy\":\"\"}");
}

static void
test_record_malformed (void **state)
{
  (void) state;
  static const char *const bad[] = {
    "",
    "haven pod network 1\n",
    "haven pod network 2\nnetns 1 2\ntable " FP "\npolicy p\nrules none\n",
    "haven pod network 1\nnetns 1\ntable " FP "\npolicy p\nrules none\n",
    "haven pod network 1\nnetns 1 2 3\ntable " FP "\npolicy p\nrules none\n",
    "haven pod network 1\nnetns 1 2\ntable 0123\npolicy p\nrules none\n",
    "haven pod network 1\nnetns 1 2\ntable " FP "\nrules none\n",
    "haven pod network 1\nnetns 1 2\ntable " FP "\npolicy p\nrules \n",
    "haven pod network 1\nnetns 1 2\ntable " FP "\npolicy p\nrules none\nmore\n",
    "haven pod network 1\nnetns 1 2\ntable " FP "\npolicy p\nrules none",
  };
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    {
      struct hv_pod_network p = HV_POD_NETWORK_INIT;
      char *policy = NULL, *rules = NULL;
      hv_error *err = NULL;
      if (hv_pod_network_record_parse (bad[i], "r", &p, &policy, &rules, &err) == 0)
        fail_msg ("record %zu parsed: %s", i, bad[i]);
      assert_non_null (strstr (err->msg, "not a pod network record"));
      hv_error_free (&err);
    }
}

static void
test_not_a_pod (void **state)
{
  (void) state;
  cleanup_spec oci_spec *spec = spec_with_annotations ("\"run.haven.policy\":\"default\"");
  struct hv_pod_network p;
  hv_error *err = NULL;
  assert_int_equal (hv_pod_network_prepare (spec, root, NULL, true, &p, &err), 0);
  assert_int_equal (p.role, HV_POD_NONE);
}

/* Podman's own pods carry CRI-O's type and sandbox id but no Kubernetes
 * namespace: not a pod here, whatever the state root holds. */
static void
test_podman_pod (void **state)
{
  (void) state;
  write_record ("default", NULL, true);
  cleanup_spec oci_spec *spec = spec_with_annotations ("\"io.kubernetes.cri-o.ContainerType\":\"container\","
                                           "\"io.kubernetes.cri-o.SandboxID\":\"" SANDBOX "\"");
  hv_egress_config *c = allowlist ("mine", "api.example.com");
  struct hv_pod_network p;
  hv_error *err = NULL;
  assert_int_equal (hv_pod_network_prepare (spec, root, c, false, &p, &err), 0);
  assert_int_equal (p.role, HV_POD_NONE);
  hv_egress_config_free (c);
  remove_record ();
}

static void
test_sandbox_with_rules (void **state)
{
  (void) state;
  cleanup_spec oci_spec *spec = spec_with_annotations ("\"io.kubernetes.cri.container-type\":\"sandbox\","
                                           "\"io.kubernetes.cri.sandbox-id\":\"" SANDBOX "\","
                                           "\"io.kubernetes.cri.sandbox-name\":\"agent\","
                                           "\"io.kubernetes.cri.sandbox-namespace\":\"team\","
                                           "\"run.haven.policy\":\"default\"");
  struct hv_pod_network p;
  hv_error *err = NULL;
  assert_int_equal (hv_pod_network_prepare (spec, root, NULL, true, &p, &err), 0);
  assert_int_equal (p.role, HV_POD_SANDBOX);
  assert_string_equal (p.rules, HV_POD_NETWORK_NONE);
  assert_string_equal (p.policy, "default");
  hv_pod_network_clear (&p);
  /* No rules: nothing to share. */
  assert_int_equal (hv_pod_network_prepare (spec, root, NULL, false, &p, &err), 0);
  assert_int_equal (p.role, HV_POD_NONE);
}

/* The same rules under another policy's name: shared. */
static void
test_container_same_rules (void **state)
{
  (void) state;
  hv_egress_config *mine = allowlist ("mine", "api.example.com");
  hv_egress_config *pods = allowlist ("pods", "api.example.com");
  write_record ("pods", pods, false);
  cleanup_spec oci_spec *spec = spec_with_annotations (CONTAINER_OF_POD ",\"run.haven.policy\":\"mine\"");
  struct hv_pod_network p;
  hv_error *err = NULL;
  assert_int_equal (hv_pod_network_prepare (spec, root, mine, false, &p, &err), 0);
  assert_int_equal (p.role, HV_POD_CONTAINER);
  assert_int_equal (p.netns_ino, 42);
  assert_string_equal (p.fingerprint, FP);
  hv_pod_network_clear (&p);
  hv_egress_config_free (mine);
  hv_egress_config_free (pods);
  remove_record ();
}

static void
expect_refused (const oci_spec *spec, const hv_egress_config *c, bool none, const char *needle)
{
  struct hv_pod_network p;
  hv_error *err = NULL;
  if (hv_pod_network_prepare (spec, root, c, none, &p, &err) == 0)
    fail_msg ("not refused (expected \"%s\")", needle);
  if (strstr (err->msg, needle) == NULL)
    fail_msg ("\"%s\" not in: %s", needle, err->msg);
  hv_error_free (&err);
}

static void
test_container_differing_rules (void **state)
{
  (void) state;
  hv_egress_config *pods = allowlist ("claude-code", "api.anthropic.com");
  hv_egress_config *other = allowlist ("codex", "api.openai.com");
  cleanup_spec oci_spec *spec = spec_with_annotations (CONTAINER_OF_POD ",\"run.haven.policy\":\"codex\"");
  write_record ("claude-code", pods, false);
  expect_refused (spec, other, false, "all containers of a pod share one network policy: container box of pod "
                                      "team/agent (policy codex: an allowlist) differs from the pod's sandbox "
                                      "container " SANDBOX " (policy claude-code: an allowlist)");
  expect_refused (spec, NULL, true, "(policy codex: network none) differs");
  /* No rules of its own in a pod that has some. */
  expect_refused (spec, NULL, false, "(policy codex: no network rules) differs");
  remove_record ();
  /* Rules, and a sandbox without a record. */
  expect_refused (spec, other, false, "no network rules recorded) (its record is missing");
  /* No rules and no record: nothing to share. */
  struct hv_pod_network p;
  hv_error *err = NULL;
  assert_int_equal (hv_pod_network_prepare (spec, root, NULL, false, &p, &err), 0);
  assert_int_equal (p.role, HV_POD_NONE);
  write_record ("default", NULL, true);
  expect_refused (spec, other, false, "(policy default: network none)");
  remove_record ();
  hv_egress_config_free (pods);
  hv_egress_config_free (other);
}

/* The sandbox's directory is found without following a link: a link
 * named by the sandbox id is not the sandbox's state. */
static void
test_record_behind_a_link (void **state)
{
  (void) state;
  cleanup_free char *real = xasprintf ("%s/real", root);
  cleanup_free char *link = xasprintf ("%s/%s", root, SANDBOX);
  mkdir (real, 0700);
  cleanup_free char *text = hv_pod_network_record_text (7, 42, FP, "default", HV_POD_NETWORK_NONE);
  hv_error *err = NULL;
  assert_int_equal (write_file_atomic (real, HV_POD_NETWORK_RECORD_FILE, text, strlen (text), &err), 0);
  assert_int_equal (symlink ("real", link), 0);
  cleanup_spec oci_spec *spec = spec_with_annotations (CONTAINER_OF_POD ",\"run.haven.policy\":\"default\"");
  expect_refused (spec, NULL, true, "the pod's sandbox container");
  unlink (link);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_record_round_trip),     cmocka_unit_test (test_record_malformed),
    cmocka_unit_test (test_not_a_pod),             cmocka_unit_test (test_sandbox_with_rules),
    cmocka_unit_test (test_container_same_rules),  cmocka_unit_test (test_container_differing_rules),
    cmocka_unit_test (test_record_behind_a_link),  cmocka_unit_test (test_podman_pod),
  };
  return cmocka_run_group_tests (tests, setup, teardown);
}
