/* linux.resources written into the container's cgroup: memory, pids and
 * cpu (quota/period, shares), on v1 controllers or the v2 files.  A limit
 * that cannot be written is an error: a container never runs with less
 * confinement than its config asks for.  (Block I/O, hugetlb, network,
 * rdma, devices and `unified` are not implemented yet and are refused.) */
#ifndef HAVEN_CGROUP_RESOURCES_H
#define HAVEN_CGROUP_RESOURCES_H
#include "error.h"
#include "oci_spec.h"
/* The devices listed in linux.devices are allowed too (as runc does). */
int hv_cgroup_apply_resources (const char *path, const oci_linux *l, hv_error **err);
#endif
