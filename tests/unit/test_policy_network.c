/* Unit tests of the egress language (policy_network.h): entries into
 * rules, every malformed entry with its message and YAML position, the
 * cautions, how allow and deny lists add up through `extends`, matching,
 * and the network section of `haven policy explain`. */
#include "config.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy.h"
#include "policy_load.h"
#include "policy_network.h"
#include "policy_network_explain.h"
#include "policy_parse.h"
#include "utils.h"
#include "policy_parse_check.h"

static void
entry_ok (const char *entry, bool deny, hv_net_rules *out)
{
  char *problem = NULL;
  memset (out, 0, sizeof (*out));
  if (hv_net_entry_parse (entry, deny, NULL, out, &problem) < 0)
    fail_msg ("\"%s\" refused: %s", entry, problem);
}

static void
expect_problem (const char *entry, const char *message)
{
  hv_net_rules r = { 0 };
  char *problem = NULL;
  int ret = hv_net_entry_parse (entry, false, NULL, &r, &problem);
  hv_net_rules_free (&r);
  if (ret == 0)
    fail_msg ("accepted: \"%s\"", entry);
  if (strcmp (problem, message) != 0)
    fail_msg ("\"%s\": expected \"%s\"\n     got \"%s\"", entry, message, problem);
  free (problem);
}

static void
assert_cidr (const hv_net_rule *r, int family, const char *addr, unsigned prefix, unsigned lo, unsigned hi)
{
  uint8_t a[16] = { 0 };
  assert_int_equal (r->kind, HV_NET_RULE_CIDR);
  assert_int_equal (r->family, family);
  assert_int_equal (inet_pton (family, addr, a), 1);
  assert_memory_equal (r->addr, a, family == AF_INET ? 4 : 16);
  assert_int_equal (r->prefix, prefix);
  assert_int_equal (r->port_lo, lo);
  assert_int_equal (r->port_hi, hi);
}

static void
test_entries (void **state)
{
  (void) state;
  hv_net_rules r;

  /* A bare name: TCP 443 and 80. */
  entry_ok ("api.anthropic.com", false, &r);
  assert_int_equal (r.n, 2);
  assert_int_equal (r.v[0].kind, HV_NET_RULE_NAME);
  assert_string_equal (r.v[0].name, "api.anthropic.com");
  assert_string_equal (r.v[0].entry, "api.anthropic.com");
  assert_int_equal (r.v[0].port_lo, 443);
  assert_int_equal (r.v[0].port_hi, 443);
  assert_int_equal (r.v[1].port_lo, 80);
  assert_int_equal (r.v[1].port_hi, 80);
  hv_net_rules_free (&r);

  /* Normalised: lower case, the trailing dot of a fully qualified name. */
  entry_ok ("API.Example.COM.", false, &r);
  assert_string_equal (r.v[0].name, "api.example.com");
  assert_string_equal (r.v[0].entry, "API.Example.COM.");
  hv_net_rules_free (&r);

  entry_ok ("*.Example.com", false, &r);
  assert_int_equal (r.n, 2);
  assert_int_equal (r.v[0].kind, HV_NET_RULE_WILDCARD);
  assert_string_equal (r.v[0].name, "example.com");
  hv_net_rules_free (&r);

  entry_ok ("github.com:22", false, &r);
  assert_int_equal (r.n, 1);
  assert_int_equal (r.v[0].port_lo, 22);
  assert_int_equal (r.v[0].port_hi, 22);
  hv_net_rules_free (&r);

  /* Compose service names: one label, underscores. */
  entry_ok ("my_db:5432", false, &r);
  assert_string_equal (r.v[0].name, "my_db");
  hv_net_rules_free (&r);

  entry_ok ("build.example:1000-2000", false, &r);
  assert_int_equal (r.v[0].port_lo, 1000);
  assert_int_equal (r.v[0].port_hi, 2000);
  hv_net_rules_free (&r);

  entry_ok ("xn--bcher-kva.example", false, &r);
  assert_string_equal (r.v[0].name, "xn--bcher-kva.example");
  hv_net_rules_free (&r);

  /* Addresses: without a port, any TCP port. */
  entry_ok ("192.0.2.1", false, &r);
  assert_int_equal (r.n, 1);
  assert_cidr (&r.v[0], AF_INET, "192.0.2.1", 32, 1, 65535);
  hv_net_rules_free (&r);
  entry_ok ("192.0.2.0/24:22", false, &r);
  assert_cidr (&r.v[0], AF_INET, "192.0.2.0", 24, 22, 22);
  hv_net_rules_free (&r);
  entry_ok ("[2001:db8::1]:443", false, &r);
  assert_cidr (&r.v[0], AF_INET6, "2001:db8::1", 128, 443, 443);
  hv_net_rules_free (&r);
  entry_ok ("2001:DB8::/32", false, &r);
  assert_cidr (&r.v[0], AF_INET6, "2001:db8::", 32, 1, 65535);
  hv_net_rules_free (&r);
  entry_ok ("[2001:db8:8000::/33]:8000-8080", false, &r);
  assert_cidr (&r.v[0], AF_INET6, "2001:db8:8000::", 33, 8000, 8080);
  hv_net_rules_free (&r);
  entry_ok ("0.0.0.0/0:443", false, &r);
  assert_cidr (&r.v[0], AF_INET, "0.0.0.0", 0, 443, 443);
  hv_net_rules_free (&r);

  /* In a deny list a name without a port is every port. */
  entry_ok ("evil.example.com", true, &r);
  assert_int_equal (r.n, 1);
  assert_int_equal (r.v[0].port_lo, 1);
  assert_int_equal (r.v[0].port_hi, 65535);
  hv_net_rules_free (&r);

  /* The limits themselves are fine: a 63-character label, 253 characters. */
  char name[300];
  memset (name, 'a', 63);
  strcpy (name + 63, ".example");
  entry_ok (name, false, &r);
  hv_net_rules_free (&r);
  for (int i = 0; i < 63; i++)
    memcpy (name + 4 * i, "abc.", 4);
  strcpy (name + 252, "x"); /* 253 */
  entry_ok (name, false, &r);
  hv_net_rules_free (&r);
  strcpy (name + 252, "xy"); /* 254 */
  expect_problem (name, "name is 254 characters long (at most 253)");
  memset (name, 'a', 64);
  strcpy (name + 64, ".example");
  expect_problem (name, "label \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\" is 64 characters long "
                        "(at most 63)");
}

