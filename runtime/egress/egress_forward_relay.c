/* The forwarder's relays: one thread per connection (egress_forward.h).
 * A thread, not the monitor's loop: the loop must never wait on a
 * connection, and a connection's own poll keeps its code short. */
#include "config.h"
#include "egress_forward.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "utils.h"

/* A relay thread holds two fds, two pipes and this loop: small. */
#define RELAY_STACK_SIZE (128 * 1024)
/* Bytes moved per splice: one pipe's default capacity, so a
 * connection's buffered data is at most two pipes' worth. */
#define RELAY_CHUNK 65536

struct hv_fwd_relays
{
  pthread_mutex_t lock;
  pthread_cond_t idle; /* active dropped to 0 */
  unsigned active, max;
  int stop_fd; /* eventfd: readable once stop began, wakes every relay */
  pthread_attr_t attr;
};

struct relay
{
  hv_fwd_relays *rs;
  int conn; /* the sandbox's side */
  int out;  /* the destination's */
  struct sockaddr_storage dst;
};

/* One direction: from -> pipe -> to. */
struct way
{
  int from, to;
  int pipe[2];
  size_t buffered;
  bool eof;  /* from said it sends no more */
  bool done; /* passed on to `to` as a half-close */
};

static socklen_t
addr_len (const struct sockaddr_storage *a)
{
  return a->ss_family == AF_INET ? sizeof (struct sockaddr_in) : sizeof (struct sockaddr_in6);
}

/* Closed with a reset: the other side learns at once that the
 * connection failed, not that it ended. */
static void
close_reset (int fd)
{
  if (fd < 0)
    return;
  struct linger l = { .l_onoff = 1, .l_linger = 0 };
  setsockopt (fd, SOL_SOCKET, SO_LINGER, &l, sizeof (l));
  close (fd);
}

/* The connect from our namespace, without blocking past the deadline or
 * a stop.  0: connected. */
