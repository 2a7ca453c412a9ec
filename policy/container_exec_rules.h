/* allow_exec and block_shell inside an engine's container. */
#ifndef HAVEN_CONTAINER_EXEC_RULES_H
#define HAVEN_CONTAINER_EXEC_RULES_H

#include "error.h"
#include "oci_spec.h"
#include "policy.h"

/* The policy's exec rules resolved in the container's root filesystem
 * (rootfs, a host path): the paths Landlock lets the container execute
 * and the shells to mask, appended as container paths to exec and
 * masked.  env is the container process's (its PATH is searched);
 * writable lists container paths whose contents are not trusted. */
int hv_container_exec_rules (const hv_policy *p, const char *rootfs, const oci_strv *env, const oci_strv *writable,
                             oci_strv *exec, oci_strv *masked, hv_error **err);
#endif
