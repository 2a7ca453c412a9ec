/* Small helpers shared by the fuzz targets (header only: each target is
 * one program, built by build.sh with clang and by make check with gcc). */
#ifndef HAVEN_FUZZ_UTIL_H
#define HAVEN_FUZZ_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static inline void __attribute__ ((noreturn, format (printf, 1, 2)))
fuzz_fail (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  abort ();
}

/* The input cut at each sep (seplen bytes) into at most max
 * NUL-terminated copies (the last part keeps the rest, separators
 * included), their lengths in lens when not NULL; unused parts are "". */
static inline size_t
fuzz_split_n (const uint8_t *data, size_t size, const char *sep, size_t seplen, char **parts, size_t *lens,
              size_t max)
{
  size_t n = 0;
  const uint8_t *p = data, *end = data + size;
  while (n < max)
    {
      const uint8_t *cut = n + 1 < max ? memmem (p, (size_t) (end - p), sep, seplen) : NULL;
      const uint8_t *stop = cut ? cut : end;
      parts[n] = malloc ((size_t) (stop - p) + 1);
      memcpy (parts[n], p, (size_t) (stop - p));
      parts[n][stop - p] = '\0';
      if (lens)
        lens[n] = (size_t) (stop - p);
      n++;
      if (cut == NULL)
        break;
      p = cut + seplen;
    }
  size_t used = n;
  for (; n < max; n++)
    {
      parts[n] = strdup ("");
      if (lens)
        lens[n] = 0;
    }
  return used;
}

static inline size_t
fuzz_split (const uint8_t *data, size_t size, const char *sep, char **parts, size_t max)
{
  return fuzz_split_n (data, size, sep, strlen (sep), parts, NULL, max);
}

static inline void
fuzz_free_parts (char **parts, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (parts[i]);
}

/* What was written to fd (a memfd), NUL-terminated; *len its length. */
static inline char *
fuzz_read_all (int fd, size_t *len)
{
  off_t end = lseek (fd, 0, SEEK_END);
  if (end < 0)
    fuzz_fail ("lseek: %s", strerror (errno));
  char *text = malloc ((size_t) end + 1);
  if (pread (fd, text, (size_t) end, 0) != end)
    fuzz_fail ("pread: %s", strerror (errno));
  text[end] = '\0';
  *len = (size_t) end;
  return text;
}

/* Write a file whole (the fuzz targets' private temp dirs). */
static inline void
fuzz_write_file (const char *path, const void *data, size_t len)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || (len > 0 && write (fd, data, len) != (ssize_t) len) || close (fd) < 0)
    fuzz_fail ("write %s: %s", path, strerror (errno));
}

/* A private directory for the whole run, removed at exit (one level of
 * files and directories below it, which is all the targets make). */
static char fuzz_tmp[64];

static inline void
fuzz_remove_tree (const char *dir)
{
  DIR *d = opendir (dir);
  if (d == NULL)
    return;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      char *sub;
      if (asprintf (&sub, "%s/%s", dir, e->d_name) < 0)
        continue;
      if (unlinkat (AT_FDCWD, sub, 0) < 0)
        fuzz_remove_tree (sub);
      free (sub);
    }
  closedir (d);
  rmdir (dir);
}

static inline void
fuzz_remove_tmp (void)
{
  if (fuzz_tmp[0])
    fuzz_remove_tree (fuzz_tmp);
}

static inline const char *
fuzz_tmpdir (void)
{
  if (fuzz_tmp[0] == '\0')
    {
      const char *base = getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp";
      snprintf (fuzz_tmp, sizeof (fuzz_tmp), "%.40s/haven-fuzz-XXXXXX", base);
      if (mkdtemp (fuzz_tmp) == NULL)
        fuzz_fail ("mkdtemp: %s", strerror (errno));
      atexit (fuzz_remove_tmp);
    }
  return fuzz_tmp;
}
#endif
