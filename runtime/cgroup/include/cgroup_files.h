/* Reading and writing the interface files of one cgroup directory, and the
 * per-version writers of linux.resources (cgroup_v1.c, cgroup_v2.c) that
 * cgroup_resources.c dispatches to. */
#ifndef HAVEN_CGROUP_FILES_H
#define HAVEN_CGROUP_FILES_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "oci_spec.h"

/* Write `value` to dir/file (never created).  A missing file is reported
 * as such: usually a controller that is not enabled or a kernel without
 * the feature. */
int hv_cg_write (const char *dir, const char *file, const char *value, hv_error **err);
int hv_cg_write_i64 (const char *dir, const char *file, int64_t value, hv_error **err);
int hv_cg_write_u64 (const char *dir, const char *file, uint64_t value, hv_error **err);
/* Write each non-empty line of `value` with its own write(), as files
 * such as io.max and net_prio.ifpriomap take one entry per write. */
int hv_cg_write_lines (const char *dir, const char *file, const char *value, hv_error **err);
bool hv_cg_has (const char *dir, const char *file);
/* The first number of dir/file ("max" reads as INT64_MAX). */
int hv_cg_read_i64 (const char *dir, const char *file, int64_t *out, hv_error **err);
/* Whether `name` is listed in dir/cgroup.controllers (v2). */
bool hv_cg_v2_has_controller (const char *dir, const char *name);

/* Options of hv_cgroup_apply_resources (cgroup_resources.h). */
enum
{
  HV_CG_UPDATE = 1 << 0,  /* a live update: honour memory.checkBeforeUpdate */
  HV_CG_DEVICES = 1 << 1, /* (re)apply the device rules */
};

/* v1 controllers; `dir` is the container's directory in the hierarchy. */
int hv_cg_v1_memory (const char *dir, const oci_resources *r, unsigned flags, hv_error **err);
int hv_cg_v1_cpu (const char *dir, const oci_resources *r, hv_error **err);
int hv_cg_v1_blkio (const char *dir, const oci_resources *r, hv_error **err);
int hv_cg_v1_hugetlb (const char *dir, const oci_resources *r, hv_error **err);
int hv_cg_v1_net_cls (const char *dir, const oci_resources *r, hv_error **err);
int hv_cg_v1_net_prio (const char *dir, const oci_resources *r, hv_error **err);
int hv_cg_v1_devices (const char *dir, const oci_linux *l, hv_error **err);

/* v2 controllers; `dir` is the container's directory in the unified
 * hierarchy. */
int hv_cg_v2_memory (const char *dir, const oci_resources *r, unsigned flags, hv_error **err);
int hv_cg_v2_cpu (const char *dir, const oci_resources *r, hv_error **err);
int hv_cg_v2_io (const char *dir, const oci_resources *r, hv_error **err);
int hv_cg_v2_hugetlb (const char *dir, const oci_resources *r, hv_error **err);
int hv_cg_v2_unified (const char *dir, const oci_resources *r, hv_error **err);

/* Same files in both versions. */
int hv_cg_cpuset (const char *dir, const oci_resources *r, hv_error **err);
int hv_cg_pids (const char *dir, const oci_resources *r, hv_error **err);
int hv_cg_rdma (const char *dir, const oci_resources *r, hv_error **err);
#endif
