/* OCI resource values turned into what cgroup files take: pure functions,
 * no file system access (tests/unit/test_cgroup.c covers them). */
#ifndef HAVEN_CGROUP_VALUES_H
#define HAVEN_CGROUP_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "oci_spec.h"

/* cpu.shares [2, 262144] onto cpu.weight [1, 10000] with runc's curve
 * (1024, the default share, becomes 100, the default weight); 0 = unset. */
uint64_t hv_cg_shares_to_weight (uint64_t shares);
/* blkio.weight [10, 1000] onto io.weight [1, 10000], as runc converts it;
 * 0 = unset. */
uint64_t hv_cg_blkio_to_io_weight (uint64_t weight);

/* memory.swap.max for v2, where swap excludes memory (OCI's swap is
 * memory+swap).  *out is "" when nothing is to be written, else "max" or
 * a number.  Errors on values no v2 file can express. */
int hv_cg_swap_v2 (const oci_resources *r, char *out, size_t n, hv_error **err);
/* Checks common to v1 and v2: memory+swap below memory, swappiness > 100. */
int hv_cg_check_memory (const oci_resources *r, hv_error **err);

/* cpu.max ("QUOTA|max PERIOD"); NULL when neither quota nor period is set. */
char *hv_cg_cpu_max (const oci_resources *r);

/* io.max lines, one per device, from the four throttle lists:
 * "8:0 rbps=1048576 wiops=100" (a rate of 0 means no limit: "max").
 * NULL-terminated; free with oci_strv_free on an oci_strv or by hand. */
char **hv_cg_io_max_lines (const oci_resources *r);

/* hugepageLimits[].pageSize as the hugetlb files name sizes: "2MB", "1GB",
 * "64KB" (digits, then K, M, G or T, then B).  It becomes part of a file
 * name, so nothing else is accepted. */
int hv_cg_check_page_size (const char *size, hv_error **err);
/* A key of linux.resources.unified: a file name of the form
 * CONTROLLER.PARAMETER in the container's own cgroup.  Files through which
 * the cgroup could be left, re-populated or frozen behind the runtime's
 * back (cgroup.procs, cgroup.subtree_control, ...) are refused. */
int hv_cg_check_unified_key (const char *key, hv_error **err);
/* An rdma device or network interface name written into a line-based
 * cgroup file: no whitespace or control characters. */
int hv_cg_check_name (const char *what, const char *name, hv_error **err);
/* rdma.max line ("mlx5_0 hca_handle=2 hca_object=max"); NULL if the entry
 * sets nothing. */
char *hv_cg_rdma_line (const oci_rdma_limit *l);

/* The v2 controllers a container's cgroup needs enabled by its parents:
 * always cpu, io, memory and pids (Docker and Podman read their stats),
 * plus cpuset, hugetlb, rdma and the controllers of unified keys when the
 * config uses them.  NULL-terminated; free with hv_cg_controllers_free. */
char **hv_cg_wanted_controllers (const oci_resources *r);
void hv_cg_controllers_free (char **v);

/* A size as `update --memory` takes it: bytes, or a number with a k, m,
 * g, t or p suffix (powers of 1024, an optional "b" or "ib" after it, a
 * fraction allowed: "1.5g"), or -1 for unlimited. */
int hv_cg_parse_size (const char *s, int64_t *out);
#endif
