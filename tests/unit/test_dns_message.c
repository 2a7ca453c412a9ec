/* Unit tests of the DNS message codec: hand-made wire messages (RFC 1035
 * format, as a resolver would send them), hostile compression, every
 * truncation of a valid message, lying counts, EDNS and EDE, TTL capping,
 * size limits and the CNAME chain. */
#include "config.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dns_message.h"

/* --- a wire-format builder for the tests ------------------------------------- */

struct wire
{
  uint8_t b[4096];
  size_t n;
};

static void
w8 (struct wire *w, unsigned v)
{
  w->b[w->n++] = (uint8_t) v;
}

static void
w16 (struct wire *w, unsigned v)
{
  w8 (w, v >> 8);
  w8 (w, v & 0xFF);
}

static void
w32 (struct wire *w, uint32_t v)
{
  w16 (w, v >> 16);
  w16 (w, v & 0xFFFF);
}

static void
wbytes (struct wire *w, const void *p, size_t n)
{
  memcpy (w->b + w->n, p, n);
  w->n += n;
}

/* "www.example.com" as labels, with the root label. */
static void
wname (struct wire *w, const char *dotted)
{
  const char *s = dotted;
  while (*s)
    {
      const char *dot = strchr (s, '.');
      size_t l = dot ? (size_t) (dot - s) : strlen (s);
      w8 (w, (unsigned) l);
      wbytes (w, s, l);
      s += l + (dot ? 1 : 0);
    }
  w8 (w, 0);
}

static void
wptr (struct wire *w, unsigned offset)
{
  w16 (w, 0xC000 | offset);
}

static void
wheader (struct wire *w, unsigned id, unsigned flags, unsigned qd, unsigned an, unsigned ns, unsigned ar)
{
  w->n = 0;
  w16 (w, id);
  w16 (w, flags);
  w16 (w, qd);
  w16 (w, an);
  w16 (w, ns);
  w16 (w, ar);
}

/* Record fields after the owner name; returns where rdlength sits. */
static size_t
wrr (struct wire *w, unsigned type, unsigned cls, uint32_t ttl, unsigned rdlen)
{
  w16 (w, type);
  w16 (w, cls);
  w32 (w, ttl);
  size_t at = w->n;
  w16 (w, rdlen);
  return at;
}

static void
fix_rdlen (struct wire *w, size_t at)
{
  size_t l = w->n - at - 2;
  w->b[at] = (uint8_t) (l >> 8);
  w->b[at + 1] = (uint8_t) l;
}

/* A captured-style response, byte for byte as a recursive resolver answers
 * "www.example.com IN A" with RD: a CNAME to a CDN name, two addresses,
 * an OPT with UDP size 1232, every name after the question compressed. */
static void
real_response (struct wire *w)
{
  wheader (w, 0xBEEF, 0x8180, 1, 3, 0, 1);
  wname (w, "www.example.com"); /* offset 12 */
  w16 (w, HV_DNS_TYPE_A);
  w16 (w, HV_DNS_CLASS_IN);
  /* answer 1: www.example.com CNAME www.example.com.edgekey.net */
  wptr (w, 12);
  size_t at = wrr (w, HV_DNS_TYPE_CNAME, HV_DNS_CLASS_IN, 3600, 0);
  size_t target = w->n;
  w8 (w, 3);
  wbytes (w, "cdn", 3);
  w8 (w, 7);
  wbytes (w, "edgekey", 7);
  w8 (w, 3);
  wbytes (w, "net", 3);
  w8 (w, 0);
  fix_rdlen (w, at);
  /* answers 2 and 3: cdn.edgekey.net A 192.0.2.10, 192.0.2.11 */
  for (unsigned i = 0; i < 2; i++)
    {
      wptr (w, (unsigned) target);
      wrr (w, HV_DNS_TYPE_A, HV_DNS_CLASS_IN, 20, 4);
      w8 (w, 192), w8 (w, 0), w8 (w, 2), w8 (w, 10 + i);
    }
  /* OPT */
  w8 (w, 0);
  wrr (w, HV_DNS_TYPE_OPT, 1232, 0, 0);
}

static void
parse_ok (const struct wire *w, hv_dns_message *m)
{
  hv_error *err = NULL;
  if (hv_dns_parse (w->b, w->n, m, &err) < 0)
    fail_msg ("unexpected error: %s", err->msg);
}

static void
expect_parse_error (const uint8_t *b, size_t n, const char *part)
{
  hv_dns_message m;
  hv_error *err = NULL;
  if (hv_dns_parse (b, n, &m, &err) == 0)
    {
      hv_dns_message_free (&m);
      fail_msg ("accepted %zu bytes, expected an error containing \"%s\"", n, part);
    }
  if (part && strstr (err->msg, part) == NULL)
    fail_msg ("expected \"%s\" in\n     \"%s\"", part, err->msg);
  hv_error_free (&err);
}

static void
name (const char *text, hv_dns_name *out)
{
  hv_error *err = NULL;
  if (hv_dns_name_from_text (text, out, &err) < 0)
    fail_msg ("%s", err->msg);
}

/* Encode, parse again, and require the same message. */
static void
round_trip (const hv_dns_message *m, size_t max_size, hv_dns_message *again)
{
  uint8_t buf[65535];
  size_t len;
  bool truncated;
  hv_error *err = NULL;
  if (hv_dns_encode (m, buf, sizeof (buf), max_size, &len, &truncated, &err) < 0)
    fail_msg ("encode: %s", err->msg);
  assert_true (len <= max_size);
  if (hv_dns_parse (buf, len, again, &err) < 0)
    fail_msg ("parse of the encoding: %s", err->msg);
  if (!truncated)
    assert_true (hv_dns_message_equal (m, again));
}

/* --- tests --------------------------------------------------------------------- */

