/* The run's denials for `haven why`: denial_view.h. */
#include "config.h"
#include "denial_view.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

struct hv_denial_view
{
  int dir_fd;
};

hv_denial_view *
hv_denial_view_open (const char *dir)
{
  if (dir == NULL)
    return NULL;
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  /* The run's own directory (the session made it): ours, and nobody
   * else's to write. */
  struct stat st;
  if (fstat (fd, &st) < 0 || st.st_uid != geteuid () || (st.st_mode & 022))
    {
      close (fd);
      return NULL;
    }
  hv_denial_view *v = xmalloc0 (sizeof (*v));
  v->dir_fd = fd;
  return v;
}

void
hv_denial_view_free (hv_denial_view *v)
{
  if (v == NULL)
    return;
  close (v->dir_fd);
  free (v);
}

/* The file past its bound: its last lines, at most half the bound, into
 * a new file renamed over it. */
static void
compact (hv_denial_view *v, int fd, off_t size)
{
  size_t n = (size_t) size;
  cleanup_free char *buf = xmalloc0 (n + 1);
  ssize_t got = pread (fd, buf, n, 0);
  if (got <= 0)
    return;
  n = (size_t) got;
  /* From the end: HV_DENIAL_VIEW_KEEP whole lines within the budget. */
  size_t start = n, lines = 0;
  while (start > 0 && lines < HV_DENIAL_VIEW_KEEP)
    {
      size_t s = start - 1; /* the newline ending the line before */
      while (s > 0 && buf[s - 1] != '\n')
        s--;
      if (n - s > HV_DENIAL_VIEW_MAX_BYTES / 2)
        break;
      start = s;
      lines++;
    }
  cleanup_close int tmp
      = openat (v->dir_fd, "." HV_WHY_FILE ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (tmp < 0)
    return;
  fchmod (tmp, 0644);
  if (write_all (tmp, buf + start, n - start) == 0)
    renameat (v->dir_fd, "." HV_WHY_FILE ".tmp", v->dir_fd, HV_WHY_FILE);
  else
    unlinkat (v->dir_fd, "." HV_WHY_FILE ".tmp", 0);
}

void
hv_denial_view_add (hv_denial_view *v, const char *line, size_t len)
{
  if (v == NULL || len == 0 || len > HV_DENIAL_VIEW_LINE_MAX)
    return;
  cleanup_free char *text = xmalloc0 (len + 2);
  memcpy (text, line, len);
  text[len] = '\n';
  /* The listener and the monitor are two processes writing one file. */
  if (flock (v->dir_fd, LOCK_EX) < 0)
    return;
  int fd = openat (v->dir_fd, HV_WHY_FILE, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0)
    {
      struct stat st;
      if (write_all (fd, text, len + 1) == 0 && fstat (fd, &st) == 0 && st.st_size > HV_DENIAL_VIEW_MAX_BYTES)
        {
          int rfd = openat (v->dir_fd, HV_WHY_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
          if (rfd >= 0)
            {
              compact (v, rfd, st.st_size);
              close (rfd);
            }
        }
      close (fd);
    }
  flock (v->dir_fd, LOCK_UN);
}

void
hv_audit_denial_emit (struct hv_audit_trail *t, yajl_gen g)
{
  if (t->view)
    {
      /* The record so far, closed here as emit closes it. */
      const unsigned char *buf;
      size_t len;
      if (yajl_gen_get_buf (g, &buf, &len) == yajl_gen_status_ok && len > 0)
        {
          cleanup_free char *line = xmalloc0 (len + 2);
          memcpy (line, buf, len);
          line[len] = '}';
          hv_denial_view_add (t->view, line, len + 1);
        }
    }
  hv_audit_trail_emit (t, g);
}
