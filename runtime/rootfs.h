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
/* annotations["run.haven.pin"]: container paths, one a line, each bound
 * onto itself after the mounts and before the readonly paths, in order,
 * so that nothing in the container can rename, remove or replace it (the
 * kernel answers EBUSY for a mount point): writable as it was, or
 * read-only (and nosuid, nodev, noexec) for a line "ro:PATH".  The policy
 * filter pins a project's git directories and the directories on the way,
 * and makes what git executes there read-only.  A pinned path must exist
 * and be no symbolic link (create fails otherwise). */
#define HV_PIN_ANNOTATION "run.haven.pin"

/* After the switch: pinned paths, masked paths, readonly paths, readonly
 * root, final root propagation. */
int hv_rootfs_finalize (const oci_spec *spec, hv_error **err);
#endif