static void
test_real_response (void **state)
{
  (void) state;
  struct wire w;
  cleanup_dns_message hv_dns_message m;
  real_response (&w);
  parse_ok (&w, &m);
  char t[HV_DNS_NAME_TEXT_MAX];
  assert_int_equal (m.id, 0xBEEF);
  assert_int_equal (m.flags, HV_DNS_FLAG_QR | HV_DNS_FLAG_RD | HV_DNS_FLAG_RA);
  assert_int_equal (m.rcode, 0);
  assert_int_equal (m.n_questions, 1);
  assert_string_equal (hv_dns_name_to_text (&m.questions[0].name, t), "www.example.com");
  assert_int_equal (m.n_rr[HV_DNS_ANSWER], 3);
  assert_int_equal (m.n_rr[HV_DNS_ADDITIONAL], 0); /* the OPT is in m.edns */
  const hv_dns_rr *c = &m.rr[HV_DNS_ANSWER][0];
  assert_int_equal (c->type, HV_DNS_TYPE_CNAME);
  assert_int_equal (c->ttl, 3600);
  assert_string_equal (hv_dns_name_to_text (&c->name, t), "www.example.com");
  assert_string_equal (hv_dns_name_to_text (c->cname, t), "cdn.edgekey.net");
  const hv_dns_rr *a = &m.rr[HV_DNS_ANSWER][2];
  assert_string_equal (hv_dns_name_to_text (&a->name, t), "cdn.edgekey.net");
  assert_int_equal (a->a.s_addr, htonl (0xC000020B));
  assert_true (m.has_edns);
  assert_int_equal (m.edns.udp_size, 1232);
  assert_false (m.edns.dnssec_ok);

  /* Re-encoded with compression it is no longer than what came in, and
   * parses back to the same message. */
  uint8_t buf[512];
  size_t len;
  hv_error *err = NULL;
  assert_int_equal (hv_dns_encode (&m, buf, sizeof (buf), sizeof (buf), &len, NULL, &err), 0);
  assert_true (len <= w.n);
  cleanup_dns_message hv_dns_message again;
  round_trip (&m, 512, &again);
}

/* A response as a validating resolver sends it for "example.com IN AAAA",
 * written out byte by byte: compressed owner, one AAAA, OPT with a DNS
 * cookie (option 10) and the DO bit echoed. */
static const uint8_t captured_aaaa[] = {
  0x5a, 0x3c, 0x81, 0xa0, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,           /* header, AD set */
  0x07, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0x03, 'c', 'o', 'm', 0x00, 0x00, 0x1c, 0x00, 0x01,
  0xc0, 0x0c, 0x00, 0x1c, 0x00, 0x01, 0x00, 0x00, 0x0e, 0x10, 0x00, 0x10,           /* AAAA, TTL 3600 */
  0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
  0x00, 0x00, 0x29, 0x04, 0xd0, 0x00, 0x00, 0x80, 0x00, 0x00, 0x1c,                 /* OPT 1232, DO */
  0x00, 0x0a, 0x00, 0x18, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
};

static void
test_captured_aaaa (void **state)
{
  (void) state;
  uint16_t id, flags;
  assert_int_equal (hv_dns_peek_header (captured_aaaa, 11, &id, &flags), -1);
  assert_int_equal (hv_dns_peek_header (captured_aaaa, sizeof (captured_aaaa), &id, &flags), 0);
  assert_int_equal (id, 0x5a3c);
  assert_int_equal (flags, 0x81a0);
  cleanup_dns_message hv_dns_message m;
  hv_error *err = NULL;
  assert_int_equal (hv_dns_parse (captured_aaaa, sizeof (captured_aaaa), &m, &err), 0);
  assert_int_equal (m.flags, HV_DNS_FLAG_QR | HV_DNS_FLAG_RD | HV_DNS_FLAG_RA | HV_DNS_FLAG_AD);
  assert_int_equal (m.rr[HV_DNS_ANSWER][0].type, HV_DNS_TYPE_AAAA);
  assert_int_equal (m.rr[HV_DNS_ANSWER][0].ttl, 3600);
  struct in6_addr want;
  inet_pton (AF_INET6, "2001:db8::1", &want);
  assert_memory_equal (&m.rr[HV_DNS_ANSWER][0].aaaa, &want, 16);
  assert_true (m.edns.dnssec_ok);
  assert_int_equal (m.edns.n_options, 1);
  assert_int_equal (m.edns.options[0].code, 10);
  assert_int_equal (m.edns.options[0].len, 24);
  assert_int_equal (m.edns.n_ede, 0);
  hv_dns_chain c;
  assert_int_equal (hv_dns_follow_chain (&m, &m.questions[0].name, &c, &err), 0);
  assert_int_equal (c.n_addrs, 1);
  assert_int_equal (c.addrs[0].family, AF_INET6);
  hv_dns_chain_free (&c);
  /* Encoded again it is the same bytes. */
  uint8_t buf[512];
  size_t len;
  assert_int_equal (hv_dns_encode (&m, buf, sizeof (buf), 512, &len, NULL, &err), 0);
  assert_int_equal (len, sizeof (captured_aaaa));
  assert_memory_equal (buf, captured_aaaa, len);
  /* Every prefix fails. */
  for (size_t n = 0; n < sizeof (captured_aaaa); n++)
    expect_parse_error (captured_aaaa, n, NULL);
}

static void
test_every_truncation_fails (void **state)
{
  (void) state;
  struct wire w;
  real_response (&w);
  for (size_t n = 0; n < w.n; n++)
    expect_parse_error (w.b, n, NULL);
  /* One byte more: the counts no longer cover the message. */
  w.b[w.n++] = 0;
  expect_parse_error (w.b, w.n, "1 bytes after the last record");
}

