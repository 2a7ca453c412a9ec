#include "config.h"
#include "self_exe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utils.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

extern char **environ;

#define REQUIRED_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* Whether nothing running with our credentials (or fewer: containers get
 * at most ours) can write the image behind fd.  Opening /proc/PID/exe
 * reaches the file through the mount the binary was executed from, so a
 * read-only mount protects it, whatever other mounts of the same file
 * exist.  For an ordinary user the kernel's permission check is enough:
 * a user namespace never grants write access to an inode whose owner is
 * not mapped into it. */
static int
image_is_unwritable (int fd)
{
  int seals = fcntl (fd, F_GET_SEALS);
  if (seals >= 0 && (seals & REQUIRED_SEALS) == REQUIRED_SEALS)
    return 1;
  struct statvfs vfs;
  if (fstatvfs (fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
    return 1;
  if (geteuid () != 0 && faccessat (fd, "", W_OK, AT_EMPTY_PATH | AT_EACCESS) < 0
      && (errno == EACCES || errno == EPERM || errno == EROFS))
    return 1;
  return 0;
}

/* The copy has no path: remember where the program lives (haven finds the
 * policies shipped next to it). */
static void
remember_original_path (void)
{
  char self_path[4096];
  ssize_t l = readlink ("/proc/self/exe", self_path, sizeof (self_path) - 1);
  if (l > 0)
    {
      self_path[l] = '\0';
      setenv ("_HAVEN_EXE", self_path, 1);
    }
}

char *
hv_self_exe_path (void)
{
  char self[PATH_MAX];
  ssize_t l = readlink ("/proc/self/exe", self, sizeof (self) - 1);
  if (l <= 0)
    return NULL;
  self[l] = '\0';
  const char *original = getenv ("_HAVEN_EXE");
  if ((str_has_prefix (self, "/memfd:") || strcmp (self, "/") == 0) && original && original[0])
    return xstrdup (original);
  return xstrdup (self);
}

/* Cheapest: a private, detached, read-only bind mount of the binary
 * itself.  It is attached nowhere, so no mount table shows it and nothing
 * has to be unmounted; the exec keeps it alive for as long as the process
 * runs.  Needs CAP_SYS_ADMIN over our mount namespace (root). */
static void
exec_from_readonly_bind (char **argv)
{
  int tree = open_tree (AT_FDCWD, "/proc/self/exe", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return;
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
  if (mount_setattr (tree, "", AT_EMPTY_PATH, &attr, sizeof (attr)) == 0)
    syscall (SYS_execveat, tree, "", argv, environ, AT_EMPTY_PATH);
  close (tree);
}

/* Fallback: an anonymous sealed copy (costs a copy of the binary). */
static int
exec_from_sealed_copy (int self, char **argv, hv_error **err)
{
  struct stat st;
  if (fstat (self, &st) < 0)
    return hv_error_set (err, errno, "stat /proc/self/exe");
  cleanup_close int mfd = memfd_create ("haven-runc", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (mfd < 0 && errno == EINVAL)
    mfd = memfd_create ("haven-runc", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (mfd < 0)
    return hv_error_set (err, errno, "memfd_create");
  off_t off = 0;
  while (off < st.st_size)
    {
      ssize_t n = sendfile (mfd, self, &off, (size_t) (st.st_size - off));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return hv_error_set (err, n < 0 ? errno : EIO, "copy runtime binary to memfd");
    }
  if (fcntl (mfd, F_ADD_SEALS, REQUIRED_SEALS) < 0)
    return hv_error_set (err, errno, "seal runtime copy");
  fexecve (mfd, argv, environ);
  return hv_error_set (err, errno, "re-exec from sealed copy");
}

int
hv_ensure_sealed_self (char **argv, hv_error **err)
{
  cleanup_close int self = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (self < 0)
    return hv_error_set (err, errno, "open /proc/self/exe");
  if (image_is_unwritable (self))
    return 0;
  remember_original_path ();
  exec_from_readonly_bind (argv);
  return exec_from_sealed_copy (self, argv, err);
}
