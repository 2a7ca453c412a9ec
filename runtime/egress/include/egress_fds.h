/* The descriptors of one sandbox's egress that create hands to the
 * per-container monitor (egress_sandbox.h makes them, container_monitor.h
 * passes them, monitor_egress.h uses them): init's network namespace,
 * the resolver's listening sockets there, and two netfilter netlink
 * sockets made there (the table's and the denial listener's).
 *
 * Whoever holds the struct owns every descriptor in it that is not -1.
 * Ownership moves with hv_egress_fd_take (one, leaving -1 behind) and
 * ends with hv_egress_fds_close (all still owned), so no path leaks one
 * or closes one twice. */
#ifndef HAVEN_EGRESS_FDS_H
#define HAVEN_EGRESS_FDS_H

struct hv_egress_fds
{
  int netns;                  /* init's network namespace */
  int udp4, tcp4, udp6, tcp6; /* the resolver's listening sockets; udp6/tcp6 -1 without IPv6 */
  int nft;                    /* the table's socket */
  int nflog;                  /* unbound, for the denial listener */
  int fwd4, fwd6;             /* the forwarder's listeners (egress_forward.h); -1: pasta, an engine */
};
#define HV_EGRESS_FDS_INIT                                                                                     \
  { .netns = -1, .udp4 = -1, .tcp4 = -1, .udp6 = -1, .tcp6 = -1, .nft = -1, .nflog = -1, .fwd4 = -1, .fwd6 = -1 }

/* The descriptor *fd, its ownership moved to the caller; *fd is -1 after. */
int hv_egress_fd_take (int *fd);
/* Close every descriptor f still owns; all -1 after. */
void hv_egress_fds_close (struct hv_egress_fds *f);
#define cleanup_egress_fds __attribute__ ((cleanup (hv_egress_fds_close)))

/* The names the sockets travel under (HV_SYNC_EGRESS payloads, from the
 * helper in the namespace to create, and from create to the monitor,
 * where the namespace travels as "netns CONFIG"), in this order. */
#define HV_EGRESS_N_SOCKETS 8
#define HV_EGRESS_N_RESOLVER_SOCKETS 4 /* the first four: the resolver's */
extern const char *const hv_egress_socket_names[HV_EGRESS_N_SOCKETS];
/* The slot of f for hv_egress_socket_names[i] (i < HV_EGRESS_N_SOCKETS). */
int *hv_egress_fds_socket (struct hv_egress_fds *f, unsigned i);
#endif
