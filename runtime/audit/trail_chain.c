#include "config.h"
#include "trail_chain.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "json_gen.h"
#include "utils.h"

static const char zero_hash[HV_SHA256_HEX_SIZE] = "0000000000000000000000000000000000000000000000000000000000000000";

static bool
is_hash (const char *s)
{
  if (strlen (s) != HV_SHA256_HEX_SIZE - 1)
    return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
      return false;
  return true;
}

void
hv_trail_link_parse (const char *line, size_t len, struct hv_trail_link *out)
{
  memset (out, 0, sizeof (*out));
  out->kind = HV_TRAIL_NOT_JSON;
  /* yajl reads up to a NUL: a line with one in it is not a record. */
  if (memchr (line, '\0', len) != NULL)
    return;
  cleanup_free char *text = xmalloc0 (len + 1);
  memcpy (text, line, len);
  yajl_val root = yajl_tree_parse (text, NULL, 0);
  if (root == NULL)
    return;
  if (!YAJL_IS_OBJECT (root))
    {
      yajl_tree_free (root);
      return;
    }
  yajl_val seq = NULL, prev = NULL;
  bool seq_twice = false, prev_twice = false;
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *k = root->u.object.keys[i];
      yajl_val v = root->u.object.values[i];
      if (strcmp (k, "seq") == 0)
        {
          seq_twice = seq != NULL;
          seq = v;
        }
      else if (strcmp (k, "prev") == 0)
        {
          prev_twice = prev != NULL;
          prev = v;
        }
      else if (strcmp (k, "time") == 0 && YAJL_IS_STRING (v))
        {
          const char *t = YAJL_GET_STRING (v);
          if (t && strlen (t) < sizeof (out->time))
            strcpy (out->time, t);
        }
    }
  if (seq == NULL && prev == NULL)
    out->kind = HV_TRAIL_UNCHAINED;
  else
    {
      const char *p = prev && YAJL_IS_STRING (prev) ? YAJL_GET_STRING (prev) : NULL;
      out->kind = HV_TRAIL_BAD_LINK;
      if (seq && p && !seq_twice && !prev_twice && YAJL_IS_INTEGER (seq) && YAJL_GET_INTEGER (seq) >= 1 && is_hash (p))
        {
          out->kind = HV_TRAIL_CHAINED;
          out->seq = (uint64_t) YAJL_GET_INTEGER (seq);
          memcpy (out->prev, p, HV_SHA256_HEX_SIZE);
        }
    }
  yajl_tree_free (root);
}

static int
pread_all (int fd, char *buf, size_t len, off_t off)
{
  while (len > 0)
    {
      ssize_t n = pread (fd, buf, len, off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      buf += n;
      len -= (size_t) n;
      off += n;
    }
  return 0;
}

/* Where the next record goes in the chain, from the file's last line
 * (read on rfd, of size bytes): its seq, the hash of that line, and
 * whether the file ends in the middle of a line (*newline: start a new
 * one first).  Reads backwards in growing windows, at most
 * HV_TRAIL_MAX_LINE bytes. */
static void
next_link (int rfd, off_t size, uint64_t *seq, char prev[HV_SHA256_HEX_SIZE], bool *newline)
{
  *seq = 1;
  memcpy (prev, zero_hash, HV_SHA256_HEX_SIZE);
  *newline = false;
  if (size <= 0)
    return;
  char last;
  if (pread_all (rfd, &last, 1, size - 1) < 0)
    {
      /* Unreadable: the chain restarts (seq 1 with a zero prev), which
       * the verifier reports where it is. */
      *newline = true;
      return;
    }
  *newline = last != '\n';
  /* The last line: [start, end). */
  off_t end = *newline ? size : size - 1;
  size_t window = 4096;
  cleanup_free char *buf = NULL;
  for (;;)
    {
      if ((off_t) window > end)
        window = (size_t) end;
      buf = xrealloc (buf, window ? window : 1);
      if (window && pread_all (rfd, buf, window, end - (off_t) window) < 0)
        {
          *newline = true;
          return;
        }
      const char *nl = window ? memrchr (buf, '\n', window) : NULL;
      if (nl || (off_t) window == end || window >= HV_TRAIL_MAX_LINE)
        {
          const char *line = nl ? nl + 1 : buf;
          size_t len = window - (size_t) (line - buf);
          hv_sha256_hex (line, len, prev);
          struct hv_trail_link link;
          /* A line cut short is not chained whatever it holds. */
          if (!*newline)
            hv_trail_link_parse (line, len, &link);
          else
            link.kind = HV_TRAIL_NOT_JSON;
          *seq = link.kind == HV_TRAIL_CHAINED && link.seq < INT64_MAX ? link.seq + 1 : 1;
          return;
        }
      window = window * 4 > HV_TRAIL_MAX_LINE ? HV_TRAIL_MAX_LINE : window * 4;
    }
}

/* The record's text and its newline (and one before it when the file
 * ends in the middle of a line): one write. */
static size_t
write_line (int fd, yajl_gen g, bool newline_first)
{
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (g, &buf, &len);
  size_t total = len + 1 + (newline_first ? 1 : 0);
  cleanup_free char *line = xmalloc0 (total);
  size_t at = 0;
  if (newline_first)
    line[at++] = '\n';
  memcpy (line + at, buf, len);
  line[at + len] = '\n';
  return write_all (fd, line, total) < 0 ? 0 : total;
}

size_t
hv_trail_append (int fd, yajl_gen g)
{
  struct stat st;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      yajl_gen_map_close (g);
      return write_line (fd, g, false);
    }
  /* A description of our own: the lock then excludes every other writer,
   * including those sharing fd's description (fork, dup), whose flock is
   * the same lock as ours; and it reads where fd may be write-only. */
  char self[64];
  snprintf (self, sizeof (self), "/proc/self/fd/%d", fd);
  cleanup_close int rfd = open (self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  int lock_fd = rfd >= 0 ? rfd : fd;
  while (flock (lock_fd, LOCK_EX) < 0 && errno == EINTR)
    ;
  uint64_t seq = 1;
  char prev[HV_SHA256_HEX_SIZE];
  bool newline = false;
  /* Under the lock: the size and the last line are what the write
   * follows (every writer appends, O_APPEND, and only under the lock). */
  if (fstat (fd, &st) == 0)
    next_link (rfd >= 0 ? rfd : fd, st.st_size, &seq, prev, &newline);
  else
    memcpy (prev, zero_hash, sizeof (prev));
  jg_str (g, "seq");
  yajl_gen_integer (g, (long long) seq);
  jg_str (g, "prev");
  jg_str (g, prev);
  yajl_gen_map_close (g);
  size_t n = write_line (fd, g, newline);
  flock (lock_fd, LOCK_UN);
  return n;
}
