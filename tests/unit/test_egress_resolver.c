/* Unit tests of the egress resolver's decisions (egress_decide.c): name
 * rules (wildcards are subdomains at any depth, never the apex; case),
 * what a query gets (allowed, refused, deny wins port by port, types),
 * which answers may be pinned (special addresses, CIDRs), TTL clamping,
 * the config checks of hv_egress_resolver_new, which refused names have
 * allowed names below them (answered "no data", not NXDOMAIN), and the
 * line haven run prints for the first refused name (egress_notice.h). */
#include "config.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dns_message.h"
#include "egress_decide.h"
#include "egress_notice.h"
#include "egress_resolver.h"

static void
test_name_rule_exact (void **state)
{
  (void) state;
  hv_egress_name_rule r = { .name = "api.github.com", .port_min = 443, .port_max = 443 };
  assert_true (hv_egress_name_rule_matches (&r, "api.github.com"));
  assert_true (hv_egress_name_rule_matches (&r, "API.GitHub.Com"));
  assert_true (hv_egress_name_rule_matches (&r, "api.github.com."));
  assert_false (hv_egress_name_rule_matches (&r, "x.api.github.com"));
  assert_false (hv_egress_name_rule_matches (&r, "github.com"));
  assert_false (hv_egress_name_rule_matches (&r, "xapi.github.com"));
  assert_false (hv_egress_name_rule_matches (&r, "api.github.co"));
  assert_false (hv_egress_name_rule_matches (&r, "api.github.com.evil"));
}

static void
test_name_rule_wildcard (void **state)
{
  (void) state;
  hv_egress_name_rule r = { .name = "example.com", .subdomains = true, .port_min = 1, .port_max = 65535 };
  assert_true (hv_egress_name_rule_matches (&r, "a.example.com"));
  assert_true (hv_egress_name_rule_matches (&r, "a.b.c.example.com"));
  assert_true (hv_egress_name_rule_matches (&r, "A.EXAMPLE.COM"));
  assert_false (hv_egress_name_rule_matches (&r, "example.com"));  /* the apex: no */
  assert_false (hv_egress_name_rule_matches (&r, "example.com.")); /* not with a dot either */
  assert_false (hv_egress_name_rule_matches (&r, "badexample.com"));
  assert_false (hv_egress_name_rule_matches (&r, ".example.com"));
  assert_false (hv_egress_name_rule_matches (&r, "example.com.evil.net"));
  assert_false (hv_egress_name_rule_matches (&r, "com"));
}

static void
test_name_plain (void **state)
{
  (void) state;
  assert_true (hv_egress_name_plain ("a.github.com"));
  /* A label with a dot in it ("a.github" under com) is not below github.com. */
  assert_false (hv_egress_name_plain ("a\\.github.com"));
  assert_false (hv_egress_name_plain ("a\\000.github.com"));
  assert_false (hv_egress_name_plain (""));
  assert_false (hv_egress_name_plain ("a..github.com"));
}

static const hv_egress_name_rule allow[] = {
  { "api.github.com", false, 443, 443 },
  { "api.github.com", false, 80, 80 },
  { "github.com", false, 22, 22 },
  { "example.com", true, 443, 443 },
  { "db.internal", false, 5000, 5010 },
};
static const hv_egress_name_rule deny[] = {
  { "secret.example.com", false, 1, 65535 }, /* a whole name */
  { "db.internal", false, 5005, 5005 },      /* one port of a range */
};

static hv_egress_resolver_config
rules (void)
{
  hv_egress_resolver_config c = { .allow = allow, .n_allow = 5, .deny = deny, .n_deny = 2 };
  return c;
}

