/* Fuzz target of the DNS message codec (runtime/egress/dns_message.c).
 *
 * Whatever the input, parsing must not crash, leak or read out of bounds;
 * when it parses, re-encoding must succeed (or fail only for size), parse
 * again to the same message, and encode again to the same bytes; names
 * must survive text and back; the CNAME chain of the first question must
 * be followed without fault; a reply to it as a query, with an EDE, must
 * always fit the client's size; encoded within 512 bytes it must fit or
 * be cut to what parses.  Built with libFuzzer by build.sh, and
 * with gcc by make check as a replay of the committed corpus
 * (fuzz_corpus_driver.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns_message.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void __attribute__ ((noreturn))
fail (const char *what, const hv_error *err)
{
  fprintf (stderr, "fuzz_dns_message: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
  abort ();
}

static void
check_name_text (const hv_dns_name *n)
{
  char text[HV_DNS_NAME_TEXT_MAX];
  hv_dns_name back;
  hv_error *err = NULL;
  hv_dns_name_to_text (n, text);
  if (hv_dns_name_from_text (text, &back, &err) < 0)
    fail ("name text does not parse back", err);
  if (back.len != n->len || memcmp (back.wire, n->wire, n->len) != 0)
    fail ("name text parses back to another name", NULL);
  if (!hv_dns_name_equal (&back, n))
    fail ("name not equal to itself", NULL);
}

static void
check_chain (const hv_dns_message *m)
{
  hv_dns_chain c;
  hv_error *err = NULL;
  if (m->n_questions == 0)
    return;
  if (hv_dns_follow_chain (m, &m->questions[0].name, &c, &err) < 0)
    hv_error_free (&err);
  else if (c.n_names < 1 || c.n_names > HV_DNS_MAX_CHAIN)
    fail ("chain of impossible length", NULL);
  hv_dns_chain_free (&c);
}

static void
check_reply (const hv_dns_message *query)
{
  static uint8_t buf[65535];
  char text[HV_DNS_NAME_TEXT_MAX + 64];
  char qtext[HV_DNS_NAME_TEXT_MAX];
  hv_dns_message reply;
  hv_error *err = NULL;
  size_t len;
  if (query->n_questions != 1)
    return;
  if (hv_dns_reply_init (&reply, query, HV_DNS_RCODE_REFUSED, 1232, &err) < 0)
    fail ("reply", err);
  snprintf (text, sizeof (text), "haven: policy fuzz does not allow %s",
            hv_dns_name_to_text (&query->questions[0].name, qtext));
  if (hv_dns_add_ede (&reply, HV_DNS_EDE_PROHIBITED, text, &err) < 0)
    fail ("add EDE", err);
  /* A refusal must always go out, whatever the question. */
  if (hv_dns_encode (&reply, buf, sizeof (buf), hv_dns_reply_max_size (query), &len, NULL, &err) < 0)
    fail ("encode the refusal", err);
  if (len > hv_dns_reply_max_size (query))
    fail ("refusal larger than the client accepts", NULL);
  hv_dns_message again;
  if (hv_dns_parse (buf, len, &again, &err) < 0)
    fail ("refusal does not parse", err);
  if (!hv_dns_message_equal (&reply, &again))
    fail ("refusal parses to another message", NULL);
  hv_dns_message_free (&again);
  hv_dns_message_free (&reply);
}

/* Within a non-EDNS client's 512 bytes: either it fits whole, or it is
 * cut to what parses (TC and no answers, or fewer additional records), or
 * the questions alone do not fit. */
static void
check_small (const hv_dns_message *m)
{
  static uint8_t buf[512];
  hv_dns_message small;
  hv_error *err = NULL;
  size_t len;
  bool truncated;
  if (hv_dns_encode (m, buf, sizeof (buf), HV_DNS_UDP_MIN, &len, &truncated, &err) < 0)
    {
      if (strstr (err->msg, "does not fit") == NULL)
        fail ("encode within 512", err);
      hv_error_free (&err);
      return;
    }
  if (len > HV_DNS_UDP_MIN)
    fail ("encoding larger than its limit", NULL);
  if (hv_dns_parse (buf, len, &small, &err) < 0)
    fail ("512-byte encoding does not parse", err);
  if (!truncated && !hv_dns_message_equal (m, &small))
    fail ("512-byte encoding parses to another message", NULL);
  if (truncated && (small.flags & HV_DNS_FLAG_TC) && !(m->flags & HV_DNS_FLAG_TC)
      && small.n_rr[HV_DNS_ANSWER] + small.n_rr[HV_DNS_AUTHORITY] + small.n_rr[HV_DNS_ADDITIONAL] != 0)
    fail ("TC set but records kept", NULL);
  hv_dns_message_free (&small);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static uint8_t buf[65535], buf2[65535];
  hv_dns_message m, again, third;
  hv_error *err = NULL;
  size_t len, len2;
  bool truncated, truncated2;

  if (hv_dns_parse (data, size, &m, &err) < 0)
    {
      hv_error_free (&err);
      return 0;
    }
  if (hv_dns_encode (&m, buf, sizeof (buf), sizeof (buf), &len, &truncated, &err) < 0)
    {
      /* Only size may stop it: compression can make a name longer than
       * it came in (the encoder remembers fewer names than a message can
       * point at). */
      if (strstr (err->msg, "does not fit") == NULL)
        fail ("encode", err);
      hv_error_free (&err);
      hv_dns_message_free (&m);
      return 0;
    }
  if (hv_dns_parse (buf, len, &again, &err) < 0)
    fail ("re-encoded message does not parse", err);
  if (!truncated && !hv_dns_message_equal (&m, &again))
    fail ("re-encoded message parses to another message", NULL);
  if (truncated && !(again.flags & HV_DNS_FLAG_TC) && again.n_rr[HV_DNS_ADDITIONAL] >= m.n_rr[HV_DNS_ADDITIONAL])
    fail ("records left out with neither TC nor fewer additional records", NULL);
  if (hv_dns_encode (&again, buf2, sizeof (buf2), sizeof (buf2), &len2, &truncated2, &err) < 0)
    fail ("second encode", err);
  if (!truncated && (truncated2 || len2 != len || memcmp (buf, buf2, len) != 0))
    fail ("encoding is not stable", NULL);

  for (size_t i = 0; i < m.n_questions; i++)
    check_name_text (&m.questions[i].name);
  for (int s = 0; s < 3; s++)
    for (size_t i = 0; i < m.n_rr[s]; i++)
      {
        check_name_text (&m.rr[s][i].name);
        if (m.rr[s][i].cname)
          check_name_text (m.rr[s][i].cname);
      }
  check_chain (&m);
  check_reply (&m);
  check_small (&m);

  hv_dns_cap_ttls (&m, 300);
  if (hv_dns_encode (&m, buf, sizeof (buf), sizeof (buf), &len, &truncated, &err) < 0)
    fail ("encode after capping", err);
  if (hv_dns_parse (buf, len, &third, &err) < 0)
    fail ("capped message does not parse", err);
  for (int s = 0; s < 3; s++)
    for (size_t i = 0; i < third.n_rr[s]; i++)
      if (third.rr[s][i].ttl > 300)
        fail ("TTL above the cap", NULL);

  hv_dns_message_free (&third);
  hv_dns_message_free (&again);
  hv_dns_message_free (&m);
  return 0;
}
