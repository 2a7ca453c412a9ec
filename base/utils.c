#include "config.h"
#include "utils.h"


#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

size_t
read_upto (int fd, char *buf, size_t size)
{
  size_t len = 0;
  while (len < size - 1)
    {
      ssize_t n = read (fd, buf + len, size - 1 - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  buf[len] = '\0';
  return len;
}

int
write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t r = write (fd, p, len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return -1;
      p += r;
      len -= (size_t) r;
    }
  return 0;
}

int
write_file_at (int dirfd, const char *path, const char *data, size_t len, int flags, hv_error **err)
{
  cleanup_close int fd = openat (dirfd, path, O_WRONLY | O_CLOEXEC | flags, 0644);
  if (fd < 0)
    return hv_error_set (err, errno, "open %s", path);
  if (write_all (fd, data, len) < 0)
    return hv_error_set (err, errno, "write %s", path);
  return 0;
}

int
write_file (const char *path, const char *data, hv_error **err)
{
  return write_file_at (AT_FDCWD, path, data, strlen (data), O_CREAT | O_TRUNC, err);
}

/* Readers see the old or the new file, never a partial one.  No fsync:
 * these are runtime state files (state.json, a bundle's config copy) that
 * describe processes which do not survive a reboot, and on a disk-backed
 * /run each fsync cost a run about half a millisecond. */
int
write_file_replace (const char *dir, const char *name, const char *data, size_t len,
                    const struct hv_replace_opts *o, hv_error **err)
{
  cleanup_free char *dst = xasprintf ("%s/%s", dir, name);
  /* mkostemp creates with O_EXCL: a link planted at a fixed temporary
   * name cannot redirect the write, and two writers do not share a file. */
  cleanup_free char *tmp = xasprintf ("%s/.%s.XXXXXX", dir, name);
  cleanup_close int fd = mkostemp (tmp, O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "create a temporary file in %s", dir);
  int e = 0;
  const char *what = "write";
  if (fchmod (fd, o->mode) < 0)
    e = errno, what = "chmod";
  else if (o->set_owner && fchown (fd, o->uid, o->gid) < 0)
    e = errno, what = "chown";
  else if (write_all (fd, data, len) < 0)
    e = errno;
  else if (o->durable && fsync (fd) < 0)
    e = errno, what = "fsync";
  else if (rename (tmp, dst) < 0)
    e = errno, what = "rename";
  if (e)
    {
      unlink (tmp);
      return hv_error_set (err, e, "%s %s", what, strcmp (what, "rename") == 0 ? dst : tmp);
    }
  if (o->durable)
    {
      cleanup_close int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd >= 0)
        fsync (dfd);
    }
  return 0;
}

int
write_file_atomic (const char *dir, const char *name, const char *data, size_t len, hv_error **err)
{
  static const struct hv_replace_opts state = { .mode = 0600 };
  return write_file_replace (dir, name, data, len, &state, err);
}

int
write_pid_file (const char *path, pid_t pid, hv_error **err)
{
  cleanup_free char *abs = NULL;
  if (path[0] != '/')
    {
      char cwd[4096];
      if (getcwd (cwd, sizeof (cwd)) == NULL)
        return hv_error_set (err, errno, "getcwd");
      abs = xasprintf ("%s/%s", cwd, path);
    }
  else
    abs = xstrdup (path);
  char *slash = strrchr (abs, '/');
  *slash = '\0';
  char buf[32];
  int n = snprintf (buf, sizeof (buf), "%d", pid);
  /* Callers poll for the pid file: it must appear complete. */
  return write_file_atomic (abs[0] ? abs : "/", slash + 1, buf, (size_t) n, err);
}

int
mkdir_p (const char *path, mode_t mode, hv_error **err)
{
  cleanup_free char *p = xstrdup (path);
  for (char *s = p + 1; *s; s++)
    if (*s == '/')
      {
        *s = '\0';
        if (mkdir (p, mode) < 0 && errno != EEXIST)
          return hv_error_set (err, errno, "mkdir %s", p);
        *s = '/';
      }
  if (mkdir (p, mode) < 0 && errno != EEXIST)
    return hv_error_set (err, errno, "mkdir %s", p);
  return 0;
}

int
proc_start_time (pid_t pid, unsigned long long *out, char *state_char)
{
  char path[64], buf[1024];
  *out = 0;
  snprintf (path, sizeof (path), "/proc/%d/stat", pid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : -1;
  ssize_t n = read (fd, buf, sizeof (buf) - 1);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* comm may contain spaces and parentheses: parse after the last ')'. */
  char *p = strrchr (buf, ')');
  if (p == NULL)
    return -1;
  p += 2;
  if (state_char)
    *state_char = *p;
  for (int field = 3; field < 22 && p; field++)
    {
      p = strchr (p, ' ');
      if (p)
        p++;
    }
  if (p == NULL)
    return -1;
  *out = strtoull (p, NULL, 10);
  return 0;
}

char *
now_rfc3339 (void)
{
  struct timespec ts;
  struct tm tm;
  char buf[64];
  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  strftime (buf, sizeof (buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return xasprintf ("%s.%09ldZ", buf, ts.tv_nsec);
}

int
cloexec_from (int from)
{
  if (syscall (SYS_close_range, (unsigned) from, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
    return 0;
  /* Older kernels: walk the fd table. */
  for (int fd = from; fd < 65536; fd++)
    {
      int flags = fcntl (fd, F_GETFD);
      if (flags >= 0)
        fcntl (fd, F_SETFD, flags | FD_CLOEXEC);
    }
  return 0;
}

void
hv_default_signals (void)
{
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP)
      signal (s, SIG_DFL);
}

bool
str_has_prefix (const char *s, const char *prefix)
{
  return strncmp (s, prefix, strlen (prefix)) == 0;
}

bool
hv_env_name_valid (const char *s)
{
  if (s == NULL)
    return false;
  /* ASCII by hand: isalpha follows the locale. */
  for (const char *c = s; *c; c++)
    {
      bool letter = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || *c == '_';
      if (!letter && (c == s || *c < '0' || *c > '9'))
        return false;
    }
  return *s != '\0';
}