static void
test_lying_counts (void **state)
{
  (void) state;
  struct wire w;
  real_response (&w);
  /* One answer more than there is. */
  w.b[7] = 4;
  expect_parse_error (w.b, w.n, NULL);
  /* One answer fewer: the last answer is read as the additional OPT's
   * place, and bytes are left over or the types mismatch. */
  w.b[7] = 2;
  expect_parse_error (w.b, w.n, NULL);
  w.b[7] = 3;
  /* Counts far beyond what the bytes could hold are refused before
   * anything is allocated for them. */
  w.b[4] = 0x01;
  expect_parse_error (w.b, w.n, "need more than");
  w.b[4] = 0;
  w.b[8] = 0xFF, w.b[9] = 0xFF;
  expect_parse_error (w.b, w.n, "more than 1024");
}

static void
test_compression_pointer_to_itself (void **state)
{
  (void) state;
  struct wire w;
  wheader (&w, 1, 0, 1, 0, 0, 0);
  wptr (&w, 12); /* the question's name points at itself */
  w16 (&w, 1), w16 (&w, 1);
  expect_parse_error (w.b, w.n, "does not point backwards");
}

static void
test_compression_forward_pointer (void **state)
{
  (void) state;
  struct wire w;
  wheader (&w, 1, 0, 1, 0, 0, 0);
  wptr (&w, 18);
  w16 (&w, 1), w16 (&w, 1);
  wname (&w, "a"); /* the target, after the pointer */
  expect_parse_error (w.b, w.n, "does not point backwards");
}

/* The loop a "before the pointer itself" rule lets through: a pointer to a
 * label that covers the pointer, whose run reaches the pointer again. */
static void
test_compression_loop_through_label (void **state)
{
  (void) state;
  struct wire w;
  wheader (&w, 1, 0, 2, 0, 0, 0);
  wname (&w, "a"); /* question 1 at 12: 01 'a' 00 */
  w16 (&w, 1), w16 (&w, 1);
  /* question 2 at 19: label of 2 bytes covering offsets 20-21, then a
   * pointer at 22 back to 19 (before itself, but not before the run). */
  w8 (&w, 2);
  w8 (&w, 'x'), w8 (&w, 'y');
  wptr (&w, 19);
  w16 (&w, 1), w16 (&w, 1);
  expect_parse_error (w.b, w.n, "does not point backwards");

  /* Two names pointing at each other's labels. */
  wheader (&w, 1, 0, 2, 0, 0, 0);
  w8 (&w, 1), w8 (&w, 'a'), wptr (&w, 17); /* 12: a + pointer to 17 */
  w16 (&w, 1), w16 (&w, 1);
  w8 (&w, 1), w8 (&w, 'b'), wptr (&w, 12); /* 19... */
  w16 (&w, 1), w16 (&w, 1);
  expect_parse_error (w.b, w.n, "does not point backwards");
}

static void
test_compression_too_many_hops (void **state)
{
  (void) state;
  struct wire w;
  /* Question 1: the root; then 70 pointers, each to the one before it,
   * all in question names; the last question starts the 70-hop walk. */
  unsigned n = 70;
  wheader (&w, 1, 0, n + 1, 0, 0, 0);
  w8 (&w, 0);
  w16 (&w, 1), w16 (&w, 1);
  unsigned prev = 12;
  for (unsigned i = 0; i < n; i++)
    {
      unsigned here = (unsigned) w.n;
      wptr (&w, prev);
      w16 (&w, 1), w16 (&w, 1);
      prev = here;
    }
  expect_parse_error (w.b, w.n, "more than 64 compression pointers");
  /* 64 hops are fine. */
  n = 64;
  wheader (&w, 1, 0, n + 1, 0, 0, 0);
  w8 (&w, 0);
  w16 (&w, 1), w16 (&w, 1);
  prev = 12;
  for (unsigned i = 0; i < n; i++)
    {
      unsigned here = (unsigned) w.n;
      wptr (&w, prev);
      w16 (&w, 1), w16 (&w, 1);
      prev = here;
    }
  cleanup_dns_message hv_dns_message m;
  parse_ok (&w, &m);
  assert_int_equal (m.n_questions, 65);
}

static void
wlabels (struct wire *w, unsigned count, unsigned len)
{
  for (unsigned i = 0; i < count; i++)
    {
      w8 (w, len);
      for (unsigned k = 0; k < len; k++)
        w8 (w, 'a' + (k % 26));
    }
}

static void
test_name_lengths (void **state)
{
  (void) state;
  struct wire w;
  /* 3 x 63 + 61 = 4 labels: 64 + 64 + 64 + 62 + root = 255: the longest. */
  wheader (&w, 1, 0, 1, 0, 0, 0);
  wlabels (&w, 3, 63);
  wlabels (&w, 1, 61);
  w8 (&w, 0);
  w16 (&w, 1), w16 (&w, 1);
  cleanup_dns_message hv_dns_message m;
  parse_ok (&w, &m);
  assert_int_equal (m.questions[0].name.len, 255);
  /* One byte more. */
  wheader (&w, 1, 0, 1, 0, 0, 0);
  wlabels (&w, 3, 63);
  wlabels (&w, 1, 62);
  w8 (&w, 0);
  w16 (&w, 1), w16 (&w, 1);
  expect_parse_error (w.b, w.n, "longer than 255 bytes");
  /* The same length reached through a pointer: a 250-byte name, then a
   * name of two more labels pointing at it. */
  wheader (&w, 1, 0, 2, 0, 0, 0);
  wlabels (&w, 3, 63);
  wlabels (&w, 1, 56);
  w8 (&w, 0);
  w16 (&w, 1), w16 (&w, 1);
  w8 (&w, 6), wbytes (&w, "abcdef", 6);
  wptr (&w, 12);
  w16 (&w, 1), w16 (&w, 1);
  expect_parse_error (w.b, w.n, "longer than 255 bytes");
  /* A label of 64 has the 0x40 type bits set. */
  wheader (&w, 1, 0, 1, 0, 0, 0);
  wlabels (&w, 1, 64);
  w8 (&w, 0);
  w16 (&w, 1), w16 (&w, 1);
  expect_parse_error (w.b, w.n, "label type 0x40");

  hv_dns_name n;
  hv_error *err = NULL;
  char text[400];
  memset (text, 'a', 64);
  text[64] = '\0';
  assert_int_equal (hv_dns_name_from_text (text, &n, &err), -1);
  assert_non_null (strstr (err->msg, "label longer than 63"));
  hv_error_free (&err);
  for (int i = 0; i < 4; i++)
    memset (text + i * 64, 'a', 63), text[i * 64 + 63] = '.';
  text[4 * 64 - 2] = '\0'; /* 63.63.63.62: 255 bytes with the root */
  assert_int_equal (hv_dns_name_from_text (text, &n, &err), -1);
  assert_non_null (strstr (err->msg, "longer than 255"));
  hv_error_free (&err);
  text[4 * 64 - 3] = '\0'; /* 63.63.63.61 */
  assert_int_equal (hv_dns_name_from_text (text, &n, &err), 0);
  assert_int_equal (n.len, 255);
  assert_int_equal (hv_dns_name_from_text ("a..b", &n, &err), -1);
  hv_error_free (&err);
  assert_int_equal (hv_dns_name_from_text ("", &n, &err), -1);
  hv_error_free (&err);
}

