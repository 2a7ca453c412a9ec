/* The trial overlay mount's verdict, remembered (overlay_probe_cache.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "overlay_probe_cache.h"
#include "utils.h"

#define BOOT_ID "/proc/sys/kernel/random/boot_id"

/* The boot's id: devices and mounts of another boot prove nothing. */
static bool
read_boot_id (char out[64])
{
  cleanup_close int fd = open (BOOT_ID, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read (fd, out, 63);
  if (n <= 0)
    return false;
  out[n] = '\0';
  out[strcspn (out, "\n")] = '\0';
  return out[0] != '\0';
}

/* "DEV FLAGS" of the filesystem behind fd: another filesystem, or the
 * same one remounted (read-only, nosuid...), is another key. */
static bool
fs_id (int fd, char out[96])
{
  struct stat st;
  struct statvfs vfs;
  if (fstat (fd, &st) < 0 || fstatvfs (fd, &vfs) < 0)
    return false;
  snprintf (out, 96, "%u:%u %lx", major (st.st_dev), minor (st.st_dev), (unsigned long) vfs.f_flag);
  return true;
}

char *
hv_overlay_probe_key (const char *lower, int state_dfd, bool rootless)
{
  char boot[64], lower_id[96], state_id[96];
  cleanup_close int lfd = open (lower, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (lfd < 0 || !read_boot_id (boot) || !fs_id (lfd, lower_id) || !fs_id (state_dfd, state_id))
    return NULL;
  return xasprintf ("haven overlay probe 1\nboot %s\nuid %u rootless %d\nlower %s\nstate %s\n", boot,
                    (unsigned) geteuid (), rootless ? 1 : 0, lower_id, state_id);
}

bool
hv_overlay_probe_cached (int state_dfd, const char *key)
{
  cleanup_close int fd = openat (state_dfd, HV_OVERLAY_PROBE_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return false;
  /* Ours and writable by no one else, as the directory it is in (0700,
   * ours: hv_mkdirs_beneath checks): no other user planted it. */
  struct stat st;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid () || (st.st_mode & 022) != 0)
    return false;
  size_t len = strlen (key);
  if ((size_t) st.st_size != len)
    return false;
  char buf[1024];
  if (len >= sizeof (buf))
    return false;
  ssize_t n = read (fd, buf, len + 1);
  return n == (ssize_t) len && memcmp (buf, key, len) == 0;
}

void
hv_overlay_probe_remember (int state_dfd, const char *key)
{
  char tmp[64];
  snprintf (tmp, sizeof (tmp), "." HV_OVERLAY_PROBE_FILE ".%d", (int) getpid ());
  cleanup_close int fd
      = openat (state_dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  /* Whole or not at all: a torn file does not match any key. */
  if (write_all (fd, key, strlen (key)) < 0 || renameat (state_dfd, tmp, state_dfd, HV_OVERLAY_PROBE_FILE) < 0)
    unlinkat (state_dfd, tmp, 0);
}