static void
test_malformed_entries (void **state)
{
  (void) state;
  expect_problem ("h.example:0", "port 0 is not a port (ports are 1 to 65535)");
  expect_problem ("h.example:65536", "port \"65536\" is above 65535");
  expect_problem ("h.example:2000-1000", "port range 2000-1000 is reversed (write 1000-2000)");
  expect_problem ("h.example:", "empty port");
  expect_problem ("h.example:1000-", "empty port");
  expect_problem ("h.example:https", "port \"https\" is not a number from 1 to 65535");
  expect_problem ("h.example:-5", "empty port");
  expect_problem (":443", "no host before the port");
  expect_problem ("192.0.2.7/24", "host bits set after /24 (the network is 192.0.2.0/24; for one host write it "
                                  "without a prefix)");
  expect_problem ("[2001:db8::1/32]:443", "host bits set after /32 (the network is 2001:db8::/32; for one host "
                                          "write it without a prefix)");
  expect_problem ("192.0.2.0/33", "prefix length /33 is longer than 32");
  expect_problem ("192.0.2.0/", "prefix length \"/\" is not a number from 0 to 32");
  expect_problem ("192.0.2.0/2x", "prefix length \"/2x\" is not a number from 0 to 32");
  expect_problem ("2001:db8::/129", "prefix length /129 is longer than 128");
  expect_problem ("256.1.1.1", "\"256.1.1.1\" is not an IPv4 address (four numbers from 0 to 255) nor a host name "
                               "(a name's last label is not all digits)");
  expect_problem ("1.2.3", "\"1.2.3\" is not an IPv4 address (four numbers from 0 to 255) nor a host name (a "
                           "name's last label is not all digits)");
  expect_problem ("2001:db8::g", "\"2001:db8::g\" is not an IPv6 address (with a port, write it in brackets: "
                                 "[2001:db8::1]:443; zone indexes such as %eth0 are not supported)");
  expect_problem ("fe80::1%eth0", "\"fe80::1%eth0\" is not an IPv6 address (with a port, write it in brackets: "
                                  "[2001:db8::1]:443; zone indexes such as %eth0 are not supported)");
  expect_problem ("::ffff:192.0.2.1", "an IPv4-mapped IPv6 address: write the IPv4 address (192.0.2.1)");
  expect_problem ("[192.0.2.1]:443", "brackets are for IPv6 addresses (write an IPv4 address as 192.0.2.1:443)");
  expect_problem ("[2001:db8::1", "'[' without ']'");
  expect_problem ("[2001:db8::1]443", "after ']' expected :PORT or nothing");
  expect_problem ("api.*.example.com", "* only as the whole first label (*.example.com)");
  expect_problem ("*api.example.com", "* only as the whole first label (*.example.com)");
  expect_problem ("**.example.com", "* only as the whole first label (*.example.com)");
  expect_problem ("*", "a lone * would allow every name: list the names (or a *.zone), or use mode: open");
  expect_problem ("*.", "a lone * would allow every name: list the names (or a *.zone), or use mode: open");
  expect_problem ("a..example", "empty label (two dots, or a dot at the start)");
  expect_problem (".example", "empty label (two dots, or a dot at the start)");
  expect_problem ("example..", "empty label (two dots, or a dot at the start)");
  expect_problem ("*..example", "empty label (two dots, or a dot at the start)");
  expect_problem ("-a.example", "label \"-a\" begins or ends with '-'");
  expect_problem ("a-.example", "label \"a-\" begins or ends with '-'");
  expect_problem ("a!b.example", "'!' is not allowed in a host name");
  expect_problem ("b\xc3\xbc" "cher.example", "not ASCII: write an internationalised name in punycode (xn--...), as "
                                             "DNS carries it");
  expect_problem ("https://api.example.com", "a URL: write the host name, with :PORT if it is not 443 or 80");
  expect_problem ("api.example.com/v1", "a path after a name: write the host name only (with :PORT if needed)");
  expect_problem ("a b.example", "contains white space or a control character");
  expect_problem ("", "empty entry");
}

