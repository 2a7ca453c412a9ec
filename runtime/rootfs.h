/* The container's root filesystem: make it a private mount point, mount
 * everything the config asks for inside it, switch root, then mask and
 * write-protect what must not be touched. */
#ifndef HAVEN_ROOTFS_H
#define HAVEN_ROOTFS_H

#include <stdbool.h>

#include "error.h"
#include "mounts.h"
#include "oci_spec.h"

/* Before pivot: propagation, bind of the rootfs onto itself, all mounts,
 * devices, cwd.  Returns an O_PATH fd of the rootfs mount in *rootfd. */
int hv_rootfs_prepare (const oci_spec *spec, const char *rootfs, struct hv_mount_ctx *ctx, hv_error **err);
/* pivot_root (or move+chroot for --no-pivot) into rootfd. */
int hv_rootfs_switch (int rootfd, bool no_pivot, hv_error **err);
/* After the switch: masked paths, readonly paths, readonly root, final
 * root propagation. */
int hv_rootfs_finalize (const oci_spec *spec, hv_error **err);
#endif
