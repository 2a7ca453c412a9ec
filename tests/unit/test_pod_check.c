/* What a pod may not ask for under a policy (policy/pod_check.c):
 * hostNetwork, hostPID, privileged, as containerd 1.6 writes them, and
 * that configs that are not pods' are not looked at. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "oci_spec.h"
#include "oci_tables.h"
#include "pod_check.h"
#include "policy.h"
#include "policy_apply.h"
#include "policy_load.h"
#include "utils.h"

#include "oci_spec_check.h"

#define SANDBOX_ANN                                                                                            \
  "\"io.kubernetes.cri.container-type\":\"sandbox\",\"io.kubernetes.cri.sandbox-id\":\"s1\","                \
  "\"io.kubernetes.cri.sandbox-name\":\"agent\",\"io.kubernetes.cri.sandbox-namespace\":\"team\""
#define CONTAINER_ANN                                                                                          \
  "\"io.kubernetes.cri.container-type\":\"container\",\"io.kubernetes.cri.sandbox-id\":\"s1\","              \
  "\"io.kubernetes.cri.sandbox-name\":\"agent\",\"io.kubernetes.cri.sandbox-namespace\":\"team\","            \
  "\"io.kubernetes.cri.container-name\":\"box\""
/* containerd's defaults for a container that asks for nothing. */
#define DEFAULT_CAPS                                                                                           \
  "[\"CAP_CHOWN\",\"CAP_DAC_OVERRIDE\",\"CAP_FSETID\",\"CAP_FOWNER\",\"CAP_MKNOD\",\"CAP_NET_RAW\","           \
  "\"CAP_SETGID\",\"CAP_SETUID\",\"CAP_SETFCAP\",\"CAP_SETPCAP\",\"CAP_NET_BIND_SERVICE\",\"CAP_SYS_CHROOT\","  \
  "\"CAP_KILL\",\"CAP_AUDIT_WRITE\"]"
#define OWN_NS "[{\"type\":\"pid\"},{\"type\":\"ipc\"},{\"type\":\"mount\"},{\"type\":\"network\"}]"

/* Every capability the kernel headers name, as containerd's privileged
 * option lists them. */
static char *
all_caps (void)
{
  cleanup_free char *list = xstrdup ("");
  for (int c = 0; c <= oci_capability_last (); c++)
    {
      const char *name = oci_capability_name (c);
      if (name == NULL)
        continue;
      char *more = xasprintf ("%s%s\"%s\"", list, list[0] ? "," : "", name);
      free (list);
      list = more;
    }
  return xasprintf ("[%s]", list);
}

static oci_spec *
config (const char *ann, const char *namespaces, const char *caps, const char *masked)
{
  cleanup_free char *doc = xasprintf ("{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
                                      "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"capabilities\":{\"bounding\":%s,"
                                      "\"effective\":%s,\"permitted\":%s}},"
                                      "\"linux\":{\"namespaces\":%s,\"maskedPaths\":%s},\"annotations\":{%s}}",
                                      caps, caps, caps, namespaces, masked, ann);
  return spec_parse_ok (doc);
}

static void
expect_ok (const oci_spec *spec, bool pod)
{
  bool is_pod = !pod;
  hv_error *err = NULL;
  if (hv_pod_policy_check (spec, "config.json", "default", &is_pod, &err) < 0)
    fail_msg ("refused: %s", err->msg);
  assert_int_equal (is_pod, pod);
}

static void
expect_refused (const oci_spec *spec, const char *needle)
{
  bool pod = false;
  hv_error *err = NULL;
  if (hv_pod_policy_check (spec, "config.json", "default", &pod, &err) == 0)
    fail_msg ("not refused (expected \"%s\")", needle);
  if (strstr (err->msg, needle) == NULL)
    fail_msg ("\"%s\" not in: %s", needle, err->msg);
  hv_error_free (&err);
}

static void
test_plain_pod (void **state)
{
  (void) state;
  cleanup_spec oci_spec *s = config (SANDBOX_ANN, OWN_NS, DEFAULT_CAPS, "[]");
  expect_ok (s, true);
  /* A container in a pid namespace of its own and the pod's network
   * namespace (a new one here: any that is not the node's). */
  cleanup_spec oci_spec *c = config (CONTAINER_ANN, OWN_NS, DEFAULT_CAPS, "[\"/proc/kcore\"]");
  expect_ok (c, true);
}

static void
test_host_network (void **state)
{
  (void) state;
  /* containerd leaves the network namespace out of a hostNetwork pod's
   * sandbox config. */
  cleanup_spec oci_spec *s = config (SANDBOX_ANN, "[{\"type\":\"pid\"},{\"type\":\"mount\"}]", DEFAULT_CAPS, "[]");
  expect_refused (s, "the sandbox container of pod team/agent shares the node's network namespace (hostNetwork: true)");
  /* ... and gives its containers the sandbox's, which is the node's. */
  cleanup_spec oci_spec *c = config (CONTAINER_ANN,
                                     "[{\"type\":\"pid\"},{\"type\":\"mount\"},"
                                     "{\"type\":\"network\",\"path\":\"/proc/self/ns/net\"}]",
                                     DEFAULT_CAPS, "[]");
  expect_refused (c, "container box of pod team/agent shares the node's network namespace (hostNetwork: true)");
  /* Docker's --network host under a policy is not this check's. */
  cleanup_spec oci_spec *d = config ("\"run.haven.policy\":\"default\"", "[{\"type\":\"mount\"}]", DEFAULT_CAPS, "[]");
  expect_ok (d, false);
}

