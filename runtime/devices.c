#include "config.h"
#include "devices.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mounts.h"
#include "safe_path.h"
#include "utils.h"

static const oci_device default_devices[] = {
  { .path = (char *) "/dev/null", .type = 'c', .major = 1, .minor = 3 },
  { .path = (char *) "/dev/zero", .type = 'c', .major = 1, .minor = 5 },
  { .path = (char *) "/dev/full", .type = 'c', .major = 1, .minor = 7 },
  { .path = (char *) "/dev/random", .type = 'c', .major = 1, .minor = 8 },
  { .path = (char *) "/dev/urandom", .type = 'c', .major = 1, .minor = 9 },
  { .path = (char *) "/dev/tty", .type = 'c', .major = 5, .minor = 0 },
};

bool
hv_devices_need_setup (const oci_spec *spec)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const oci_mount *m = &spec->mounts[i];
      if (strcmp (m->destination, "/dev") != 0)
        continue;
      bool bind = m->type && strcmp (m->type, "bind") == 0;
      for (size_t j = 0; j < m->options.n; j++)
        if (strcmp (m->options.v[j], "bind") == 0 || strcmp (m->options.v[j], "rbind") == 0)
          bind = true;
      return !bind;
    }
  return true;
}

static mode_t
type_bits (char type)
{
  switch (type)
    {
    case 'b':
      return S_IFBLK;
    case 'p':
      return S_IFIFO;
    default:
      return S_IFCHR;
    }
}

/* userns: bind the host's node of the same path after checking its number. */
static int
bind_host_device (int rootfd, const oci_device *d, hv_error **err)
{
  struct stat st;
  cleanup_close int src = open (d->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (src < 0)
    return hv_error_set (err, errno, "open host device %s", d->path);
  if (fstat (src, &st) < 0)
    return hv_error_set (err, errno, "stat host device %s", d->path);
  if ((st.st_mode & S_IFMT) != type_bits (d->type)
      || (d->type != 'p' && st.st_rdev != makedev ((unsigned) d->major, (unsigned) d->minor)))
    return hv_error_set (err, 0, "host %s is not device %c %lld:%lld", d->path, d->type, (long long) d->major,
                         (long long) d->minor);
  cleanup_close int tree = open_tree (src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree < 0)
    return hv_error_set (err, errno, "open_tree %s", d->path);
  cleanup_close int target = hv_create_in_root (rootfd, d->path, false, 0755, err);
  if (target < 0)
    return -1;
  return hv_mount_tree_onto (tree, target, err);
}

static int
create_device (int rootfd, const oci_device *d, bool userns, hv_error **err)
{
  if (userns)
    return bind_host_device (rootfd, d, err);
  cleanup_free char *name = NULL;
  cleanup_close int parent = hv_open_parent_in_root (rootfd, d->path, &name, err);
  if (parent < 0)
    return -1;
  mode_t mode = d->file_mode.set ? (mode_t) d->file_mode.value & 07777 : 0666;
  /* Replace whatever the image had there (a symlink could otherwise
   * redirect the chmod/chown below). */
  unlinkat (parent, name, 0);
  if (mknodat (parent, name, type_bits (d->type) | mode, makedev ((unsigned) d->major, (unsigned) d->minor)) < 0)
    return hv_error_set (err, errno, "mknod %s", d->path);
  /* mknod is subject to the umask; set the exact mode and owner. */
  if (fchmodat (parent, name, mode, AT_SYMLINK_NOFOLLOW) < 0 && errno != EOPNOTSUPP
      && fchmodat (parent, name, mode, 0) < 0)
    return hv_error_set (err, errno, "chmod %s", d->path);
  if (fchownat (parent, name, d->uid.set ? (uid_t) d->uid.value : 0, d->gid.set ? (gid_t) d->gid.value : 0,
                AT_SYMLINK_NOFOLLOW)
      < 0)
    return hv_error_set (err, errno, "chown %s", d->path);
  return 0;
}

static int
create_symlink (int rootfd, const char *target, const char *path, hv_error **err)
{
  cleanup_free char *name = NULL;
  cleanup_close int parent = hv_open_parent_in_root (rootfd, path, &name, err);
  if (parent < 0)
    return -1;
  if (symlinkat (target, parent, name) < 0 && errno != EEXIST)
    return hv_error_set (err, errno, "symlink %s", path);
  return 0;
}

int
hv_devices_setup (int rootfd, const oci_spec *spec, bool userns, hv_error **err)
{
  const oci_linux *l = &spec->linux_cfg;
  for (size_t i = 0; i < N_ELEMENTS (default_devices); i++)
    {
      bool overridden = false;
      for (size_t j = 0; j < l->n_devices; j++)
        if (strcmp (l->devices[j].path, default_devices[i].path) == 0)
          overridden = true;
      if (!overridden && create_device (rootfd, &default_devices[i], userns, err) < 0)
        return hv_error_wrap (err, "default device");
    }
  for (size_t i = 0; i < l->n_devices; i++)
    if (create_device (rootfd, &l->devices[i], userns, err) < 0)
      return hv_error_wrap (err, "device %s", l->devices[i].path);

  static const char *const links[][2] = {
    { "/proc/self/fd", "/dev/fd" },     { "/proc/self/fd/0", "/dev/stdin" },
    { "/proc/self/fd/1", "/dev/stdout" }, { "/proc/self/fd/2", "/dev/stderr" },
    { "pts/ptmx", "/dev/ptmx" },
  };
  for (size_t i = 0; i < N_ELEMENTS (links); i++)
    if (create_symlink (rootfd, links[i][0], links[i][1], err) < 0)
      return -1;
  /* /dev/core only when the container has a /proc that provides kcore. */
  int kcore = hv_open_in_root (rootfd, "/proc/kcore", O_PATH, 0);
  if (kcore >= 0)
    {
      close (kcore);
      if (create_symlink (rootfd, "/proc/kcore", "/dev/core", err) < 0)
        return -1;
    }
  return 0;
}
