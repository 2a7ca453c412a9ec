/* The egress language of a policy's `network.allow` and `network.deny`
 * (policies/README.md, "Network"), parsed into plain rules for the
 * nftables table builder and the resolver.
 *
 *   api.anthropic.com       the name itself, TCP 443 and 80
 *   *.example.com           names below example.com at any depth, not it
 *   github.com:22           one TCP port; name:1000-2000 a range
 *   192.0.2.0/24:22         an address or CIDR (IPv6: [2001:db8::1]:443);
 *                           without a port, any TCP port
 *
 * A deny entry without a port denies every port.  Deny wins over allow.
 * Names are normalised (lower case, no trailing dot), CIDRs must have
 * their host bits zero: an entry that could mean two things is an error,
 * never a guess. */
#ifndef HAVEN_POLICY_NETWORK_H
#define HAVEN_POLICY_NETWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hv_net_rule_kind
{
  HV_NET_RULE_NAME,     /* exactly `name` */
  HV_NET_RULE_WILDCARD, /* names strictly below `name` (the zone), at any depth */
  HV_NET_RULE_CIDR,     /* addresses in addr/prefix */
};

typedef struct
{
  enum hv_net_rule_kind kind;
  char *name;       /* NAME, WILDCARD: lower case, no trailing dot; WILDCARD: without "*."; CIDR: NULL */
  int family;       /* CIDR: AF_INET or AF_INET6 */
  uint8_t addr[16]; /* CIDR: the network, host bits zero (AF_INET uses the first 4 bytes) */
  unsigned prefix;  /* CIDR: 0-32 or 0-128 */
  uint16_t port_lo, port_hi; /* TCP, inclusive, 1-65535 */
  char *entry;      /* as written in the policy */
  char *where;      /* "file:line:column" of the entry (NULL when parsed outside a file) */
} hv_net_rule;

typedef struct
{
  size_t n;
  hv_net_rule *v;
} hv_net_rules;

#define HV_NET_ADDR_MAX 16
#define HV_NET_NAME_MAX 253  /* bytes of a name without its trailing dot */
#define HV_NET_LABEL_MAX 63

/* Parse one entry into one or more rules appended to out (a bare name
 * gives two: ports 443 and 80; in a deny list, every port).  where may be
 * NULL.  On error returns -1 and *problem says what is wrong (malloc'd),
 * without the entry itself (the caller names it). */
int hv_net_entry_parse (const char *entry, bool deny, const char *where, hv_net_rules *out, char **problem);

/* Append copies of src's rules to dst, leaving out any dst already has
 * (same kind, target and ports): lists add up through `extends`. */
void hv_net_rules_append (hv_net_rules *dst, const hv_net_rules *src);
void hv_net_rules_free (hv_net_rules *r);

/* Why an allowed entry deserves a warning (a user-content host anyone
 * can write to, a public DNS-over-HTTPS/TLS resolver, every address), or
 * NULL.  malloc'd. */
char *hv_net_rule_caution (const hv_net_rule *r);

/* Matching, for the resolver and the tests.  name: any case, one trailing
 * dot ignored.  addr: family's bytes in network order. */
/* Is name zone itself (or_self) or below it, at any depth? */
bool hv_net_name_under (const char *name, const char *zone, bool or_self);
bool hv_net_rule_matches_name (const hv_net_rule *r, const char *name);
bool hv_net_rule_matches_addr (const hv_net_rule *r, int family, const void *addr);
/* TCP to name:port: allowed by a name or wildcard rule and denied by no
 * name or wildcard rule.  (Addresses the name resolves to are checked
 * against CIDR denials separately: hv_net_addr_denied.) */
bool hv_net_name_allowed (const hv_net_rules *allow, const hv_net_rules *deny, const char *name, uint16_t port);
/* TCP to addr:port by address: allowed by a CIDR rule, denied by none. */
bool hv_net_addr_allowed (const hv_net_rules *allow, const hv_net_rules *deny, int family, const void *addr,
                          uint16_t port);
bool hv_net_addr_denied (const hv_net_rules *deny, int family, const void *addr, uint16_t port);

/* "api.anthropic.com", "*.example.com", "192.0.2.0/24", "2001:db8::/32",
 * "192.0.2.1" (a whole-address prefix is left out), without the ports
 * (malloc'd), for messages and explain. */
char *hv_net_rule_target (const hv_net_rule *r);
#endif