static void
test_host_pid (void **state)
{
  (void) state;
  cleanup_spec oci_spec *s = config (SANDBOX_ANN, "[{\"type\":\"ipc\"},{\"type\":\"mount\"},{\"type\":\"network\"}]",
                                     DEFAULT_CAPS, "[]");
  expect_refused (s, "shares the node's pid namespace (hostPID: true)");
  cleanup_spec oci_spec *c = config (CONTAINER_ANN,
                                     "[{\"type\":\"pid\",\"path\":\"/proc/self/ns/pid\"},{\"type\":\"mount\"},"
                                     "{\"type\":\"network\"}]",
                                     DEFAULT_CAPS, "[]");
  expect_refused (c, "container box of pod team/agent shares the node's pid namespace (hostPID: true)");
}

static void
test_privileged (void **state)
{
  (void) state;
  cleanup_free char *all = all_caps ();
  cleanup_spec oci_spec *c = config (CONTAINER_ANN, OWN_NS, all, "[]");
  assert_true (hv_pod_config_privileged (c));
  expect_refused (c, "container box of pod team/agent is privileged (securityContext.privileged: true");
  /* Every capability with the masks in place (capabilities.add: ALL): a
   * policy takes the capabilities; not refused. */
  cleanup_spec oci_spec *masked = config (CONTAINER_ANN, OWN_NS, all, "[\"/proc/kcore\"]");
  assert_false (hv_pod_config_privileged (masked));
  expect_ok (masked, true);
  /* No masks, the default capabilities (containerd without kubelet's
   * masked paths): not privileged. */
  cleanup_spec oci_spec *plain = config (CONTAINER_ANN, OWN_NS, DEFAULT_CAPS, "[]");
  assert_false (hv_pod_config_privileged (plain));
  expect_ok (plain, true);
  /* Every capability but one this process holds (the runtime's own
   * bounding set is what containerd gives a privileged container): not
   * what privileged gives. */
  cleanup_free char *short_one = xstrdup (all);
  char *chown = strstr (short_one, "\"CAP_CHOWN\",");
  assert_non_null (chown);
  memmove (chown, chown + strlen ("\"CAP_CHOWN\","), strlen (chown + strlen ("\"CAP_CHOWN\",")) + 1);
  cleanup_spec oci_spec *less = config (CONTAINER_ANN, OWN_NS, short_one, "[]");
  assert_false (hv_pod_config_privileged (less));
  /* Docker's --privileged is not this check's, nor Podman's in a pod of
   * its own (CRI-O's type annotation, no Kubernetes namespace). */
  cleanup_spec oci_spec *d = config ("\"run.haven.policy\":\"default\"", OWN_NS, all, "[]");
  expect_ok (d, false);
  cleanup_spec oci_spec *pm = config ("\"io.kubernetes.cri-o.ContainerType\":\"container\","
                                      "\"io.kubernetes.cri-o.SandboxID\":\"s1\"",
                                      OWN_NS, all, "[]");
  expect_ok (pm, false);
}

/* Network none (policy default) on a pod keeps the pod's network
 * namespace (its containers share loopback; the runtime's table holds
 * it, pod_network.h); on Docker's config it is replaced by an empty one. */
static void
test_apply_none_keeps_pod_netns (void **state)
{
  (void) state;
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load ("default", &p, &err) < 0)
    fail_msg ("%s", err->msg);
  static const char *const anns[] = { SANDBOX_ANN, "\"com.docker.x\":\"1\"" };
  for (size_t i = 0; i < 2; i++)
    {
      cleanup_free char *cfg = xasprintf ("{\"ociVersion\":\"1.0.2\",\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
                                          "\"root\":{\"path\":\"/\"},\"linux\":{\"namespaces\":[{\"type\":\"pid\"},"
                                          "{\"type\":\"mount\"},{\"type\":\"network\",\"path\":\"/var/run/netns/cni-1\"}]},"
                                          "\"annotations\":{%s}}",
                                          anns[i]);
      cleanup_free char *out = NULL;
      if (hv_policy_apply (p, cfg, "config.json", &out, NULL, &err) < 0)
        fail_msg ("%s", err->msg);
      assert_non_null (strstr (out, "\"run.haven.network\": \"none\""));
      if ((strstr (out, "/var/run/netns/cni-1") != NULL) != (i == 0))
        fail_msg ("%s: the engine's network namespace %s: %s", i == 0 ? "pod" : "docker",
                  i == 0 ? "replaced" : "kept", out);
    }
  hv_policy_free (p);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_plain_pod),
    cmocka_unit_test (test_host_network),
    cmocka_unit_test (test_host_pid),
    cmocka_unit_test (test_privileged),
    cmocka_unit_test (test_apply_none_keeps_pod_netns),
  };
  setenv ("HAVEN_POLICY_PATH", HAVEN_SRCDIR "/policies", 1);
  return cmocka_run_group_tests (tests, NULL, NULL);
}
