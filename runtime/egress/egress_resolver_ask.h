/* The egress resolver's hold (egress_resolver_ask.c): a name the policy
 * marks `ask` is held, not answered, until someone answers through the
 * approvals directory (egress_ask.h, session/approvals.h) or the
 * request's deadline passes.
 *
 *   - The first query for the name writes RUN-N.request; nothing is
 *     pinned, nothing is sent upstream.  Every further query for the name
 *     while it waits (a retransmit, the AAAA beside the A, another
 *     process) is held with it; a retransmit (same client, same id and
 *     type) replaces its earlier copy.
 *   - once/run/always: every held query goes upstream as an allowed one
 *     (pin, then answer) with the ask rules' ports; run and always keep
 *     the name allowed for the rest of this resolver's life (always: the
 *     answerer also wrote it to the approved file); once: later queries
 *     ask again.
 *   - deny, the deadline, a malformed answer: every held query is
 *     refused as the resolver refuses an unlisted name (an EDE saying
 *     why).
 *   - Bounded: HV_RES_ASK_MAX requests at once (more: refused at once,
 *     "too many names waiting"), HV_RES_ASK_HELD_MAX queries held per
 *     request (more: dropped; the client sends again).
 *
 * The loop is never blocked: the directory is watched with inotify on
 * the resolver's epoll, and looked at every HV_RES_ASK_POLL_MS while a
 * request is pending.  The loop calls in; this part calls the loop back
 * only through hv_res_ask_ops.  Not for other callers. */
#ifndef HAVEN_EGRESS_RESOLVER_ASK_H
#define HAVEN_EGRESS_RESOLVER_ASK_H

#include <stdint.h>

#include "egress_resolver_state.h"

#define HV_RES_ASK_MAX 16
#define HV_RES_ASK_HELD_MAX 8
#define HV_RES_ASK_APPROVED_MAX 1024 /* names approved for the run; more: asked again */
#define HV_RES_ASK_POLL_MS 250

/* What the loop does with a held query once decided. */
typedef struct hv_res_ask_ops
{
  /* Send query (taken) upstream as an allowed name's, on ports (taken). */
  void (*forward) (hv_egress_resolver *r, const hv_res_client *c, hv_dns_message *query, const char *qname,
                   hv_egress_ports *ports);
  void (*refuse) (hv_egress_resolver *r, const hv_res_client *c, const hv_dns_message *query, const char *qname,
                  uint16_t qtype, const char *why);
} hv_res_ask_ops;

/* The hold's state (r->ask), when the config has ask rules: opens the
 * approvals directory and watches it (a directory that cannot be used
 * leaves nobody to ask: every name to ask is refused). */
int hv_res_ask_new (hv_egress_resolver *r, hv_error **err);
/* Removes its requests; held queries get no answer. */
void hv_res_ask_free (hv_egress_resolver *r);

enum hv_res_ask_result
{
  HV_RES_ASK_FORWARD, /* approved for the run: forward it, with *ports */
  HV_RES_ASK_HELD,    /* taken: *query and *ports were moved */
  HV_RES_ASK_REFUSED, /* refuse it: *why */
};
enum hv_res_ask_result hv_res_ask_query (hv_egress_resolver *r, const hv_res_client *c, hv_dns_message *query,
                                         const char *qname, uint16_t qtype, hv_egress_ports *ports,
                                         const char **why);
/* The directory changed (drains the inotify fd). */
void hv_res_ask_event (hv_egress_resolver *r);
/* Take the answers there are and the deadlines passed; the earliest time
 * to look again (UINT64_MAX: nothing pending). */
uint64_t hv_res_ask_check (hv_egress_resolver *r, uint64_t now, const hv_res_ask_ops *ops);
#endif
