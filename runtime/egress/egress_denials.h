/* What the sandbox was refused, as events for the audit trail.
 *
 * The egress table (egress_table.h) sends every packet it denies to an
 * NFLOG group before rejecting it.  A listener on that group, in the sandbox's network
 * namespace, turns each logged packet carrying HV_EGRESS_LOG_PREFIX into
 * a denial {family, protocol, destination, port}.  The resolver's
 * refusals (egress_resolver.h, events.refused) are handed in by the
 * caller.  Both go through one limiter per sandbox (denial_limiter.h):
 * a denial never recorded before (a new destination, port and protocol;
 * a new name and type) is recorded at once, a repeat is counted and
 * named in a summary at most once a second; past the limiter's cap of
 * distinct keys, new ones are recorded at `per_second` and the summary
 * says how many were not.  The kernel does not limit the log (a limit
 * there dropped new destinations unseen): what the listener could not
 * read in time (a full socket buffer) is counted and said in the next
 * summary.  Every logged packet is thus recorded, counted, or its loss
 * said.
 *
 * Event-driven like the resolver: hv_egress_denials_fd is an epoll fd
 * for the caller's loop (readable when packets came or a window with a
 * summary ended); hv_egress_denials_dispatch handles what is there
 * without blocking and calls the callbacks.  Buffers are bounded;
 * malformed messages are skipped and counted.
 *
 * The listener reads what the kernel copied of the packet (its first
 * HV_EGRESS_DENIAL_COPY bytes): the headers, never the data. */
#ifndef HAVEN_EGRESS_DENIALS_H
#define HAVEN_EGRESS_DENIALS_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "denial_limiter.h"
#include "error.h"

#define HV_EGRESS_DENIAL_COPY 128   /* bytes of each packet: IP (with options / extension headers) + ports */
#define HV_EGRESS_DENIALS_RATE 20   /* default events per second per sandbox */
#define HV_EGRESS_DENIALS_RATE_MAX HV_DENIAL_RATE_MAX

typedef enum hv_egress_l4
{
  HV_EGRESS_L4_TCP,
  HV_EGRESS_L4_UDP,
  HV_EGRESS_L4_ICMP,
  HV_EGRESS_L4_ICMPV6,
  HV_EGRESS_L4_OTHER,
} hv_egress_l4;

/* "tcp", "udp", "icmp", "icmpv6", "other". */
const char *hv_egress_l4_name (hv_egress_l4 p);

/* One denied packet. */
typedef struct hv_egress_denial
{
  int family; /* AF_INET or AF_INET6 */
  hv_egress_l4 protocol;
  uint8_t proto_number; /* the IP protocol / last next-header, for "other" */
  uint8_t addr[16];     /* destination; the first 4 bytes for AF_INET */
  uint16_t port;        /* destination port for TCP and UDP, else 0 */
} hv_egress_denial;

/* --- parsing ------------------------------------------------------------- */

typedef enum hv_egress_parse_result
{
  HV_EGRESS_PARSE_DENIAL, /* *out filled */
  HV_EGRESS_PARSE_OTHER,  /* well formed, not ours: another message type or prefix */
  HV_EGRESS_PARSE_BAD,    /* malformed or truncated */
} hv_egress_parse_result;

/* One netlink message of at most len bytes (nlmsg_len is checked against
 * it): an nfnetlink_log packet whose NFULA_PREFIX is exactly prefix. */
hv_egress_parse_result hv_egress_denial_parse (const struct nlmsghdr *nlh, size_t len, const char *prefix,
                                               hv_egress_denial *out);
/* The packet itself (from its network header on, plen bytes) of family. */
hv_egress_parse_result hv_egress_denial_parse_packet (int family, const uint8_t *pkt, size_t plen,
                                                      hv_egress_denial *out);

/* --- the listener -------------------------------------------------------- */

typedef struct hv_egress_denials_events
{
  void (*denied) (void *data, const hv_egress_denial *d);
  /* A resolver refusal that passed the limiter (hv_egress_denials_refused). */
  void (*refused) (void *data, const char *qname, uint16_t qtype, const char *why);
  /* What was left out since the last summary: repeats, new ones past
   * the limiter's cap, socket overruns (s->overruns: the kernel dropped
   * log messages while the listener was behind). */
  void (*suppressed) (void *data, const hv_denial_summary *s);
  /* Is the trail past its size cap?  Then a new denial the limiter could
   * not remember is only counted (unrecorded_new); NULL: never. */
  bool (*capped) (void *data);
  void *data;
} hv_egress_denials_events;

typedef struct hv_egress_denials hv_egress_denials;

/* Listen on NFLOG group (binding it in copy-packet mode) in the network
 * namespace netns_fd (-1: the caller's).  The socket is made there
 * (setns there and back, this thread only); if the way back fails this
 * thread is left in the sandbox's namespace and the error says so: the
 * caller must treat it as fatal.  per_second 0: HV_EGRESS_DENIALS_RATE. */
int hv_egress_denials_open (int netns_fd, uint16_t group, unsigned per_second,
                            const hv_egress_denials_events *events, hv_egress_denials **out, hv_error **err);
/* The same on fd, a NETLINK_NETFILTER socket made in the sandbox's
 * namespace by another process and not yet bound (egress_sandbox.c: a
 * rootless runtime cannot enter that namespace itself); the group is
 * bound from here, which the kernel allows to a caller with
 * CAP_NET_ADMIN in the namespace's user namespace (its owner, from
 * outside).  Takes fd: closed on failure. */
int hv_egress_denials_open_socket (int fd, uint16_t group, unsigned per_second,
                                   const hv_egress_denials_events *events, hv_egress_denials **out, hv_error **err);
void hv_egress_denials_free (hv_egress_denials *d);
int hv_egress_denials_fd (const hv_egress_denials *d);
/* Handle what is ready.  -1 only when the socket is of no more use; a
 * full socket buffer (the kernel dropped log messages) is not an error:
 * those are counted (hv_egress_denials_lost) and said in a summary. */
int hv_egress_denials_dispatch (hv_egress_denials *d, hv_error **err);
/* The sandbox is gone: the summary of whatever is left. */
void hv_egress_denials_finish (hv_egress_denials *d);
/* A resolver refusal, through the same limiter (may call events.refused
 * at once). */
void hv_egress_denials_refused (hv_egress_denials *d, const char *qname, uint16_t qtype, const char *why);
/* A denial seen elsewhere (the forwarder's own refusal of a connection:
 * egress_forward.h), through the same limiter as the kernel's. */
void hv_egress_denials_denied (hv_egress_denials *d, const hv_egress_denial *x);
/* Messages skipped as malformed; socket overruns (ENOBUFS) seen. */
uint64_t hv_egress_denials_malformed (const hv_egress_denials *d);
uint64_t hv_egress_denials_lost (const hv_egress_denials *d);
#endif