static void
expect_verdict (const char *name, uint16_t qtype, hv_egress_action action, const char *why, const char *ports)
{
  hv_egress_resolver_config c = rules ();
  hv_egress_verdict v;
  hv_egress_decide (&c, name, HV_DNS_CLASS_IN, qtype, &v);
  char got[256] = "";
  for (size_t i = 0; i < v.ports.n; i++)
    snprintf (got + strlen (got), sizeof (got) - strlen (got), "%s%u-%u", i ? "," : "", v.ports.r[i].lo,
              v.ports.r[i].hi);
  hv_egress_ports_free (&v.ports);
  if (v.action != action || (why && (v.why == NULL || strcmp (why, v.why) != 0)) || strcmp (got, ports) != 0)
    fail_msg ("%s type %u: got action %d why %s ports %s, expected %d %s %s", name, qtype, v.action,
              v.why ? v.why : "-", got, action, why ? why : "-", ports);
}

static void
test_decide (void **state)
{
  (void) state;
  expect_verdict ("api.github.com", HV_DNS_TYPE_A, HV_EGRESS_FORWARD, NULL, "80-80,443-443");
  expect_verdict ("api.github.com", HV_DNS_TYPE_AAAA, HV_EGRESS_FORWARD, NULL, "80-80,443-443");
  expect_verdict ("github.com", HV_DNS_TYPE_A, HV_EGRESS_FORWARD, NULL, "22-22");
  expect_verdict ("www.github.com", HV_DNS_TYPE_A, HV_EGRESS_REFUSE, HV_EGRESS_WHY_UNLISTED, "");
  expect_verdict ("evil.example", HV_DNS_TYPE_A, HV_EGRESS_REFUSE, HV_EGRESS_WHY_UNLISTED, "");
  /* The apex of a wildcard is not listed. */
  expect_verdict ("example.com", HV_DNS_TYPE_A, HV_EGRESS_REFUSE, HV_EGRESS_WHY_UNLISTED, "");
  expect_verdict ("a.b.example.com", HV_DNS_TYPE_A, HV_EGRESS_FORWARD, NULL, "443-443");
  /* Deny wins: a whole name, or one port of a range. */
  expect_verdict ("secret.example.com", HV_DNS_TYPE_A, HV_EGRESS_REFUSE, HV_EGRESS_WHY_DENIED, "");
  expect_verdict ("db.internal", HV_DNS_TYPE_A, HV_EGRESS_FORWARD, NULL, "5000-5004,5006-5010");
  /* Types: HTTPS and SVCB get an empty answer, others are refused. */
  expect_verdict ("api.github.com", 65, HV_EGRESS_EMPTY, NULL, "");
  expect_verdict ("api.github.com", 64, HV_EGRESS_EMPTY, NULL, "");
  expect_verdict ("api.github.com", HV_DNS_TYPE_TXT, HV_EGRESS_REFUSE, HV_EGRESS_WHY_TYPE, "");
  expect_verdict ("api.github.com", HV_DNS_TYPE_MX, HV_EGRESS_REFUSE, HV_EGRESS_WHY_TYPE, "");
  expect_verdict ("api.github.com", 255, HV_EGRESS_REFUSE, HV_EGRESS_WHY_TYPE, "");
  /* An unlisted name is refused as unlisted whatever its type (TXT
   * exfiltration shows as what it is). */
  expect_verdict ("x.evil.example", HV_DNS_TYPE_TXT, HV_EGRESS_REFUSE, HV_EGRESS_WHY_UNLISTED, "");
  expect_verdict ("a\\.github.com", HV_DNS_TYPE_A, HV_EGRESS_REFUSE, HV_EGRESS_WHY_UNLISTED, "");

  hv_egress_resolver_config c = rules ();
  hv_egress_verdict v;
  hv_egress_decide (&c, "api.github.com", 3 /* CH */, HV_DNS_TYPE_A, &v);
  assert_int_equal (v.action, HV_EGRESS_REFUSE);
  assert_string_equal (v.why, HV_EGRESS_WHY_TYPE);
}

/* Names to ask (network.ask, mode: ask): an unlisted name an ask rule
 * covers is held (ASK, with the ask rule's ports); deny wins over ask;
 * allow needs no asking; ask_all asks for every other plain name. */
