/* hv_trail_verify (trail_chain.h): a walk over a trail file that checks
 * each line's place in the chain against the line before it. */
#include "config.h"
#include "trail_chain.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "utils.h"

static const char zero_hash[HV_SHA256_HEX_SIZE] = "0000000000000000000000000000000000000000000000000000000000000000";

struct walk
{
  struct hv_trail_verdict *v;
  bool have_prev;            /* a line came before this one */
  bool prev_chained;         /* ... and it was chained */
  uint64_t prev_seq;         /* its seq */
  char prev_hash[HV_SHA256_HEX_SIZE];
};

static void __attribute__ ((format (printf, 3, 4)))
problem (struct walk *w, uint64_t line, const char *fmt, ...)
{
  w->v->ok = false;
  w->v->line = line;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (w->v->problem, sizeof (w->v->problem), fmt, ap);
  va_end (ap);
}

/* One line, n its number; false once a problem is found. */
static bool
check_line (struct walk *w, const char *line, size_t len, bool complete)
{
  struct hv_trail_verdict *v = w->v;
  uint64_t n = ++v->lines;
  char hash[HV_SHA256_HEX_SIZE];
  hv_sha256_hex (line, len, hash);
  struct hv_trail_link link;
  if (complete)
    hv_trail_link_parse (line, len, &link);
  else
    link.kind = HV_TRAIL_NOT_JSON;
  bool chain_started = v->chained > 0;
  if (!complete && chain_started)
    {
      problem (w, n, "truncated: the last line has no newline (a record cut short)");
      return false;
    }
  if (link.kind != HV_TRAIL_CHAINED && !chain_started)
    {
      /* Before the first chained record (an older haven's, or a line cut
       * short before it): counted, not checked. */
      v->before_chain++;
    }
  else if (link.kind == HV_TRAIL_NOT_JSON)
    {
      problem (w, n, "not a JSON record (a record cut short, or a line written by something else)");
      return false;
    }
  else if (link.kind == HV_TRAIL_UNCHAINED)
    {
      problem (w, n, "not chained (no seq and prev) after chained records: inserted, or written by an older haven");
      return false;
    }
  else if (link.kind == HV_TRAIL_BAD_LINK)
    {
      problem (w, n, "its seq or prev is missing or malformed");
      return false;
    }
  else
    {
      if (link.seq == 1)
        {
          /* A chain starts: at the file's start, or after a line that is
           * not chained (the lines before the first chained record). */
          if (w->have_prev && w->prev_chained)
            {
              problem (w, n, "seq 1 after seq %" PRIu64 ": the chain restarts (lines removed or inserted)", w->prev_seq);
              return false;
            }
          const char *want = w->have_prev ? w->prev_hash : zero_hash;
          if (strcmp (link.prev, want) != 0)
            {
              if (w->have_prev)
                problem (w, n - 1, "changed: its SHA-256 is not line %" PRIu64 "'s prev", n);
              else
                problem (w, n, "the first line's prev is not zeros: lines before it were removed");
              return false;
            }
        }
      else if (!w->have_prev || !w->prev_chained)
        {
          problem (w, n, "seq %" PRIu64 " where the chain starts (1 expected): lines before it were removed", link.seq);
          return false;
        }
      else if (link.seq != w->prev_seq + 1)
        {
          if (link.seq > w->prev_seq + 1)
            problem (w, n, "seq %" PRIu64 " after seq %" PRIu64 ": %" PRIu64 " record%s missing before this line",
                     link.seq, w->prev_seq, link.seq - w->prev_seq - 1, link.seq - w->prev_seq - 1 == 1 ? "" : "s");
          else
            problem (w, n, "seq %" PRIu64 " after seq %" PRIu64 ": a record repeated or inserted", link.seq,
                     w->prev_seq);
          return false;
        }
      else if (strcmp (link.prev, w->prev_hash) != 0)
        {
          problem (w, n - 1, "changed: its SHA-256 is not line %" PRIu64 "'s prev", n);
          return false;
        }
      if (v->chained == 0)
        {
          v->first_seq = link.seq;
          snprintf (v->first_time, sizeof (v->first_time), "%s", link.time);
        }
      v->chained++;
      v->last_seq = link.seq;
      snprintf (v->last_time, sizeof (v->last_time), "%s", link.time);
    }
  w->have_prev = true;
  w->prev_chained = link.kind == HV_TRAIL_CHAINED;
  w->prev_seq = link.seq;
  memcpy (w->prev_hash, hash, sizeof (hash));
  memcpy (v->head, hash, sizeof (hash));
  return true;
}

int
hv_trail_verify (int fd, struct hv_trail_verdict *v)
{
  memset (v, 0, sizeof (*v));
  v->ok = true;
  struct walk w = { .v = v };
  while (flock (fd, LOCK_SH) < 0)
    if (errno != EINTR)
      break; /* not lockable (a pipe): read as it is */
  /* A line at a time from a buffer that grows to the longest line:
   * buf[start, have) is read and not yet checked. */
  size_t cap = 1 << 16, have = 0, start = 0;
  char *buf = xmalloc0 (cap);
  bool eof = false;
  int r = 0;
  while (v->ok)
    {
      char *nl = memchr (buf + start, '\n', have - start);
      if (nl)
        {
          size_t len = (size_t) (nl - (buf + start));
          if (!check_line (&w, buf + start, len, true))
            break;
          start += len + 1;
          continue;
        }
      if (eof)
        {
          if (have > start)
            check_line (&w, buf + start, have - start, false);
          break;
        }
      if (have - start > HV_TRAIL_MAX_LINE)
        {
          problem (&w, v->lines + 1, "longer than %d bytes: not a record haven writes", HV_TRAIL_MAX_LINE);
          break;
        }
      memmove (buf, buf + start, have - start);
      have -= start;
      start = 0;
      if (have == cap)
        {
          cap *= 2;
          buf = xrealloc (buf, cap);
        }
      ssize_t n = read (fd, buf + have, cap - have);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          r = -1;
          break;
        }
      eof = n == 0;
      have += (size_t) n;
    }
  int saved = errno;
  flock (fd, LOCK_UN);
  free (buf);
  errno = saved;
  return r;
}
