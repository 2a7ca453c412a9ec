/* linux.resources written into the container's cgroup, on cgroup v1, v2
 * or a hybrid host: each controller's settings go where the controller
 * is, its v1 hierarchy or else the unified one (cgroup_v1.c, cgroup_v2.c);
 * device rules through the v1 devices controller or an eBPF program.  A
 * limit that cannot be written is an error: a container never runs with
 * less confinement than its config asks for. */
#ifndef HAVEN_CGROUP_RESOURCES_H
#define HAVEN_CGROUP_RESOURCES_H
#include "cgroup_files.h"
#include "error.h"
#include "oci_spec.h"
/* Enable the v2 controllers the resources need along the path, then write
 * them.  flags: HV_CG_DEVICES to (re)apply device rules (the devices of
 * linux.devices are allowed too, as runc does), HV_CG_UPDATE for `update`. */
int hv_cgroup_apply_resources (const char *path, const oci_linux *l, unsigned flags, hv_error **err);
/* The first field of linux.resources that asks for a limit, in the
 * config's spelling ("memory.limit"), or NULL when nothing there needs a
 * cgroup: fields left out, zeros and -1 (unlimited), and device rules.  A
 * rootless container that cannot have a cgroup may run only then. */
const char *hv_cgroup_first_limit (const oci_resources *r);
#endif
