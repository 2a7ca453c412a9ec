#include "config.h"
#include "sandbox_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_path.h"
#include "utils.h"


/* The sandbox wrote the workspace: no link, no "..", no mount crossed. */
#define RESOLVE_WS (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

bool
hv_workspace_path_ok (const char *rel)
{
  /* The API's rule for a relative path (base/safe_path.h), the one its
   * router applies: one rule, whoever calls. */
  return rel != NULL && hv_relative_path_check (rel, strlen (rel), "path", NULL) == 0;
}

static int
bad_path (const char *rel, hv_error **err)
{
  return hv_error_set (err, EINVAL, "\"%s\": not a path of the workspace (relative, no \".\" or \"..\", no empty part, "
                                    "at most %d bytes)", rel ? rel : "", HV_RELATIVE_PATH_MAX);
}

/* What an entry is, for errors and listings. */
static char
kind_of (mode_t m)
{
  return S_ISREG (m) ? 'f' : S_ISDIR (m) ? 'd' : S_ISLNK (m) ? 'l' : 'o';
}

static int
resolve_error (const char *rel, hv_error **err)
{
  if (errno == ELOOP)
    return hv_error_set (err, ELOOP, "%s: a symbolic link on the way, not followed", rel);
  if (errno == EXDEV)
    return hv_error_set (err, EXDEV, "%s: leaves the workspace (a mount: a path the policy protects or hides, or an escape), refused", rel);
  return hv_error_set (err, errno, "%s", rel);
}

/* An O_PATH fd of the directory rel's last component is in, and its
 * name.  With mkdirs, missing directories are made one at a time, each
 * opened (beneath the one before) without following anything. */
static int
open_parent (int ws_fd, const char *rel, bool mkdirs, const char **name, hv_error **err)
{
  const char *slash = strrchr (rel, '/');
  *name = slash ? slash + 1 : rel;
  cleanup_free char *dir = slash ? strndup (rel, (size_t) (slash - rel)) : xstrdup (".");
  if (dir == NULL)
    return hv_error_set (err, ENOMEM, "%s", rel);
  if (!mkdirs || slash == NULL)
    {
      int fd = hv_openat2 (ws_fd, dir, O_PATH | O_DIRECTORY, 0, RESOLVE_WS);
      return fd < 0 ? resolve_error (dir, err) : fd;
    }
  int cur = hv_openat2 (ws_fd, ".", O_PATH | O_DIRECTORY, 0, RESOLVE_WS);
  if (cur < 0)
    return resolve_error (".", err);
  for (char *c = dir, *save = NULL; (c = strtok_r (c, "/", &save)); c = NULL)
    {
      if (mkdirat (cur, c, 0755) < 0 && errno != EEXIST)
        {
          int e = errno;
          close (cur);
          return hv_error_set (err, e, "mkdir %s in %s", c, rel);
        }
      int next = hv_openat2 (cur, c, O_PATH | O_DIRECTORY, 0, RESOLVE_WS);
      int e = errno;
      close (cur);
      if (next < 0)
        {
          errno = e;
          return resolve_error (rel, err);
        }
      cur = next;
    }
  return cur;
}

int
hv_workspace_write (int ws_fd, const char *rel, const void *data, size_t len, mode_t mode, bool mkdirs,
                    hv_error **err)
{
  if (!hv_workspace_path_ok (rel))
    return bad_path (rel, err);
  const char *name;
  cleanup_close int dirfd = open_parent (ws_fd, rel, mkdirs, &name, err);
  if (dirfd < 0)
    return -1;
  /* A name something is mounted on in the sandbox (a protected file bound
   * read-only, a masked secret: the workspace's fd is the sandbox's view)
   * is refused: renamed over from here, the mount would be detached in the
   * sandbox (a rename checks mount points only in the caller's namespace),
   * and the file beneath it replaced. */
  {
    cleanup_close int old = hv_openat2 (dirfd, name, O_PATH, 0, RESOLVE_WS);
    if (old < 0 && errno == EXDEV)
      return resolve_error (rel, err);
  }
  /* Only a regular file is replaced: a directory stays (rename would
   * fail on it anyway), a link, fifo or device is the sandbox's own. */
  struct stat st;
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG (st.st_mode))
    return hv_error_set (err, S_ISDIR (st.st_mode) ? EISDIR : EEXIST, "%s: %s, not replaced", rel,
                         S_ISDIR (st.st_mode) ? "a directory" : S_ISLNK (st.st_mode) ? "a symbolic link" : "not a regular file");
  /* A short temporary name (the target's may be NAME_MAX long), made
   * with O_EXCL beside it: nothing planted is opened, and readers in the
   * sandbox see the old file or the new one, never a partial one. */
  unsigned char rnd[8];
  if (getrandom (rnd, sizeof (rnd), 0) != (ssize_t) sizeof (rnd))
    return hv_error_set (err, errno, "getrandom");
  char tmp[32];
  snprintf (tmp, sizeof (tmp), ".haven-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
            rnd[5], rnd[6], rnd[7]);
  cleanup_close int fd = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return hv_error_set (err, errno, "create a temporary file beside %s", rel);
  /* The sandbox's processes run as the caller's uid and gid (mapped to
   * themselves when rootless, root as root): a file of ours is theirs;
   * the mode is set whatever our umask. */
  const char *what = NULL;
  if (write_all (fd, data, len) < 0)
    what = "write";
  else if (fchmod (fd, mode ? mode : 0644) < 0)
    what = "chmod";
  else if (renameat (dirfd, tmp, dirfd, name) < 0)
    what = "rename onto";
  if (what)
    {
      int e = errno;
      unlinkat (dirfd, tmp, 0);
      return hv_error_set (err, e, "%s %s", what, rel);
    }
  return 0;
}