static void
test_decide_ask (void **state)
{
  (void) state;
  static const hv_egress_name_rule ask[] = { { "asked.example", true, 443, 443 }, { "api.github.com", false, 22, 22 } };
  static const hv_egress_name_rule ask_deny[] = { { "no.asked.example", false, 1, 65535 } };
  hv_egress_resolver_config c = { .allow = allow, .n_allow = 5, .deny = ask_deny, .n_deny = 1, .ask = ask, .n_ask = 2 };
  hv_egress_verdict v;
  hv_egress_decide (&c, "x.asked.example", HV_DNS_CLASS_IN, HV_DNS_TYPE_A, &v);
  assert_int_equal (v.action, HV_EGRESS_ASK);
  assert_int_equal (v.ports.n, 1);
  assert_int_equal (v.ports.r[0].lo, 443);
  hv_egress_ports_free (&v.ports);
  hv_egress_decide (&c, "x.asked.example", HV_DNS_CLASS_IN, HV_DNS_TYPE_AAAA, &v);
  assert_int_equal (v.action, HV_EGRESS_ASK);
  hv_egress_ports_free (&v.ports);
  /* HTTPS of a name to ask: empty, never asked for twice. */
  hv_egress_decide (&c, "x.asked.example", HV_DNS_CLASS_IN, 65, &v);
  assert_int_equal (v.action, HV_EGRESS_EMPTY);
  hv_egress_decide (&c, "x.asked.example", HV_DNS_CLASS_IN, HV_DNS_TYPE_TXT, &v);
  assert_int_equal (v.action, HV_EGRESS_REFUSE);
  assert_string_equal (v.why, HV_EGRESS_WHY_TYPE);
  /* Deny wins over ask. */
  hv_egress_decide (&c, "no.asked.example", HV_DNS_CLASS_IN, HV_DNS_TYPE_A, &v);
  assert_int_equal (v.action, HV_EGRESS_REFUSE);
  assert_string_equal (v.why, HV_EGRESS_WHY_DENIED);
  /* Allowed: forwarded on the allow rules' ports, never asked. */
  hv_egress_decide (&c, "api.github.com", HV_DNS_CLASS_IN, HV_DNS_TYPE_A, &v);
  assert_int_equal (v.action, HV_EGRESS_FORWARD);
  hv_egress_ports_free (&v.ports);
  /* Not covered: refused as before. */
  hv_egress_decide (&c, "evil.example", HV_DNS_CLASS_IN, HV_DNS_TYPE_A, &v);
  assert_int_equal (v.action, HV_EGRESS_REFUSE);
  assert_string_equal (v.why, HV_EGRESS_WHY_UNLISTED);
  /* ask_all: every other plain name asks, on 443 and 80. */
  c.ask_all = true;
  hv_egress_decide (&c, "evil.example", HV_DNS_CLASS_IN, HV_DNS_TYPE_A, &v);
  assert_int_equal (v.action, HV_EGRESS_ASK);
  assert_int_equal (v.ports.n, 2);
  assert_int_equal (v.ports.r[0].lo, 80);
  assert_int_equal (v.ports.r[1].lo, 443);
  hv_egress_ports_free (&v.ports);
  hv_egress_decide (&c, "a\\.github.com", HV_DNS_CLASS_IN, HV_DNS_TYPE_A, &v);
  assert_int_equal (v.action, HV_EGRESS_REFUSE);
  hv_egress_decide (&c, "no.asked.example", HV_DNS_CLASS_IN, HV_DNS_TYPE_A, &v);
  assert_int_equal (v.action, HV_EGRESS_REFUSE);
  /* Only host names are asked about. */
  hv_egress_decide (&c, "a*b.example", HV_DNS_CLASS_IN, HV_DNS_TYPE_A, &v);
  assert_int_equal (v.action, HV_EGRESS_REFUSE);
  assert_string_equal (v.why, HV_EGRESS_WHY_UNLISTED);
  hv_egress_decide (&c, "a\"b.asked.example", HV_DNS_CLASS_IN, HV_DNS_TYPE_A, &v);
  assert_int_equal (v.action, HV_EGRESS_REFUSE);
}

