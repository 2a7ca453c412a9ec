/* Unit tests of the egress table's pure logic (egress_ranges.c): CIDR and
 * port parsing, and the normalisation of allowed CIDRs with port ranges
 * into disjoint set elements, checked point by point against the rules
 * on random inputs; and the ownership of the descriptors create hands to
 * the monitor (egress_fds.c). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "array_size.h"
#include "egress_fds.h"
#include "egress_ranges.h"

static void
expect_error (int rc, hv_error **err, const char *expected)
{
  assert_int_equal (rc, -1);
  assert_non_null (*err);
  if (strcmp ((*err)->msg, expected) != 0)
    fail_msg ("expected \"%s\"\n          got \"%s\"", expected, (*err)->msg);
  hv_error_free (err);
}

static hv_egress_cidr
cidr (const char *text, uint16_t pmin, uint16_t pmax)
{
  hv_egress_cidr c;
  hv_error *err = NULL;
  if (hv_egress_cidr_parse (text, &c, &err) < 0)
    fail_msg ("%s", err->msg);
  c.port_min = pmin;
  c.port_max = pmax;
  return c;
}

static void
test_cidr_parse (void **state)
{
  (void) state;
  hv_egress_cidr c;
  hv_error *err = NULL;
  assert_int_equal (hv_egress_cidr_parse ("192.0.2.0/24", &c, &err), 0);
  assert_int_equal (c.family, AF_INET);
  assert_int_equal (c.prefix_len, 24);
  assert_memory_equal (c.addr, ((uint8_t[]){ 192, 0, 2, 0 }), 4);
  assert_int_equal (c.port_min, 0);
  assert_int_equal (c.port_max, 65535);
  assert_int_equal (hv_egress_cidr_parse ("2001:db8::/32", &c, &err), 0);
  assert_int_equal (c.family, AF_INET6);
  assert_int_equal (c.prefix_len, 32);
  assert_int_equal (hv_egress_cidr_parse ("203.0.113.7", &c, &err), 0);
  assert_int_equal (c.prefix_len, 32);
  assert_int_equal (hv_egress_cidr_parse ("::1", &c, &err), 0);
  assert_int_equal (c.prefix_len, 128);
  assert_int_equal (hv_egress_cidr_parse ("0.0.0.0/0", &c, &err), 0);
  assert_int_equal (c.prefix_len, 0);

  expect_error (hv_egress_cidr_parse ("10.0.0.1/8", &c, &err), &err,
                "\"10.0.0.1/8\": address has bits set beyond the /8 prefix");
  expect_error (hv_egress_cidr_parse ("10.0.0.0/33", &c, &err), &err,
                "\"10.0.0.0/33\": prefix length must be a number from 0 to 32");
  expect_error (hv_egress_cidr_parse ("10.0.0.0/", &c, &err), &err,
                "\"10.0.0.0/\": prefix length must be a number from 0 to 32");
  expect_error (hv_egress_cidr_parse ("10.0.0.0/+8", &c, &err), &err,
                "\"10.0.0.0/+8\": prefix length must be a number from 0 to 32");
  expect_error (hv_egress_cidr_parse ("example.com", &c, &err), &err,
                "\"example.com\" is not an IPv4 or IPv6 address or CIDR");
  expect_error (hv_egress_cidr_parse ("2001:db8::1/32", &c, &err), &err,
                "\"2001:db8::1/32\": address has bits set beyond the /32 prefix");
}

static void
test_ports_parse (void **state)
{
  (void) state;
  uint16_t lo, hi;
  hv_error *err = NULL;
  assert_int_equal (hv_egress_ports_parse ("any", &lo, &hi, &err), 0);
  assert_int_equal (lo, 0);
  assert_int_equal (hi, 65535);
  assert_int_equal (hv_egress_ports_parse ("443", &lo, &hi, &err), 0);
  assert_int_equal (lo, 443);
  assert_int_equal (hi, 443);
  assert_int_equal (hv_egress_ports_parse ("1000-2000", &lo, &hi, &err), 0);
  assert_int_equal (lo, 1000);
  assert_int_equal (hi, 2000);
  assert_int_equal (hv_egress_ports_parse ("65535", &lo, &hi, &err), 0);
  const char *msg = "a port is a number from 1 to 65535 (or a range LOW-HIGH, or any)";
  char want[128];
  const char *bad[] = { "0", "65536", "", "-5", "5-", "x", "1-0", "99999" };
  for (size_t i = 0; i < sizeof (bad) / sizeof (*bad); i++)
    {
      snprintf (want, sizeof (want), "\"%s\": %s", bad[i], msg);
      expect_error (hv_egress_ports_parse (bad[i], &lo, &hi, &err), &err, want);
    }
  expect_error (hv_egress_ports_parse ("2000-1000", &lo, &hi, &err), &err,
                "\"2000-1000\": port range is empty (LOW is above HIGH)");
}

static void
test_check_struct (void **state)
{
  (void) state;
  hv_error *err = NULL;
  hv_egress_cidr c = cidr ("192.0.2.0/24", 10, 5);
  expect_error (hv_egress_cidr_check (&c, &err), &err, "port range 10-5 is empty");
  c = cidr ("192.0.2.0/24", 1, 5);
  c.prefix_len = 33;
  expect_error (hv_egress_cidr_check (&c, &err), &err, "prefix length /33 is longer than the address (32 bits)");
  c = cidr ("192.0.2.0/24", 1, 5);
  c.addr[3] = 1;
  expect_error (hv_egress_cidr_check (&c, &err), &err, "address has bits set beyond the /24 prefix");
  c.family = 99;
  expect_error (hv_egress_cidr_check (&c, &err), &err, "address family 99 is neither IPv4 nor IPv6");
}

static char *
texts (int family, const hv_egress_range *r, size_t n)
{
  static char buf[4096];
  buf[0] = '\0';
  for (size_t i = 0; i < n; i++)
    {
      char *t = hv_egress_range_text (family, &r[i]);
      strncat (buf, t, sizeof (buf) - strlen (buf) - 2);
      strcat (buf, ";");
      free (t);
    }
  return buf;
}

static void
expect_ranges (const hv_egress_cidr *c, size_t n, int family, const char *want)
{
  hv_egress_range *r = NULL;
  size_t nr = 0;
  hv_error *err = NULL;
  if (hv_egress_ranges_build (c, n, family, &r, &nr, &err) < 0)
    fail_msg ("%s", err->msg);
  const char *got = texts (family, r, nr);
  if (strcmp (got, want) != 0)
    fail_msg ("expected %s\n          got %s", want, got);
  free (r);
}

static void
test_ranges_examples (void **state)
{
  (void) state;
  /* Overlapping and adjacent CIDRs with the same ports merge. */
  hv_egress_cidr a[] = { cidr ("192.0.2.0/25", 0, 65535), cidr ("192.0.2.128/25", 0, 65535),
                         cidr ("192.0.2.7", 0, 65535) };
  expect_ranges (a, 3, AF_INET, "192.0.2.0-192.0.2.255 . 0-65535;");
  /* A host inside a CIDR on a port the CIDR lacks: disjoint pieces. */
  hv_egress_cidr b[] = { cidr ("192.0.2.0/24", 443, 443), cidr ("192.0.2.9", 22, 22) };
  expect_ranges (b, 2, AF_INET, "192.0.2.9 . 22;192.0.2.0-192.0.2.255 . 443;");
  /* Port ranges that overlap on the same address join. */
  hv_egress_cidr c[] = { cidr ("198.51.100.1", 1000, 2000), cidr ("198.51.100.1", 1500, 3000) };
  expect_ranges (c, 2, AF_INET, "198.51.100.1 . 1000-3000;");
  /* Everything, both families, each built alone; the other ignored. */
  hv_egress_cidr d[] = { cidr ("0.0.0.0/0", 0, 65535), cidr ("::/0", 0, 65535), cidr ("10.0.0.0/8", 22, 22) };
  expect_ranges (d, 3, AF_INET, "0.0.0.0-255.255.255.255 . 0-65535;");
  expect_ranges (d, 3, AF_INET6, "::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff . 0-65535;");
  /* Nothing of a family: no elements. */
  hv_egress_cidr e[] = { cidr ("2001:db8::/32", 443, 443) };
  expect_ranges (e, 1, AF_INET, "");
  expect_ranges (e, 1, AF_INET6, "2001:db8::-2001:db8:ffff:ffff:ffff:ffff:ffff:ffff . 443;");
  /* A bad entry names its position. */
  hv_egress_cidr f[] = { cidr ("192.0.2.0/24", 1, 2), cidr ("192.0.2.0/24", 5, 3) };
  hv_egress_range *r = NULL;
  size_t nr;
  hv_error *err = NULL;
  expect_error (hv_egress_ranges_build (f, 2, AF_INET, &r, &nr, &err), &err,
                "allowed destination 2: port range 5-3 is empty");
}