static void
test_names_text_and_case (void **state)
{
  (void) state;
  hv_dns_name a, b;
  char t[HV_DNS_NAME_TEXT_MAX];
  name ("WwW.ExAmple.COM.", &a);
  name ("www.example.com", &b);
  assert_true (hv_dns_name_equal (&a, &b));
  assert_string_equal (hv_dns_name_to_text (&a, t), "WwW.ExAmple.COM");
  name ("www.example.co", &b);
  assert_false (hv_dns_name_equal (&a, &b));
  /* Only ASCII letters fold: 0xC9 and 0xE9 differ. */
  name ("\\201x.com", &a);
  name ("\\233x.com", &b);
  assert_false (hv_dns_name_equal (&a, &b));
  /* A dot inside a label is not a separator; control bytes are escaped
   * so a name cannot write control characters into an audit record. */
  name ("a\\.b.c", &a);
  assert_int_equal (a.wire[0], 3);
  assert_string_equal (hv_dns_name_to_text (&a, t), "a\\.b.c");
  name ("x\\010\\027y.z", &a);
  assert_string_equal (hv_dns_name_to_text (&a, t), "x\\010\\027y.z");
  name (".", &a);
  assert_int_equal (a.len, 1);
  assert_string_equal (hv_dns_name_to_text (&a, t), ".");
  /* Every byte value survives text and back (two names: 256 bytes do
   * not fit one). */
  for (unsigned base = 0; base < 256; base += 189)
    {
      hv_dns_name n = { .len = 0 };
      unsigned v = base;
      while (v < 256 && v < base + 189)
        {
          size_t lpos = n.len++;
          unsigned l = 0;
          for (; l < 63 && v < 256 && v < base + 189; l++)
            n.wire[n.len++] = (uint8_t) v++;
          n.wire[lpos] = (uint8_t) l;
        }
      n.wire[n.len++] = 0;
      name (hv_dns_name_to_text (&n, t), &a);
      assert_int_equal (a.len, n.len);
      assert_memory_equal (a.wire, n.wire, n.len);
    }
}

static void
test_query_and_reply (void **state)
{
  (void) state;
  hv_error *err = NULL;
  hv_dns_name q;
  name ("Api.GitHub.com", &q);
  cleanup_dns_message hv_dns_message query;
  assert_int_equal (hv_dns_query_init (&query, 0x1234, &q, HV_DNS_TYPE_AAAA, true, 1232, &err), 0);
  cleanup_dns_message hv_dns_message parsed;
  round_trip (&query, 512, &parsed);
  assert_int_equal (parsed.flags, HV_DNS_FLAG_RD);
  assert_int_equal (parsed.edns.udp_size, 1232);
  assert_int_equal (hv_dns_reply_max_size (&parsed), 1232);

  cleanup_dns_message hv_dns_message reply;
  assert_int_equal (hv_dns_reply_init (&reply, &parsed, HV_DNS_RCODE_REFUSED, 1232, &err), 0);
  assert_int_equal (hv_dns_add_ede (&reply, HV_DNS_EDE_PROHIBITED,
                                    "haven: policy claude-code does not allow Api.GitHub.com", &err),
                    1);
  cleanup_dns_message hv_dns_message r2;
  round_trip (&reply, hv_dns_reply_max_size (&parsed), &r2);
  assert_int_equal (r2.id, 0x1234);
  assert_int_equal (r2.flags, HV_DNS_FLAG_QR | HV_DNS_FLAG_RD | HV_DNS_FLAG_RA);
  assert_int_equal (r2.rcode, HV_DNS_RCODE_REFUSED);
  assert_int_equal (r2.n_questions, 1);
  assert_memory_equal (r2.questions[0].name.wire, q.wire, q.len); /* case kept */
  assert_int_equal (r2.questions[0].type, HV_DNS_TYPE_AAAA);
  assert_int_equal (r2.n_rr[0] + r2.n_rr[1] + r2.n_rr[2], 0);
  assert_int_equal (r2.edns.n_ede, 1);
  assert_int_equal (r2.edns.ede[0].info_code, HV_DNS_EDE_PROHIBITED);
  assert_string_equal (r2.edns.ede[0].text, "haven: policy claude-code does not allow Api.GitHub.com");

  /* A query without EDNS: no OPT in the reply, so no EDE either, and the
   * limit is 512; an extended rcode cannot be sent. */
  cleanup_dns_message hv_dns_message plain;
  assert_int_equal (hv_dns_query_init (&plain, 7, &q, HV_DNS_TYPE_A, false, 0, &err), 0);
  assert_int_equal (hv_dns_reply_max_size (&plain), 512);
  cleanup_dns_message hv_dns_message sf;
  assert_int_equal (hv_dns_reply_init (&sf, &plain, HV_DNS_RCODE_SERVFAIL, 1232, &err), 0);
  assert_int_equal (hv_dns_add_ede (&sf, HV_DNS_EDE_NETWORK_ERROR, "upstream", &err), 0);
  assert_false (sf.has_edns);
  assert_int_equal (sf.flags, HV_DNS_FLAG_QR | HV_DNS_FLAG_RA);
  cleanup_dns_message hv_dns_message sf2;
  round_trip (&sf, 512, &sf2);
  assert_int_equal (sf2.rcode, HV_DNS_RCODE_SERVFAIL);
  hv_dns_message bad;
  assert_int_equal (hv_dns_reply_init (&bad, &plain, HV_DNS_RCODE_BADVERS, 1232, &err), -1);
  hv_error_free (&err);
  /* NOERROR with no answers (NODATA). */
  cleanup_dns_message hv_dns_message nodata;
  assert_int_equal (hv_dns_reply_init (&nodata, &parsed, HV_DNS_RCODE_NOERROR, 1232, &err), 0);
  cleanup_dns_message hv_dns_message nodata2;
  round_trip (&nodata, 512, &nodata2);
  assert_int_equal (nodata2.rcode, 0);
  assert_int_equal (nodata2.n_rr[HV_DNS_ANSWER], 0);
  /* BADVERS (16) travels in OPT's extended rcode. */
  cleanup_dns_message hv_dns_message bv;
  assert_int_equal (hv_dns_reply_init (&bv, &parsed, HV_DNS_RCODE_BADVERS, 1232, &err), 0);
  cleanup_dns_message hv_dns_message bv2;
  round_trip (&bv, 512, &bv2);
  assert_int_equal (bv2.rcode, 16);
}

