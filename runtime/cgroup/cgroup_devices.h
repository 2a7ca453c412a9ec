/* Device access rules of a container: linux.resources.devices, then the
 * devices every container gets, then those of linux.devices, in one list
 * that the v1 devices controller (devices.allow/deny lines) and the v2
 * eBPF program (cgroup_devices_bpf.c) both enforce.
 *
 * Semantics, for each access (m, r, w) of a request separately: the last
 * rule that matches the device and includes that access decides; an
 * access no rule matches is allowed, as in a v1 cgroup that inherits its
 * parent's allow-all list (configs start with a deny-all rule, and a deny
 * or allow of type "a" matches every device and every access).  A request
 * is allowed when each of its accesses is: opening read-write needs both. */
#ifndef HAVEN_CGROUP_DEVICES_H
#define HAVEN_CGROUP_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci_spec.h"

/* The kernel's BPF_DEVCG_ACC_* values. */
enum
{
  HV_DEV_MKNOD = 1,
  HV_DEV_READ = 2,
  HV_DEV_WRITE = 4,
  HV_DEV_ALL = 7,
};

struct hv_dev_rule
{
  bool allow;
  char type;            /* 'a' (all devices), 'c' or 'b' */
  int64_t major, minor; /* -1: any */
  unsigned access;      /* HV_DEV_* bits; HV_DEV_ALL for type 'a' */
};

/* The container's rule list; 0 (and *out NULL) when the config has no
 * device rules, and then no device cgroup is set up. */
size_t hv_dev_rules_build (const oci_linux *l, struct hv_dev_rule **out);
/* The verdict of the rules for `access` (HV_DEV_* bits) on a device:
 * the reference the eBPF program is tested against. */
bool hv_dev_rules_allow (const struct hv_dev_rule *rules, size_t n, char type, uint32_t major, uint32_t minor,
                         unsigned access);
/* The rule as a v1 devices.allow/devices.deny line ("c 1:3 rwm", "a"). */
void hv_dev_rule_v1_line (const struct hv_dev_rule *r, char *buf, size_t n);
/* "rwm" letters to HV_DEV_* bits (all three when access is NULL). */
unsigned hv_dev_access_bits (const char *access);
#endif