int
hv_workspace_read (int ws_fd, const char *rel, size_t max, char **data, size_t *len, bool *truncated,
                   hv_error **err)
{
  *data = NULL;
  *len = 0;
  *truncated = false;
  if (!hv_workspace_path_ok (rel))
    return bad_path (rel, err);
  /* O_PATH first: a fifo or a device is looked at, never opened (an open
   * can block or act); then the same inode is opened through our own fd. */
  cleanup_close int pfd = hv_openat2 (ws_fd, rel, O_PATH | O_NOFOLLOW, 0, RESOLVE_WS);
  if (pfd < 0)
    return resolve_error (rel, err);
  struct stat st;
  if (fstat (pfd, &st) < 0)
    return hv_error_set (err, errno, "stat %s", rel);
  if (!S_ISREG (st.st_mode))
    return hv_error_set (err, S_ISDIR (st.st_mode) ? EISDIR : EINVAL, "%s: %s, not read", rel,
                         S_ISDIR (st.st_mode) ? "a directory" : S_ISLNK (st.st_mode) ? "a symbolic link" : "not a regular file");
  char self[64];
  snprintf (self, sizeof (self), "/proc/self/fd/%d", pfd);
  cleanup_close int fd = open (self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "open %s", rel);
  size_t cap = max < 65536 ? max + 1 : 65536, n = 0;
  cleanup_free char *buf = xmalloc0 (cap + 1);
  for (;;)
    {
      if (n == cap)
        {
          if (cap > max)
            break;
          cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
          buf = xrealloc (buf, cap + 1);
        }
      ssize_t r = read (fd, buf + n, cap - n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return hv_error_set (err, errno, "read %s", rel);
      if (r == 0)
        break;
      n += (size_t) r;
    }
  /* One byte past max was asked for: it says there was more. */
  if (n > max)
    {
      *truncated = true;
      n = max;
    }
  buf[n] = '\0';
  *len = n;
  *data = steal_pointer (&buf);
  return 0;
}

static int
by_name (const void *a, const void *b)
{
  return strcmp (((const struct hv_workspace_entry *) a)->name, ((const struct hv_workspace_entry *) b)->name);
}

int
hv_workspace_list (int ws_fd, const char *rel, size_t max, struct hv_workspace_entry **entries, size_t *n,
                   bool *truncated, hv_error **err)
{
  *entries = NULL;
  *n = 0;
  *truncated = false;
  bool top = rel == NULL || rel[0] == '\0';
  if (!top && !hv_workspace_path_ok (rel))
    return bad_path (rel, err);
  int dfd = hv_openat2 (ws_fd, top ? "." : rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, RESOLVE_WS);
  if (dfd < 0)
    return resolve_error (top ? "." : rel, err);
  DIR *d = fdopendir (dfd);
  if (d == NULL)
    {
      int e = errno;
      close (dfd);
      return hv_error_set (err, e, "%s", top ? "." : rel);
    }
  /* All names are read, sorted, then cut at max: which ones are left out
   * does not depend on the directory's order. */
  struct hv_workspace_entry *v = NULL;
  size_t k = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir (d)))
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      struct stat st;
      if (fstatat (dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue; /* removed meanwhile */
      if (k == cap)
        v = xrealloc (v, (cap = cap ? cap * 2 : 16) * sizeof (*v));
      v[k++] = (struct hv_workspace_entry){ .name = xstrdup (de->d_name), .type = kind_of (st.st_mode),
                                            .size = S_ISREG (st.st_mode) ? st.st_size : 0 };
    }
  closedir (d);
  if (k)
    qsort (v, k, sizeof (*v), by_name);
  if (k > max)
    {
      for (size_t i = max; i < k; i++)
        free (v[i].name);
      k = max;
      *truncated = true;
    }
  *entries = v;
  *n = k;
  return 0;
}

void
hv_workspace_entries_free (struct hv_workspace_entry *entries, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (entries[i].name);
  free (entries);
}