/* Random rules over a small corner of the address and port space; every
 * (address, port) point must be in exactly one element if some rule
 * allows it and in none otherwise, and no two elements may touch with
 * the same ports (they would have been merged). */
static void
test_ranges_random (void **state)
{
  (void) state;
  srand (12345);
  for (int round = 0; round < 300; round++)
    {
      hv_egress_cidr rules[6];
      size_t n = 1 + (size_t) (rand () % 6);
      for (size_t i = 0; i < n; i++)
        {
          unsigned prefix = 28 + (unsigned) (rand () % 5); /* /28../32 in 10.0.0.0/27 */
          uint32_t host = (uint32_t) (rand () % 32);
          uint32_t mask = prefix == 0 ? 0 : 0xffffffffu << (32 - prefix);
          uint32_t a = (0x0a000000u | host) & mask;
          memset (&rules[i], 0, sizeof (rules[i]));
          rules[i].family = AF_INET;
          rules[i].prefix_len = prefix;
          uint32_t be = htonl (a);
          memcpy (rules[i].addr, &be, 4);
          uint16_t p1 = (uint16_t) (1 + rand () % 20), p2 = (uint16_t) (1 + rand () % 20);
          rules[i].port_min = p1 < p2 ? p1 : p2;
          rules[i].port_max = p1 < p2 ? p2 : p1;
        }
      hv_egress_range *r = NULL;
      size_t nr = 0;
      hv_error *err = NULL;
      if (hv_egress_ranges_build (rules, n, AF_INET, &r, &nr, &err) < 0)
        fail_msg ("%s", err->msg);
      for (uint32_t host = 0; host < 40; host++)
        for (uint16_t port = 0; port < 24; port++)
          {
            uint32_t a = 0x0a000000u | host;
            int want = 0, got = 0;
            for (size_t i = 0; i < n; i++)
              {
                uint32_t net;
                memcpy (&net, rules[i].addr, 4);
                uint32_t mask = 0xffffffffu << (32 - rules[i].prefix_len);
                if ((a & mask) == ntohl (net) && port >= rules[i].port_min && port <= rules[i].port_max)
                  want = 1;
              }
            for (size_t j = 0; j < nr; j++)
              {
                uint32_t lo, hi;
                memcpy (&lo, r[j].lo, 4);
                memcpy (&hi, r[j].hi, 4);
                if (a >= ntohl (lo) && a <= ntohl (hi) && port >= r[j].port_lo && port <= r[j].port_hi)
                  got++;
              }
            if (got != want)
              fail_msg ("round %d: 10.0.0.%u port %u: in %d elements, allowed %d", round, host, port, got, want);
          }
      for (size_t j = 0; j < nr; j++)
        for (size_t k = 0; k < nr; k++)
          {
            uint32_t hj, lk;
            memcpy (&hj, r[j].hi, 4);
            memcpy (&lk, r[k].lo, 4);
            if (j != k && r[j].port_lo == r[k].port_lo && r[j].port_hi == r[k].port_hi && ntohl (hj) + 1 == ntohl (lk))
              fail_msg ("round %d: elements %zu and %zu touch and were not merged", round, j, k);
          }
      free (r);
    }
}

