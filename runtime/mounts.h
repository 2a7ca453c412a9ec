/* config.json mounts, performed with the new mount API (fsopen/fsmount,
 * open_tree, mount_setattr, move_mount) onto fds resolved inside the
 * rootfs, so no path is looked up twice. */
#ifndef HAVEN_MOUNTS_H
#define HAVEN_MOUNTS_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "oci_spec.h"

#define HV_MOUNT_FILE_MAX 65536

struct hv_mount_opts
{
  uint64_t attr_set, attr_clr;     /* MOUNT_ATTR_* for the top mount */
  uint64_t rattr_set, rattr_clr;   /* MOUNT_ATTR_* applied recursively (rro, rnosuid, ...) */
  uint64_t propagation;            /* MS_SHARED/MS_SLAVE/MS_PRIVATE/MS_UNBINDABLE or 0 */
  bool propagation_recursive;
  bool bind, recursive;
  bool idmap, ridmap;
  /* haven's own options (never passed to the kernel):
   * x-haven.nofollow: the bind source is opened from "/" and the
   *   destination resolved in the root, both refusing every symbolic link;
   *   a link may only be the destination itself, covered by a non-directory
   *   (masking the link, whose target is never looked at).
   * x-haven.mkdir: with nofollow, a missing destination is created (a
   *   mount point on a tmpfs laid earlier); without it a missing one is an
   *   error.
   * x-haven.optional: a missing source or destination skips the mount
   *   instead of stopping the start.
   * x-haven.subdir=PATH: for a new filesystem (not a bind): only PATH of
   *   it is mounted, resolved beneath its root through no link; mounts
   *   with the same type, source and filesystem options share one
   *   instance (haven run's copy-on-write home directories: one overlay
   *   of the home).
   * x-haven.pin: a bind whose source is its destination in the container's
   *   own tree (source and destination the same path): the directory or
   *   regular file there becomes a mount point of itself, with every flag
   *   and mount below it kept (a recursive clone of what the container
   *   shows there), resolved through no link, and never optional.  A mount
   *   point cannot be renamed, removed or replaced from inside the
   *   namespace (EBUSY): haven run and the policy filter pin each
   *   directory on the way to a hidden path, so that no sandbox can move a
   *   parent of a secret away while another sandbox starts, and the policy
   *   filter pins a project's git directories.  The only other options it
   *   takes are rro, rnosuid, rnodev and rnoexec, applied to the whole
   *   clone: the policy filter's read-only pins of what git executes
   *   (hooks, config, a hook manager's files: policy/container_git.h). */
  bool nofollow, mkdir, optional, pin;
  char *subdir;
  /* x-haven.file=NAME:TEXT: for a new filesystem (a tmpfs), the regular
   * file NAME (one component) holding TEXT is made in its root before it
   * is attached, owned like that root, mode 0644 (a hidden home's own
   * copy of what the policy keeps of the image's ~/.gitconfig:
   * policy/image_git_identity.h).  At most one per mount. */
  char *file_name, *file_text;
  char *data;                      /* comma-separated fs options ("size=64k,mode=755") */
};

int hv_mount_opts_parse (const oci_strv *options, struct hv_mount_opts *out, hv_error **err);
void hv_mount_opts_free (struct hv_mount_opts *o);

/* A filesystem instance that x-haven.subdir mounts share: its
 * sub-directories, cloned all at once when the first of them is mounted
 * (the instance itself is attached for that moment only), each waiting
 * for its own mount. */
struct hv_shared_clone
{
  const oci_mount *mount; /* the config's mount entry it is for */
  int fd;                 /* detached clone of the sub-directory; -1 once mounted */
};

struct hv_shared_fs
{
  char *key; /* type, source and options */
  struct hv_shared_clone *clones;
  size_t n_clones;
};

struct hv_mount_ctx
{
  int rootfd;              /* O_PATH fd of the rootfs (a mount point) */
  const char *bundle;      /* for relative bind sources */
  const char *cgroup_path; /* for "cgroup" mounts on v1 hosts */
  bool userns;             /* in a new user namespace: no mknod, sysfs may need a bind */
  bool new_netns;
  const oci_spec *spec;         /* the config being mounted (x-haven.subdir looks ahead) */
  struct hv_shared_fs *shared; /* x-haven.subdir instances mounted so far */
  size_t n_shared;
};

int hv_mount_one (struct hv_mount_ctx *ctx, const oci_mount *m, hv_error **err);
/* Closes what is left of the shared instances (clones no mount took);
 * the sub-directories mounted stay. */
void hv_mount_ctx_release_shared (struct hv_mount_ctx *ctx);

/* Building blocks, also used for masked/readonly paths and /dev/console. */
int hv_mount_tree_onto (int treefd, int targetfd, hv_error **err);
int hv_mount_setattr (int fd, uint64_t set, uint64_t clr, uint64_t propagation, bool recursive, hv_error **err);
/* A fresh filesystem instance as a detached mount fd. */
int hv_fs_new_mount (const char *type, const char *source, const char *data, uint64_t attrs, hv_error **err);
#endif
