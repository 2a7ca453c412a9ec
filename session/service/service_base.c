/* The helpers every part of the service uses (service_base.h): the
 * clock, the log, growing buffers, forgetting a freed object's poll
 * slots, and the signals' windows. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>

#include "service_base.h"
#include "utils.h"

uint64_t
svc_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

void
svc_log (struct svc *s, bool verbose_only, const char *fmt, ...)
{
  if (verbose_only && !s->o->verbose)
    return;
  char when[32];
  time_t t = time (NULL);
  struct tm tm;
  strftime (when, sizeof (when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r (&t, &tm));
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *line = xvasprintf (fmt, ap);
  va_end (ap);
  fprintf (stderr, "%s haven serve: %s\n", when, line);
}

void
svc_buf_add (struct svc_buf *b, const void *data, size_t len)
{
  if (len == 0)
    return;
  if (b->len + len > b->cap)
    {
      size_t cap = b->cap ? b->cap : 4096;
      while (cap < b->len + len)
        cap *= 2;
      b->data = xrealloc (b->data, cap);
      b->cap = cap;
    }
  memcpy (b->data + b->len, data, len);
  b->len += len;
}

void
svc_buf_drop (struct svc_buf *b, size_t n)
{
  if (n >= b->len)
    {
      b->len = 0;
      return;
    }
  memmove (b->data, b->data + n, b->len - n);
  b->len -= n;
}

void
svc_buf_free (struct svc_buf *b)
{
  free (b->data);
  *b = (struct svc_buf){ 0 };
}

void
svc_forget (struct svc *s, void *ptr)
{
  for (size_t i = 0; i < s->n_slots; i++)
    if (s->slots[i].ptr == ptr)
      s->slots[i].ptr = NULL;
}

/* --- signals ---------------------------------------------------------- */

static volatile sig_atomic_t stop_flag;

static void
on_stop (int sig)
{
  (void) sig;
  stop_flag = 1;
}

static void
signal_set (sigset_t *set)
{
  sigemptyset (set);
  sigaddset (set, SIGCHLD);
  sigaddset (set, SIGTERM);
  sigaddset (set, SIGINT);
}

void
svc_signals_open (void)
{
  sigset_t set;
  signal_set (&set);
  signal (SIGPIPE, SIG_DFL);
  sigprocmask (SIG_UNBLOCK, &set, NULL);
}

void
svc_signals_close (struct svc *s)
{
  sigset_t set;
  signal_set (&set);
  sigprocmask (SIG_BLOCK, &set, NULL);
  /* Writes to a pipe whose reader left (a command that stopped reading
   * its stdin) fail with EPIPE instead of killing the service. */
  signal (SIGPIPE, SIG_IGN);
  if (stop_flag)
    s->stopping = true;
}

int
svc_signals_init (struct svc *s, hv_error **err)
{
  struct sigaction sa = { .sa_handler = on_stop };
  sigemptyset (&sa.sa_mask);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);
  signal (SIGCHLD, SIG_DFL);
  sigset_t set;
  signal_set (&set);
  sigprocmask (SIG_BLOCK, &set, NULL);
  signal (SIGPIPE, SIG_IGN);
  s->signal_fd = signalfd (-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (s->signal_fd < 0)
    return hv_error_set (err, errno, "signalfd");
  return 0;
}