/* Errors carry file:line:column of the entry and name it. */
static void
test_yaml_errors_and_modes (void **state)
{
  (void) state;
  expect_error ("network:\n  allow:\n    - api.example.com\n    - 'h.example:0'\n",
                "t.yaml:4:7: network.allow: \"h.example:0\": port 0 is not a port (ports are 1 to 65535)");
  expect_error ("network: {deny: [\"192.0.2.1/24\"]}\n",
                "t.yaml:1:18: network.deny: \"192.0.2.1/24\": host bits set after /24 (the network is 192.0.2.0/24; "
                "for one host write it without a prefix)");
  expect_error ("network: {allow: [a.example, [x]]}\n", "t.yaml:1:30: network.allow: list items must be non-empty strings");
  expect_error ("network: {allow: a.example}\n",
                "t.yaml:1:18: network.allow: expected a list of names, *.zones, addresses or CIDRs, each with an "
                "optional :PORT");
  expect_error ("network:\n  mode: none\n  allow: [a.example]\n",
                "t.yaml:2:9: network.mode: none, but network.allow lists \"a.example\": the entries would be unused "
                "(write mode: allowlist, or drop allow)");
  expect_error ("network:\n  allow: [a.example]\n  mode: open\n",
                "t.yaml:3:9: network.mode: open, but network.allow lists \"a.example\": the host's network filters "
                "nothing (write mode: allowlist, or drop the list)");
  expect_error ("network: {allow: [a.example], block_all: false}\n",
                "t.yaml:1:42: network.block_all: open, but network.allow lists \"a.example\": the host's network "
                "filters nothing (write mode: allowlist, or drop the list)");
  expect_error ("network: {mode: open, deny: [a.example]}\n",
                "t.yaml:1:17: network.mode: open, but network.deny lists \"a.example\": the host's network filters "
                "nothing (write mode: allowlist, or drop the list)");
  expect_error ("network: {mode: host}\n", "t.yaml:1:17: network.mode: expected none, open, allowlist or ask (the host's "
                                           "network is `open`)");

  /* `allow` without a mode asks for an allowlist, empty or not. */
  hv_policy p;
  parse_ok ("network: {allow: [a.example, '[2001:db8::1]:443']}\n", &p);
  assert_int_equal (p.net_mode, HV_NET_ALLOWLIST);
  assert_int_equal (p.net_allow.n, 3);
  assert_string_equal (p.net_allow.v[0].where, "t.yaml:1:19");
  assert_string_equal (p.net_allow.v[2].where, "t.yaml:1:30");
  hv_policy_free_fields (&p);
  parse_ok ("network: {allow: []}\n", &p);
  assert_int_equal (p.net_mode, HV_NET_ALLOWLIST);
  hv_policy_free_fields (&p);
  /* A deny list alone sets no mode (it only narrows). */
  parse_ok ("network: {deny: [a.example]}\n", &p);
  assert_int_equal (p.net_mode, HV_NET_UNSET);
  hv_policy_free_fields (&p);
  /* The seed format. */
  parse_ok ("network: {allow: ['api.github.com'], block_all: true}\n", &p);
  assert_int_equal (p.net_mode, HV_NET_ALLOWLIST);
  hv_policy_free_fields (&p);
}

