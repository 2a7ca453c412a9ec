/* Connectivity for a sandbox's own network namespace through pasta
 * (Debian package passt): a process of the caller's, in the caller's
 * network namespace, that relays the sandbox's TCP connections with
 * sockets of its own.  The egress table (egress_table.h) must be in the
 * namespace before hv_pasta_start: nothing leaves before it.
 *
 * pasta runs with
 *   -T none -U none -t none -u none   no port forwarded either way;
 *   --no-map-gw                       the gateway's address is the real
 *                                     gateway, not the host's loopback
 *                                     (pasta's default maps it there);
 *   --no-udp                          UDP is not relayed: the table
 *                                     rejects it anyway, and DNS goes to
 *                                     the resolver in the sandbox (ICMP
 *                                     stays on: pasta answers IPv6
 *                                     neighbour discovery there, and
 *                                     IPv6 stops without it; the table
 *                                     rejects ICMP echo);
 *   --no-dhcp --no-dhcpv6 --no-ra     --config-net sets the address and
 *                                     routes itself;
 *   --interface IF --gateway GW       the interface the sandbox's
 *                                     addresses are copied from and its
 *                                     default route's next hop, chosen by
 *                                     haven (egress_pasta_route.h): pasta
 *                                     alone gives up on a host without a
 *                                     default route.  Its sockets are bound
 *                                     to no interface: the host's routes
 *                                     carry each connection, and the
 *                                     host's own addresses are denied by
 *                                     the egress table
 *                                     (egress_host_addrs.h);
 *   --netns /proc/self/fd/3           the namespace as a descriptor
 *                                     haven holds (no path to race), with
 *                                     --no-netns-quit: pasta cannot watch
 *                                     such a path, haven ends it;
 *   --runas 0:0 when haven is root    pasta would switch to nobody and
 *                                     then could not enter a namespace of
 *                                     the initial user namespace; its
 *                                     capabilities are bounded to
 *                                     SYS_ADMIN, NET_ADMIN and
 *                                     NET_BIND_SERVICE before exec and it
 *                                     keeps SYS_ADMIN and NET_BIND_SERVICE
 *                                     after setup (its own isolation: an
 *                                     empty mount namespace, seccomp);
 *   -f -P /proc/self/fd/5             in the foreground (so it stays
 *                                     haven's child and dies with haven:
 *                                     PR_SET_PDEATHSIG; or, as a sibling,
 *                                     with haven's parent), writing its pid
 *                                     into a pipe once the interface is
 *                                     configured: that is the readiness
 *                                     signal.
 * pasta holds the namespace open: it must be stopped (hv_pasta_stop) for
 * the namespace to go. */
#ifndef HAVEN_EGRESS_PASTA_H
#define HAVEN_EGRESS_PASTA_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* How long pasta may take to configure the interface: it takes a few
 * milliseconds on an idle machine, but 200 allowlist runs started at once
 * on 2 CPUs (tests/load/parallel.sh) left 8 of them without pasta's
 * answer after 5 s.  The run fails closed either way: the bound only stops
 * a pasta that hangs from holding the run forever. */
#define HV_PASTA_READY_MS 30000

struct hv_pasta_opts
{
  int netns_fd;       /* the sandbox's network namespace */
  int userns_fd;      /* the user namespace owning it, -1: the caller's */
  const char *binary; /* NULL: the first of /usr/bin/pasta, /usr/local/bin/pasta */
  int ready_ms;       /* 0: HV_PASTA_READY_MS */
};

struct hv_pasta
{
  pid_t pid; /* 0: none */
  int pidfd;
  int log_fd;   /* what pasta wrote (a memfd) */
  int ready_fd; /* its readiness pipe until waited for; -1 after */
  int ready_ms;
  /* hv_pasta_connect found the host without a route and started nothing:
   * the caller tells the user (the library prints nothing). */
  bool no_route;
  /* Set by the caller before spawn: pasta is started as the caller's
   * sibling (a child of the caller's parent, CLONE_PARENT) and dies with
   * that parent, not with the caller: for a sandbox that outlives the
   * process that makes it (sandbox.h's maker, whose parent, the service,
   * holds the sandbox).  The caller cannot reap it then: its parent does
   * (hv_pasta_stop kills it and leaves the zombie to that parent). */
  bool sibling;
};
#define HV_PASTA_INIT                                                                                                  \
  { .pid = 0, .pidfd = -1, .log_fd = -1, .ready_fd = -1, .ready_ms = 0, .no_route = false, .sibling = false }

/* Start pasta into o->netns_fd and return once the interface is up.  On
 * failure nothing of it is left, and the error says what pasta said. */
int hv_pasta_start (const struct hv_pasta_opts *o, struct hv_pasta *p, hv_error **err);
/* hv_pasta_start in two halves, so the caller can do other work while
 * pasta starts (some 10-15 ms, most of it pasta's own set-up): spawn
 * returns once pasta runs, wait_ready once the interface is up (or fails
 * as hv_pasta_start does; a no-op when nothing was spawned). */
int hv_pasta_spawn (const struct hv_pasta_opts *o, struct hv_pasta *p, hv_error **err);
int hv_pasta_wait_ready (struct hv_pasta *p, hv_error **err);
/* Kill pasta and reap it (idempotent; a sibling is killed, its parent
 * reaps it). */
void hv_pasta_stop (struct hv_pasta *p);
/* Kill pasta and do not wait for its exit to finish (idempotent): for a
 * caller that exits soon after.  pasta runs nothing of its own after
 * the signal; the kernel's teardown of its tap device (an RCU barrier,
 * 10-20 ms) goes on without holding the caller up. */
void hv_pasta_kill (struct hv_pasta *p);
/* Is pasta still running? */
bool hv_pasta_alive (const struct hv_pasta *p);

/* hv_create_opts.egress_connect for `haven run`: data is a struct
 * hv_pasta (HV_PASTA_INIT) that the caller stops once the container is
 * gone, and that pasta stays alive with until then.  The namespace is
 * init's; when init is in a user namespace other than ours (rootless),
 * pasta joins that one to enter it.  Returns once pasta runs; the
 * interface is up when hv_pasta_connected (hv_create_opts.egress_ready)
 * returns.  A host with no route: nothing started, 0, and no_route set. */
int hv_pasta_connect (void *data, pid_t init_pid, int netns_fd, hv_error **err);
int hv_pasta_connected (void *data, hv_error **err);

#endif
