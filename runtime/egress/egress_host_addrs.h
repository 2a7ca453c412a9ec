/* The host's own addresses, as deny entries of the egress table of a
 * sandbox whose way out is pasta (egress_pasta.h).
 *
 * pasta relays the sandbox's connections with sockets of its own in the
 * host's namespace, bound to no interface (so that every allowed host
 * the host reaches is reached, by whatever route): a connect to one of
 * the host's own addresses would reach the host's services (a daemon on
 * 0.0.0.0, docker0's address, a VPN's), which is never what an allowed
 * CIDR means.  Every address of every interface of the calling thread's
 * namespace, as a /32 or /128 on every port, and each IPv4 one also as
 * its IPv4-mapped IPv6 address (::ffff:a.b.c.d, which an IPv6 socket of
 * pasta's would connect to as IPv4).  The table denies these before any
 * allow and any pin.  What it holds is the host's addresses when the
 * sandbox starts: an address the host gains later (a bridge made during
 * the run) is not in it. */
#ifndef HAVEN_EGRESS_HOST_ADDRS_H
#define HAVEN_EGRESS_HOST_ADDRS_H

#include <stddef.h>

#include "egress_ranges.h"
#include "error.h"

/* *out (malloc'ed, NULL when none) gets the entries, *n their number. */
int hv_egress_host_addrs (hv_egress_cidr **out, size_t *n, hv_error **err);
#endif
