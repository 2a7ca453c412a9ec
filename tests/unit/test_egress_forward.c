/* Unit tests of haven's forwarder (runtime/egress/egress_forward.h): the
 * monitor's own check of a destination (loopback and metadata never,
 * deny CIDRs over allow CIDRs and pins, pins per port and until they
 * expire), and the relays over loopback TCP (every byte both ways, each
 * end passed on as a half-close, the cap, stop ending what is held). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "egress_forward.h"

static int
tcp_listener (struct sockaddr_storage *addr)
{
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true (fd >= 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  assert_int_equal (bind (fd, (struct sockaddr *) &a, sizeof (a)), 0);
  assert_int_equal (listen (fd, 8), 0);
  socklen_t len = sizeof (*addr);
  assert_int_equal (getsockname (fd, (struct sockaddr *) addr, &len), 0);
  return fd;
}

static void
v4 (uint8_t out[16], const char *text)
{
  memset (out, 0, 16);
  assert_int_equal (inet_pton (AF_INET, text, out), 1);
}

static hv_egress_cidr
cidr4 (const char *text, unsigned len, uint16_t lo, uint16_t hi)
{
  hv_egress_cidr c = { .family = AF_INET, .prefix_len = len, .port_min = lo, .port_max = hi };
  v4 (c.addr, text);
  return c;
}

static void
test_forward_allows (void **state)
{
  (void) state;
  hv_egress_cidr allow[] = { cidr4 ("198.51.100.0", 24, 443, 443), cidr4 ("169.254.0.0", 16, 1, 65535),
                             cidr4 ("127.0.0.0", 8, 1, 65535) };
  hv_egress_cidr deny[] = { cidr4 ("198.51.100.7", 32, 1, 65535), cidr4 ("203.0.113.9", 32, 1, 65535) };
  hv_egress_config c = { .connect = HV_EGRESS_CONNECT_PASTA, .allow = allow, .n_allow = 3, .deny = deny, .n_deny = 2 };
  struct sockaddr_storage ignored;
  hv_egress_forward_args a = { .config = &c, .listen4 = tcp_listener (&ignored), .listen6 = -1 };
  hv_error *err = NULL;
  hv_egress_forward *f = hv_egress_forward_new (&a, &err);
  assert_non_null (f);
  uint8_t addr[16];
  /* An allow CIDR, on its ports only; deny wins. */
  v4 (addr, "198.51.100.1");
  assert_true (hv_egress_forward_allows (f, AF_INET, addr, 443));
  assert_false (hv_egress_forward_allows (f, AF_INET, addr, 80));
  v4 (addr, "198.51.100.7");
  assert_false (hv_egress_forward_allows (f, AF_INET, addr, 443));
  /* Loopback and metadata never, whatever a CIDR says. */
  v4 (addr, "127.0.0.1");
  assert_false (hv_egress_forward_allows (f, AF_INET, addr, 53));
  v4 (addr, "169.254.169.254");
  assert_false (hv_egress_forward_allows (f, AF_INET, addr, 80));
  /* Nothing pinned yet. */
  v4 (addr, "203.0.113.5");
  assert_false (hv_egress_forward_allows (f, AF_INET, addr, 443));
  hv_egress_pin pins[3] = { { .family = AF_INET, .port = 443, .timeout_ms = 300 },
                            { .family = AF_INET, .port = 443, .timeout_ms = 60000 },
                            { .family = AF_INET, .port = 443, .timeout_ms = 60000 } };
  v4 (pins[0].addr, "203.0.113.5");
  v4 (pins[1].addr, "203.0.113.6");
  v4 (pins[2].addr, "203.0.113.9");
  hv_egress_forward_pinned (f, pins, 3);
  assert_true (hv_egress_forward_allows (f, AF_INET, addr, 443));
  /* Per port, per address, and a deny CIDR over a pin. */
  assert_false (hv_egress_forward_allows (f, AF_INET, addr, 8443));
  v4 (addr, "203.0.113.7");
  assert_false (hv_egress_forward_allows (f, AF_INET, addr, 443));
  v4 (addr, "203.0.113.9");
  assert_false (hv_egress_forward_allows (f, AF_INET, addr, 443));
  /* Until the pin expires. */
  struct timespec t = { .tv_nsec = 400 * 1000000L };
  nanosleep (&t, NULL);
  v4 (addr, "203.0.113.5");
  assert_false (hv_egress_forward_allows (f, AF_INET, addr, 443));
  v4 (addr, "203.0.113.6");
  assert_true (hv_egress_forward_allows (f, AF_INET, addr, 443));
  /* Renewed: the pin again. */
  v4 (addr, "203.0.113.5");
  hv_egress_forward_pinned (f, pins, 1);
  assert_true (hv_egress_forward_allows (f, AF_INET, addr, 443));
  hv_egress_forward_free (f);
}