static void
test_ede_text_limits (void **state)
{
  (void) state;
  hv_error *err = NULL;
  hv_dns_name q;
  char longname[300];
  /* The longest name there is, and the longest text: still fits 512. */
  for (int i = 0; i < 4; i++)
    memset (longname + i * 64, 'a', 63), longname[i * 64 + 63] = '.';
  longname[4 * 64 - 3] = '\0';
  name (longname, &q);
  cleanup_dns_message hv_dns_message query;
  assert_int_equal (hv_dns_query_init (&query, 1, &q, HV_DNS_TYPE_A, true, 512, &err), 0);
  cleanup_dns_message hv_dns_message reply;
  assert_int_equal (hv_dns_reply_init (&reply, &query, HV_DNS_RCODE_REFUSED, 1232, &err), 0);
  char text[600];
  snprintf (text, sizeof (text), "haven: policy claude-code does not allow %s", longname);
  /* "é" (2 bytes) straddling byte 200 is cut whole. */
  memcpy (text + 199, "\xc3\xa9", 2);
  assert_int_equal (hv_dns_add_ede (&reply, HV_DNS_EDE_BLOCKED, text, &err), 1);
  assert_int_equal (strlen (reply.edns.ede[0].text), 199);
  cleanup_dns_message hv_dns_message r2;
  round_trip (&reply, 512, &r2);
  assert_string_equal (r2.edns.ede[0].text, reply.edns.ede[0].text);
  /* Not UTF-8. */
  assert_int_equal (hv_dns_add_ede (&reply, 0, "bad \xc3(", &err), -1);
  hv_error_free (&err);
  assert_int_equal (hv_dns_add_ede (&reply, 0, "overlong \xc0\xaf", &err), -1);
  hv_error_free (&err);
}

static void
test_edns_parse_errors (void **state)
{
  (void) state;
  struct wire w;
  /* EDE with an invalid UTF-8 text, then one shorter than its code. */
  wheader (&w, 1, 0x8000, 0, 0, 0, 1);
  w8 (&w, 0);
  size_t at = wrr (&w, HV_DNS_TYPE_OPT, 4096, 0x00008000, 0);
  w16 (&w, HV_DNS_OPT_EDE), w16 (&w, 4), w16 (&w, 18), w8 (&w, 0xff), w8 (&w, 'x');
  fix_rdlen (&w, at);
  expect_parse_error (w.b, w.n, "not UTF-8");
  wheader (&w, 1, 0x8000, 0, 0, 0, 1);
  w8 (&w, 0);
  at = wrr (&w, HV_DNS_TYPE_OPT, 4096, 0, 0);
  w16 (&w, HV_DNS_OPT_EDE), w16 (&w, 1), w8 (&w, 0);
  fix_rdlen (&w, at);
  expect_parse_error (w.b, w.n, "shorter than its info code");
  /* An option running past the record. */
  wheader (&w, 1, 0x8000, 0, 0, 0, 1);
  w8 (&w, 0);
  at = wrr (&w, HV_DNS_TYPE_OPT, 4096, 0, 0);
  w16 (&w, 10), w16 (&w, 9), w32 (&w, 0);
  fix_rdlen (&w, at);
  expect_parse_error (w.b, w.n, "runs past the record");
  /* Two OPTs; OPT in the answer section; OPT not owned by the root. */
  wheader (&w, 1, 0x8000, 0, 0, 0, 2);
  w8 (&w, 0), wrr (&w, HV_DNS_TYPE_OPT, 4096, 0, 0);
  w8 (&w, 0), wrr (&w, HV_DNS_TYPE_OPT, 4096, 0, 0);
  expect_parse_error (w.b, w.n, "a second OPT");
  wheader (&w, 1, 0x8000, 0, 1, 0, 0);
  w8 (&w, 0), wrr (&w, HV_DNS_TYPE_OPT, 4096, 0, 0);
  expect_parse_error (w.b, w.n, "OPT outside the additional section");
  wheader (&w, 1, 0x8000, 0, 0, 0, 1);
  wname (&w, "x"), wrr (&w, HV_DNS_TYPE_OPT, 4096, 0, 0);
  expect_parse_error (w.b, w.n, "OPT owner is not the root");

  /* A valid OPT: DO, extended rcode 1 (BADVERS with header rcode 0),
   * version, an unknown option and an EDE with text. */
  wheader (&w, 9, 0x8000, 0, 0, 0, 1);
  w8 (&w, 0);
  at = wrr (&w, HV_DNS_TYPE_OPT, 1400, 0x01008000, 0);
  w16 (&w, 10), w16 (&w, 8), w32 (&w, 0x01020304), w32 (&w, 0x05060708);
  w16 (&w, HV_DNS_OPT_EDE), w16 (&w, 2 + 5), w16 (&w, 23), wbytes (&w, "n\xc3\xa9t!", 5);
  fix_rdlen (&w, at);
  cleanup_dns_message hv_dns_message m;
  parse_ok (&w, &m);
  assert_int_equal (m.rcode, HV_DNS_RCODE_BADVERS);
  assert_true (m.edns.dnssec_ok);
  assert_int_equal (m.edns.udp_size, 1400);
  assert_int_equal (m.edns.n_options, 2);
  assert_int_equal (m.edns.n_ede, 1);
  assert_int_equal (m.edns.ede[0].info_code, 23);
  assert_string_equal (m.edns.ede[0].text, "n\xc3\xa9t!");
  uint8_t buf[512];
  size_t len;
  hv_error *err = NULL;
  assert_int_equal (hv_dns_encode (&m, buf, sizeof (buf), 512, &len, NULL, &err), 0);
  assert_int_equal (len, w.n);
  assert_memory_equal (buf, w.b, w.n);
}

