/* Unit tests of the egress denials (egress_denials.c, egress_audit.c):
 * nfnetlink_log messages crafted as the kernel sends them (IPv4 and IPv6;
 * TCP, UDP, ICMP, extension headers, fragments; every truncation; other
 * prefixes and message types; random corruption), the limiter with the
 * time given by the test, and the records as JSON. */
#include "config.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include <cmocka.h>

#include "egress_audit.h"
#include "egress_denials.h"
#include "egress_table.h"

/* --- packets and messages ------------------------------------------------ */

struct pkt
{
  uint8_t b[256];
  size_t n;
};

/* An IPv4 header to dst (ihl words, options zero) with protocol proto. */
static void
ipv4 (struct pkt *p, const char *dst, uint8_t proto, unsigned ihl, uint16_t frag)
{
  memset (p, 0, sizeof (*p));
  p->b[0] = (uint8_t) (0x40 | ihl);
  p->b[6] = (uint8_t) (frag >> 8);
  p->b[7] = (uint8_t) frag;
  p->b[8] = 64;
  p->b[9] = proto;
  inet_pton (AF_INET, "192.0.2.2", p->b + 12);
  assert_int_equal (inet_pton (AF_INET, dst, p->b + 16), 1);
  p->n = ihl * 4;
}

static void
ipv6 (struct pkt *p, const char *dst, uint8_t next)
{
  memset (p, 0, sizeof (*p));
  p->b[0] = 0x60;
  p->b[6] = next;
  p->b[7] = 64;
  inet_pton (AF_INET6, "2001:db8:1::2", p->b + 8);
  assert_int_equal (inet_pton (AF_INET6, dst, p->b + 24), 1);
  p->n = 40;
}

/* A transport header: source port 40000, destination port, len bytes. */
static void
l4 (struct pkt *p, uint16_t dport, size_t len)
{
  p->b[p->n] = 40000 >> 8;
  p->b[p->n + 1] = 40000 & 0xff;
  p->b[p->n + 2] = (uint8_t) (dport >> 8);
  p->b[p->n + 3] = (uint8_t) dport;
  p->n += len;
}

/* An IPv6 extension header (8 bytes) announcing next. */
static void
ext6 (struct pkt *p, uint8_t next, uint16_t frag_word)
{
  p->b[p->n] = next;
  p->b[p->n + 2] = (uint8_t) (frag_word >> 8);
  p->b[p->n + 3] = (uint8_t) frag_word;
  p->n += 8;
}

/* The message nfnetlink_log sends for a packet (attributes in the
 * kernel's order); prefix NULL: none. */
static size_t
nflog_msg (uint8_t *buf, size_t size, uint8_t family, const char *prefix, const struct pkt *p)
{
  memset (buf, 0, size);
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET;
  struct nfgenmsg *g = mnl_nlmsg_put_extra_header (nlh, sizeof (*g));
  g->nfgen_family = family;
  g->version = NFNETLINK_V0;
  g->res_id = htons (4207);
  struct nfulnl_msg_packet_hdr ph = { .hw_protocol = htons (family == AF_INET ? 0x0800 : 0x86dd) };
  mnl_attr_put (nlh, NFULA_PACKET_HDR, sizeof (ph), &ph);
  mnl_attr_put_u32 (nlh, NFULA_MARK, 0);
  if (prefix)
    mnl_attr_put_strz (nlh, NFULA_PREFIX, prefix);
  mnl_attr_put_u32 (nlh, NFULA_UID, htonl (1000));
  if (p)
    mnl_attr_put (nlh, NFULA_PAYLOAD, p->n, p->b);
  return nlh->nlmsg_len;
}

static hv_egress_parse_result
parse (uint8_t family, const char *prefix, const struct pkt *p, hv_egress_denial *d)
{
  uint8_t buf[1024];
  size_t n = nflog_msg (buf, sizeof (buf), family, prefix, p);
  return hv_egress_denial_parse ((const struct nlmsghdr *) buf, n, HV_EGRESS_LOG_PREFIX, d);
}