static bool
fd_open (int fd)
{
  return fcntl (fd, F_GETFD) >= 0 || errno != EBADF;
}

/* Take moves one descriptor out (the set no longer closes it); close
 * closes every other one the set still holds, once, leaving -1; the
 * names reach every socket slot. */
static void
test_egress_fds_take_close (void **state)
{
  (void) state;
  struct hv_egress_fds f = HV_EGRESS_FDS_INIT;
  int opened[1 + HV_EGRESS_N_SOCKETS];
  for (size_t i = 0; i < N_ELEMENTS (opened); i++)
    assert_true ((opened[i] = open ("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0);
  f.netns = opened[0];
  for (unsigned i = 0; i < HV_EGRESS_N_SOCKETS; i++)
    {
      assert_int_equal (*hv_egress_fds_socket (&f, i), -1);
      *hv_egress_fds_socket (&f, i) = opened[1 + i];
    }
  assert_int_equal (f.nflog, opened[HV_EGRESS_N_SOCKETS - 2]);
  assert_string_equal (hv_egress_socket_names[HV_EGRESS_N_SOCKETS - 3], "nflog");
  /* The forwarder's listeners last (egress_forward.h). */
  assert_int_equal (f.fwd6, opened[HV_EGRESS_N_SOCKETS]);
  assert_string_equal (hv_egress_socket_names[HV_EGRESS_N_SOCKETS - 1], "fwd6");
  assert_null (hv_egress_fds_socket (&f, HV_EGRESS_N_SOCKETS));
  int taken = hv_egress_fd_take (&f.tcp4);
  assert_int_equal (taken, opened[2]);
  assert_int_equal (f.tcp4, -1);
  hv_egress_fds_close (&f);
  for (size_t i = 0; i < N_ELEMENTS (opened); i++)
    assert_true (fd_open (opened[i]) == (opened[i] == taken));
  assert_int_equal (f.netns, -1);
  for (unsigned i = 0; i < HV_EGRESS_N_SOCKETS; i++)
    assert_int_equal (*hv_egress_fds_socket (&f, i), -1);
  hv_egress_fds_close (&f); /* nothing left: closes nothing */
  assert_true (fd_open (taken));
  close (taken);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_egress_fds_take_close),
    cmocka_unit_test (test_cidr_parse),     cmocka_unit_test (test_ports_parse),
    cmocka_unit_test (test_check_struct),   cmocka_unit_test (test_ranges_examples),
    cmocka_unit_test (test_ranges_random),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
