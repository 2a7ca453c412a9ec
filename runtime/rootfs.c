#include "config.h"
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "devices.h"
#include "oci_tables.h"
#include "safe_path.h"
#include "utils.h"

int
hv_rootfs_prepare (const oci_spec *spec, const char *rootfs, struct hv_mount_ctx *ctx, hv_error **err)
{
  /* Nothing we mount may propagate back to the host.  "shared" configs
   * get their propagation applied to the new root at the end. */
  int prop = MS_SLAVE | MS_REC;
  if (spec->linux_cfg.rootfs_propagation)
    {
      int want = oci_propagation_from_name (spec->linux_cfg.rootfs_propagation);
      if (want & (MS_PRIVATE | MS_SLAVE))
        prop = want | MS_REC;
    }
  if (mount (NULL, "/", NULL, (unsigned long) prop, NULL) < 0)
    return hv_error_set (err, errno, "set propagation of /");

  cleanup_close int tree = open_tree (AT_FDCWD, rootfs, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (tree < 0)
    return hv_error_set (err, errno, "open rootfs %s", rootfs);
  if (move_mount (tree, "", AT_FDCWD, rootfs, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return hv_error_set (err, errno, "bind rootfs %s onto itself", rootfs);
  /* The parent of the new root must not be shared for pivot_root. */
  mount (NULL, rootfs, NULL, MS_PRIVATE, NULL);
  ctx->rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (ctx->rootfd < 0)
    return hv_error_set (err, errno, "open rootfs %s", rootfs);

  ctx->spec = spec;
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      if (hv_mount_one (ctx, &spec->mounts[i], err) < 0)
        {
          hv_mount_ctx_release_shared (ctx);
          return hv_error_wrap (err, "mounts[%zu]", i);
        }
      /* A mount on "/" replaces the rootfs itself (haven run mounts the
       * host there): later mounts must resolve in the new tree, reached
       * by looking the rootfs path up again. */
      if (strspn (spec->mounts[i].destination, "/") == strlen (spec->mounts[i].destination))
        {
          close (ctx->rootfd);
          ctx->rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
          if (ctx->rootfd < 0)
            {
              hv_mount_ctx_release_shared (ctx);
              return hv_error_set (err, errno, "reopen rootfs %s", rootfs);
            }
        }
    }
  /* Every sub-directory is mounted: what is left of the instances goes. */
  hv_mount_ctx_release_shared (ctx);

  if (hv_devices_need_setup (spec) && hv_devices_setup (ctx->rootfd, spec, ctx->userns, err) < 0)
    return -1;

  /* runc creates a missing cwd; so do we, resolved inside the rootfs. */
  if (spec->has_process && spec->process.cwd)
    {
      int fd = hv_create_in_root (ctx->rootfd, spec->process.cwd, true, 0755, err);
      if (fd < 0)
        return hv_error_wrap (err, "cwd");
      close (fd);
    }
  return 0;
}

int
hv_rootfs_switch (int rootfd, bool no_pivot, hv_error **err)
{
  if (fchdir (rootfd) < 0)
    return hv_error_set (err, errno, "chdir to rootfs");
  if (no_pivot)
    {
      if (mount (".", "/", NULL, MS_MOVE, NULL) < 0)
        return hv_error_set (err, errno, "move rootfs to /");
      if (chroot (".") < 0)
        return hv_error_set (err, errno, "chroot");
    }
  else
    {
      /* pivot_root(".", ".") stacks the old root on top of the new one;
       * detaching "." then drops every host mount from our view. */
      if (syscall (SYS_pivot_root, ".", ".") < 0)
        return hv_error_set (err, errno, "pivot_root");
      if (umount2 (".", MNT_DETACH) < 0)
        return hv_error_set (err, errno, "detach old root");
    }
  if (chdir ("/") < 0)
    return hv_error_set (err, errno, "chdir /");
  return 0;
}

static int
mask_path (int rootfd, const char *path, int devnull, hv_error **err)
{
  struct stat st;
  cleanup_close int target = hv_open_in_root (rootfd, path, O_PATH, 0);
  if (target < 0)
    {
      if (errno == ENOENT)
        return 0;
      return hv_error_set (err, errno, "masked path %s", path);
    }
  if (fstat (target, &st) < 0)
    return hv_error_set (err, errno, "stat masked path %s", path);
  cleanup_close int tree = -1;
  if (S_ISDIR (st.st_mode))
    tree = hv_fs_new_mount ("tmpfs", "tmpfs", "size=0,nr_inodes=1", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                                                                        | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                            err);
  else
    {
      tree = open_tree (devnull, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
      if (tree < 0)
        return hv_error_set (err, errno, "clone /dev/null for %s", path);
    }
  if (tree < 0 || hv_mount_tree_onto (tree, target, err) < 0)
    return hv_error_wrap (err, "mask %s", path);
  return 0;
}

static int
readonly_path (int rootfd, const char *path, hv_error **err)
{
  cleanup_close int target = hv_open_in_root (rootfd, path, O_PATH, 0);
  if (target < 0)
    {
      if (errno == ENOENT)
        return 0;
      return hv_error_set (err, errno, "readonly path %s", path);
    }
  cleanup_close int tree = open_tree (target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
  if (tree < 0)
    return hv_error_set (err, errno, "bind readonly path %s", path);
  if (hv_mount_setattr (tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0, 0, true,
                        err)
          < 0
      || hv_mount_tree_onto (tree, target, err) < 0)
    return hv_error_wrap (err, "readonly path %s", path);
  return 0;
}

/* The container's own /dev/null (made by us, or by the image), accepted
 * only if it really is char 1:3; it is opened once and cloned through the
 * fd, so a symlink swapped in later cannot redirect a mask
 * (CVE-2025-31133). */
static int
open_verified_container_devnull (int rootfd, hv_error **err)
{
  struct stat st;
  int fd = hv_open_in_root (rootfd, "/dev/null", O_PATH | O_NOFOLLOW, 0);
  if (fd < 0)
    return hv_error_set (err, errno, "masked paths need /dev/null in the container");
  if (fstat (fd, &st) < 0 || !S_ISCHR (st.st_mode) || st.st_rdev != makedev (1, 3))
    {
      close (fd);
      return hv_error_set (err, 0, "the container's /dev/null is not the null device (char 1:3)");
    }
  return fd;
}

int
hv_rootfs_finalize (const oci_spec *spec, hv_error **err)
{
  const oci_linux *l = &spec->linux_cfg;
  cleanup_close int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int devnull = -1;
  if (rootfd < 0)
    return hv_error_set (err, errno, "open /");
  if (l->masked_paths.n > 0 && (devnull = open_verified_container_devnull (rootfd, err)) < 0)
    return -1;
  for (size_t i = 0; i < l->readonly_paths.n; i++)
    if (readonly_path (rootfd, l->readonly_paths.v[i], err) < 0)
      return -1;
  for (size_t i = 0; i < l->masked_paths.n; i++)
    if (mask_path (rootfd, l->masked_paths.v[i], devnull, err) < 0)
      return -1;
  if (spec->root.readonly)
    {
      /* Only the root mount: volumes mounted below stay writable. */
      if (hv_mount_setattr (rootfd, MOUNT_ATTR_RDONLY, 0, 0, false, err) < 0)
        return hv_error_wrap (err, "make root read-only");
    }
  if (l->rootfs_propagation)
    {
      int want = oci_propagation_from_name (l->rootfs_propagation);
      uint64_t p = want & MS_SHARED ? MS_SHARED : want & MS_SLAVE ? MS_SLAVE : want & MS_UNBINDABLE ? MS_UNBINDABLE : MS_PRIVATE;
      if (hv_mount_setattr (rootfd, 0, 0, p, (want & MS_REC) != 0, err) < 0)
        return hv_error_wrap (err, "set root propagation");
    }
  return 0;
}