static void
expect_denial (uint8_t family, const struct pkt *p, hv_egress_l4 proto, const char *dst, uint16_t port)
{
  hv_egress_denial d;
  assert_int_equal (parse (family, HV_EGRESS_LOG_PREFIX, p, &d), HV_EGRESS_PARSE_DENIAL);
  assert_int_equal (d.family, family);
  assert_int_equal (d.protocol, proto);
  assert_int_equal (d.port, port);
  char text[INET6_ADDRSTRLEN];
  inet_ntop (family, d.addr, text, sizeof (text));
  assert_string_equal (text, dst);
}

static void
test_parse_ipv4 (void **state)
{
  (void) state;
  struct pkt p;
  ipv4 (&p, "198.51.100.10", IPPROTO_TCP, 5, 0x4000 /* DF */);
  l4 (&p, 81, 20);
  expect_denial (AF_INET, &p, HV_EGRESS_L4_TCP, "198.51.100.10", 81);
  /* With options (ihl 7): the ports are found after them. */
  ipv4 (&p, "203.0.113.20", IPPROTO_UDP, 7, 0);
  memset (p.b + 20, 0x01, 8); /* NOP options */
  l4 (&p, 9999, 8);
  expect_denial (AF_INET, &p, HV_EGRESS_L4_UDP, "203.0.113.20", 9999);
  ipv4 (&p, "198.51.100.10", IPPROTO_ICMP, 5, 0);
  l4 (&p, 0x1234, 8); /* echo request: no port whatever the bytes */
  expect_denial (AF_INET, &p, HV_EGRESS_L4_ICMP, "198.51.100.10", 0);
  /* A non-first fragment has no ports: 0, not the data's bytes. */
  ipv4 (&p, "198.51.100.10", IPPROTO_UDP, 5, 185);
  l4 (&p, 5353, 8);
  expect_denial (AF_INET, &p, HV_EGRESS_L4_UDP, "198.51.100.10", 0);
  /* Another protocol: "other", with its number. */
  ipv4 (&p, "198.51.100.10", IPPROTO_SCTP, 5, 0);
  l4 (&p, 80, 12);
  hv_egress_denial d;
  assert_int_equal (parse (AF_INET, HV_EGRESS_LOG_PREFIX, &p, &d), HV_EGRESS_PARSE_DENIAL);
  assert_int_equal (d.protocol, HV_EGRESS_L4_OTHER);
  assert_int_equal (d.proto_number, IPPROTO_SCTP);
  assert_int_equal (d.port, 0);
  assert_string_equal (hv_egress_l4_name (d.protocol), "other");
  /* ICMPv6's number in an IPv4 packet is not ICMPv6. */
  ipv4 (&p, "198.51.100.10", IPPROTO_ICMPV6, 5, 0);
  l4 (&p, 0, 8);
  assert_int_equal (parse (AF_INET, HV_EGRESS_LOG_PREFIX, &p, &d), HV_EGRESS_PARSE_DENIAL);
  assert_int_equal (d.protocol, HV_EGRESS_L4_OTHER);
}

static void
test_parse_ipv6 (void **state)
{
  (void) state;
  struct pkt p;
  ipv6 (&p, "2001:db8:2::10", IPPROTO_TCP);
  l4 (&p, 444, 20);
  expect_denial (AF_INET6, &p, HV_EGRESS_L4_TCP, "2001:db8:2::10", 444);
  ipv6 (&p, "2001:db8:2::10", IPPROTO_UDP);
  l4 (&p, 9999, 8);
  expect_denial (AF_INET6, &p, HV_EGRESS_L4_UDP, "2001:db8:2::10", 9999);
  ipv6 (&p, "2001:db8:2::20", IPPROTO_ICMPV6);
  l4 (&p, 0x8000, 8);
  expect_denial (AF_INET6, &p, HV_EGRESS_L4_ICMPV6, "2001:db8:2::20", 0);
  /* Hop-by-hop, destination options, then a first fragment: the ports
   * come after all of them. */
  ipv6 (&p, "2001:db8:2::53", IPPROTO_HOPOPTS);
  ext6 (&p, IPPROTO_DSTOPTS, 0);
  ext6 (&p, IPPROTO_FRAGMENT, 0);
  ext6 (&p, IPPROTO_UDP, 0x0001 /* more fragments, offset 0 */);
  l4 (&p, 53, 8);
  expect_denial (AF_INET6, &p, HV_EGRESS_L4_UDP, "2001:db8:2::53", 53);
  /* A later fragment: no ports. */
  ipv6 (&p, "2001:db8:2::53", IPPROTO_FRAGMENT);
  ext6 (&p, IPPROTO_TCP, 0x0100);
  l4 (&p, 443, 20);
  expect_denial (AF_INET6, &p, HV_EGRESS_L4_TCP, "2001:db8:2::53", 0);
  /* An extension header longer than what was copied. */
  ipv6 (&p, "2001:db8:2::53", IPPROTO_DSTOPTS);
  p.b[p.n] = IPPROTO_TCP;
  p.b[p.n + 1] = 200; /* 1608 bytes */
  p.n += 8;
  hv_egress_denial d;
  assert_int_equal (parse (AF_INET6, HV_EGRESS_LOG_PREFIX, &p, &d), HV_EGRESS_PARSE_BAD);
  /* More extension headers than are walked: "other", no crash. */
  ipv6 (&p, "2001:db8:2::53", IPPROTO_DSTOPTS);
  for (int i = 0; i < 12; i++)
    ext6 (&p, IPPROTO_DSTOPTS, 0);
  assert_int_equal (parse (AF_INET6, HV_EGRESS_LOG_PREFIX, &p, &d), HV_EGRESS_PARSE_DENIAL);
  assert_int_equal (d.protocol, HV_EGRESS_L4_OTHER);
}

