/* The per-container monitor's egress side: the resolver and
 * the denial listener of one sandbox, made from what create handed over
 * (egress_sandbox.h: the run.haven.egress annotation, a handle on init's
 * network namespace, the resolver's listening sockets there).
 *
 *   - The resolver (egress_resolver.h) answers on those sockets and pins
 *     into table "haven" of that namespace, through a handle opened here.
 *     Upstreams: for "connect": "engine" the nameservers of the
 *     container's own resolv.conf as the engine wrote it (the source of
 *     the config's bind mount on /etc/resolv.conf, read on the host side
 *     as hostile input: resolv_conf.h), asked from inside the sandbox's
 *     namespace with the resolver's mark (the table lets those through
 *     and does not redirect them), so an engine's embedded DNS
 *     (Docker's 127.0.0.11) answers as it would without haven; for
 *     "pasta" (`haven run`) the host's /etc/resolv.conf, asked from the
 *     monitor's own namespace (the host's).
 *   - The forwarder (egress_forward.h), when create made its listeners:
 *     the sandbox's TCP, checked again against the pins and relayed from
 *     the monitor's namespace.
 *   - The denial listener (egress_denials.h), only when the monitor has a
 *     trail: net-denied records naming the names whose answers held the
 *     destination, and the resolver's dns-refused through the same
 *     limiter.  Without a trail there is nobody to tell: no listener, and
 *     refusals are dropped.
 *
 * Fail closed: a resolver that cannot be made, or whose dispatch fails,
 * is freed, which closes the listening sockets: from then on every query
 * of the sandbox fails (the table still sends all of port 53 there) and
 * nothing more is pinned; a trail record says so.  The table stays. */
#ifndef HAVEN_MONITOR_EGRESS_H
#define HAVEN_MONITOR_EGRESS_H

#include <stdbool.h>

#include "audit_trail.h"
#include "egress_fds.h"
#include "error.h"

struct hv_monitor_egress_args
{
  const char *config; /* the annotation's text */
  /* From create: fds->netns, init's network namespace, is borrowed (the
   * caller keeps it open); the call takes every socket (left -1), the
   * resolver's listening ones (-1: none) and the netfilter netlink ones
   * made in that namespace by create (egress_sandbox.c), the table's and
   * one for the denial listener.  Through those a monitor that cannot
   * enter the namespace (rootless) still pins and hears denials; -1:
   * opened by entering netns instead. */
  struct hv_egress_fds *fds;
  const char *resolv_conf; /* engine: the host path bound on /etc/resolv.conf, or NULL */
  /* The run.haven.ask annotation's text (egress_ask.h), or NULL: names the
   * policy marks `ask` are then refused (nobody to ask). */
  const char *ask;
  /* haven run's stderr (a file description of its own): the first name
   * refused (not listed, or denied) is said there once, before any
   * limiter (egress_notice.h); -1: nowhere.  Borrowed. */
  int notice_fd;
};

typedef struct hv_monitor_egress hv_monitor_egress;

/* Always returns a state (whatever failed is recorded into trail and left
 * out); NULL and *err only when this thread could not come back to its
 * own network namespace, which the caller must treat as fatal. */
hv_monitor_egress *hv_monitor_egress_start (const struct hv_monitor_egress_args *a, struct hv_audit_trail *trail,
                                            hv_error **err);
void hv_monitor_egress_free (hv_monitor_egress *e);
/* The fds for the caller's loop, -1 when that part is not running. */
int hv_monitor_egress_resolver_fd (const hv_monitor_egress *e);
int hv_monitor_egress_denials_fd (const hv_monitor_egress *e);
/* The forwarder's (egress_forward.h: the way out where pasta cannot
 * run), -1 when there is none. */
int hv_monitor_egress_forward_fd (const hv_monitor_egress *e);
/* Handle what is ready: 1, keep watching; 0, that part has ended
 * (recorded, freed: stop watching its fd); -1 with *err, fatal for the
 * monitor (this thread was left in the sandbox's network namespace). */
int hv_monitor_egress_resolver_ready (hv_monitor_egress *e, hv_error **err);
int hv_monitor_egress_denials_ready (hv_monitor_egress *e);
int hv_monitor_egress_forward_ready (hv_monitor_egress *e);
/* The sandbox is gone: the summary of what the limiter still holds. */
void hv_monitor_egress_denials_finish (hv_monitor_egress *e);
#endif
