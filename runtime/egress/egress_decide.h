/* The egress resolver's decisions as pure functions (no sockets, no
 * netlink), so that every rule can be unit-tested: which names are
 * allowed on which ports, what a query gets, which answers may be
 * pinned and for how long.  Used by egress_resolver.c. */
#ifndef HAVEN_EGRESS_DECIDE_H
#define HAVEN_EGRESS_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress_resolver_config.h"

/* Each allowed port of a name is one pin per address: a name may reach
 * at most this many ports (the rest of a wider union is not pinned). */
#define HV_EGRESS_NAME_PORTS_MAX 1024

#define HV_EGRESS_WHY_UNLISTED "not in the policy"
#define HV_EGRESS_WHY_DENIED "denied by the policy"
#define HV_EGRESS_WHY_TYPE "type not allowed"
#define HV_EGRESS_WHY_ASK_DENIED "denied by approval"
#define HV_EGRESS_WHY_ASK_TIMEOUT "not approved in time (ask_timeout)"
#define HV_EGRESS_WHY_ASK_FULL "too many names waiting for approval"
#define HV_EGRESS_WHY_ASK_NOBODY "nobody to ask for approval"

/* Disjoint, ascending, non-adjacent TCP port ranges (malloc'ed). */
typedef struct hv_egress_port_range
{
  uint16_t lo, hi;
} hv_egress_port_range;

typedef struct hv_egress_ports
{
  hv_egress_port_range *r;
  size_t n;
} hv_egress_ports;

void hv_egress_ports_free (hv_egress_ports *p);
void hv_egress_ports_add (hv_egress_ports *p, uint16_t lo, uint16_t hi);
void hv_egress_ports_remove (hv_egress_ports *p, uint16_t lo, uint16_t hi);
size_t hv_egress_ports_count (const hv_egress_ports *p);
/* Keep only the lowest max ports. */
void hv_egress_ports_limit (hv_egress_ports *p, size_t max);

typedef enum hv_egress_action
{
  /* Nothing sent upstream; an EDE says why.  A refused name (why
   * UNLISTED or DENIED) is answered NXDOMAIN, or NOERROR without records
   * when hv_egress_name_allowed_below: a definite "not found" that stub
   * resolvers give up on at once (glibc turns REFUSED into EAI_AGAIN, a
   * temporary failure clients retry; musl's resolver, by its source,
   * ignores REFUSED and waits for its timeout).  A type not allowed for an allowed name: REFUSED. */
  HV_EGRESS_REFUSE,
  HV_EGRESS_FORWARD, /* ask upstream, pin, answer */
  HV_EGRESS_EMPTY,   /* NOERROR without records (HTTPS, SVCB) */
  HV_EGRESS_ASK,     /* held until someone answers (egress_ask.h); then as FORWARD, with ports */
} hv_egress_action;

typedef struct hv_egress_verdict
{
  hv_egress_action action;
  const char *why;       /* REFUSE: one of HV_EGRESS_WHY_* */
  hv_egress_ports ports; /* FORWARD: the ports pins are made for */
} hv_egress_verdict;

/* Is name (any case, no escapes) one the rules may match?  Names whose
 * text needs escapes (a dot or odd bytes inside a label) match nothing:
 * "a\.github.com" is a child of "com", not of "github.com". */
bool hv_egress_name_plain (const char *name);

/* Is name (lower case, no trailing dot) allowed on some port? */
bool hv_egress_name_rule_matches (const hv_egress_name_rule *rule, const char *name);

/* The ports name may reach: the union of the allow rules that match it,
 * less every deny rule that matches it (deny wins, port by port).
 * *listed: some allow rule matched. */
void hv_egress_name_ports (const hv_egress_resolver_config *c, const char *name, hv_egress_ports *out,
                           bool *listed);
/* Remove the ports deny rules give for name (a name later on a CNAME
 * chain: denying the target denies the chain). */
void hv_egress_name_deny (const hv_egress_resolver_config *c, const char *name, hv_egress_ports *ports);

/* Does some allow rule cover a name strictly below name (an allow rule
 * for a name under it, or "*.zone" for name or a zone above it)?  A refused name that has
 * allowed names below it is answered "no data", never "no such name":
 * a cache that takes NXDOMAIN to mean nothing exists below it (RFC
 * 8020) would otherwise lose the allowed names too. */
bool hv_egress_name_allowed_below (const hv_egress_resolver_config *c, const char *name);

/* What a query for name (text, lower case, no trailing dot), of class
 * qclass and type qtype, gets.  Free v->ports with hv_egress_ports_free. */
void hv_egress_decide (const hv_egress_resolver_config *c, const char *name, uint16_t qclass, uint16_t qtype,
                       hv_egress_verdict *v);

/* Loopback, unspecified, private (RFC 1918, CGNAT, ULA), link-local,
 * multicast, broadcast, or an IPv6 form that embeds IPv4 (mapped,
 * compatible, translated, NAT64 well-known prefix, 6to4, Teredo: judged by
 * that address), the whole local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215:
 * the local translator chooses where the IPv4 address sits), and 192.0.0.0/24:
 * addresses a public name should not make reachable (DNS rebinding onto the
 * sandbox's own network).  Documentation ranges (TEST-NET, 2001:db8::/32)
 * are not special: they stand for public addresses in tests. */
bool hv_egress_addr_special (int family, const uint8_t addr[16]);
/* Does a CIDR of cidrs cover addr on port? */
bool hv_egress_cidrs_cover (const hv_egress_cidr *cidrs, size_t n, int family, const uint8_t addr[16],
                            uint16_t port);
/* May addr:port be pinned for a name that allows port?  Never when a
 * deny CIDR covers it; a special address only when an allow CIDR does. */
bool hv_egress_pin_allowed (const hv_egress_resolver_config *c, int family, const uint8_t addr[16],
                            uint16_t port);

/* ttl clamped to [floor, cap] (0: the defaults). */
uint32_t hv_egress_ttl_clamp (uint32_t ttl, uint32_t floor, uint32_t cap);
#endif