static void
test_parse_truncated (void **state)
{
  (void) state;
  struct pkt p, cut;
  hv_egress_denial d;
  /* Every cut of the packet before the end of the ports is malformed. */
  ipv4 (&p, "198.51.100.10", IPPROTO_TCP, 6, 0);
  l4 (&p, 81, 20);
  for (size_t n = 0; n < 24 + 4; n++)
    {
      cut = p;
      cut.n = n;
      if (parse (AF_INET, HV_EGRESS_LOG_PREFIX, &cut, &d) != HV_EGRESS_PARSE_BAD)
        fail_msg ("IPv4 packet cut to %zu bytes parsed", n);
    }
  ipv6 (&p, "2001:db8:2::10", IPPROTO_HOPOPTS);
  ext6 (&p, IPPROTO_UDP, 0);
  l4 (&p, 9999, 8);
  for (size_t n = 0; n < 48 + 4; n++)
    {
      cut = p;
      cut.n = n;
      if (parse (AF_INET6, HV_EGRESS_LOG_PREFIX, &cut, &d) != HV_EGRESS_PARSE_BAD)
        fail_msg ("IPv6 packet cut to %zu bytes parsed", n);
    }
  /* No payload at all. */
  assert_int_equal (parse (AF_INET, HV_EGRESS_LOG_PREFIX, NULL, &d), HV_EGRESS_PARSE_BAD);
  /* Every cut of the whole message: never a denial. */
  uint8_t buf[1024];
  ipv4 (&p, "198.51.100.10", IPPROTO_TCP, 5, 0);
  l4 (&p, 81, 20);
  size_t full = nflog_msg (buf, sizeof (buf), AF_INET, HV_EGRESS_LOG_PREFIX, &p);
  assert_int_equal (hv_egress_denial_parse ((struct nlmsghdr *) buf, full, HV_EGRESS_LOG_PREFIX, &d),
                    HV_EGRESS_PARSE_DENIAL);
  for (size_t n = 0; n < full; n++)
    if (hv_egress_denial_parse ((struct nlmsghdr *) buf, n, HV_EGRESS_LOG_PREFIX, &d) == HV_EGRESS_PARSE_DENIAL)
      fail_msg ("message cut to %zu of %zu bytes parsed", n, full);
  /* A message whose own length is cut (the attributes lie). */
  for (size_t n = sizeof (struct nlmsghdr); n < full; n++)
    {
      ((struct nlmsghdr *) buf)->nlmsg_len = (uint32_t) n;
      if (hv_egress_denial_parse ((struct nlmsghdr *) buf, full, HV_EGRESS_LOG_PREFIX, &d) == HV_EGRESS_PARSE_DENIAL)
        fail_msg ("nlmsg_len %zu of %zu parsed", n, full);
    }
}

