/* Haven's egress resolver: "pin, then answer" (design in docs/egress.md,
 * "The resolver").  Every DNS query the sandbox sends lands
 * here (the egress table redirects port 53 of any address to the
 * listening sockets).  The runtime layer knows no policies: callers hand
 * it plain rules (names, zones, port ranges, CIDRs).
 *
 *   - A name no allow rule covers, or one a deny rule covers for every
 *     port: NXDOMAIN, or NOERROR without records where allow rules cover
 *     names below it (egress_decide.h: a definite "not found", which stub
 *     resolvers do not retry as they do REFUSED), with an Extended DNS
 *     Error (code 15, "Blocked") whose text names haven and the policy;
 *     nothing is sent upstream.
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
 *     types for allowed names: REFUSED with an EDE (the name exists).
 *   - Malformed queries: FORMERR when the header parses, else dropped.
 *
 * Event-driven: the resolver owns an epoll fd (hv_egress_resolver_fd)
 * that the caller adds to its own loop and, when it is readable, calls
 * hv_egress_resolver_dispatch, which never blocks except for the
 * kernel's acknowledgement of a pin batch.  Every resource is bounded
 * (pending queries, TCP clients, per-query deadline; see
 * egress_resolver_state.h).  No threads: setns for the upstream
 * sockets changes the calling thread only, and it comes back (or
 * dispatch fails). */
#ifndef HAVEN_EGRESS_RESOLVER_H
#define HAVEN_EGRESS_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "egress_resolver_config.h"
#include "error.h"

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
#endif
