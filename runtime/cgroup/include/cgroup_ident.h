/* A process's cgroup v2 as nftables' `socket cgroupv2` sees it. */
#ifndef HAVEN_CGROUP_IDENT_H
#define HAVEN_CGROUP_IDENT_H

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* The id (its inode in cgroup2fs) and level (its depth below the
 * hierarchy's real root, whose id is 1) of pid's cgroup in the unified
 * hierarchy, which must be expected (a path below the root, "/a/b" or
 * "a/b").  0 with *id 0 when it cannot be told for certain: no unified
 * hierarchy, pid in another cgroup than expected or in the root cgroup,
 * or a hierarchy seen from a cgroup namespace (whose root is not the real
 * one). */
int hv_cgroup_v2_ident (pid_t pid, const char *expected, uint64_t *id, uint32_t *level, hv_error **err);
#endif