static void
test_parse_not_ours (void **state)
{
  (void) state;
  struct pkt p;
  hv_egress_denial d;
  ipv4 (&p, "198.51.100.10", IPPROTO_TCP, 5, 0);
  l4 (&p, 81, 20);
  assert_int_equal (parse (AF_INET, "other-rule", &p, &d), HV_EGRESS_PARSE_OTHER);
  assert_int_equal (parse (AF_INET, HV_EGRESS_LOG_PREFIX "x", &p, &d), HV_EGRESS_PARSE_OTHER);
  assert_int_equal (parse (AF_INET, "haven-egres", &p, &d), HV_EGRESS_PARSE_OTHER);
  assert_int_equal (parse (AF_INET, "", &p, &d), HV_EGRESS_PARSE_OTHER);
  assert_int_equal (parse (AF_INET, NULL, &p, &d), HV_EGRESS_PARSE_OTHER);
  /* A prefix without its NUL. */
  uint8_t buf[1024];
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET;
  struct nfgenmsg *g = mnl_nlmsg_put_extra_header (nlh, sizeof (*g));
  g->nfgen_family = AF_INET;
  mnl_attr_put (nlh, NFULA_PREFIX, strlen (HV_EGRESS_LOG_PREFIX), HV_EGRESS_LOG_PREFIX);
  mnl_attr_put (nlh, NFULA_PAYLOAD, p.n, p.b);
  assert_int_equal (hv_egress_denial_parse (nlh, nlh->nlmsg_len, HV_EGRESS_LOG_PREFIX, &d), HV_EGRESS_PARSE_BAD);
  /* Another message type (a config message, NLMSG_ERROR). */
  size_t n = nflog_msg (buf, sizeof (buf), AF_INET, HV_EGRESS_LOG_PREFIX, &p);
  ((struct nlmsghdr *) buf)->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
  assert_int_equal (hv_egress_denial_parse ((struct nlmsghdr *) buf, n, HV_EGRESS_LOG_PREFIX, &d),
                    HV_EGRESS_PARSE_OTHER);
  ((struct nlmsghdr *) buf)->nlmsg_type = NLMSG_ERROR;
  assert_int_equal (hv_egress_denial_parse ((struct nlmsghdr *) buf, n, HV_EGRESS_LOG_PREFIX, &d),
                    HV_EGRESS_PARSE_OTHER);
  /* A family that says something else than the packet. */
  assert_int_equal (parse (AF_INET6, HV_EGRESS_LOG_PREFIX, &p, &d), HV_EGRESS_PARSE_BAD);
  assert_int_equal (parse (7 /* NFPROTO_BRIDGE */, HV_EGRESS_LOG_PREFIX, &p, &d), HV_EGRESS_PARSE_BAD);
}

/* Random corruption of valid messages: whatever comes out, no crash (the
 * ASan build checks every read), and a denial only with sane fields. */
static void
test_parse_random (void **state)
{
  (void) state;
  srandom (10);
  uint8_t buf[1024];
  for (int i = 0; i < 20000; i++)
    {
      struct pkt p;
      if (i & 1)
        {
          ipv6 (&p, "2001:db8:2::10", (uint8_t) (random () % 2 ? IPPROTO_TCP : IPPROTO_HOPOPTS));
          ext6 (&p, IPPROTO_UDP, 0);
          l4 (&p, 443, 20);
        }
      else
        {
          ipv4 (&p, "198.51.100.10", IPPROTO_TCP, 5 + (unsigned) (random () % 3), 0);
          l4 (&p, 443, 20);
        }
      size_t n = nflog_msg (buf, sizeof (buf), i & 1 ? AF_INET6 : AF_INET, HV_EGRESS_LOG_PREFIX, &p);
      int flips = 1 + (int) (random () % 4);
      for (int k = 0; k < flips; k++)
        buf[(size_t) random () % n] ^= (uint8_t) (1 + random () % 255);
      size_t len = random () % 4 ? n : (size_t) random () % (n + 1);
      hv_egress_denial d;
      if (hv_egress_denial_parse ((struct nlmsghdr *) buf, len, HV_EGRESS_LOG_PREFIX, &d) == HV_EGRESS_PARSE_DENIAL)
        {
          assert_true (d.family == AF_INET || d.family == AF_INET6);
          assert_true (d.protocol <= HV_EGRESS_L4_OTHER);
          if (d.protocol != HV_EGRESS_L4_TCP && d.protocol != HV_EGRESS_L4_UDP)
            assert_int_equal (d.port, 0);
        }
    }
}