static void
expect_warning (const char *entry, const char *message)
{
  hv_policy p;
  cleanup_free char *yaml = xasprintf ("network:\n  allow: ['%s']\n", entry);
  parse_ok (yaml, &p);
  if (p.warnings.n != 1)
    fail_msg ("%s: %zu warnings", entry, p.warnings.n);
  cleanup_free char *want = xasprintf ("t.yaml:2:11: network.allow: \"%s\": %s", entry, message);
  if (strcmp (p.warnings.v[0], want) != 0)
    fail_msg ("expected \"%s\"\n     got \"%s\"", want, p.warnings.v[0]);
  hv_policy_free_fields (&p);
}

#define EXFIL ": an exfiltration channel for whatever the sandbox can read"
#define DOH                                                                                        \
  "a public DNS resolver (DNS over HTTPS/TLS): names asked of it skip haven's resolver and its "  \
  "refusals, and can carry data out"

static void
test_cautions (void **state)
{
  (void) state;
  expect_warning ("github.com:22", "github.com is a code host anyone can push, open issues or post gists to" EXFIL);
  expect_warning ("gist.github.com", "github.com is a code host anyone can push, open issues or post gists to" EXFIL);
  expect_warning ("raw.githubusercontent.com", "githubusercontent.com is GitHub's user content (raw files, gists, "
                                               "release assets)" EXFIL);
  expect_warning ("registry.npmjs.org", "registry.npmjs.org is a package registry anyone can publish to" EXFIL);
  expect_warning ("files.pythonhosted.org", "pythonhosted.org is PyPI's file storage: what the sandbox fetches there "
                                            "is whatever anyone published on pypi.org, which it can write to if it "
                                            "can reach pypi.org");
  expect_warning ("*.s3.amazonaws.com", "s3.amazonaws.com is object storage anyone can write to (their own bucket)" EXFIL);
  expect_warning ("bucket.s3.eu-west-1.amazonaws.com", "S3 is object storage anyone can write to (their own bucket)" EXFIL);
  expect_warning ("*.amazonaws.com", "s3.amazonaws.com is object storage anyone can write to (their own bucket)" EXFIL);
  expect_warning ("pastebin.com", "pastebin.com is a paste service" EXFIL);
  expect_warning ("dns.google", "dns.google is " DOH);
  expect_warning ("*.cloudflare-dns.com", "cloudflare-dns.com is " DOH);
  expect_warning ("mozilla.cloudflare-dns.com", "cloudflare-dns.com is " DOH);
  expect_warning ("dns.quad9.net", "quad9.net is " DOH);
  expect_warning ("1.1.1.1", "1.1.1.1 is " DOH);
  expect_warning ("8.8.8.0/24:443", "8.8.8.8 is " DOH);
  expect_warning ("[2606:4700:4700::1111]:443", "2606:4700:4700::1111 is " DOH);
  expect_warning ("0.0.0.0/0:443", "every address: TCP to anywhere on these ports, as good as an open network for them");
  expect_warning ("*.com", "every name under the top-level domain .com");
  expect_warning ("*.google", "every name under the top-level domain .google");

  /* Nothing to say about an API host, a private network, or a denial. */
  hv_policy p;
  parse_ok ("network:\n  allow: [api.anthropic.com, '10.0.0.0/8:5432', db:5432, '*.example.com']\n"
            "  deny: [github.com, dns.google, 1.1.1.1]\n",
            &p);
  assert_int_equal (p.warnings.n, 0);
  hv_policy_free_fields (&p);
}

static void
put_policy (const char *dir, const char *name, const char *text)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, name);
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
}