/* A connection of "the sandbox" (client) accepted on a listener of the
 * test's and handed to a relay towards world; *w the world's end. */
static int
relayed (hv_fwd_relays *rs, int sandbox_listener, const struct sockaddr_storage *sb_addr, int world,
         const struct sockaddr_storage *world_addr, int *w, int *rc)
{
  int client = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_int_equal (connect (client, (const struct sockaddr *) sb_addr, sizeof (struct sockaddr_in)), 0);
  int conn = accept4 (sandbox_listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  assert_true (conn >= 0);
  hv_error *err = NULL;
  *rc = hv_fwd_relay_start (rs, conn, world_addr, &err);
  hv_error_free (&err);
  *w = -1;
  if (*rc == 0)
    {
      *w = accept4 (world, NULL, NULL, SOCK_CLOEXEC);
      assert_true (*w >= 0);
    }
  return client;
}

static size_t
read_all (int fd, uint8_t *buf, size_t max)
{
  /* A relay that loses an end leaves this waiting: bounded, it fails. */
  struct timeval tv = { .tv_sec = 5 };
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof (tv));
  size_t got = 0;
  for (;;)
    {
      ssize_t n = read (fd, buf + got, max - got);
      if (n < 0)
        return SIZE_MAX; /* the timeout: no end came */
      if (n == 0)
        return got;
      got += (size_t) n;
      if (got == max)
        return got;
    }
}

static void
test_forward_relay_half_close (void **state)
{
  (void) state;
  struct sockaddr_storage sb_addr, w_addr;
  int sb = tcp_listener (&sb_addr), world = tcp_listener (&w_addr);
  hv_error *err = NULL;
  hv_fwd_relays *rs = hv_fwd_relays_new (4, &err);
  assert_non_null (rs);
  int w, rc;
  int client = relayed (rs, sb, &sb_addr, world, &w_addr, &w, &rc);
  assert_int_equal (rc, 0);
  enum { N = 200000 };
  uint8_t *up = malloc (N), *got = malloc (N + 1);
  for (size_t i = 0; i < N; i++)
    up[i] = (uint8_t) (i * 7);
  assert_int_equal (write (client, up, N), N);
  /* The client's end reaches the world after every byte... */
  assert_int_equal (shutdown (client, SHUT_WR), 0);
  assert_int_equal (read_all (w, got, N + 1), N);
  assert_memory_equal (got, up, N);
  /* ... and the world's answer comes back after it. */
  assert_int_equal (write (w, "answer", 6), 6);
  close (w);
  assert_int_equal (read_all (client, got, N), 6);
  assert_memory_equal (got, "answer", 6);
  close (client);
  for (int i = 0; i < 100 && hv_fwd_relays_active (rs) > 0; i++)
    usleep (10000);
  assert_int_equal (hv_fwd_relays_active (rs), 0);
  hv_fwd_relays_stop (rs);
  free (up);
  free (got);
  close (sb);
  close (world);
}

static void
test_forward_relay_cap_and_stop (void **state)
{
  (void) state;
  struct sockaddr_storage sb_addr, w_addr;
  int sb = tcp_listener (&sb_addr), world = tcp_listener (&w_addr);
  hv_error *err = NULL;
  hv_fwd_relays *rs = hv_fwd_relays_new (1, &err);
  assert_non_null (rs);
  int w1, w2, rc;
  int c1 = relayed (rs, sb, &sb_addr, world, &w_addr, &w1, &rc);
  assert_int_equal (rc, 0);
  /* The cap: refused, the connection reset at once. */
  int c2 = relayed (rs, sb, &sb_addr, world, &w_addr, &w2, &rc);
  assert_int_equal (rc, -1);
  uint8_t b[8];
  assert_true (read (c2, b, sizeof (b)) <= 0);
  /* Stop ends what is held, both sides, and waits for it. */
  hv_fwd_relays_stop (rs);
  struct pollfd p = { .fd = c1, .events = POLLIN };
  assert_int_equal (poll (&p, 1, 2000), 1);
  assert_true (read (c1, b, sizeof (b)) <= 0);
  p.fd = w1;
  assert_int_equal (poll (&p, 1, 2000), 1);
  assert_true (read (w1, b, sizeof (b)) <= 0);
  close (c1);
  close (c2);
  close (w1);
  close (sb);
  close (world);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_forward_allows),
    cmocka_unit_test (test_forward_relay_half_close),
    cmocka_unit_test (test_forward_relay_cap_and_stop),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