/* --- the limiter (denial_limiter.h) ------------------------------------ */

static bool
admit_s (hv_denial_limiter *l, const char *key, uint64_t now)
{
  return hv_denial_limiter_admit (l, key, strlen (key), now);
}

/* The key "PRE<i>POST" ("%u" in fmt marks where i goes). */
static bool
admit_n (hv_denial_limiter *l, const char *fmt, unsigned i, uint64_t now)
{
  char key[64];
  const char *mark = strstr (fmt, "%u");
  assert_non_null (mark);
  snprintf (key, sizeof (key), "%.*s%u%s", (int) (mark - fmt), fmt, i, mark + 2);
  return admit_s (l, key, now);
}

/* The attack: twenty junk denials in one second, then the one
 * that matters.  A "20 a second" limit left it out; a new key is always
 * recorded, however much came before it. */
static void
test_limiter_novelty_never_suppressed (void **state)
{
  (void) state;
  hv_denial_limiter l;
  hv_denial_limiter_init (&l, 20);
  for (unsigned i = 0; i < 20; i++)
    assert_true (admit_n (&l, "tcp 198.51.100.10 %u", 1000 + i, 5000));
  assert_true (admit_s (&l, "tcp 203.0.113.99 443", 5001));
  /* And after a flood of repeats in the same millisecond too. */
  for (unsigned i = 0; i < 5000; i++)
    assert_false (admit_n (&l, "tcp 198.51.100.10 %u", 1000 + i % 20, 5001));
  assert_true (admit_s (&l, "dns TXT exfil.evil.example", 5001));
  for (unsigned i = 0; i < 200; i++)
    assert_true (admit_n (&l, "udp 198.51.100.%u 53", i, 5002));
  hv_denial_limiter_release (&l);
}

static void
test_limiter_summary_names_repeats (void **state)
{
  (void) state;
  hv_denial_limiter l;
  hv_denial_summary s;
  hv_denial_limiter_init (&l, 20);
  assert_int_equal (hv_denial_limiter_deadline (&l), 0);
  /* 40 keys, key i repeated i + 1 times after its first record. */
  for (unsigned i = 0; i < 40; i++)
    assert_true (admit_n (&l, "tcp 198.51.100.10 %u", i, 1000));
  /* Nothing left out yet: no summary will come. */
  assert_int_equal (hv_denial_limiter_deadline (&l), 0);
  assert_false (hv_denial_limiter_tick (&l, 99999, &s));
  uint64_t total = 0;
  for (unsigned i = 0; i < 40; i++)
    for (unsigned k = 0; k <= i; k++, total++)
      assert_false (admit_n (&l, "tcp 198.51.100.10 %u", i, 1200));
  /* Due a second after the first left out, not before. */
  assert_int_equal (hv_denial_limiter_deadline (&l), 2200);
  assert_false (hv_denial_limiter_tick (&l, 2199, &s));
  assert_true (hv_denial_limiter_tick (&l, 2200, &s));
  assert_int_equal (s.count, total);
  assert_int_equal (s.repeats, total);
  assert_int_equal (s.unrecorded_new, 0);
  assert_false (s.full);
  /* The most repeated first, HV_DENIAL_SUMMARY_KEYS of them named. */
  assert_int_equal (s.n_named, HV_DENIAL_SUMMARY_KEYS);
  assert_string_equal (s.named[0].key, "tcp 198.51.100.10 39");
  assert_int_equal (s.named[0].count, 40);
  uint64_t named = 0;
  for (size_t i = 0; i < s.n_named; i++)
    named += s.named[i].count;
  assert_int_equal (named + s.repeats_unnamed, total);
  /* Counted once: the next summary starts from zero. */
  assert_int_equal (hv_denial_limiter_deadline (&l), 0);
  assert_false (hv_denial_limiter_tick (&l, 9000, &s));
  /* A repeat long after is still a repeat (it was recorded), in the
   * final summary (UINT64_MAX: due or not). */
  assert_false (admit_n (&l, "tcp 198.51.100.10 %u", 3, 50000));
  assert_true (hv_denial_limiter_tick (&l, UINT64_MAX, &s));
  assert_int_equal (s.count, 1);
  assert_int_equal (s.n_named, 1);
  assert_string_equal (s.named[0].key, "tcp 198.51.100.10 3");
  /* Keys are compared whole: a prefix is another key. */
  assert_true (admit_s (&l, "dns A ab", 0));
  assert_true (admit_s (&l, "dns A abc", 0));
  assert_false (admit_s (&l, "dns A ab", 0));
  hv_denial_limiter_release (&l);
}