static hv_policy *
load_ok (const char *dir, const char *name)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, name);
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (path, &p, &err) < 0)
    fail_msg ("%s: %s", name, err->msg);
  return p;
}

static void
load_error (const char *dir, const char *name, const char *want)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, name);
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (path, &p, &err) == 0)
    fail_msg ("%s accepted", name);
  if (strcmp (err->msg, want) != 0)
    fail_msg ("expected \"%s\"\n     got \"%s\"", want, err->msg);
  hv_error_free (&err);
}

/* The first complaint: `extends: default` (mode none) plus an
 * allow list was silently no network.  Lists add up; deny wins. */
static void
test_extends (void **state)
{
  (void) state;
  char dir[] = "/tmp/haven-netpol-test.XXXXXX";
  assert_non_null (mkdtemp (dir));
  put_policy (dir, "mine.yaml", "extends: default\nnetwork: {allow: [api.github.com]}\n");
  put_policy (dir, "implicit.yaml", "network: {allow: [api.github.com]}\n");
  put_policy (dir, "base.yaml", "extends: none\nnetwork:\n  allow: [a.example, 'b.example:22', '192.0.2.0/24']\n"
                                "  deny: [x.a.example]\n");
  put_policy (dir, "child.yaml", "extends: base.yaml\nnetwork:\n  allow: [a.example, c.example]\n"
                                 "  deny: ['a.example:443', '192.0.2.128/25']\n");
  put_policy (dir, "none.yaml", "extends: base.yaml\nnetwork: {mode: none}\n");
  put_policy (dir, "open.yaml", "extends: base.yaml\nnetwork: {mode: open}\n");
  put_policy (dir, "openbase.yaml", "extends: none\nnetwork: {mode: open}\n");
  put_policy (dir, "denyopen.yaml", "extends: openbase.yaml\nnetwork: {deny: [a.example]}\n");
  put_policy (dir, "allowopen.yaml", "extends: openbase.yaml\nnetwork: {allow: [a.example]}\n");
  put_policy (dir, "denynone.yaml", "extends: default\nnetwork: {deny: [a.example]}\n");

  hv_policy *p = load_ok (dir, "mine.yaml");
  assert_int_equal (p->net_mode, HV_NET_ALLOWLIST);
  assert_int_equal (p->net_allow.n, 2);
  assert_true (hv_net_name_allowed (&p->net_allow, &p->net_deny, "api.github.com", 443));
  hv_policy_free (p);
  p = load_ok (dir, "implicit.yaml");
  assert_int_equal (p->net_mode, HV_NET_ALLOWLIST);
  hv_policy_free (p);

  p = load_ok (dir, "child.yaml");
  assert_int_equal (p->net_mode, HV_NET_ALLOWLIST);
  /* a.example twice (443, 80) is one pair of rules; b:22, the CIDR, c (2). */
  assert_int_equal (p->net_allow.n, 6);
  assert_int_equal (p->net_deny.n, 3);
  assert_false (hv_net_name_allowed (&p->net_allow, &p->net_deny, "a.example", 443)); /* the child's deny */
  assert_true (hv_net_name_allowed (&p->net_allow, &p->net_deny, "a.example", 80));
  assert_true (hv_net_name_allowed (&p->net_allow, &p->net_deny, "b.example", 22));
  assert_false (hv_net_name_allowed (&p->net_allow, &p->net_deny, "b.example", 443));
  assert_true (hv_net_name_allowed (&p->net_allow, &p->net_deny, "c.example", 443));
  assert_false (hv_net_name_allowed (&p->net_allow, &p->net_deny, "d.example", 443));
  uint8_t a[4] = { 192, 0, 2, 1 }, b[4] = { 192, 0, 2, 200 };
  assert_true (hv_net_addr_allowed (&p->net_allow, &p->net_deny, AF_INET, a, 8080));
  assert_false (hv_net_addr_allowed (&p->net_allow, &p->net_deny, AF_INET, b, 8080)); /* denied /25 */
  hv_policy_free (p);

  /* A later `mode: none` is stricter and wins; the entries are unused. */
  p = load_ok (dir, "none.yaml");
  assert_int_equal (p->net_mode, HV_NET_NONE);
  hv_policy_free (p);
  p = load_ok (dir, "denynone.yaml");
  assert_int_equal (p->net_mode, HV_NET_NONE);
  hv_policy_free (p);
  /* An allow list narrows an open base to an allowlist. */
  p = load_ok (dir, "allowopen.yaml");
  assert_int_equal (p->net_mode, HV_NET_ALLOWLIST);
  hv_policy_free (p);

  /* `mode: open` over lists (or lists over open) would filter nothing. */
  cleanup_free char *open_msg
      = xasprintf ("%s/open.yaml: network.mode is open, but network.allow lists \"a.example\" (%s/base.yaml:3:11): the "
              "host's network filters nothing (extend a policy without network lists, or use mode: allowlist)",
                   dir, dir);
  cleanup_free char *denyopen_msg
      = xasprintf ("%s/denyopen.yaml: network.mode is open, but network.deny lists \"a.example\" (%s/denyopen.yaml:2:18): "
              "the host's network filters nothing (extend a policy without network lists, or use mode: allowlist)",
                   dir, dir);
  load_error (dir, "open.yaml", open_msg);
  load_error (dir, "denyopen.yaml", denyopen_msg);

  const char *names[] = { "mine", "implicit", "base", "child", "none", "open", "openbase", "denyopen", "allowopen",
                          "denynone" };
  for (size_t i = 0; i < N_ELEMENTS (names); i++)
    {
      cleanup_free char *path = xasprintf ("%s/%s.yaml", dir, names[i]);
      unlink (path);
    }
  rmdir (dir);
}

