/* Whole-file readers: a file, or what is left of a descriptor, into one
 * NUL-terminated buffer, with a bound on the size. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_read.h"
#include "utils.h"

int
hv_read_fd_max (int fd, size_t size_hint, size_t max, char **out, size_t *len, bool *more)
{
  /* One byte past max tells a descriptor with more from one of exactly
   * max bytes; the buffer never holds more than that. */
  const size_t want = max < SIZE_MAX - 1 ? max + 1 : SIZE_MAX - 1;
  size_t cap = size_hint > 0 ? size_hint + 1 : 4096, n = 0;
  if (cap > want)
    cap = want;
  cleanup_free char *buf = xrealloc (NULL, cap + 1);
  for (;;)
    {
      if (n == cap)
        {
          if (cap == want)
            break;
          cap = cap > want / 2 ? want : cap * 2;
          buf = xrealloc (buf, cap + 1);
        }
      ssize_t r = read (fd, buf + n, cap - n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          int e = errno;
          free (steal_pointer (&buf));
          errno = e;
          return -1;
        }
      if (r == 0)
        break;
      n += (size_t) r;
    }
  if (more)
    *more = n > max;
  else if (n > max)
    {
      free (steal_pointer (&buf));
      errno = EFBIG;
      return -1;
    }
  if (n > max)
    n = max;
  buf[n] = '\0';
  *out = steal_pointer (&buf);
  if (len)
    *len = n;
  return 0;
}

int
hv_read_fd (int fd, const char *name, size_t size_hint, char **out, size_t *len, hv_error **err)
{
  /* Config documents are kilobytes; refuse to buffer without bound. */
  const size_t max = 64u << 20;
  if (hv_read_fd_max (fd, size_hint, max, out, len, NULL) == 0)
    return 0;
  if (errno == EFBIG)
    return hv_error_set (err, 0, "%s: larger than %zu MiB", name, max >> 20);
  return hv_error_set (err, errno, "read %s", name);
}

int
hv_read_regular_fd (int fd, const char *name, size_t max, char **out, size_t *len, hv_error **err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return hv_error_set (err, errno, "stat %s", name);
  /* Not a FIFO or a device: a read of one could block or never end. */
  if (!S_ISREG (st.st_mode))
    return hv_error_set (err, 0, "%s: not a regular file", name);
  if ((uint64_t) st.st_size > max)
    return hv_error_set (err, 0, "%s: larger than %zu bytes", name, max);
  /* Bounded again while reading: it may have grown since the fstat. */
  if (hv_read_fd_max (fd, (size_t) st.st_size, max, out, len, NULL) == 0)
    return 0;
  if (errno == EFBIG)
    return hv_error_set (err, 0, "%s: larger than %zu bytes", name, max);
  return hv_error_set (err, errno, "read %s", name);
}

int
hv_read_file_at (int dirfd, const char *path, char **out, size_t *len, hv_error **err)
{
  cleanup_close int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0)
    return hv_error_set (err, errno, "open %s", path);
  /* procfs and sysfs files report size 0: the reader grows as needed. */
  return hv_read_fd (fd, path, fstat (fd, &st) == 0 && st.st_size > 0 ? (size_t) st.st_size : 0, out, len, err);
}

int
hv_read_file (const char *path, char **out, size_t *len, hv_error **err)
{
  return hv_read_file_at (AT_FDCWD, path, out, len, err);
}

int
read_file_at (int dirfd, const char *path, char **out, hv_error **err)
{
  return hv_read_file_at (dirfd, path, out, NULL, err);
}
