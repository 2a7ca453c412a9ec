/* Learn mode's sinkhole answers (runtime/egress/egress_learn.c): one
 * address per name in 240.0.0.0/8, the same on every ask, AAAA with no
 * data, never for a denied name, a refused type or another class, and no
 * sinkholes at all when an allow CIDR reaches the range (the table would
 * let a connect to it out) or outside learn mode. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "dns_message.h"
#include "egress_config.h"
#include "egress_decide.h"
#include "egress_learn.h"

static void
query (const char *name, uint16_t type, hv_dns_message *q)
{
  hv_error *err = NULL;
  hv_dns_name n;
  assert_int_equal (hv_dns_name_from_text (name, &n, &err), 0);
  assert_int_equal (hv_dns_query_init (q, 7, &n, type, true, 1232, &err), 0);
}

/* The answer's A address as text, "" for no data, NULL when refused as usual. */
static const char *
answer (hv_res_learn *l, const char *name, uint16_t type, const char *why, char buf[32])
{
  cleanup_dns_message hv_dns_message q = { 0 };
  cleanup_dns_message hv_dns_message reply = { 0 };
  query (name, type, &q);
  uint8_t addr[4];
  bool has;
  if (!hv_res_learn_answer (l, &q, name, type, why, "text", &reply, addr, &has))
    return NULL;
  assert_int_equal (reply.rcode, HV_DNS_RCODE_NOERROR);
  assert_true (reply.flags & HV_DNS_FLAG_QR);
  if (!has)
    {
      assert_int_equal (reply.n_rr[HV_DNS_ANSWER], 0);
      buf[0] = '\0';
      return buf;
    }
  assert_int_equal (reply.n_rr[HV_DNS_ANSWER], 1);
  assert_int_equal (reply.rr[HV_DNS_ANSWER][0].type, HV_DNS_TYPE_A);
  assert_memory_equal (&reply.rr[HV_DNS_ANSWER][0].a, addr, 4);
  snprintf (buf, 32, "%u.%u.%u.%u", addr[0], addr[1], addr[2], addr[3]);
  return buf;
}

static void
test_sinkholes (void **state)
{
  (void) state;
  hv_egress_resolver_config cfg = { .learn = true };
  hv_res_learn *l = hv_res_learn_new (&cfg);
  assert_non_null (l);
  char b[32];
  assert_string_equal (answer (l, "build.example", HV_DNS_TYPE_A, HV_EGRESS_WHY_UNLISTED, b), "240.0.0.1");
  assert_string_equal (answer (l, "cdn.example", HV_DNS_TYPE_A, HV_EGRESS_WHY_UNLISTED, b), "240.0.0.2");
  assert_string_equal (answer (l, "build.example", HV_DNS_TYPE_A, HV_EGRESS_WHY_UNLISTED, b), "240.0.0.1");
  assert_string_equal (answer (l, "build.example", HV_DNS_TYPE_AAAA, HV_EGRESS_WHY_UNLISTED, b), "");
  /* A denied name, a refused type: refused as usual. */
  assert_null (answer (l, "evil.example", HV_DNS_TYPE_A, HV_EGRESS_WHY_DENIED, b));
  assert_null (answer (l, "build.example", HV_DNS_TYPE_TXT, HV_EGRESS_WHY_UNLISTED, b));
  assert_null (answer (l, "ok.example", HV_DNS_TYPE_TXT, HV_EGRESS_WHY_TYPE, b));
  /* Bounded: past HV_RES_LEARN_MAX names, refused as usual. */
  for (unsigned i = 0; i < HV_RES_LEARN_MAX; i++)
    {
      char name[32];
      snprintf (name, sizeof (name), "n%u.example", i);
      (void) answer (l, name, HV_DNS_TYPE_A, HV_EGRESS_WHY_UNLISTED, b);
    }
  assert_null (answer (l, "one-more.example", HV_DNS_TYPE_A, HV_EGRESS_WHY_UNLISTED, b));
  assert_string_equal (answer (l, "cdn.example", HV_DNS_TYPE_A, HV_EGRESS_WHY_UNLISTED, b), "240.0.0.2");
  hv_res_learn_free (l);
}

static void
test_no_sinkholes (void **state)
{
  (void) state;
  hv_egress_resolver_config off = { .learn = false };
  assert_null (hv_res_learn_new (&off));
  /* An allow CIDR that reaches 240.0.0.0/8: the table would accept. */
  static const struct
  {
    uint8_t a0;
    unsigned len;
    bool reaches;
  } cases[] = { { 0, 0, true }, { 240, 4, true }, { 224, 3, true }, { 128, 1, true }, { 240, 8, true },
                { 240, 24, true }, { 10, 8, false }, { 241, 8, false }, { 192, 2, true }, { 128, 2, false }, { 0, 1, false } };
  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      hv_egress_cidr c = { .family = AF_INET, .addr = { cases[i].a0 }, .prefix_len = cases[i].len };
      hv_egress_resolver_config cfg = { .learn = true, .allow_cidrs = &c, .n_allow_cidrs = 1 };
      hv_res_learn *l = hv_res_learn_new (&cfg);
      if (cases[i].reaches)
        assert_null (l);
      else
        assert_non_null (l);
      hv_res_learn_free (l);
    }
}

/* run.haven.egress carries learn mode: "learn": true, written only when
 * set, read back; anything but a boolean is an error naming the key. */
static void
test_annotation (void **state)
{
  (void) state;
  hv_error *err = NULL;
  hv_egress_config *c = NULL;
  assert_int_equal (hv_egress_config_parse ("{\"policy\":\"p\",\"connect\":\"pasta\",\"learn\":true}", "config.json", &c,
                                            &err),
                    0);
  assert_true (c->learn);
  char *text = hv_egress_config_generate (c);
  assert_non_null (strstr (text, "\"learn\":true"));
  free (text);
  c->learn = false;
  text = hv_egress_config_generate (c);
  assert_null (strstr (text, "learn"));
  free (text);
  hv_egress_config_free (c);
  c = NULL;
  assert_int_equal (hv_egress_config_parse ("{\"policy\":\"p\",\"connect\":\"pasta\"}", "config.json", &c, &err), 0);
  assert_false (c->learn);
  hv_egress_config_free (c);
  c = NULL;
  assert_int_equal (hv_egress_config_parse ("{\"policy\":\"p\",\"connect\":\"pasta\",\"learn\":\"yes\"}", "config.json",
                                            &c, &err),
                    -1);
  assert_non_null (strstr (err->msg, "learn"));
  hv_error_free (&err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_sinkholes),
    cmocka_unit_test (test_no_sinkholes),
    cmocka_unit_test (test_annotation),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
