/* Cgroup placement for v1, hybrid and v2 hosts.
 *
 * A container's cgroup is one path ("/haven/<id>") created in every mounted
 * hierarchy: each v1 controller hierarchy (and name=systemd) and the
 * unified v2 hierarchy, whichever exist.  Resource limits are applied by
 * cgroup_resources.c, device rules by cgroup_devices*.c. */
#ifndef HAVEN_CGROUP_H
#define HAVEN_CGROUP_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

enum hv_cgroup_mode
{
  HV_CGROUP_V1,     /* only v1 hierarchies */
  HV_CGROUP_HYBRID, /* v1 controllers plus an (empty) v2 at /sys/fs/cgroup/unified */
  HV_CGROUP_V2,     /* pure unified hierarchy */
};

enum hv_cgroup_mode hv_cgroup_mode (void);

/* Compute the container's cgroup path from linux.cgroupsPath. */
char *hv_cgroup_resolve_path (const char *cgroups_path, const char *id, bool systemd);
/* A resolved path must name a cgroup below the roots, without "." or "..". */
int hv_cgroup_check_path (const char *path, hv_error **err);
/* Create the cgroup in every hierarchy and move pid into it. */
int hv_cgroup_enter (const char *path, pid_t pid, hv_error **err);
/* The cgroup's directory in the unified hierarchy (pure v2, or the
 * controller-less one of a hybrid host), created and opened for clone3's
 * CLONE_INTO_CGROUP: the process then starts in it, and no write to
 * cgroup.procs has to move it there (such a write takes the cgroup
 * threadgroup lock, which waits for an RCU grace period).  -1 with errno
 * when there is no unified hierarchy (ENOENT) or it cannot be made or
 * opened: the caller then places the process with hv_cgroup_enter, which
 * reports the error. */
int hv_cgroup_open_unified (const char *path);
/* hv_cgroup_enter for a process that clone3 started in the unified
 * hierarchy's cgroup already: only the v1 hierarchies are written. */
int hv_cgroup_enter_v1 (const char *path, pid_t pid, hv_error **err);
/* Move pid into an existing container cgroup (exec). */
int hv_cgroup_join (const char *path, pid_t pid, hv_error **err);
/* In the unified hierarchy (v2 or hybrid), enable the `wanted` controllers
 * (NULL-terminated names) that each ancestor of the cgroup offers, from
 * the root down to its parent.  Refusals are left for the writes that need
 * the controller to report. */
int hv_cgroup_enable_controllers (const char *path, const char *const *wanted, hv_error **err);
/* SIGKILL everything in the cgroup (cgroup.kill where there is one, else
 * signals until it is empty).  The caller has checked the path. */
void hv_cgroup_kill (const char *path);
/* Kill what is left in the cgroup and remove it from every hierarchy. */
int hv_cgroup_destroy (const char *path, hv_error **err);
int hv_cgroup_pids (const char *path, pid_t **pids, size_t *n, hv_error **err);
int hv_cgroup_freeze (const char *path, bool freeze, hv_error **err);
bool hv_cgroup_is_frozen (const char *path);
/* Directory of `path` in the hierarchy holding `controller` (v1), or in the
 * unified hierarchy when controller is NULL or the host is v2. */
char *hv_cgroup_dir (const char *path, const char *controller);
#endif
