/* What pasta is told about the host's network (egress_pasta.h): the
 * interface it copies the sandbox's addresses from (its "template") and
 * the gateway of the sandbox's default route, per family.
 *
 * pasta's own choice is the interface of the host's default route, and
 * without one it gives up ("External interface not usable"): on a host
 * whose only routes are connected subnets (an isolated lab network with
 * an internal model API host) no allowlist could reach anything.  haven
 * chooses instead, from the routing table of the calling thread's
 * namespace (pasta's):
 *   - the template: the interface of the IPv4 default route (lowest
 *     metric), else of the IPv4 route with the lowest metric, else the
 *     same for IPv6.  Routes on lo, local, rejecting, link-local and
 *     multicast ones do not count;
 *   - a family is given to the sandbox when the host has a route of that
 *     family (anywhere) and the template has an address of it (not
 *     link-local);
 *   - its gateway: the default route's when that is on the template, else
 *     the first gateway of a route on the template, else an address of the
 *     template's subnet other than the host's own (the first, or the
 *     second when the first is the host's; the peer of a /31 or /127).
 *     With --no-map-gw it is an address like any other: the sandbox's
 *     traffic goes to pasta whatever the next hop, and pasta's sockets
 *     follow the host's routes (they are bound to no interface), so an
 *     allowed host reachable from the host is reachable from the sandbox
 *     whatever the routing table looks like.
 * Pure reading of /proc/thread-self/net and getifaddrs: nothing changes. */
#ifndef HAVEN_EGRESS_PASTA_ROUTE_H
#define HAVEN_EGRESS_PASTA_ROUTE_H

#include <netinet/in.h>
#include <stdbool.h>

#include "error.h"

struct hv_pasta_route
{
  /* Both families have a default route: pasta's own choice (each
   * family's default route's interface and gateway) is the same, and
   * keeps a host whose IPv6 leaves by another interface than IPv4's
   * (a tunnel) on both; haven names nothing then.  Otherwise haven names
   * the template and the gateways below. */
  bool pasta_picks;
  char ifname[16]; /* "": the host has no usable route at all */
  bool v4, v6;     /* the family is given to the sandbox */
  char gw4[INET_ADDRSTRLEN];
  char gw6[INET6_ADDRSTRLEN];
};

/* Fill r for the calling thread's network namespace; 0 or -1 on error. */
int hv_pasta_route (struct hv_pasta_route *r, hv_error **err);
#endif
