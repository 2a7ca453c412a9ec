/* Haven's egress resolver: "pin, then answer" (issue 10; design in
 * shared/reference/egress.md).  Every DNS query the sandbox sends lands
 * here (the egress table redirects port 53 of any address to the
 * listening sockets).  The runtime layer knows no policies: callers hand
 * it plain rules (names, zones, port ranges, CIDRs).
 *
 *   - A name no allow rule covers, or one a deny rule covers for every
 *     port: REFUSED with an Extended DNS Error (code 15, "Blocked") whose
 *     text names haven and the policy; nothing is sent upstream.
 *   - An allowed name, type A or AAAA: forwarded to the upstreams in
 *     order (a truncated UDP answer is asked again over TCP; a timeout or
 *     SERVFAIL moves to the next; SERVFAIL when all fail).  The CNAME
 *     chain is followed from the queried name only (hv_dns_follow_chain);
 *     each final address is pinned into the egress table for every port
 *     the name's rules allow, with timeout = TTL clamped to
 *     [ttl_floor, ttl_cap] plus grace, unless it is loopback, private,
 *     link-local or unspecified and no allow CIDR covers it, or a deny
 *     CIDR covers it (those answers are removed from the reply).  Only
 *     when the kernel has acknowledged the pins is the reply sent, with
 *     TTLs no longer than ttl_cap.
 *   - HTTPS (65) and SVCB (64) queries for allowed names: an empty
 *     NOERROR answer (their address hints would skip pinning).  Other
 *     types for allowed names: REFUSED with an EDE.
 *   - Malformed queries: FORMERR when the header parses, else dropped.
 *
 * Event-driven: the resolver owns an epoll fd (hv_egress_resolver_fd)
 * that the caller adds to its own loop and, when it is readable, calls
 * hv_egress_resolver_dispatch, which never blocks except for the
 * kernel's acknowledgement of a pin batch.  Every resource is bounded
 * (pending queries, TCP clients, per-query deadline; see
 * egress_resolver_internal.h).  No threads: setns for the upstream
 * sockets changes the calling thread only, and it comes back (or
 * dispatch fails). */
#ifndef HAVEN_EGRESS_RESOLVER_H
#define HAVEN_EGRESS_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "egress_ranges.h"
#include "egress_table.h"
#include "error.h"

/* One name rule: `name` itself (subdomains false) or the names strictly
 * below it at any depth (subdomains true: "*.name"), TCP ports
 * port_min..port_max (0-65535 reads as 1-65535).  Lower case, no
 * trailing dot.  Each allowed port is one pin per address: a name
 * reaches at most its lowest 1024 allowed ports.  A deny rule also
 * applies to the names on an answer's CNAME chain (denying the target
 * denies the chain). */
typedef struct hv_egress_name_rule
{
  const char *name;
  bool subdomains;
  uint16_t port_min, port_max;
} hv_egress_name_rule;

/* What the resolver reports (each may be NULL). */
typedef struct hv_egress_resolver_events
{
  /* A name refused: why is "not in the policy", "denied by the policy",
   * "type not allowed". */
  void (*refused) (void *data, const char *qname, uint16_t qtype, const char *why);
  /* An address pinned for qname (the name asked, not the chain's end);
   * timeout_s: the pin's, TTL clamped plus grace. */
  void (*pinned) (void *data, const char *qname, int family, const uint8_t addr[16], uint32_t timeout_s);
  void *data;
} hv_egress_resolver_events;

typedef struct hv_egress_resolver_config
{
  hv_egress_table *table; /* pins go here; not owned */
  const hv_egress_name_rule *allow;
  size_t n_allow;
  const hv_egress_name_rule *deny; /* wins over allow, port by port */
  size_t n_deny;
  const hv_egress_cidr *allow_cidrs; /* private answers these cover may be pinned */
  size_t n_allow_cidrs;
  const hv_egress_cidr *deny_cidrs; /* answers these cover are never pinned */
  size_t n_deny_cidrs;
  /* Listening sockets made by the caller in the sandbox's netns (UDP
   * bound, TCP listening; -1: none).  Owned by the resolver from
   * hv_egress_resolver_new on, even when it fails. */
  int udp4_fd, tcp4_fd, udp6_fd, tcp6_fd;
  /* Where allowed queries go: port 53 unless the address says otherwise. */
  const struct sockaddr_storage *upstreams;
  size_t n_upstreams;
  /* The netns the upstream sockets are made in (setns around socket()):
   * -1, the caller's own.  Not owned. */
  int upstream_netns_fd;
  /* SO_MARK on upstream sockets (the table's resolver_mark), 0: none. */
  uint32_t upstream_mark;
  const char *policy_name;       /* in the EDE text */
  uint32_t ttl_floor, ttl_cap;   /* seconds; 0: 30 and 3600 */
  uint32_t grace;                /* seconds added to a pin's timeout; 0: 10 */
  unsigned query_timeout_ms;     /* per upstream attempt; 0: 2000 */
  hv_egress_resolver_events events;
} hv_egress_resolver_config;

typedef struct hv_egress_resolver hv_egress_resolver;

/* The config's arrays and strings are copied. */
int hv_egress_resolver_new (const hv_egress_resolver_config *config, hv_egress_resolver **out, hv_error **err);
void hv_egress_resolver_free (hv_egress_resolver *r);
/* Readable when there is something to do. */
int hv_egress_resolver_fd (const hv_egress_resolver *r);
/* Handle whatever is ready (queries, upstream answers, deadlines).  An
 * error here is the resolver's end (a pin batch the kernel refused):
 * the caller stops the sandbox's DNS by freeing the resolver, which
 * closes the listening sockets (fail closed: no answer, no pins). */
int hv_egress_resolver_dispatch (hv_egress_resolver *r, hv_error **err);

/* The names (asked) whose answers held this address, most recent first,
 * up to max of them, for net-denied records; returns how many.  The
 * strings belong to the resolver: valid until the next dispatch or free.
 * It remembers the last 128 (address, name) pairs pinned. */
size_t hv_egress_resolver_names_for (const hv_egress_resolver *r, int family, const uint8_t addr[16],
                                     const char **names, size_t max);

/* Is name (lower case, no trailing dot) allowed on some port? */
bool hv_egress_name_rule_matches (const hv_egress_name_rule *rule, const char *name);
#endif
