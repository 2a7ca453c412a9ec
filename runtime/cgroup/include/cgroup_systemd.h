/* The systemd cgroup driver (--systemd-cgroup).
 *
 * linux.cgroupsPath is "slice:prefix:name" and the container's cgroup is a
 * transient scope "<prefix>-<name>.scope" in that slice, created through
 * systemd's D-Bus API (sd-bus), with Delegate=yes so the subtree is ours.
 * Resources go both ways, as runc does: as unit properties (so that
 * systemd, which owns the cgroup, does not reset them on a reload) and as
 * cgroup files through cgroup_resources.c (so that nothing systemd has no
 * property for is lost).  The scope's cgroup path is derived from the unit
 * and slice names, so the state only records that the driver was used. */
#ifndef HAVEN_CGROUP_SYSTEMD_H
#define HAVEN_CGROUP_SYSTEMD_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci_spec.h"

/* Before anything is created: systemd must be running, the caller must be
 * root (the user manager is not supported), and cgroupsPath, when set,
 * must have the slice:prefix:name form. */
int hv_systemd_check (const char *cgroups_path, bool rootless, hv_error **err);
/* Start the transient unit for the cgroup `path` (as hv_cgroup_resolve_path
 * laid it out) holding pid, with l's resources as properties, and wait for
 * systemd to report the job done. */
int hv_systemd_start (const char *path, pid_t pid, const oci_linux *l, hv_error **err);
/* SetUnitProperties (runtime) with l's resources. */
int hv_systemd_update (const char *path, const oci_linux *l, hv_error **err);
/* Kill what is left, stop the unit, remove what systemd left behind (v1
 * hierarchies it does not manage). */
int hv_systemd_destroy (const char *path, hv_error **err);
#endif