/* Memory is bounded; past the cap new keys are recorded at per_second
 * and the rest counted as new (novelty lost, and said). */
static void
test_limiter_cap (void **state)
{
  (void) state;
  hv_denial_limiter l;
  hv_denial_summary s;
  hv_denial_limiter_init (&l, 20);
  for (unsigned i = 0; i < HV_DENIAL_KEYS_MAX; i++)
    assert_true (admit_n (&l, "tcp 198.51.100.10 %u", i, 1000));
  assert_int_equal (hv_denial_limiter_remembered (&l), HV_DENIAL_KEYS_MAX);
  assert_false (hv_denial_limiter_tick (&l, UINT64_MAX, &s));
  /* Past the cap: 20 new ones a second, the rest counted. */
  for (unsigned i = 0; i < 20; i++)
    assert_true (admit_n (&l, "tcp 203.0.113.%u 443", i, 2000));
  for (unsigned i = 20; i < 120; i++)
    assert_false (admit_n (&l, "tcp 203.0.113.%u 443", i, 2500));
  /* Remembered keys are still repeats. */
  assert_false (admit_n (&l, "tcp 198.51.100.10 %u", 7, 2500));
  assert_int_equal (hv_denial_limiter_remembered (&l), HV_DENIAL_KEYS_MAX);
  assert_true (hv_denial_limiter_tick (&l, 3500, &s));
  assert_int_equal (s.count, 101);
  assert_int_equal (s.unrecorded_new, 100);
  assert_int_equal (s.repeats, 1);
  assert_true (s.full);
  assert_int_equal (s.per_second, 20);
  /* The next second has its own 20. */
  assert_true (admit_n (&l, "tcp 203.0.113.%u 443", 200, 3600));
  /* A clock that goes back stays in its window. */
  for (unsigned i = 0; i < 19; i++)
    assert_true (admit_n (&l, "udp 203.0.113.%u 53", i, 3601));
  assert_false (admit_n (&l, "udp 203.0.113.%u 53", 99, 10));
  hv_denial_limiter_release (&l);
  /* A key too long to remember is treated as past the cap. */
  hv_denial_limiter_init (&l, 1);
  char *big = calloc (1, HV_DENIAL_KEY_LEN_MAX + 2);
  memset (big, 'x', HV_DENIAL_KEY_LEN_MAX + 1);
  assert_true (admit_s (&l, big, 0));
  assert_false (admit_s (&l, big, 1));
  assert_true (hv_denial_limiter_tick (&l, UINT64_MAX, &s));
  assert_int_equal (s.unrecorded_new, 1);
  assert_false (s.full);
  free (big);
  hv_denial_limiter_release (&l);
  /* per_second clamped. */
  hv_denial_limiter_init (&l, 0);
  assert_int_equal (l.per_second, 1);
  hv_denial_limiter_release (&l);
  hv_denial_limiter_init (&l, 1u << 30);
  assert_int_equal (l.per_second, HV_DENIAL_RATE_MAX);
  hv_denial_limiter_release (&l);
}

/* Past a trail's size cap summaries are held and added up for the final
 * one: no count is dropped. */
static void
test_summary_add (void **state)
{
  (void) state;
  hv_denial_summary held = { 0 }, s = { .count = 10, .repeats = 7, .unrecorded_new = 3, .n_named = 2,
                                       .repeats_unnamed = 2, .overruns = 1, .per_second = 20 };
  s.named[0].key = "tcp 198.51.100.10 81";
  s.named[0].count = 4;
  s.named[1].key = "dns A x.example";
  s.named[1].count = 1;
  hv_denial_summary_add (&held, &s);
  s.full = true;
  s.kernel_lost = 5;
  hv_denial_summary_add (&held, &s);
  assert_int_equal (held.count, 20);
  assert_int_equal (held.repeats, 14);
  assert_int_equal (held.unrecorded_new, 6);
  assert_int_equal (held.n_named, 0);
  assert_int_equal (held.repeats_unnamed, 14);
  assert_int_equal (held.overruns, 2);
  assert_int_equal (held.kernel_lost, 5);
  assert_true (held.full);
  assert_int_equal (held.per_second, 20);
}

