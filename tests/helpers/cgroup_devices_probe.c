/* Test helper for the eBPF device program (tests/integration/test_cgroups.sh):
 * on a hybrid host the v1 devices controller is what guards containers, so
 * the v2 program is exercised on a cgroup of the unified hierarchy that a
 * test process then joins.
 *   cgroup_devices_probe apply CGROUP_DIR CONFIG_JSON
 *       attach the program for CONFIG_JSON's linux.resources.devices (and
 *       linux.devices), replacing the one attached before
 *   cgroup_devices_probe count CGROUP_DIR
 *       print how many device programs are attached to the cgroup */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cgroup_devices.h"
#include "cgroup_devices_bpf.h"
#include "oci_spec.h"

int
main (int argc, char **argv)
{
  hv_error *err = NULL;
  int rc = 0;
  if (argc == 4 && strcmp (argv[1], "apply") == 0)
    {
      oci_spec *spec = NULL;
      struct hv_dev_rule *rules = NULL;
      if (oci_spec_load (argv[3], argv[3], &spec, &err) == 0)
        {
          size_t n = hv_dev_rules_build (&spec->linux_cfg, &rules);
          rc = hv_dev_bpf_apply (argv[2], rules, n, &err);
        }
      else
        rc = -1;
      free (rules);
      oci_spec_free (spec);
    }
  else if (argc == 3 && strcmp (argv[1], "count") == 0)
    {
      size_t n = 0;
      rc = hv_dev_bpf_count (argv[2], &n, &err);
      if (rc == 0)
        printf ("%zu\n", n);
    }
  else
    {
      fprintf (stderr, "usage: %s apply CGROUP_DIR CONFIG_JSON | count CGROUP_DIR\n", argv[0]);
      return 2;
    }
  if (rc < 0)
    {
      fprintf (stderr, "%s: %s\n", argv[0], err ? err->msg : "failed");
      hv_error_free (&err);
      return 1;
    }
  return 0;
}
