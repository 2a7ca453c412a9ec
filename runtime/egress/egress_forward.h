/* haven's forwarder: the way out of an allowlist sandbox where pasta
 * cannot run (no usable /dev/net/tun for the caller: egress_way.h).
 *
 * In the sandbox's network namespace (set up at create by
 * hv_egress_forward_setup, in the helper that makes the resolver's
 * sockets, egress_sandbox.c):
 *   - routes "default dev lo" (IPv4, and IPv6 where the namespace has
 *     it): a connect to any address gets a route, and its packets never
 *     leave the namespace (lo is its only interface);
 *   - the egress table (egress_table.h, spec.forward_port) filters at
 *     HV_EGRESS_FORWARD_FILTER_PRIORITY, before any NAT, so what is not
 *     allowed or pinned is refused (and logged) with its real
 *     destination; chain "dns" then sends port 53 to the resolver, and
 *     chain "forward" every other TCP connection to a non-loopback
 *     address to the forwarder's listeners, 127.0.0.1:PORT and
 *     [::1]:PORT, made there and served by the monitor.
 *
 * The monitor (monitor_egress.c) accepts in its loop, reads the
 * connection's original destination (SO_ORIGINAL_DST), checks it again
 * against the policy and the resolver's pins (deny CIDRs and the host's
 * own addresses refused; allow CIDRs, or a live pin for that address and
 * port), records a refusal as net-denied, and hands an allowed one to a
 * relay thread, which connects from the monitor's own namespace (the
 * host's) without blocking the loop and relays both ways through two
 * pipes (splice: at most two pipe buffers per connection, no copy in
 * user space), each direction's end passed on as a half-close.  At most
 * HV_FWD_MAX_CONNS connections at once (more are closed at once);
 * hv_egress_forward_free closes the listeners and every connection and
 * waits for the threads. */
#ifndef HAVEN_EGRESS_FORWARD_H
#define HAVEN_EGRESS_FORWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "egress_config.h"
#include "egress_denials.h"
#include "egress_table.h"
#include "error.h"

#define HV_FWD_MAX_CONNS 128
/* A connect from the host that has not completed by then is closed. */
#define HV_FWD_CONNECT_MS 30000
/* Pins remembered for the forwarder's own check (the oldest to expire
 * goes first when full: a destination then refused, never one allowed
 * that was not pinned). */
#define HV_FWD_MAX_PINS 8192

/* In the sandbox's namespace (the helper, which has the rights there):
 * the routes of the families v4, v6 (those the host has a default route
 * for: a connect to a family the host cannot reach then fails at once,
 * as under pasta, and a client falls back to the other family, instead
 * of being accepted by the forwarder and reset), and the listeners
 * (fds[0] IPv4, fds[1] IPv6 or -1 when the namespace has no IPv6
 * loopback) on one port, *port. */
int hv_egress_forward_setup (int fds[2], uint16_t *port, bool v4, bool v6, hv_error **err);

typedef struct hv_egress_forward hv_egress_forward;

typedef struct hv_egress_forward_args
{
  const hv_egress_config *config; /* borrowed: outlives the forwarder */
  int listen4, listen6;           /* taken (-1: none) */
  /* A refused connection, as the denial listener reports one. */
  void (*denied) (void *data, const hv_egress_denial *d);
  void *data;
} hv_egress_forward_args;

/* NULL with *err (the listeners are closed then too). */
hv_egress_forward *hv_egress_forward_new (const hv_egress_forward_args *a, hv_error **err);
/* Readable when a connection waits to be accepted. */
int hv_egress_forward_fd (const hv_egress_forward *f);
/* Accept what waits, check, relay or refuse.  -1 with *err: the
 * forwarder cannot go on (the caller frees it: no more connections). */
int hv_egress_forward_dispatch (hv_egress_forward *f, hv_error **err);
/* The resolver pinned these (the kernel acknowledged them). */
void hv_egress_forward_pinned (hv_egress_forward *f, const hv_egress_pin *pins, size_t n);
/* Would a connection to addr:port (family's bytes first) be relayed? */
bool hv_egress_forward_allows (const hv_egress_forward *f, int family, const uint8_t addr[16], uint16_t port);
/* Connections being relayed now. */
unsigned hv_egress_forward_active (hv_egress_forward *f);
void hv_egress_forward_free (hv_egress_forward *f);

/* The relay (egress_forward_relay.c): one connection, in a thread of its
 * own, to dst (a sockaddr_in or _in6), closing conn when done. */
typedef struct hv_fwd_relays hv_fwd_relays;
hv_fwd_relays *hv_fwd_relays_new (unsigned max, hv_error **err);
/* 0: a thread took conn; -1: refused (at the cap, or no thread): conn
 * closed, *err says why. */
int hv_fwd_relay_start (hv_fwd_relays *r, int conn, const struct sockaddr_storage *dst, hv_error **err);
unsigned hv_fwd_relays_active (hv_fwd_relays *r);
/* Every connection closed, every thread ended, freed. */
void hv_fwd_relays_stop (hv_fwd_relays *r);
#endif
