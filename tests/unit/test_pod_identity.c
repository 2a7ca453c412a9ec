/* The CRI runtimes' pod annotations (oci/pod_identity.c): containerd's
 * and CRI-O's names, both roles, and the refusals. */
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
#include "pod_identity.h"
#include "utils.h"

#include "oci_spec_check.h"

static void
test_not_a_pod (void **state)
{
  (void) state;
  oci_spec *spec = spec_with_annotations ("\"run.haven.policy\":\"default\"");
  hv_pod_identity id;
  hv_error *err = NULL;
  assert_int_equal (hv_pod_identity_read (spec, "config.json", &id, &err), 0);
  assert_int_equal (id.role, HV_POD_NONE);
  assert_null (id.cri);
  oci_spec_free (spec);
}

static void
test_containerd_sandbox_and_container (void **state)
{
  (void) state;
  oci_spec *spec = spec_with_annotations ("\"io.kubernetes.cri.container-type\":\"sandbox\","
                              "\"io.kubernetes.cri.sandbox-id\":\"abc123\","
                              "\"io.kubernetes.cri.sandbox-name\":\"agent-0\","
                              "\"io.kubernetes.cri.sandbox-namespace\":\"team-a\","
                              "\"io.kubernetes.cri.sandbox-uid\":\"0b6f-11\"");
  hv_pod_identity id;
  hv_error *err = NULL;
  assert_int_equal (hv_pod_identity_read (spec, "config.json", &id, &err), 0);
  assert_int_equal (id.role, HV_POD_SANDBOX);
  assert_string_equal (id.cri, "containerd");
  assert_string_equal (id.sandbox_id, "abc123");
  assert_string_equal (id.pod_name, "agent-0");
  assert_string_equal (id.pod_namespace, "team-a");
  assert_string_equal (id.pod_uid, "0b6f-11");
  assert_null (id.container_name);
  oci_spec_free (spec);

  spec = spec_with_annotations ("\"io.kubernetes.cri.container-type\":\"container\","
                    "\"io.kubernetes.cri.sandbox-id\":\"abc123\","
                    "\"io.kubernetes.cri.container-name\":\"agent\"");
  assert_int_equal (hv_pod_identity_read (spec, "config.json", &id, &err), 0);
  assert_int_equal (id.role, HV_POD_CONTAINER);
  assert_string_equal (id.container_name, "agent");
  assert_null (id.pod_name);
  oci_spec_free (spec);
}

static void
test_crio_container (void **state)
{
  (void) state;
  oci_spec *spec = spec_with_annotations ("\"io.kubernetes.cri-o.ContainerType\":\"container\","
                              "\"io.kubernetes.cri-o.SandboxID\":\"f00d\","
                              "\"io.kubernetes.pod.name\":\"agent-1\","
                              "\"io.kubernetes.pod.namespace\":\"default\","
                              "\"io.kubernetes.container.name\":\"tool\"");
  hv_pod_identity id;
  hv_error *err = NULL;
  assert_int_equal (hv_pod_identity_read (spec, "config.json", &id, &err), 0);
  assert_int_equal (id.role, HV_POD_CONTAINER);
  assert_string_equal (id.cri, "cri-o");
  assert_string_equal (id.sandbox_id, "f00d");
  assert_string_equal (id.pod_name, "agent-1");
  assert_string_equal (id.pod_namespace, "default");
  assert_string_equal (id.container_name, "tool");
  oci_spec_free (spec);
}

static void
expect_refused (const char *annotations, const char *message)
{
  oci_spec *spec = spec_with_annotations (annotations);
  hv_pod_identity id;
  hv_error *err = NULL;
  assert_int_equal (hv_pod_identity_read (spec, "config.json", &id, &err), -1);
  assert_non_null (err);
  assert_string_equal (err->msg, message);
  hv_error_free (&err);
  oci_spec_free (spec);
}

static void
test_refusals (void **state)
{
  (void) state;
  expect_refused ("\"io.kubernetes.cri.container-type\":\"pause\"",
                  "config.json: annotation io.kubernetes.cri.container-type=\"pause\": expected \"sandbox\" or \"container\"");
  expect_refused ("\"io.kubernetes.cri.container-type\":\"container\"",
                  "config.json: annotation io.kubernetes.cri.container-type=\"container\" without io.kubernetes.cri.sandbox-id");
  expect_refused ("\"io.kubernetes.cri.container-type\":\"container\",\"io.kubernetes.cri.sandbox-id\":\"../x\"",
                  "config.json: annotation io.kubernetes.cri.sandbox-id=\"../x\": not a plain name ([A-Za-z0-9._-], at most 253 bytes)");
  expect_refused ("\"io.kubernetes.cri.container-type\":\"sandbox\",\"io.kubernetes.cri.sandbox-id\":\"a\","
                  "\"io.kubernetes.cri.sandbox-name\":\"x\\ny\"",
                  "config.json: annotation io.kubernetes.cri.sandbox-name=\"x\ny\": not a plain name ([A-Za-z0-9._-], at most 253 bytes)");
  expect_refused ("\"io.kubernetes.cri-o.ContainerType\":\"container\",\"io.kubernetes.cri-o.SandboxID\":\"..\"",
                  "config.json: annotation io.kubernetes.cri-o.SandboxID=\"..\": not a plain name ([A-Za-z0-9._-], at most 253 bytes)");
}

static void
test_name_ok (void **state)
{
  (void) state;
  assert_true (hv_pod_name_ok ("kube-system"));
  assert_true (hv_pod_name_ok ("a.b_c-D9"));
  assert_false (hv_pod_name_ok (""));
  assert_false (hv_pod_name_ok (NULL));
  assert_false (hv_pod_name_ok ("."));
  assert_false (hv_pod_name_ok (".."));
  assert_false (hv_pod_name_ok ("a/b"));
  assert_false (hv_pod_name_ok ("a b"));
  char longname[255];
  memset (longname, 'a', 254);
  longname[254] = '\0';
  assert_false (hv_pod_name_ok (longname));
  longname[253] = '\0';
  assert_true (hv_pod_name_ok (longname));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_not_a_pod),
    cmocka_unit_test (test_containerd_sandbox_and_container),
    cmocka_unit_test (test_crio_container),
    cmocka_unit_test (test_refusals),
    cmocka_unit_test (test_name_ok),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