static void
test_ttl_capping (void **state)
{
  (void) state;
  struct wire w;
  real_response (&w);
  cleanup_dns_message hv_dns_message m;
  parse_ok (&w, &m);
  hv_dns_cap_ttls (&m, 60);
  uint8_t buf[512];
  size_t len;
  hv_error *err = NULL;
  assert_int_equal (hv_dns_encode (&m, buf, sizeof (buf), 512, &len, NULL, &err), 0);
  cleanup_dns_message hv_dns_message capped;
  assert_int_equal (hv_dns_parse (buf, len, &capped, &err), 0);
  assert_int_equal (capped.rr[HV_DNS_ANSWER][0].ttl, 60);  /* was 3600 */
  assert_int_equal (capped.rr[HV_DNS_ANSWER][1].ttl, 20);  /* below the cap */
  assert_int_equal (capped.rr[HV_DNS_ANSWER][2].ttl, 20);
  assert_true (capped.has_edns); /* OPT's "TTL" is flags, untouched */

  /* A TTL with the top bit set reads as 0 (RFC 2181 8). */
  real_response (&w);
  w.b[12 + 21 + 2 + 4] = 0x80; /* first answer's TTL, high byte */
  cleanup_dns_message hv_dns_message m2;
  parse_ok (&w, &m2);
  assert_int_equal (m2.rr[HV_DNS_ANSWER][0].ttl, 0);
}

static void
test_truncation_sets_tc (void **state)
{
  (void) state;
  hv_error *err = NULL;
  hv_dns_name q, owner;
  name ("many.example", &q);
  name ("many.example", &owner);
  cleanup_dns_message hv_dns_message query;
  assert_int_equal (hv_dns_query_init (&query, 5, &q, HV_DNS_TYPE_A, true, 1232, &err), 0);
  cleanup_dns_message hv_dns_message reply;
  assert_int_equal (hv_dns_reply_init (&reply, &query, 0, 1232, &err), 0);
  /* 40 A records of 16 bytes each (compressed owner): 640 > 512. */
  for (unsigned i = 0; i < 40; i++)
    {
      uint8_t a[4] = { 198, 51, 100, (uint8_t) i };
      assert_int_equal (hv_dns_add_rr (&reply, HV_DNS_ANSWER, &owner, HV_DNS_TYPE_A, 1, 30, a, 4, &err), 0);
    }
  uint8_t buf[65535];
  size_t len;
  bool truncated;
  assert_int_equal (hv_dns_encode (&reply, buf, sizeof (buf), 512, &len, &truncated, &err), 0);
  assert_true (truncated);
  assert_true (len <= 512);
  cleanup_dns_message hv_dns_message t;
  assert_int_equal (hv_dns_parse (buf, len, &t, &err), 0);
  assert_true (t.flags & HV_DNS_FLAG_TC);
  assert_int_equal (t.n_rr[HV_DNS_ANSWER], 0);
  assert_int_equal (t.n_questions, 1);
  assert_true (t.has_edns); /* OPT survives truncation */
  /* The client's EDNS size lets it all through, compressed. */
  assert_int_equal (hv_dns_encode (&reply, buf, sizeof (buf), 1232, &len, &truncated, &err), 0);
  assert_false (truncated);
  assert_int_equal (len, 12 + 18 + 40 * 16 + 11);
  cleanup_dns_message hv_dns_message full;
  round_trip (&reply, 1232, &full);
  assert_int_equal (full.n_rr[HV_DNS_ANSWER], 40);
  /* Additional records that do not fit are dropped without TC. */
  for (unsigned i = 0; i < 40; i++)
    {
      uint8_t a[4] = { 203, 0, 113, (uint8_t) i };
      assert_int_equal (hv_dns_add_rr (&reply, HV_DNS_ADDITIONAL, &owner, HV_DNS_TYPE_A, 1, 30, a, 4, &err), 0);
    }
  assert_int_equal (hv_dns_encode (&reply, buf, sizeof (buf), 1232, &len, &truncated, &err), 0);
  assert_true (truncated);
  cleanup_dns_message hv_dns_message part;
  assert_int_equal (hv_dns_parse (buf, len, &part, &err), 0);
  assert_false (part.flags & HV_DNS_FLAG_TC);
  assert_int_equal (part.n_rr[HV_DNS_ANSWER], 40);
  assert_true (part.n_rr[HV_DNS_ADDITIONAL] > 0 && part.n_rr[HV_DNS_ADDITIONAL] < 40);
  assert_true (part.has_edns);
  /* Too small for the question: an error, not a silent empty reply. */
  assert_int_equal (hv_dns_encode (&reply, buf, sizeof (buf), 20, &len, &truncated, &err), -1);
  hv_error_free (&err);
}

