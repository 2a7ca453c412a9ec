/* A process's cgroup v2 as nftables sees it: cgroup_ident.h. */
#include "config.h"
#include "cgroup_ident.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "file_read.h"
#include "utils.h"

/* Deeper than any cgroup a runtime makes: the walk up is bounded. */
#define MAX_LEVEL 64
/* The root cgroup's id (kernfs numbers its root 1). */
#define ROOT_ID 1

/* pid's path in the unified hierarchy ("0::PATH"), or NULL (none, or
 * *err). */
static char *
unified_path (pid_t pid, hv_error **err)
{
  char proc[64];
  snprintf (proc, sizeof (proc), "/proc/%d/cgroup", pid);
  cleanup_close int fd = open (proc, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      hv_error_set (err, errno, "open %s", proc);
      return NULL;
    }
  /* At most 8 KB, what is past it not read (the bound it always had);
   * a failed read (the process gone) finds no line, as an empty file. */
  cleanup_free char *buf = NULL;
  bool more;
  if (hv_read_fd_max (fd, 0, 8191, &buf, NULL, &more) < 0)
    return NULL;
  for (char *line = buf; line && *line; line = strchr (line, '\n') ? strchr (line, '\n') + 1 : NULL)
    if (strncmp (line, "0::/", 4) == 0)
      return strndup (line + 3, strcspn (line + 3, "\n"));
  return NULL;
}

static int
open_unified_mount (void)
{
  static const char *const mounts[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
  for (size_t i = 0; i < 2; i++)
    {
      int fd = open (mounts[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
      struct statfs sf;
      if (fd >= 0 && fstatfs (fd, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
        return fd;
      if (fd >= 0)
        close (fd);
    }
  return -1;
}

int
hv_cgroup_v2_ident (pid_t pid, const char *expected, uint64_t *id, uint32_t *level, hv_error **err)
{
  *id = 0;
  *level = 0;
  cleanup_free char *path = unified_path (pid, err);
  if (path == NULL)
    return *err ? -1 : 0;
  while (*expected == '/')
    expected++;
  if (strcmp (path + 1, expected) != 0)
    return 0;
  cleanup_close int mnt = open_unified_mount ();
  if (mnt < 0 || strcmp (path, "/") == 0)
    return 0;
  /* The process waits for us in this cgroup: the path stays valid. */
  cleanup_close int cur = openat (mnt, path + 1, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (cur < 0)
    return 0;
  struct stat st;
  if (fstat (cur, &st) < 0)
    return hv_error_set (err, errno, "stat the cgroup %s", path);
  uint64_t mine = st.st_ino;
  dev_t dev = st.st_dev;
  for (uint32_t n = 0; n <= MAX_LEVEL; n++)
    {
      if (st.st_dev != dev)
        return 0; /* out of the hierarchy before its root: a namespace's view */
      if (st.st_ino == ROOT_ID)
        {
          *id = n ? mine : 0;
          *level = n;
          return 0;
        }
      int up = openat (cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (up < 0 || fstat (up, &st) < 0)
        {
          if (up >= 0)
            close (up);
          return 0;
        }
      close (cur);
      cur = up;
    }
  return 0;
}
