/* The monitor's service runner: monitor_service.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "monitor_service.h"
#include "utils.h"

/* A connection thread runs parsers (on the heap), OpenSSL and the
 * resolver: far below this.  Only the pages touched are resident; the
 * bound is on what a flood of connections could reserve. */
#define SERVICE_STACK_SIZE (512 * 1024)
/* After accept fails for want of fds or memory: wait this long before the
 * next try instead of spinning on a listener that stays readable. */
#define ACCEPT_BACKOFF_MS 100

struct hv_monitor_service
{
  char *name;
  int listen_fd;
  int stop_fd; /* an eventfd: stop wakes the accept thread through it */
  unsigned max_conns;
  hv_service_handler fn;
  hv_service_refused refused_fn;
  void *data;
  pthread_t accept_thread;
  pthread_attr_t attr; /* the connection threads': detached, small stack */
  pthread_mutex_t lock;
  pthread_cond_t idle; /* signalled when active drops to 0 */
  unsigned active;     /* connection threads running (under lock) */
  atomic_bool stopping; /* stop has begun: the listener's errors are expected */
};

struct conn_arg
{
  hv_monitor_service *s;
  int conn;
};

static void *
conn_thread (void *p)
{
  struct conn_arg *a = p;
  hv_monitor_service *s = a->s;
  int conn = a->conn;
  free (a);
  s->fn (conn, s->data);
  close (conn);
  pthread_mutex_lock (&s->lock);
  /* The last thing this thread does with s: stop frees it once it sees
   * active at 0, which it can only read after this unlock. */
  if (--s->active == 0)
    pthread_cond_broadcast (&s->idle);
  pthread_mutex_unlock (&s->lock);
  return NULL;
}

static void
refuse (hv_monitor_service *s, int conn, const char *reason)
{
  /* Told before the close: whoever sees the connection end can rely on
   * the refusal being counted. */
  if (s->refused_fn)
    s->refused_fn (s->name, reason, s->data);
  close (conn);
}

static void
serve (hv_monitor_service *s, int conn)
{
  pthread_mutex_lock (&s->lock);
  bool room = s->active < s->max_conns;
  if (room)
    s->active++;
  pthread_mutex_unlock (&s->lock);
  if (!room)
    {
      refuse (s, conn, "too many connections");
      return;
    }
  struct conn_arg *a = xmalloc0 (sizeof (*a));
  a->s = s;
  a->conn = conn;
  pthread_t t;
  int r = pthread_create (&t, &s->attr, conn_thread, a);
  if (r == 0)
    return;
  free (a);
  pthread_mutex_lock (&s->lock);
  if (--s->active == 0)
    pthread_cond_broadcast (&s->idle);
  pthread_mutex_unlock (&s->lock);
  hv_log (HV_LOG_WARNING, "%s: no thread for a connection: %s", s->name, strerror (r));
  refuse (s, conn, "no thread");
}