static void
test_ports (void **state)
{
  (void) state;
  hv_egress_ports p = { 0 };
  hv_egress_ports_add (&p, 10, 20);
  hv_egress_ports_add (&p, 30, 40);
  hv_egress_ports_add (&p, 21, 29); /* touches both: one range */
  assert_int_equal (p.n, 1);
  assert_int_equal (p.r[0].lo, 10);
  assert_int_equal (p.r[0].hi, 40);
  hv_egress_ports_remove (&p, 15, 15);
  assert_int_equal (p.n, 2);
  assert_int_equal (hv_egress_ports_count (&p), 30);
  hv_egress_ports_remove (&p, 1, 65535);
  assert_int_equal (p.n, 0);
  hv_egress_ports_add (&p, 1, 65535);
  hv_egress_ports_limit (&p, HV_EGRESS_NAME_PORTS_MAX);
  assert_int_equal (hv_egress_ports_count (&p), HV_EGRESS_NAME_PORTS_MAX);
  hv_egress_ports_free (&p);
}

static void
addr_of (const char *text, int *family, uint8_t a[16])
{
  memset (a, 0, 16);
  *family = inet_pton (AF_INET, text, a) == 1 ? AF_INET : AF_INET6;
  if (*family == AF_INET6 && inet_pton (AF_INET6, text, a) != 1)
    fail_msg ("bad address %s", text);
}

static bool
special (const char *text)
{
  int f;
  uint8_t a[16];
  addr_of (text, &f, a);
  return hv_egress_addr_special (f, a);
}