/* --- the records --------------------------------------------------------- */

/* Write records with fn into a trail and return the lines parsed. */
static yajl_val
one_record (void (*fn) (struct hv_audit_trail *, void *), void *arg)
{
  int fd = memfd_create ("trail", MFD_CLOEXEC);
  assert_true (fd >= 0);
  struct hv_audit_trail t;
  hv_audit_trail_init (&t, fd, "agent", "c1");
  fn (&t, arg);
  hv_audit_trail_release (&t);
  char text[4096] = "";
  ssize_t n = pread (fd, text, sizeof (text) - 1, 0);
  close (fd);
  assert_true (n > 0);
  text[n] = '\0';
  assert_int_equal (text[n - 1], '\n');
  if (strchr (text, '\n') != text + n - 1)
    fail_msg ("more than one line: %s", text);
  char errbuf[256];
  yajl_val v = yajl_tree_parse (text, errbuf, sizeof (errbuf));
  if (v == NULL)
    fail_msg ("not JSON: %s: %s", errbuf, text);
  return v;
}

static const char *
str_at (yajl_val v, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val s = yajl_tree_get (v, path, yajl_t_string);
  if (s == NULL)
    fail_msg ("no string \"%s\"", key);
  return YAJL_GET_STRING (s);
}

static long long
int_at (yajl_val v, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val s = yajl_tree_get (v, path, yajl_t_number);
  if (s == NULL || !YAJL_IS_INTEGER (s))
    fail_msg ("no integer \"%s\"", key);
  return YAJL_GET_INTEGER (s);
}

static yajl_val
names_at (yajl_val v)
{
  const char *path[] = { "names", NULL };
  yajl_val a = yajl_tree_get (v, path, yajl_t_array);
  if (a == NULL)
    fail_msg ("no array \"names\"");
  return a;
}

static size_t
two_names (void *data, int family, const uint8_t addr[16], const char **names, size_t max)
{
  assert_string_equal (data, "ctx");
  assert_int_equal (family, AF_INET6);
  assert_int_equal (addr[15], 0x10);
  assert_int_equal (max, HV_EGRESS_AUDIT_MAX_NAMES);
  names[0] = "api.example.com";
  names[1] = "bad\xff.example";
  return 2;
}

static void
write_denied_v6 (struct hv_audit_trail *t, void *arg)
{
  hv_egress_denial d = { .family = AF_INET6, .protocol = HV_EGRESS_L4_TCP, .port = 444 };
  inet_pton (AF_INET6, "2001:db8:2::10", d.addr);
  hv_egress_audit_denied (t, &d, arg ? two_names : NULL, arg);
}

static void
write_denied_icmp (struct hv_audit_trail *t, void *arg)
{
  (void) arg;
  hv_egress_denial d = { .family = AF_INET, .protocol = HV_EGRESS_L4_ICMP };
  inet_pton (AF_INET, "198.51.100.10", d.addr);
  hv_egress_audit_denied (t, &d, NULL, NULL);
}

static void
write_refused (struct hv_audit_trail *t, void *arg)
{
  hv_egress_audit_refused (t, "exfil.evil.example", (uint16_t) (uintptr_t) arg, "not in the policy");
}

static void
write_suppressed (struct hv_audit_trail *t, void *arg)
{
  hv_denial_summary s = { .count = 9980, .repeats = 9970, .unrecorded_new = 10, .n_named = 2, .full = true,
                          .per_second = 20, .repeats_unnamed = 5 };
  s.named[0].key = "tcp 198.51.100.10 81";
  s.named[0].count = 9000;
  s.named[1].key = "dns A bad\xff.example";
  s.named[1].count = 965;
  s.overruns = arg ? 2 : 0;
  hv_egress_audit_suppressed (t, &s);
}

static bool
bool_at (yajl_val v, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val b = yajl_tree_get (v, path, yajl_t_any);
  if (b == NULL || !(YAJL_IS_TRUE (b) || YAJL_IS_FALSE (b)))
    fail_msg ("no boolean \"%s\"", key);
  return YAJL_IS_TRUE (b);
}