/* Every shipped policy that lists hosts is an allowlist of them. */
static void
test_shipped_policies (void **state)
{
  (void) state;
  const struct
  {
    const char *name;
    const char *host;
    uint16_t port;
    size_t rules;
  } cases[] = {
    { "claude-code", "api.anthropic.com", 443, 6 }, { "codex", "api.openai.com", 443, 6 },
    { "gemini-cli", "generativelanguage.googleapis.com", 443, 6 }, { "aider", "openrouter.ai", 443, 10 },
    { "devcontainer", "github.com", 443, 9 },
  };
  for (size_t i = 0; i < N_ELEMENTS (cases); i++)
    {
      hv_policy *p = NULL;
      hv_error *err = NULL;
      if (hv_policy_load (cases[i].name, &p, &err) < 0)
        fail_msg ("%s: %s", cases[i].name, err->msg);
      assert_int_equal (p->net_mode, HV_NET_ALLOWLIST);
      assert_int_equal (p->net_allow.n, cases[i].rules);
      assert_true (hv_net_name_allowed (&p->net_allow, &p->net_deny, cases[i].host, cases[i].port));
      hv_policy_free (p);
    }
  const char *none[] = { "default", "offline", "strict", "ci" };
  for (size_t i = 0; i < N_ELEMENTS (none); i++)
    {
      hv_policy *p = NULL;
      hv_error *err = NULL;
      if (hv_policy_load (none[i], &p, &err) < 0)
        fail_msg ("%s: %s", none[i], err->msg);
      assert_int_equal (p->net_mode, HV_NET_NONE);
      assert_int_equal (p->net_allow.n, 0);
      hv_policy_free (p);
    }
  /* devcontainer's github.com is HTTPS only. */
  hv_policy *p = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_policy_load ("devcontainer", &p, &err), 0);
  assert_false (hv_net_name_allowed (&p->net_allow, &p->net_deny, "github.com", 80));
  assert_false (hv_net_name_allowed (&p->net_allow, &p->net_deny, "github.com", 22));
  hv_policy_free (p);
}

