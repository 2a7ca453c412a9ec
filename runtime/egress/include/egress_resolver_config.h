/* What the egress resolver is given (egress_resolver.h): the rules it
 * decides by (egress_decide.h reads them), the sockets it answers on, the
 * upstreams it asks, the table it pins into.  A header of its own so that
 * the decisions need nothing of the resolver that uses them. */
#ifndef HAVEN_EGRESS_RESOLVER_CONFIG_H
#define HAVEN_EGRESS_RESOLVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "egress_ranges.h"
#include "egress_table.h"

/* What a 0 in the config stands for (hv_egress_resolver_new fills them in).
 * A pin lives at least HV_EGRESS_TTL_FLOOR_DEFAULT seconds whatever the
 * TTL: answers of a few seconds or 0 are common (load balancers, CDNs),
 * and a client may connect some seconds after it got the address. */
#define HV_EGRESS_TTL_FLOOR_DEFAULT 30
/* ...and at most an hour, however long the name's TTL: an address the
 * name no longer gives stays reachable no longer than that, and the
 * reply's TTLs are cut to it so that the client asks (and pins) again. */
#define HV_EGRESS_TTL_CAP_DEFAULT 3600
/* Seconds a pin outlives the TTL the client was given, so that a
 * connection made as the client's cache runs out is not refused. */
#define HV_EGRESS_GRACE_DEFAULT 10
/* One upstream attempt's deadline: short enough that the next upstream
 * is asked before a stub resolver sends the query again (by default
 * glibc after 5 s, musl after 2.5 s), long enough for a distant one. */
#define HV_EGRESS_QUERY_TIMEOUT_MS_DEFAULT 2000

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
struct hv_egress_ask_config;

typedef struct hv_egress_resolver_events
{
  /* A query refused (for a name: answered "not found"): why is "not in
   * the policy", "denied by the policy", "type not allowed". */
  void (*refused) (void *data, const char *qname, uint16_t qtype, const char *why);
  /* An address pinned for qname (the name asked, not the chain's end);
   * timeout_s: the pin's, TTL clamped plus grace. */
  void (*pinned) (void *data, const char *qname, int family, const uint8_t addr[16], uint32_t timeout_s);
  /* The pins of one answer, as the kernel acknowledged them (the
   * forwarder's own record: egress_forward.h).  The table's pin type is
   * egress_table.h's. */
  void (*pins_added) (void *data, const struct hv_egress_pin *pins, size_t n);
  /* A request decided (egress_ask.h): decision "once", "run",
   * "always", "deny" or "timeout"; by "approve", "terminal", "command",
   * "timeout", "invalid" (an answer that is none: a deny) or "resolver"
   * (refused without asking: too many waiting, nobody to ask); why: the
   * resolver's reason when by is "resolver". */
  void (*asked) (void *data, const char *id, const char *qname, uint16_t qtype, const char *decision,
                 const char *by, const char *why);
  void *data;
} hv_egress_resolver_events;

typedef struct hv_egress_resolver_config
{
  hv_egress_table *table; /* pins go here; not owned */
  const hv_egress_name_rule *allow;
  size_t n_allow;
  const hv_egress_name_rule *deny; /* wins over allow, port by port */
  size_t n_deny;
  /* Names held until someone answers (egress_ask.h): an unlisted name an
   * ask rule covers, or any unlisted name with ask_all; deny wins over
   * ask too.  ask_all without a name rule: ports 443 and 80. */
  const hv_egress_name_rule *ask;
  size_t n_ask;
  bool ask_all;
  /* Where and how asking is done: NULL with ask rules, every name to
   * ask is denied (nobody to ask).  Not copied: it outlives the
   * resolver. */
  const struct hv_egress_ask_config *asker;
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
  uint32_t ttl_floor, ttl_cap;   /* seconds; 0: HV_EGRESS_TTL_FLOOR_DEFAULT and _CAP_DEFAULT */
  uint32_t grace;                /* seconds added to a pin's timeout; 0: HV_EGRESS_GRACE_DEFAULT */
  unsigned query_timeout_ms;     /* per upstream attempt; 0: HV_EGRESS_QUERY_TIMEOUT_MS_DEFAULT */
  hv_egress_resolver_events events;
} hv_egress_resolver_config;
#endif