static void
test_records (void **state)
{
  (void) state;
  yajl_val v = one_record (write_denied_v6, "ctx");
  assert_string_equal (str_at (v, "event"), "net-denied");
  assert_string_equal (str_at (v, "policy"), "agent");
  assert_string_equal (str_at (v, "container"), "c1");
  assert_string_equal (str_at (v, "destination"), "2001:db8:2::10");
  assert_int_equal (int_at (v, "port"), 444);
  assert_string_equal (str_at (v, "protocol"), "tcp");
  yajl_val names = names_at (v);
  assert_int_equal (YAJL_GET_ARRAY (names)->len, 2);
  assert_string_equal (YAJL_GET_STRING (YAJL_GET_ARRAY (names)->values[0]), "api.example.com");
  /* A name's bytes are the sandbox's: written as valid UTF-8. */
  assert_string_equal (YAJL_GET_STRING (YAJL_GET_ARRAY (names)->values[1]), "bad\xef\xbf\xbd.example");
  yajl_tree_free (v);
  v = one_record (write_denied_v6, NULL);
  assert_int_equal (YAJL_GET_ARRAY (names_at (v))->len, 0);
  yajl_tree_free (v);
  v = one_record (write_denied_icmp, NULL);
  assert_string_equal (str_at (v, "destination"), "198.51.100.10");
  assert_string_equal (str_at (v, "protocol"), "icmp");
  assert_int_equal (int_at (v, "port"), 0);
  yajl_tree_free (v);
  v = one_record (write_refused, (void *) (uintptr_t) 28);
  assert_string_equal (str_at (v, "event"), "dns-refused");
  assert_string_equal (str_at (v, "name"), "exfil.evil.example");
  assert_string_equal (str_at (v, "type"), "AAAA");
  assert_string_equal (str_at (v, "why"), "not in the policy");
  yajl_tree_free (v);
  v = one_record (write_refused, (void *) (uintptr_t) 4242);
  assert_string_equal (str_at (v, "type"), "TYPE4242");
  yajl_tree_free (v);
  v = one_record (write_suppressed, NULL);
  assert_string_equal (str_at (v, "event"), "denials-suppressed");
  assert_string_equal (str_at (v, "kind"), "egress");
  assert_int_equal (int_at (v, "count"), 9980);
  assert_int_equal (int_at (v, "repeats"), 9970);
  assert_int_equal (int_at (v, "unrecorded_new"), 10);
  assert_int_equal (int_at (v, "repeats_unnamed"), 5);
  assert_true (bool_at (v, "novelty_lost"));
  const char *rp[] = { "repeated", "tcp 198.51.100.10 81", NULL };
  yajl_val c = yajl_tree_get (v, rp, yajl_t_number);
  assert_non_null (c);
  assert_int_equal (YAJL_GET_INTEGER (c), 9000);
  const char *rq[] = { "repeated", "dns A bad\xef\xbf\xbd.example", NULL };
  assert_non_null (yajl_tree_get (v, rq, yajl_t_number));
  assert_string_equal (str_at (v, "message"),
                       "9980 more egress denials not recorded one by one: 9970 repeats of ones recorded before; "
                       "10 NEW ones not recorded: haven remembers 4096 distinct egress denials (keys up to 8192 "
                       "bytes), and past that records at most 20 new ones a second");
  yajl_tree_free (v);
  v = one_record (write_suppressed, "overruns");
  assert_int_equal (int_at (v, "overruns"), 2);
  if (strstr (str_at (v, "message"), "dropped log messages 2 times") == NULL)
    fail_msg ("overruns not said: %s", str_at (v, "message"));
  yajl_tree_free (v);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_parse_ipv4),        cmocka_unit_test (test_parse_ipv6),
    cmocka_unit_test (test_parse_truncated),   cmocka_unit_test (test_parse_not_ours),
    cmocka_unit_test (test_parse_random),      cmocka_unit_test (test_limiter_novelty_never_suppressed),
    cmocka_unit_test (test_limiter_summary_names_repeats), cmocka_unit_test (test_limiter_cap),
    cmocka_unit_test (test_summary_add),
    cmocka_unit_test (test_records),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
