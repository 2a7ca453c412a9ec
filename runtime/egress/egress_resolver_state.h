/* What egress_resolver.c, egress_upstream.c and egress_resolver_tcp.c
 * share: the resolver's state and its bounds, and no code.  The loop
 * (egress_resolver.c) calls the other two; they call nothing of it.
 * Not for other callers. */
#ifndef HAVEN_EGRESS_RESOLVER_STATE_H
#define HAVEN_EGRESS_RESOLVER_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "dns_message.h"
#include "egress_decide.h"
#include "egress_resolver_config.h"
#include "error.h"

/* The type egress_resolver.h declares (C11 allows the typedef twice):
 * the parts see the state, not the resolver's API. */
typedef struct hv_egress_resolver hv_egress_resolver;
typedef struct hv_res_ask hv_res_ask;

/* Bounds: what a hostile sandbox can make the resolver hold. */
#define HV_RES_LISTENERS 4          /* listening sockets: UDP and TCP, IPv4 and IPv6 */
#define HV_RES_MAX_PENDING 256      /* queries waiting for an upstream; more: SERVFAIL */
#define HV_RES_MAX_TCP_CLIENTS 64   /* more connections are closed at once */
#define HV_RES_TCP_CLIENT_QUERIES 16 /* pending per TCP client; more: SERVFAIL */
#define HV_RES_TCP_IDLE_MS 10000    /* a TCP client with nothing pending closed after this */
#define HV_RES_QUERY_MAX 1024       /* a longer query (UDP or TCP) is dropped */
/* Unread replies a TCP client may leave (four of the largest, framed); more: closed. */
#define HV_RES_TCP_OUT_MAX (4 * (2 + HV_DNS_MESSAGE_MAX))
#define HV_RES_UDP_REPLY_MAX 4096   /* largest UDP reply, whatever the client advertises */
#define HV_RES_UPSTREAM_EDNS 1232   /* UDP size asked of upstreams (DNS flag day 2020) */
#define HV_RES_MAX_ANSWER_ADDRS 32  /* addresses kept from one answer */
#define HV_RES_MAX_PINS 4096        /* pins in one batch (addresses x ports) */
#define HV_RES_RECENT 128           /* (address, name) pairs kept for names_for */
#define HV_RES_NAME_MAX (HV_DNS_PLAIN_NAME_MAX + 1) /* a plain name's text, NUL included */
/* The query sent upstream beside its name: the header (12 bytes), type
 * and class (4), the OPT record (11), with room to spare. */
#define HV_RES_QUERY_FIXED_MAX 32
/* Work done per wakeup, so that one busy socket cannot starve the others
 * (level-triggered epoll brings the rest on the next dispatch): */
#define HV_RES_EPOLL_BATCH 32       /* events taken by one dispatch */
#define HV_RES_UDP_READ_BATCH 64    /* queries read from a listening UDP socket */
#define HV_RES_ACCEPT_BATCH 16      /* TCP connections accepted */
/* Datagrams read from one upstream socket: besides the answer only
 * forgeries arrive there, and a flood of them must not hold the loop. */
#define HV_RES_UPSTREAM_READ_BATCH 16

enum hv_res_kind
{
  HV_RES_K_UDP_LISTEN = 1,
  HV_RES_K_TCP_LISTEN,
  HV_RES_K_TIMER,
  HV_RES_K_UPSTREAM,
  HV_RES_K_TCP_CLIENT,
  HV_RES_K_ASK, /* the approvals directory changed (egress_resolver_ask.h) */
};

/* epoll data: kind, slot index and the slot's generation, so that an
 * event for a socket closed earlier in the same batch is recognised. */
static inline uint64_t
hv_res_token (enum hv_res_kind kind, uint32_t index, uint32_t gen)
{
  return (uint64_t) kind << 56 | (uint64_t) (index & 0xffffff) << 32 | gen;
}

/* Who asked: a UDP peer of a listening socket, or a TCP client slot. */
typedef struct hv_res_client
{
  bool tcp;
  int listen_fd;
  struct sockaddr_storage peer;
  socklen_t peer_len;
  uint32_t slot, gen;
} hv_res_client;

typedef struct hv_res_pending
{
  uint32_t gen; /* changes with every upstream attempt */
  uint64_t token; /* the upstream socket's epoll data */
  hv_res_client client;
  hv_dns_message query; /* the client's, parsed */
  char qname[HV_RES_NAME_MAX];
  hv_egress_ports ports;
  /* The current upstream attempt. */
  size_t upstream;
  bool over_tcp;
  int fd;
  uint16_t id; /* random, never the client's */
  uint64_t deadline_ms;
  uint8_t wire[2 + HV_DNS_NAME_MAX + HV_RES_QUERY_FIXED_MAX]; /* the query sent (TCP: length first) */
  size_t wire_len;
  bool tcp_sent;
  uint8_t *in; /* TCP: the answer being read, length first */
  size_t in_len, in_want;
} hv_res_pending;

typedef struct hv_res_tcp_client
{
  int fd; /* -1: free */
  uint32_t gen;
  uint64_t idle_ms;
  unsigned pending;
  uint8_t *in;
  size_t in_len;
  uint8_t *out;
  size_t out_len;
  bool want_out;
} hv_res_tcp_client;

typedef struct hv_res_recent
{
  int family;
  uint8_t addr[16];
  char name[HV_RES_NAME_MAX];
} hv_res_recent;

struct hv_egress_resolver
{
  hv_egress_resolver_config cfg; /* deep copy, defaults filled in */
  int epfd, timerfd, self_netns_fd;
  int listen_fd[HV_RES_LISTENERS]; /* udp4, tcp4, udp6, tcp6 */
  uint32_t next_gen;
  hv_res_pending *pending[HV_RES_MAX_PENDING];
  size_t n_pending;
  hv_res_tcp_client tcp[HV_RES_MAX_TCP_CLIENTS];
  hv_res_recent recent[HV_RES_RECENT];
  size_t recent_next, n_recent;
  uint8_t *scratch; /* HV_DNS_MESSAGE_MAX bytes: replies are encoded here */
  hv_error *fatal;  /* met while handling a query: dispatch returns it */
  struct hv_res_ask *ask; /* egress_resolver_ask.h; NULL: nothing asks */
};

/* Milliseconds on CLOCK_MONOTONIC: every deadline is one of these. */
static inline uint64_t
hv_res_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}
#endif
