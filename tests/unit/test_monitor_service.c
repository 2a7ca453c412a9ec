/* Unit tests of the monitor's service runner
 * (runtime/monitor/monitor_service.c): connections are served each in a
 * thread, one past the cap is closed at once and reported, stop refuses
 * connects from then on and waits for the connections being served, and
 * the audit trail takes records from several threads at once. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "audit_trail.h"
#include "json_gen.h"
#include "monitor_service.h"
#include "utils.h"

struct handler_state
{
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool release;         /* handlers blocked until this */
  unsigned entered;     /* handlers started */
  unsigned finished;    /* handlers done */
  unsigned hold_ms;     /* after release, each handler sleeps this long */
  bool signals_blocked; /* every handler ran with SIGTERM and SIGPIPE blocked */
  atomic_uint refused;
  char last_reason[64];
};

/* Static: should a test fail, its handler threads live on and must not
 * write into a stack frame that is gone. */
static struct handler_state shared_state;

static void
state_init (struct handler_state *h, bool release, unsigned hold_ms)
{
  memset (h, 0, sizeof (*h));
  pthread_mutex_init (&h->lock, NULL);
  pthread_cond_init (&h->cond, NULL);
  h->release = release;
  h->hold_ms = hold_ms;
  h->signals_blocked = true;
}

static void
sleep_ms (unsigned ms)
{
  struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
  nanosleep (&ts, NULL);
}

static void
handler (int conn, void *data)
{
  struct handler_state *h = data;
  sigset_t mask;
  pthread_sigmask (SIG_SETMASK, NULL, &mask);
  pthread_mutex_lock (&h->lock);
  if (!sigismember (&mask, SIGTERM) || !sigismember (&mask, SIGPIPE))
    h->signals_blocked = false;
  h->entered++;
  pthread_cond_broadcast (&h->cond);
  while (!h->release)
    pthread_cond_wait (&h->cond, &h->lock);
  pthread_mutex_unlock (&h->lock);
  sleep_ms (h->hold_ms);
  /* The client checks what arrives (no assert in this thread: cmocka's
   * jump belongs to the test's). */
  ssize_t w = write (conn, "hi", 2);
  (void) w;
  pthread_mutex_lock (&h->lock);
  h->finished++;
  pthread_mutex_unlock (&h->lock);
}

static void
refused (const char *name, const char *reason, void *data)
{
  struct handler_state *h = data;
  assert_string_equal (name, "test");
  pthread_mutex_lock (&h->lock);
  snprintf (h->last_reason, sizeof (h->last_reason), "%s", reason);
  pthread_mutex_unlock (&h->lock);
  atomic_fetch_add (&h->refused, 1);
}