static void *
accept_thread (void *p)
{
  hv_monitor_service *s = p;
  for (;;)
    {
      struct pollfd fds[2] = { { .fd = s->stop_fd, .events = POLLIN }, { .fd = s->listen_fd, .events = POLLIN } };
      if (poll (fds, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          hv_log (HV_LOG_WARNING, "%s: poll: %s", s->name, strerror (errno));
          return NULL;
        }
      if (fds[0].revents)
        return NULL;
      if (!fds[1].revents)
        continue;
      int conn = accept4 (s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
      if (conn >= 0)
        {
          serve (s, conn);
          continue;
        }
      switch (errno)
        {
        case EAGAIN:
        case EINTR:
        case ECONNABORTED:
        case EPROTO:
          continue;
        case EMFILE:
        case ENFILE:
        case ENOBUFS:
        case ENOMEM:
          if (s->refused_fn)
            s->refused_fn (s->name, "no file descriptor or memory for a connection", s->data);
          poll (fds, 1, ACCEPT_BACKOFF_MS);
          continue;
        default:
          /* The listener is unusable (not one, or shut down): nothing
           * more will be served; the sandbox's connects fail. */
          if (atomic_load (&s->stopping))
            return NULL;
          hv_log (HV_LOG_WARNING, "%s: accept: %s", s->name, strerror (errno));
          return NULL;
        }
    }
}

hv_monitor_service *
hv_monitor_service_start_full (const char *name, int listen_fd, unsigned max_conns, hv_service_handler fn,
                               hv_service_refused refused_fn, void *data, hv_error **err)
{
  cleanup_close int lfd = listen_fd;
  if (max_conns == 0 || fn == NULL)
    {
      hv_error_set (err, 0, "service %s: no connection allowed or no handler", name);
      return NULL;
    }
  /* The accept thread polls first; non-blocking so a connection that went
   * away between poll and accept cannot block it. */
  int fl = fcntl (lfd, F_GETFL);
  if (fl < 0 || fcntl (lfd, F_SETFL, fl | O_NONBLOCK) < 0)
    {
      hv_error_set (err, errno, "service %s: listener", name);
      return NULL;
    }
  cleanup_close int stop_fd = eventfd (0, EFD_CLOEXEC);
  if (stop_fd < 0)
    {
      hv_error_set (err, errno, "service %s: eventfd", name);
      return NULL;
    }
  hv_monitor_service *s = xmalloc0 (sizeof (*s));
  s->name = xstrdup (name);
  s->max_conns = max_conns;
  s->fn = fn;
  s->refused_fn = refused_fn;
  s->data = data;
  pthread_mutex_init (&s->lock, NULL);
  pthread_cond_init (&s->idle, NULL);
  pthread_attr_init (&s->attr);
  pthread_attr_setdetachstate (&s->attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize (&s->attr, SERVICE_STACK_SIZE);
  s->listen_fd = lfd;
  s->stop_fd = stop_fd;

  /* Every thread inherits this mask (monitor_service.h says why). */
  sigset_t all, old;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setstacksize (&attr, SERVICE_STACK_SIZE);
  int r = pthread_create (&s->accept_thread, &attr, accept_thread, s);
  pthread_attr_destroy (&attr);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (r != 0)
    {
      hv_error_set (err, r, "service %s: accept thread", name);
      pthread_attr_destroy (&s->attr);
      pthread_cond_destroy (&s->idle);
      pthread_mutex_destroy (&s->lock);
      free (s->name);
      free (s);
      return NULL;
    }
  lfd = -1;
  stop_fd = -1;
  return s;
}

hv_monitor_service *
hv_monitor_service_start (const char *name, int listen_fd, unsigned max_conns, hv_service_handler fn, void *data,
                          hv_error **err)
{
  return hv_monitor_service_start_full (name, listen_fd, max_conns, fn, NULL, data, err);
}

unsigned
hv_monitor_service_active (hv_monitor_service *s)
{
  pthread_mutex_lock (&s->lock);
  unsigned n = s->active;
  pthread_mutex_unlock (&s->lock);
  return n;
}

void
hv_monitor_service_stop (hv_monitor_service *s)
{
  if (s == NULL)
    return;
  /* Refuse first: a listening TCP socket shut down stops listening, so
   * a connect from now on is refused rather than queued; then no accept
   * thread can hand out another connection. */
  atomic_store (&s->stopping, true);
  shutdown (s->listen_fd, SHUT_RDWR);
  uint64_t one = 1;
  if (write (s->stop_fd, &one, sizeof (one)) < 0)
    hv_log (HV_LOG_WARNING, "%s: wake the accept thread: %s", s->name, strerror (errno));
  pthread_join (s->accept_thread, NULL);
  close (s->listen_fd);
  close (s->stop_fd);
  pthread_mutex_lock (&s->lock);
  while (s->active > 0)
    pthread_cond_wait (&s->idle, &s->lock);
  pthread_mutex_unlock (&s->lock);
  pthread_attr_destroy (&s->attr);
  pthread_cond_destroy (&s->idle);
  pthread_mutex_destroy (&s->lock);
  free (s->name);
  free (s);
}