/* SOA in the authority section with both names compressed against the
 * question: stored decompressed, so the re-encoding (at other offsets) is
 * still right. */
static void
test_compressed_rdata_names (void **state)
{
  (void) state;
  struct wire w;
  wheader (&w, 3, 0x8183, 1, 0, 1, 0); /* NXDOMAIN */
  wname (&w, "nope.example.org"); /* 12; example.org at 17 */
  w16 (&w, HV_DNS_TYPE_A), w16 (&w, 1);
  wptr (&w, 17);
  size_t at = wrr (&w, HV_DNS_TYPE_SOA, 1, 900, 0);
  w8 (&w, 3), wbytes (&w, "ns1", 3), wptr (&w, 17);
  w8 (&w, 4), wbytes (&w, "host", 4), wptr (&w, 17);
  for (int i = 0; i < 5; i++)
    w32 (&w, 100 + (uint32_t) i);
  fix_rdlen (&w, at);
  cleanup_dns_message hv_dns_message m;
  parse_ok (&w, &m);
  assert_int_equal (m.rcode, HV_DNS_RCODE_NXDOMAIN);
  const hv_dns_rr *soa = &m.rr[HV_DNS_AUTHORITY][0];
  assert_int_equal (soa->rdlen, 17 + 18 + 20);
  /* Drop the question: every offset moves, the SOA must still decode. */
  m.n_questions = 0;
  cleanup_dns_message hv_dns_message again;
  round_trip (&m, 512, &again);
  m.n_questions = 1;
  assert_memory_equal (again.rr[HV_DNS_AUTHORITY][0].rdata, soa->rdata, soa->rdlen);
  /* Bytes left in the rdata after an SOA's fields. */
  w.b[at + 1] += 1;
  w.b[w.n++] = 0;
  expect_parse_error (w.b, w.n, "bytes after its names");
  /* A CNAME whose target runs past its rdata into the next bytes. */
  wheader (&w, 3, 0x8180, 0, 1, 0, 0);
  wname (&w, "a");
  wrr (&w, HV_DNS_TYPE_CNAME, 1, 1, 2);
  w8 (&w, 1), w8 (&w, 'b'), w8 (&w, 0);
  expect_parse_error (w.b, w.n, NULL);
  /* A and AAAA of the wrong size. */
  wheader (&w, 3, 0x8180, 0, 1, 0, 0);
  wname (&w, "a");
  wrr (&w, HV_DNS_TYPE_AAAA, 1, 1, 4);
  w32 (&w, 0);
  expect_parse_error (w.b, w.n, "AAAA rdata of 4 bytes");
}

static void
add (hv_dns_message *m, enum hv_dns_section s, const char *owner, uint16_t type, const char *data, uint32_t ttl)
{
  hv_error *err = NULL;
  hv_dns_name o, t;
  uint8_t rd[16];
  uint16_t len;
  name (owner, &o);
  if (type == HV_DNS_TYPE_CNAME)
    {
      name (data, &t);
      if (hv_dns_add_rr (m, s, &o, type, 1, ttl, t.wire, t.len, &err) < 0)
        fail_msg ("%s", err->msg);
      return;
    }
  int af = type == HV_DNS_TYPE_A ? AF_INET : AF_INET6;
  assert_int_equal (inet_pton (af, data, rd), 1);
  len = af == AF_INET ? 4 : 16;
  if (hv_dns_add_rr (m, s, &o, type, 1, ttl, rd, len, &err) < 0)
    fail_msg ("%s", err->msg);
}