static void
test_matching (void **state)
{
  (void) state;
  hv_net_rules w, n, c6;
  entry_ok ("*.example.com", false, &w);
  assert_true (hv_net_rule_matches_name (&w.v[0], "a.example.com"));
  assert_true (hv_net_rule_matches_name (&w.v[0], "a.b.example.com"));
  assert_true (hv_net_rule_matches_name (&w.v[0], "A.Example.COM."));
  assert_false (hv_net_rule_matches_name (&w.v[0], "example.com"));
  assert_false (hv_net_rule_matches_name (&w.v[0], "example.com."));
  assert_false (hv_net_rule_matches_name (&w.v[0], "badexample.com"));
  assert_false (hv_net_rule_matches_name (&w.v[0], "a.example.com.evil"));
  entry_ok ("api.example.com", false, &n);
  assert_true (hv_net_rule_matches_name (&n.v[0], "API.example.com."));
  assert_false (hv_net_rule_matches_name (&n.v[0], "x.api.example.com"));
  assert_false (hv_net_rule_matches_name (&n.v[0], "api.example.co"));
  assert_false (hv_net_rule_matches_name (&n.v[0], "api.example.com.."));
  entry_ok ("2001:db8::/32", false, &c6);
  uint8_t in[16], out[16], v4[4] = { 32, 1, 13, 184 };
  inet_pton (AF_INET6, "2001:db8:ffff::1", in);
  inet_pton (AF_INET6, "2001:db9::1", out);
  assert_true (hv_net_rule_matches_addr (&c6.v[0], AF_INET6, in));
  assert_false (hv_net_rule_matches_addr (&c6.v[0], AF_INET6, out));
  assert_false (hv_net_rule_matches_addr (&c6.v[0], AF_INET, v4));
  assert_false (hv_net_rule_matches_addr (&n.v[0], AF_INET6, in));
  hv_net_rules none = { 0 };
  assert_true (hv_net_addr_allowed (&c6, &none, AF_INET6, in, 1));
  assert_true (hv_net_addr_allowed (&c6, &none, AF_INET6, in, 65535));
  assert_false (hv_net_addr_allowed (&w, &none, AF_INET6, in, 443)); /* names do not allow addresses */
  hv_net_rules_free (&w);
  hv_net_rules_free (&n);
  hv_net_rules_free (&c6);
}

static char *
explain (const char *yaml)
{
  hv_policy p;
  parse_ok (yaml, &p);
  if (p.net_mode == HV_NET_UNSET)
    p.net_mode = HV_NET_NONE;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  assert_non_null (f);
  hv_net_explain (&p, f);
  fclose (f);
  hv_policy_free_fields (&p);
  return text;
}

static void
assert_has (const char *text, const char *part)
{
  if (strstr (text, part) == NULL)
    fail_msg ("\"%s\" not in:\n%s", part, text);
}

static void
test_explain (void **state)
{
  (void) state;
  cleanup_free char *t = explain ("network:\n  allow: [api.anthropic.com, 'github.com:22', '*.example.com', "
                                  "'192.0.2.0/24', '[2001:db8::1]:8000-8080', github.com]\n"
                                  "  deny: [bad.example.com, '192.0.2.9:22']\n");
  assert_has (t, "Allowlist: only these destinations, TCP only");
  assert_has (t, "    api.anthropic.com: TCP 443, 80\n");
  assert_has (t, "    github.com: TCP 22, 443, 80\n");
  assert_has (t, "    *.example.com: TCP 443, 80 (names below example.com at any depth, not example.com itself)\n");
  assert_has (t, "    192.0.2.0/24: TCP any port\n");
  assert_has (t, "    2001:db8::1: TCP 8000-8080\n");
  assert_has (t, "Denied, whatever the list above allows");
  assert_has (t, "    bad.example.com: TCP any port\n");
  assert_has (t, "    192.0.2.9: TCP 22\n");
  assert_has (t, "Enforced in the kernel: a table in the sandbox's network namespace refuses at once");
  assert_has (t, "refuses unlisted names without asking anyone");
  assert_true (strstr (t, "Not enforced") == NULL);
  assert_has (t, "other sites that\n      share it");
  assert_has (t, "Cautions:\n    t.yaml:2:30: network.allow: \"github.com:22\": github.com is a code host");
  assert_true (strstr (t, "None") == NULL);

  cleanup_free char *none = explain ("network: {mode: none}\n");
  assert_has (none, "None: only the sandbox's own loopback.\n");
  assert_true (strstr (none, "Allowlist") == NULL);
  cleanup_free char *empty = explain ("network: {mode: allowlist}\n");
  assert_has (empty, "Allowlist with nothing listed: no destination outside the sandbox.\n");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_entries),  cmocka_unit_test (test_malformed_entries),
    cmocka_unit_test (test_yaml_errors_and_modes), cmocka_unit_test (test_cautions),
    cmocka_unit_test (test_extends),  cmocka_unit_test (test_shipped_policies),
    cmocka_unit_test (test_matching), cmocka_unit_test (test_explain),
  };
  /* The shipped policies: `extends: default` finds the source tree's. */
  setenv ("HAVEN_POLICY_PATH", HAVEN_SRCDIR "/policies", 1);
  return cmocka_run_group_tests (tests, NULL, NULL);
}
