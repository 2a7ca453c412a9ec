/* Audit records of egress denials, written into a trail
 * (audit_trail.h) with its usual members (time, event, policy,
 * container):
 *
 *   {"event":"net-denied","destination":"198.51.100.10","port":81,
 *    "protocol":"tcp","names":["example.com"]}
 *       a packet the egress table rejected (egress_denials.h); "port" is
 *       0 for ICMP and other protocols; "names" are the names whose
 *       answers held the destination (most recent first, at most
 *       HV_EGRESS_AUDIT_MAX_NAMES), [] when none did.
 *   {"event":"dns-refused","name":"evil.example","type":"A",
 *    "why":"not in the policy"}
 *       a query the resolver refused (egress_resolver.h).
 *   {"event":"denials-suppressed","kind":"egress","count":N,...}
 *       what the limiter left out (audit_trail.h,
 *       hv_audit_trail_denials_summary): repeats of recorded denials,
 *       named with their counts by key ("tcp 198.51.100.10 81",
 *       "dns A evil.example"), and what was new but only counted.
 *
 * Names come from the sandbox's own queries: like every string of a
 * record they are written as valid UTF-8 whatever the bytes. */
#ifndef HAVEN_EGRESS_AUDIT_H
#define HAVEN_EGRESS_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "audit_trail.h"
#include "egress_denials.h"

#define HV_EGRESS_AUDIT_MAX_NAMES 8

/* Where the names come from: the coordinator's wrapper of
 * hv_egress_resolver_names_for.  Returns how many it put in names. */
typedef size_t (*hv_egress_names_fn) (void *data, int family, const uint8_t addr[16], const char **names,
                                      size_t max);

void hv_egress_audit_denied (struct hv_audit_trail *t, const hv_egress_denial *d, hv_egress_names_fn names_for,
                             void *data);
void hv_egress_audit_refused (struct hv_audit_trail *t, const char *qname, uint16_t qtype, const char *why);
void hv_egress_audit_suppressed (struct hv_audit_trail *t, const hv_denial_summary *s);

#endif
