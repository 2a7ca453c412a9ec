/* What the sandbox was refused, as events for the audit trail (issue 10).
 *
 * The egress table (egress_table.h) sends every packet it denies to an
 * NFLOG group (rate-limited in the kernel, HV_EGRESS_LOG_RATE) before
 * rejecting it.  A listener on that group, in the sandbox's network
 * namespace, turns each logged packet carrying HV_EGRESS_LOG_PREFIX into
 * a denial {family, protocol, destination, port}.  The resolver's
 * refusals (egress_resolver.h, events.refused) are handed in by the
 * caller.  Both go through one user-space limiter per sandbox on top of
 * the kernel's: at most `per_second` events in each one-second window,
 * an event equal to one already reported in the window (same
 * destination, port and protocol; same name and type) collapsed into it,
 * and when a window that left something out ends, one summary with the
 * count.  Every logged packet is thus either reported or counted.
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

#include "error.h"

#define HV_EGRESS_DENIAL_COPY 128   /* bytes of each packet: IP (with options / extension headers) + ports */
#define HV_EGRESS_DENIALS_RATE 20   /* default events per second per sandbox */
#define HV_EGRESS_DENIALS_RATE_MAX 1000
#define HV_EGRESS_DENIALS_WINDOW_MS 1000

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

/* --- the limiter (time passed in, so tests choose it) -------------------- */

typedef struct hv_denial_limiter
{
  unsigned per_second;
  bool open;             /* a window is running */
  uint64_t window_start; /* ms */
  unsigned admitted;     /* in this window; their keys below */
  uint64_t keys[HV_EGRESS_DENIALS_RATE_MAX];
  uint64_t suppressed;   /* in this window */
  uint64_t pending;      /* of windows ended while nothing asked (hv_denial_limiter_tick) */
} hv_denial_limiter;

/* per_second: 1..HV_EGRESS_DENIALS_RATE_MAX (clamped). */
void hv_denial_limiter_init (hv_denial_limiter *l, unsigned per_second);
/* Report an event with this key (its bytes) at now_ms?  false: counted
 * for the window's summary instead (over the limit, or a duplicate of
 * an event reported in the window). */
bool hv_denial_limiter_admit (hv_denial_limiter *l, const void *key, size_t keylen, uint64_t now_ms);
/* The count for a summary when a window that left something out has
 * ended by now_ms (then reset), else 0.  Call before admitting events,
 * so a summary comes before the next window's events. */
uint64_t hv_denial_limiter_tick (hv_denial_limiter *l, uint64_t now_ms);
/* When the next summary falls due (ms), or 0 when none will. */
uint64_t hv_denial_limiter_deadline (const hv_denial_limiter *l);

/* --- the listener -------------------------------------------------------- */

typedef struct hv_egress_denials_events
{
  void (*denied) (void *data, const hv_egress_denial *d);
  /* A resolver refusal that passed the limiter (hv_egress_denials_refused). */
  void (*refused) (void *data, const char *qname, uint16_t qtype, const char *why);
  /* count events of the last window left out. */
  void (*suppressed) (void *data, uint64_t count);
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
 * those are counted (hv_egress_denials_lost). */
int hv_egress_denials_dispatch (hv_egress_denials *d, hv_error **err);
/* A resolver refusal, through the same limiter (may call events.refused
 * at once). */
void hv_egress_denials_refused (hv_egress_denials *d, const char *qname, uint16_t qtype, const char *why);
/* Messages skipped as malformed; socket overruns (ENOBUFS) seen. */
uint64_t hv_egress_denials_malformed (const hv_egress_denials *d);
uint64_t hv_egress_denials_lost (const hv_egress_denials *d);
#endif
