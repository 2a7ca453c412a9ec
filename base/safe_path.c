#include "config.h"
#include "safe_path.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int
hv_openat2 (int dirfd, const char *path, int flags, mode_t mode, unsigned long long resolve)
{
  struct open_how how = { .flags = (unsigned long long) flags | O_CLOEXEC, .mode = mode, .resolve = resolve };
  int fd;
  do
    fd = (int) syscall (SYS_openat2, dirfd, path, &how, sizeof (how));
  while (fd < 0 && errno == EAGAIN);
  return fd;
}

int
hv_open_in_root (int rootfd, const char *path, int flags, mode_t mode)
{
  while (*path == '/')
    path++;
  if (*path == '\0')
    path = ".";
  return hv_openat2 (rootfd, path, flags, mode, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

int
hv_open_in_proc (int procfd, const char *path, int flags)
{
  return hv_openat2 (procfd, path, flags, 0, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV);
}

int
hv_open_beneath_nofollow (int dirfd, const char *path, int flags)
{
  return hv_openat2 (dirfd, path, flags | O_NOFOLLOW, 0, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

int
hv_open_host_nofollow (const char *path, int flags)
{
  if (path[0] != '/')
    {
      errno = EINVAL;
      return -1;
    }
  cleanup_close int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return -1;
  const char *rel = path + strspn (path, "/");
  int fd = hv_openat2 (root, rel[0] ? rel : ".", flags | O_NOFOLLOW, 0, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  struct stat st;
  if (fd >= 0 && (flags & O_PATH) && fstat (fd, &st) == 0 && S_ISLNK (st.st_mode))
    {
      close (fd);
      errno = ELOOP;
      return -1;
    }
  return fd;
}

int
hv_open_in_root_nofollow (int rootfd, const char *path, int flags)
{
  while (*path == '/')
    path++;
  if (*path == '\0')
    path = ".";
  return hv_openat2 (rootfd, path, flags | O_NOFOLLOW, 0,
                      RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

static int
open_in_root_as (int rootfd, const char *path, int flags, bool nofollow)
{
  return nofollow ? hv_open_in_root_nofollow (rootfd, path, flags) : hv_open_in_root (rootfd, path, flags, 0);
}

static int
create_in_root (int rootfd, const char *path, bool is_dir, mode_t mode, bool nofollow, hv_error **err)
{
  cleanup_free char *rel = xstrdup (path);
  char *p = rel;
  while (*p == '/')
    p++;
  size_t len = strlen (p);
  while (len > 0 && p[len - 1] == '/')
    p[--len] = '\0';
  if (len == 0)
    {
      int fd = open_in_root_as (rootfd, ".", O_PATH | O_DIRECTORY, nofollow);
      if (fd < 0)
        return hv_error_set (err, errno, "open rootfs");
      return fd;
    }
  /* Resolve ever longer prefixes from the root; create what is missing in
   * the (already resolved, hence inside-root) parent. */
  for (char *cur = p;;)
    {
      char *slash = strchr (cur, '/');
      bool last = slash == NULL;
      if (!last)
        *slash = '\0';
      bool want_dir = !last || is_dir;
      int fd = open_in_root_as (rootfd, p, O_PATH | (want_dir ? O_DIRECTORY : 0), nofollow);
      if (fd < 0 && errno == ENOENT)
        {
          char *name = strrchr (p, '/');
          cleanup_close int parent = -1;
          if (name)
            {
              *name = '\0';
              parent = open_in_root_as (rootfd, p, O_PATH | O_DIRECTORY, nofollow);
              *name++ = '/';
            }
          else
            {
              name = p;
              parent = open_in_root_as (rootfd, ".", O_PATH | O_DIRECTORY, nofollow);
            }
          if (parent < 0)
            return hv_error_set (err, errno, "resolve parent of \"%s\" in rootfs", p);
          if (want_dir)
            {
              if (mkdirat (parent, name, mode) < 0 && errno != EEXIST)
                return hv_error_set (err, errno, "mkdir \"%s\" in rootfs", p);
            }
          else
            {
              int f = openat (parent, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
              if (f < 0 && errno != EEXIST)
                return hv_error_set (err, errno, "create \"%s\" in rootfs", p);
              if (f >= 0)
                close (f);
            }
          fd = open_in_root_as (rootfd, p, O_PATH | (want_dir ? O_DIRECTORY : 0), nofollow);
        }
      if (fd < 0 && nofollow && errno == ELOOP)
        return hv_error_set (err, errno, "\"%s\" in rootfs crosses a symbolic link", p);
      if (fd < 0)
        return hv_error_set (err, errno, "resolve \"%s\" in rootfs", p);
      if (last)
        return fd;
      close (fd);
      *slash = '/';
      cur = slash + 1;
    }
}

int
hv_create_in_root (int rootfd, const char *path, bool is_dir, mode_t mode, hv_error **err)
{
  return create_in_root (rootfd, path, is_dir, mode, false, err);
}

int
hv_create_in_root_nofollow (int rootfd, const char *path, bool is_dir, mode_t mode, hv_error **err)
{
  return create_in_root (rootfd, path, is_dir, mode, true, err);
}

int
hv_open_parent_in_root (int rootfd, const char *path, char **basename, hv_error **err)
{
  cleanup_free char *copy = xstrdup (path);
  size_t len = strlen (copy);
  while (len > 1 && copy[len - 1] == '/')
    copy[--len] = '\0';
  char *slash = strrchr (copy, '/');
  if (slash == NULL)
    {
      *basename = xstrdup (copy);
      return hv_create_in_root (rootfd, "/", true, 0755, err);
    }
  *basename = xstrdup (slash + 1);
  *slash = '\0';
  return hv_create_in_root (rootfd, copy[0] ? copy : "/", true, 0755, err);
}

int
hv_mkdirs_beneath (int dirfd, const char *rel, mode_t mode, bool owned, hv_error **err)
{
  int fd = fcntl (dirfd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0)
    return hv_error_set (err, errno, "dup");
  cleanup_free char *copy = xstrdup (rel);
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c; c = strtok_r (NULL, "/", &save))
    {
      /* "." stays where it is; ".." would climb above dirfd, which
       * O_NOFOLLOW does not stop (it is no link): refused, so "beneath"
       * holds whoever wrote rel. */
      if (strcmp (c, ".") == 0)
        continue;
      if (strcmp (c, "..") == 0)
        {
          close (fd);
          return hv_error_set (err, 0, "%s: \"..\" would leave the directory", rel);
        }
      if (mkdirat (fd, c, mode) < 0 && errno != EEXIST)
        {
          close (fd);
          return hv_error_set (err, errno, "create %s", c);
        }
      int next = openat (fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      close (fd);
      if (next < 0)
        return hv_error_set (err, errno, "open %s (a link or not a directory?)", c);
      struct stat st;
      if (owned && (fstat (next, &st) < 0 || st.st_uid != geteuid ()))
        {
          close (next);
          return hv_error_set (err, 0, "%s is not owned by uid %u", c, (unsigned) geteuid ());
        }
      fd = next;
    }
  return fd;
}

int
hv_relative_path_check (const char *p, size_t len, const char *what, hv_error **err)
{
  if (len == 0)
    return hv_error_set (err, 0, "%s: empty", what);
  if (memchr (p, '\0', len))
    return hv_error_set (err, 0, "%s: holds a NUL byte", what);
  if (len > HV_RELATIVE_PATH_MAX)
    return hv_error_set (err, 0, "%s: longer than %d bytes", what, HV_RELATIVE_PATH_MAX);
  if (p[0] == '/')
    return hv_error_set (err, 0, "%s: not relative (it starts with '/')", what);
  for (size_t at = 0; at <= len;)
    {
      const char *slash = memchr (p + at, '/', len - at);
      size_t end = slash ? (size_t) (slash - p) : len, clen = end - at;
      if (clen == 0)
        return hv_error_set (err, 0, "%s: an empty component (\"//\" or a '/' at the end)", what);
      if ((clen == 1 && p[at] == '.') || (clen == 2 && p[at] == '.' && p[at + 1] == '.'))
        return hv_error_set (err, 0, "%s: a \"%.*s\" component", what, (int) clen, p + at);
      if (clen > HV_RELATIVE_NAME_MAX)
        return hv_error_set (err, 0, "%s: a component longer than %d bytes", what, HV_RELATIVE_NAME_MAX);
      at = end + 1;
    }
  return 0;
}
