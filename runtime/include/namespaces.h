/* Which namespaces a container creates and which it joins, and in what
 * order: the user namespace first (it owns everything created after it),
 * pid and time namespaces from the parent (they apply to children). */
#ifndef HAVEN_NAMESPACES_H
#define HAVEN_NAMESPACES_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci_spec.h"

#define HV_MAX_NS 8

struct hv_ns_plan
{
  int clone_flags;   /* for clone(): CLONE_NEWUSER / CLONE_NEWPID */
  int unshare_flags; /* created by the child after joining */
  size_t n_join;
  int join_fd[HV_MAX_NS];
  int join_type[HV_MAX_NS];
  int parent_join_fd[2]; /* pid and time: setns'd by the parent before clone */
  int parent_join_type[2];
  bool new_user, join_user;
  bool double_fork; /* joined userns + new pidns: the pidns must be created inside it */
};

int hv_ns_plan_build (const oci_spec *spec, struct hv_ns_plan *plan, hv_error **err);
void hv_ns_plan_close (struct hv_ns_plan *plan);
/* Parent: join pid/time namespaces (effective for the next child only). */
int hv_ns_parent_join (struct hv_ns_plan *plan, hv_error **err);
/* Child: join namespaces by path, user namespace first. */
int hv_ns_child_join (struct hv_ns_plan *plan, hv_error **err);
/* Parent: write uid_map/gid_map of a child in a new user namespace. */
int hv_ns_write_id_maps (pid_t pid, const oci_spec *spec, hv_error **err);
/* Child: time namespace offsets, right after unshare(CLONE_NEWTIME). */
int hv_ns_write_time_offsets (const oci_spec *spec, hv_error **err);
/* Child: write the offsets, then move itself into the new namespace. */
int hv_ns_enter_new_time_ns (const oci_spec *spec, hv_error **err);
/* Host uid that container uid 0 maps to (for chown of runtime files). */
uid_t hv_ns_host_root_uid (const oci_spec *spec);
gid_t hv_ns_host_root_gid (const oci_spec *spec);
#endif