/* A TCP listener on 127.0.0.1, its port in *port. */
static int
listener (uint16_t *port)
{
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true (fd >= 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  assert_int_equal (bind (fd, (struct sockaddr *) &a, sizeof (a)), 0);
  assert_int_equal (listen (fd, 16), 0);
  socklen_t len = sizeof (a);
  assert_int_equal (getsockname (fd, (struct sockaddr *) &a, &len), 0);
  *port = ntohs (a.sin_port);
  return fd;
}

/* A connected socket, or -errno. */
static int
dial (uint16_t port)
{
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true (fd >= 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (port), .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  if (connect (fd, (struct sockaddr *) &a, sizeof (a)) < 0)
    {
      int e = errno;
      close (fd);
      return -e;
    }
  return fd;
}

/* What the server sent until it closed (within 5 s), as a string. */
static void
read_all (int fd, char *buf, size_t size)
{
  size_t n = 0;
  for (;;)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      assert_int_equal (poll (&p, 1, 5000), 1);
      ssize_t r = read (fd, buf + n, size - 1 - n);
      if (r <= 0)
        break;
      n += (size_t) r;
    }
  buf[n] = '\0';
}

static void
wait_entered (struct handler_state *h, unsigned n)
{
  pthread_mutex_lock (&h->lock);
  while (h->entered < n)
    pthread_cond_wait (&h->cond, &h->lock);
  pthread_mutex_unlock (&h->lock);
}

static void
release (struct handler_state *h)
{
  pthread_mutex_lock (&h->lock);
  h->release = true;
  pthread_cond_broadcast (&h->cond);
  pthread_mutex_unlock (&h->lock);
}

static void
test_serves_connections (void **state)
{
  (void) state;
  struct handler_state *h = &shared_state;
  state_init (h, true, 0);
  uint16_t port;
  cleanup_error hv_error *err = NULL;
  hv_monitor_service *s = hv_monitor_service_start ("test", listener (&port), 4, handler, h, &err);
  assert_non_null (s);
  for (int i = 0; i < 10; i++)
    {
      int c = dial (port);
      assert_true (c >= 0);
      char buf[16];
      read_all (c, buf, sizeof (buf));
      assert_string_equal (buf, "hi"); /* then EOF: the runner closed it */
      close (c);
    }
  hv_monitor_service_stop (s);
  assert_int_equal (h->finished, 10);
  assert_true (h->signals_blocked);
}

static void
test_cap_refuses_extra (void **state)
{
  (void) state;
  struct handler_state *h = &shared_state;
  state_init (h, false, 0);
  uint16_t port;
  cleanup_error hv_error *err = NULL;
  hv_monitor_service *s = hv_monitor_service_start_full ("test", listener (&port), 2, handler, refused, h, &err);
  assert_non_null (s);
  int c1 = dial (port), c2 = dial (port);
  assert_true (c1 >= 0 && c2 >= 0);
  wait_entered (h, 2);
  assert_int_equal (hv_monitor_service_active (s), 2);
  /* The third is accepted and closed at once, unserved. */
  int c3 = dial (port);
  assert_true (c3 >= 0);
  char buf[16];
  read_all (c3, buf, sizeof (buf));
  assert_string_equal (buf, "");
  close (c3);
  assert_int_equal (atomic_load (&h->refused), 1);
  assert_string_equal (h->last_reason, "too many connections");
  assert_int_equal (h->entered, 2);
  release (h);
  read_all (c1, buf, sizeof (buf));
  assert_string_equal (buf, "hi");
  read_all (c2, buf, sizeof (buf));
  assert_string_equal (buf, "hi");
  close (c1);
  close (c2);
  /* Room again once they are done. */
  for (int i = 0; i < 100 && hv_monitor_service_active (s) > 0; i++)
    sleep_ms (10);
  int c4 = dial (port);
  assert_true (c4 >= 0);
  read_all (c4, buf, sizeof (buf));
  assert_string_equal (buf, "hi");
  close (c4);
  hv_monitor_service_stop (s);
  assert_int_equal (atomic_load (&h->refused), 1);
}

struct stopper
{
  hv_monitor_service *s;
  atomic_bool done;
};

static void *
stop_thread (void *p)
{
  struct stopper *st = p;
  hv_monitor_service_stop (st->s);
  atomic_store (&st->done, true);
  return NULL;
}

static void
test_stop_refuses_and_waits (void **state)
{
  (void) state;
  struct handler_state *h = &shared_state;
  state_init (h, false, 300);
  uint16_t port;
  cleanup_error hv_error *err = NULL;
  struct stopper st = { NULL, false };
  st.s = hv_monitor_service_start ("test", listener (&port), 4, handler, h, &err);
  assert_non_null (st.s);
  int c = dial (port);
  assert_true (c >= 0);
  wait_entered (h, 1);
  pthread_t t;
  assert_int_equal (pthread_create (&t, NULL, stop_thread, &st), 0);
  /* Connects are refused while stop waits for the connection... */
  int r = 0;
  for (int i = 0; i < 100; i++)
    {
      /* A connect that races the shutdown may be reset instead. */
      r = dial (port);
      if (r == -ECONNREFUSED)
        break;
      if (r >= 0)
        close (r);
      sleep_ms (10);
    }
  assert_int_equal (r, -ECONNREFUSED);
  sleep_ms (100);
  assert_false (atomic_load (&st.done));
  /* ...which is still served to its end, and stop returns after it. */
  release (h);
  char buf[16];
  read_all (c, buf, sizeof (buf));
  assert_string_equal (buf, "hi");
  close (c);
  assert_int_equal (pthread_join (t, NULL), 0);
  assert_true (atomic_load (&st.done));
  /* Every connection a handler took (the probes before the shutdown
   * too) was served to its end before stop returned. */
  assert_true (h->finished >= 1);
  assert_int_equal (h->finished, h->entered);
  assert_int_equal (dial (port), -ECONNREFUSED);
}

static void
test_bad_arguments (void **state)
{
  (void) state;
  uint16_t port;
  cleanup_error hv_error *err = NULL;
  assert_null (hv_monitor_service_start ("test", listener (&port), 0, handler, NULL, &err));
  assert_non_null (err);
  /* The listener was taken and closed. */
  assert_int_equal (dial (port), -ECONNREFUSED);
  hv_monitor_service_stop (NULL);
}

/* Several threads writing records at once into a socket, where a line
 * longer than the socket's buffer goes out in several writes: every line
 * whole, and the size the trail counted is what was read. */
#define WRITERS 4
#define RECORDS 200
#define LINE_FILL 20000

struct trail_writer
{
  struct hv_audit_trail *t;
  char fill[LINE_FILL + 1]; /* one letter, the writer's own */
};

static void *
writer (void *p)
{
  struct trail_writer *w = p;
  for (int i = 0; i < RECORDS; i++)
    {
      yajl_gen g = hv_audit_trail_record (w->t, "api");
      hv_audit_put_kv (g, "path", w->fill);
      hv_audit_trail_emit (w->t, g);
    }
  return NULL;
}

struct trail_reader
{
  int fd;
  char *buf;
  size_t len, size;
};

static void *
reader (void *p)
{
  struct trail_reader *r = p;
  for (;;)
    {
      if (r->size - r->len < 65536)
        {
          r->size = r->size * 2 + 65536;
          r->buf = xrealloc (r->buf, r->size);
        }
      ssize_t n = read (r->fd, r->buf + r->len, r->size - r->len - 1);
      if (n <= 0)
        break;
      r->len += (size_t) n;
    }
  r->buf[r->len] = '\0';
  return NULL;
}

static void
test_trail_from_threads (void **state)
{
  (void) state;
  int sv[2];
  assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  int small = 4096;
  assert_int_equal (setsockopt (sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof (small)), 0);
  struct trail_reader rd = { .fd = sv[1] };
  pthread_t rt;
  assert_int_equal (pthread_create (&rt, NULL, reader, &rd), 0);
  struct hv_audit_trail t;
  hv_audit_trail_init (&t, sv[0], "test", "c1");
  static struct trail_writer w[WRITERS];
  pthread_t th[WRITERS];
  for (int i = 0; i < WRITERS; i++)
    {
      w[i].t = &t;
      memset (w[i].fill, 'a' + i, LINE_FILL);
      w[i].fill[LINE_FILL] = '\0';
      assert_int_equal (pthread_create (&th[i], NULL, writer, &w[i]), 0);
    }
  for (int i = 0; i < WRITERS; i++)
    assert_int_equal (pthread_join (th[i], NULL), 0);
  close (sv[0]);
  assert_int_equal (pthread_join (rt, NULL), 0);
  close (sv[1]);
  assert_int_equal ((uint64_t) rd.len, (uint64_t) t.written);
  int n = 0;
  for (char *line = rd.buf, *end; *line; line = end + 1, n++)
    {
      end = strchr (line, '\n');
      assert_non_null (end);
      *end = '\0';
      assert_int_equal (line[0], '{');
      char *path = strstr (line, "\"path\":\"");
      assert_non_null (path);
      path += strlen ("\"path\":\"");
      assert_int_equal (strspn (path, (char[]) { path[0], '\0' }), LINE_FILL);
      assert_string_equal (path + LINE_FILL, "\"}");
    }
  assert_int_equal (n, WRITERS * RECORDS);
  free (rd.buf);
  hv_audit_trail_release (&t);
}

int
main (void)
{
  /* The test's own connections may see a peer gone. */
  signal (SIGPIPE, SIG_IGN);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_serves_connections),
    cmocka_unit_test (test_cap_refuses_extra),
    cmocka_unit_test (test_stop_refuses_and_waits),
    cmocka_unit_test (test_bad_arguments),
    cmocka_unit_test (test_trail_from_threads),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