static void
test_cname_chain (void **state)
{
  (void) state;
  hv_error *err = NULL;
  hv_dns_name q;
  char t[HV_DNS_NAME_TEXT_MAX];
  name ("api.example.com", &q);
  cleanup_dns_message hv_dns_message query;
  assert_int_equal (hv_dns_query_init (&query, 1, &q, HV_DNS_TYPE_A, true, 0, &err), 0);
  cleanup_dns_message hv_dns_message r;
  assert_int_equal (hv_dns_reply_init (&r, &query, 0, 0, &err), 0);
  /* Unrelated records first: an address for a name off the chain, a
   * CNAME from another name into the chain's end, and an additional A for
   * the queried name (not an answer). */
  add (&r, HV_DNS_ANSWER, "evil.example.net", HV_DNS_TYPE_A, "203.0.113.66", 30);
  add (&r, HV_DNS_ANSWER, "other.example", HV_DNS_TYPE_CNAME, "edge.cdn.example", 30);
  add (&r, HV_DNS_ANSWER, "API.example.com", HV_DNS_TYPE_CNAME, "api.cdn.example", 300);
  add (&r, HV_DNS_ANSWER, "api.cdn.example", HV_DNS_TYPE_CNAME, "edge.cdn.example", 120);
  add (&r, HV_DNS_ANSWER, "Edge.CDN.example", HV_DNS_TYPE_A, "198.51.100.7", 20);
  add (&r, HV_DNS_ANSWER, "edge.cdn.example", HV_DNS_TYPE_AAAA, "2001:db8::7", 40);
  add (&r, HV_DNS_ANSWER, "api.cdn.example", HV_DNS_TYPE_A, "203.0.113.99", 30); /* at a CNAME owner */
  add (&r, HV_DNS_ADDITIONAL, "api.example.com", HV_DNS_TYPE_A, "203.0.113.1", 30);
  /* Through the wire, as the resolver will see it. */
  cleanup_dns_message hv_dns_message resp;
  round_trip (&r, 4096, &resp);

  hv_dns_chain c;
  assert_int_equal (hv_dns_follow_chain (&resp, &q, &c, &err), 0);
  assert_int_equal (c.n_names, 3);
  assert_string_equal (hv_dns_name_to_text (&c.names[0], t), "api.example.com");
  assert_string_equal (hv_dns_name_to_text (&c.names[1], t), "api.cdn.example");
  assert_string_equal (hv_dns_name_to_text (&c.names[2], t), "edge.cdn.example");
  assert_int_equal (c.cname_ttl, 120);
  assert_int_equal (c.n_addrs, 2);
  assert_int_equal (c.addrs[0].family, AF_INET);
  assert_int_equal (c.addrs[0].v4.s_addr, inet_addr ("198.51.100.7"));
  assert_int_equal (c.addrs[0].ttl, 20);
  assert_int_equal (c.addrs[1].family, AF_INET6);
  assert_int_equal (c.addrs[1].ttl, 40);
  hv_dns_chain_free (&c);

  /* Asked for a name the response has nothing for: no addresses, even
   * though the response carries some. */
  hv_dns_name other;
  name ("unrelated.example", &other);
  assert_int_equal (hv_dns_follow_chain (&resp, &other, &c, &err), 0);
  assert_int_equal (c.n_names, 1);
  assert_int_equal (c.n_addrs, 0);
  assert_int_equal (c.cname_ttl, UINT32_MAX);
  hv_dns_chain_free (&c);

  /* A loop back to the start; two different CNAMEs for one owner; a chain
   * longer than 16. */
  cleanup_dns_message hv_dns_message loop;
  assert_int_equal (hv_dns_reply_init (&loop, &query, 0, 0, &err), 0);
  add (&loop, HV_DNS_ANSWER, "api.example.com", HV_DNS_TYPE_CNAME, "b.example", 1);
  add (&loop, HV_DNS_ANSWER, "b.example", HV_DNS_TYPE_CNAME, "API.EXAMPLE.COM", 1);
  add (&loop, HV_DNS_ANSWER, "api.example.com", HV_DNS_TYPE_A, "192.0.2.1", 1);
  assert_int_equal (hv_dns_follow_chain (&loop, &q, &c, &err), -1);
  assert_non_null (strstr (err->msg, "CNAME loop at API.EXAMPLE.COM"));
  hv_error_free (&err);
  hv_dns_chain_free (&c);

  cleanup_dns_message hv_dns_message two;
  assert_int_equal (hv_dns_reply_init (&two, &query, 0, 0, &err), 0);
  add (&two, HV_DNS_ANSWER, "api.example.com", HV_DNS_TYPE_CNAME, "a.example", 1);
  add (&two, HV_DNS_ANSWER, "api.example.com", HV_DNS_TYPE_CNAME, "b.example", 1);
  assert_int_equal (hv_dns_follow_chain (&two, &q, &c, &err), -1);
  assert_non_null (strstr (err->msg, "two CNAMEs for api.example.com"));
  hv_error_free (&err);
  hv_dns_chain_free (&c);

  cleanup_dns_message hv_dns_message longc;
  assert_int_equal (hv_dns_reply_init (&longc, &query, 0, 0, &err), 0);
  char from[32], to[32];
  add (&longc, HV_DNS_ANSWER, "api.example.com", HV_DNS_TYPE_CNAME, "n0.example", 1);
  for (int i = 0; i < 20; i++)
    {
      snprintf (from, sizeof (from), "n%d.example", i);
      snprintf (to, sizeof (to), "n%d.example", i + 1);
      add (&longc, HV_DNS_ANSWER, from, HV_DNS_TYPE_CNAME, to, 1);
    }
  assert_int_equal (hv_dns_follow_chain (&longc, &q, &c, &err), -1);
  assert_non_null (strstr (err->msg, "longer than 16 names"));
  hv_error_free (&err);
  hv_dns_chain_free (&c);
}

static void
test_compression_output (void **state)
{
  (void) state;
  /* The encoder's pointers: the answer owner points at the question, the
   * CNAME target's suffix at the question's "example.com". */
  hv_error *err = NULL;
  hv_dns_name q;
  name ("www.example.com", &q);
  cleanup_dns_message hv_dns_message query;
  assert_int_equal (hv_dns_query_init (&query, 1, &q, HV_DNS_TYPE_A, true, 0, &err), 0);
  cleanup_dns_message hv_dns_message r;
  assert_int_equal (hv_dns_reply_init (&r, &query, 0, 0, &err), 0);
  add (&r, HV_DNS_ANSWER, "www.example.com", HV_DNS_TYPE_CNAME, "cdn.example.com", 60);
  uint8_t buf[512];
  size_t len;
  assert_int_equal (hv_dns_encode (&r, buf, sizeof (buf), 512, &len, NULL, &err), 0);
  /* header 12, question 17 + 4, owner pointer 2, fields 10, target
   * "cdn" + pointer to 16 (example.com) = 6. */
  assert_int_equal (len, 12 + 21 + 2 + 10 + 6);
  assert_int_equal (buf[33], 0xC0);
  assert_int_equal (buf[34], 12);
  assert_int_equal (buf[44], 6); /* rdlength */
  assert_int_equal (buf[49], 0xC0);
  assert_int_equal (buf[50], 16);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_real_response),
    cmocka_unit_test (test_captured_aaaa),
    cmocka_unit_test (test_every_truncation_fails),
    cmocka_unit_test (test_lying_counts),
    cmocka_unit_test (test_compression_pointer_to_itself),
    cmocka_unit_test (test_compression_forward_pointer),
    cmocka_unit_test (test_compression_loop_through_label),
    cmocka_unit_test (test_compression_too_many_hops),
    cmocka_unit_test (test_name_lengths),
    cmocka_unit_test (test_names_text_and_case),
    cmocka_unit_test (test_query_and_reply),
    cmocka_unit_test (test_ede_text_limits),
    cmocka_unit_test (test_edns_parse_errors),
    cmocka_unit_test (test_ttl_capping),
    cmocka_unit_test (test_truncation_sets_tc),
    cmocka_unit_test (test_compressed_rdata_names),
    cmocka_unit_test (test_cname_chain),
    cmocka_unit_test (test_compression_output),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