static int
connect_out (struct relay *r)
{
  r->out = socket (r->dst.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (r->out < 0)
    return -1;
  if (connect (r->out, (struct sockaddr *) &r->dst, addr_len (&r->dst)) == 0)
    return 0;
  if (errno != EINPROGRESS)
    return -1;
  struct pollfd p[2] = { { .fd = r->out, .events = POLLOUT }, { .fd = r->rs->stop_fd, .events = POLLIN } };
  int n;
  while ((n = poll (p, 2, HV_FWD_CONNECT_MS)) < 0 && errno == EINTR)
    ;
  if (n <= 0 || p[1].revents)
    return -1;
  int soerr = 0;
  socklen_t sl = sizeof (soerr);
  if (getsockopt (r->out, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr != 0)
    return -1;
  return 0;
}

static int
way_init (struct way *w, int from, int to)
{
  w->from = from;
  w->to = to;
  w->buffered = 0;
  w->eof = w->done = false;
  return pipe2 (w->pipe, O_NONBLOCK | O_CLOEXEC);
}

static void
way_close (struct way *w)
{
  close (w->pipe[0]);
  close (w->pipe[1]);
}

/* Move what is ready.  -1: the connection failed (a reset, an error). */
static int
way_step (struct way *w, short from_ev, short to_ev)
{
  if (!w->eof && w->buffered < RELAY_CHUNK && (from_ev & (POLLIN | POLLHUP | POLLERR)))
    {
      ssize_t n = splice (w->from, NULL, w->pipe[1], NULL, RELAY_CHUNK - w->buffered, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0)
        w->buffered += (size_t) n;
      else if (n == 0)
        w->eof = true;
      else if (errno != EAGAIN && errno != EINTR)
        return -1;
    }
  if (w->buffered > 0 && (to_ev & (POLLOUT | POLLERR | POLLHUP)))
    {
      ssize_t n = splice (w->pipe[0], NULL, w->to, NULL, w->buffered, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0)
        w->buffered -= (size_t) n;
      else if (n < 0 && errno != EAGAIN && errno != EINTR)
        return -1;
    }
  /* Everything read was passed on: the end too, as a half-close, so a
   * client that shuts its sending side still gets the whole answer. */
  if (w->eof && w->buffered == 0 && !w->done)
    {
      shutdown (w->to, SHUT_WR);
      w->done = true;
    }
  return 0;
}

/* Relay until both directions ended, one failed, or stop.  0: ended
 * cleanly. */
static int
relay_loop (struct relay *r)
{
  struct way up, down;
  if (way_init (&up, r->conn, r->out) < 0)
    return -1;
  if (way_init (&down, r->out, r->conn) < 0)
    {
      way_close (&up);
      return -1;
    }
  int rc = 0;
  while (!(up.done && down.done))
    {
      struct pollfd p[3] = { { .fd = r->conn }, { .fd = r->out }, { .fd = r->rs->stop_fd, .events = POLLIN } };
      if (!up.eof && up.buffered < RELAY_CHUNK)
        p[0].events |= POLLIN;
      if (down.buffered > 0)
        p[0].events |= POLLOUT;
      if (!down.eof && down.buffered < RELAY_CHUNK)
        p[1].events |= POLLIN;
      if (up.buffered > 0)
        p[1].events |= POLLOUT;
      /* Nothing wanted of a side: not watched at all, or a hang-up there
       * (reported whatever is asked) would wake this loop in a spin while
       * the other side drains. */
      for (int i = 0; i < 2; i++)
        if (p[i].events == 0)
          p[i].fd = -1;
      if (poll (p, 3, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          rc = -1;
          break;
        }
      if (p[2].revents)
        {
          rc = -1;
          break;
        }
      /* A side that is done reading and writing reports POLLHUP without
       * being asked: only act on what is still wanted. */
      if (way_step (&up, up.eof ? 0 : p[0].revents, up.buffered ? p[1].revents : 0) < 0
          || way_step (&down, down.eof ? 0 : p[1].revents, down.buffered ? p[0].revents : 0) < 0)
        {
          rc = -1;
          break;
        }
    }
  way_close (&up);
  way_close (&down);
  return rc;
}

static void
relay_done (hv_fwd_relays *rs)
{
  pthread_mutex_lock (&rs->lock);
  /* The last use of rs by this thread: stop frees it only after it saw
   * active at 0 under the lock. */
  if (--rs->active == 0)
    pthread_cond_broadcast (&rs->idle);
  pthread_mutex_unlock (&rs->lock);
}

static void *
relay_thread (void *p)
{
  struct relay *r = p;
  hv_fwd_relays *rs = r->rs;
  if (connect_out (r) < 0 || relay_loop (r) < 0)
    {
      close_reset (r->conn);
      close_reset (r->out);
    }
  else
    {
      close (r->conn);
      close (r->out);
    }
  free (r);
  relay_done (rs);
  return NULL;
}

hv_fwd_relays *
hv_fwd_relays_new (unsigned max, hv_error **err)
{
  hv_fwd_relays *rs = xmalloc0 (sizeof (*rs));
  rs->max = max;
  rs->stop_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (rs->stop_fd < 0)
    {
      free (rs);
      hv_error_set (err, errno, "forwarder: eventfd");
      return NULL;
    }
  pthread_mutex_init (&rs->lock, NULL);
  pthread_cond_init (&rs->idle, NULL);
  pthread_attr_init (&rs->attr);
  pthread_attr_setdetachstate (&rs->attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize (&rs->attr, RELAY_STACK_SIZE);
  return rs;
}

int
hv_fwd_relay_start (hv_fwd_relays *rs, int conn, const struct sockaddr_storage *dst, hv_error **err)
{
  pthread_mutex_lock (&rs->lock);
  bool full = rs->active >= rs->max;
  if (!full)
    rs->active++;
  pthread_mutex_unlock (&rs->lock);
  if (full)
    {
      close_reset (conn);
      return hv_error_set (err, 0, "forwarder: %u connections already", rs->max);
    }
  struct relay *r = xmalloc0 (sizeof (*r));
  r->rs = rs;
  r->conn = conn;
  r->out = -1;
  r->dst = *dst;
  /* Every signal blocked in the thread: the monitor takes its signals
   * through a signalfd, which sees only signals blocked everywhere, and
   * a write to a closed connection fails with EPIPE instead of killing
   * the monitor. */
  sigset_t all, old;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  pthread_t t;
  int e = pthread_create (&t, &rs->attr, relay_thread, r);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (e != 0)
    {
      free (r);
      close_reset (conn);
      relay_done (rs);
      return hv_error_set (err, e, "forwarder: thread for a connection");
    }
  return 0;
}

unsigned
hv_fwd_relays_active (hv_fwd_relays *rs)
{
  pthread_mutex_lock (&rs->lock);
  unsigned n = rs->active;
  pthread_mutex_unlock (&rs->lock);
  return n;
}

void
hv_fwd_relays_stop (hv_fwd_relays *rs)
{
  if (rs == NULL)
    return;
  uint64_t one = 1;
  if (write (rs->stop_fd, &one, sizeof (one)) < 0)
    {
      /* An eventfd's counter cannot overflow from one write: not expected. */
    }
  pthread_mutex_lock (&rs->lock);
  while (rs->active > 0)
    pthread_cond_wait (&rs->idle, &rs->lock);
  pthread_mutex_unlock (&rs->lock);
  close (rs->stop_fd);
  pthread_attr_destroy (&rs->attr);
  pthread_cond_destroy (&rs->idle);
  pthread_mutex_destroy (&rs->lock);
  free (rs);
}