static void
test_special_addresses (void **state)
{
  (void) state;
  const char *yes[] = { "0.0.0.0", "10.1.2.3", "100.64.0.1", "127.0.0.1", "127.255.0.9", "169.254.169.254",
                        "172.16.0.1", "172.31.255.255", "192.168.1.1", "224.0.0.1", "255.255.255.255", "::",
                        "::1", "fc00::1", "fd12::1", "fe80::1", "ff02::1", "::ffff:127.0.0.1",
                        "::ffff:10.0.0.1", "64:ff9b::a00:1", "::10.0.0.1",
                        /* the local-use NAT64 prefix (whole /48), 6to4, Teredo and
                         * translated forms of a private address, IETF protocol assignments */
                        "64:ff9b:1::a00:5", "64:ff9b:1::cb00:710a", "64:ff9b:1:ffff:ffff::1", "2002:a00:1::1",
                        "2002:7f00:1::", "2002:c0a8:101::1", "::ffff:0:10.0.0.1", "::ffff:0:127.0.0.1",
                        "2001:0:a00:1::34ff:8ef5", "2001:0:cb00:710a::80ff:fffe", "192.0.0.170" };
  const char *no[] = { "192.0.2.1", "198.51.100.53", "203.0.113.10", "8.8.8.8", "172.32.0.1", "100.128.0.1",
                       "2001:db8::1", "2606:4700::1111", "::ffff:203.0.113.10", "64:ff9b::cb00:710a",
                       "2002:cb00:710a::1", "::ffff:0:203.0.113.10", "2001:0:cb00:710a::34ff:8ef5",
                       "64:ff9b:2::1", "198.18.0.1" };
  for (size_t i = 0; i < sizeof (yes) / sizeof (yes[0]); i++)
    if (!special (yes[i]))
      fail_msg ("%s should be special", yes[i]);
  for (size_t i = 0; i < sizeof (no) / sizeof (no[0]); i++)
    if (special (no[i]))
      fail_msg ("%s should not be special", no[i]);
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

static bool
pinnable (const hv_egress_resolver_config *c, const char *text, uint16_t port)
{
  int f;
  uint8_t a[16];
  addr_of (text, &f, a);
  return hv_egress_pin_allowed (c, f, a, port);
}

static void
test_pin_allowed (void **state)
{
  (void) state;
  hv_egress_cidr allow_c[] = { cidr ("10.0.5.0/24", 5432, 5432), cidr ("fd00:1::/64", 1, 65535) };
  hv_egress_cidr deny_c[] = { cidr ("203.0.113.128/25", 1, 65535), cidr ("198.51.100.7", 443, 443) };
  hv_egress_resolver_config c = { .allow_cidrs = allow_c, .n_allow_cidrs = 2, .deny_cidrs = deny_c,
                                  .n_deny_cidrs = 2 };
  assert_true (pinnable (&c, "203.0.113.10", 443));
  assert_false (pinnable (&c, "203.0.113.200", 443)); /* deny CIDR */
  assert_false (pinnable (&c, "198.51.100.7", 443));  /* deny CIDR, its port */
  assert_true (pinnable (&c, "198.51.100.7", 80));    /* ...not another */
  assert_false (pinnable (&c, "127.0.0.1", 443));     /* loopback (rebinding) */
  assert_false (pinnable (&c, "10.0.6.1", 5432));     /* private, no CIDR */
  assert_true (pinnable (&c, "10.0.5.9", 5432));      /* private, an allow CIDR covers it */
  assert_false (pinnable (&c, "10.0.5.9", 443));      /* ...on its ports only */
  assert_true (pinnable (&c, "fd00:1::5", 443));
  assert_false (pinnable (&c, "fd00:2::5", 443));
  assert_false (pinnable (&c, "::ffff:127.0.0.1", 443));
}

static void
test_ttl_clamp (void **state)
{
  (void) state;
  assert_int_equal (hv_egress_ttl_clamp (0, 0, 0), HV_EGRESS_TTL_FLOOR_DEFAULT);
  assert_int_equal (hv_egress_ttl_clamp (300, 0, 0), 300);
  assert_int_equal (hv_egress_ttl_clamp (86400, 0, 0), HV_EGRESS_TTL_CAP_DEFAULT);
  assert_int_equal (hv_egress_ttl_clamp (UINT32_MAX, 0, 0), HV_EGRESS_TTL_CAP_DEFAULT);
  assert_int_equal (hv_egress_ttl_clamp (1, 2, 5), 2);
  assert_int_equal (hv_egress_ttl_clamp (4, 2, 5), 4);
  assert_int_equal (hv_egress_ttl_clamp (9, 2, 5), 5);
}

static void
expect_new_error (hv_egress_resolver_config *c, const char *expected)
{
  hv_error *err = NULL;
  hv_egress_resolver *r = NULL;
  assert_int_equal (hv_egress_resolver_new (c, &r, &err), -1);
  assert_null (r);
  assert_non_null (err);
  if (strcmp (err->msg, expected) != 0)
    fail_msg ("expected \"%s\"\n          got \"%s\"", expected, err->msg);
  hv_error_free (&err);
}

static void
test_new_checks_config (void **state)
{
  (void) state;
  hv_egress_name_rule bad_name[] = { { "a..b", false, 443, 443 } };
  hv_egress_name_rule bad_ports[] = { { "a.b", false, 443, 80 } };
  hv_egress_resolver_config c = { .udp4_fd = -1, .tcp4_fd = -1, .udp6_fd = -1, .tcp6_fd = -1,
                                  .upstream_netns_fd = -1, .allow = bad_name, .n_allow = 1 };
  expect_new_error (&c, "egress resolver: allow name rule 0: \"a..b\" is not a plain DNS name");
  c.allow = bad_ports;
  expect_new_error (&c, "egress resolver: allow name rule a.b: bad ports 443-80");
  c.n_allow = 0;
  expect_new_error (&c, "egress resolver: no egress table to pin into");
}


/* A refused name with allowed names below it is "no data", never
 * NXDOMAIN (RFC 8020 would take the allowed names away with it). */
static void
test_allowed_below (void **state)
{
  (void) state;
  hv_egress_name_rule rules[] = {
    { .name = "api.github.com", .port_min = 443, .port_max = 443 },
    { .name = "zone.example", .subdomains = true, .port_min = 443, .port_max = 443 },
  };
  hv_egress_resolver_config c = { .allow = rules, .n_allow = 2 };
  assert_true (hv_egress_name_allowed_below (&c, "github.com"));
  assert_true (hv_egress_name_allowed_below (&c, "com"));
  assert_true (hv_egress_name_allowed_below (&c, "zone.example"));   /* the apex of *.zone.example */
  assert_true (hv_egress_name_allowed_below (&c, "Zone.Example"));
  assert_true (hv_egress_name_allowed_below (&c, "a.zone.example")); /* denied, its children allowed */
  assert_true (hv_egress_name_allowed_below (&c, "example"));
  assert_false (hv_egress_name_allowed_below (&c, "api.github.com")); /* nothing below it */
  assert_false (hv_egress_name_allowed_below (&c, "x.api.github.com"));
  assert_false (hv_egress_name_allowed_below (&c, "evil.example"));
  assert_false (hv_egress_name_allowed_below (&c, "hub.com"));        /* a suffix, not a parent */
  assert_false (hv_egress_name_allowed_below (&c, "ithub.com"));
  assert_false (hv_egress_name_allowed_below (&c, "one.example"));
}

/* The line: the name made safe (control bytes and anything unusual as
 * \xHH, DNS's \DDD kept), cut at HV_EGRESS_NOTICE_NAME_MAX bytes; the
 * policy and the key named; "\r\n" for a terminal in raw mode. */
static void
test_notice_format (void **state)
{
  (void) state;
  char buf[HV_EGRESS_NOTICE_MAX];
  hv_egress_notice_format (buf, "claude-code", "evil.example", HV_EGRESS_WHY_UNLISTED, true, false);
  assert_string_equal (buf, "haven: name evil.example refused by policy claude-code (not in network.allow): its "
                            "lookups fail as not found; to allow it, add it to network.allow in a policy that "
                            "extends claude-code; more: haven audit -e dns-refused\n");
  hv_egress_notice_format (buf, "p", "secret.example.com", HV_EGRESS_WHY_DENIED, false, true);
  assert_string_equal (buf, "haven: name secret.example.com refused by policy p (network.deny): its lookups fail "
                            "as not found; network.deny wins in every policy that extends it\r\n");
  hv_egress_notice_format (buf, "p", "a\033[2J\n\\027 x\"y.example", HV_EGRESS_WHY_UNLISTED, false, false);
  assert_non_null (strstr (buf, "haven: name a\\x1b\\x5b2\\x4a\\x0a\\027\\x20x\\x22y.example refused"));
  assert_null (strchr (buf, '\033'));
  assert_int_equal (strchr (buf, '\n') - buf, (long) strlen (buf) - 1);
  char long_name[400];
  memset (long_name, 'a', sizeof (long_name) - 1);
  long_name[sizeof (long_name) - 1] = '\0';
  hv_egress_notice_format (buf, "p", long_name, HV_EGRESS_WHY_UNLISTED, false, false);
  char want[HV_EGRESS_NOTICE_NAME_MAX + 32];
  snprintf (want, sizeof (want), "haven: name %.*s... refused", HV_EGRESS_NOTICE_NAME_MAX, long_name);
  assert_non_null (strstr (buf, want));
  /* A name asked for and not approved: the reason is the resolver's. */
  hv_egress_notice_format (buf, "p", "late.example", HV_EGRESS_WHY_ASK_TIMEOUT, false, false);
  assert_string_equal (buf, "haven: name late.example refused by policy p (not approved in time (ask_timeout)): its "
                            "lookups fail as not found; to allow it, add it to network.allow in a policy that extends "
                            "p\n");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_name_rule_exact),  cmocka_unit_test (test_name_rule_wildcard),
    cmocka_unit_test (test_name_plain),       cmocka_unit_test (test_decide),
    cmocka_unit_test (test_ports),            cmocka_unit_test (test_special_addresses),
    cmocka_unit_test (test_pin_allowed),      cmocka_unit_test (test_ttl_clamp),
    cmocka_unit_test (test_new_checks_config), cmocka_unit_test (test_allowed_below),
    cmocka_unit_test (test_notice_format), cmocka_unit_test (test_decide_ask),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
