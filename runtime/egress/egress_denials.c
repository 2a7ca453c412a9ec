/* NFLOG denials of the egress table, parsed and rate-limited
 * (egress_denials.h).  libmnl only: the nfnetlink_log protocol is a
 * handful of attributes. */
#include "config.h"
#include "egress_denials.h"
#include "network.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "dns_message.h" /* hv_dns_type_name */
#include "egress_table.h" /* HV_EGRESS_LOG_PREFIX, hv_egress_check_netfilter_socket */
#include "netlink_msg.h"
#include "utils.h"

/* A datagram from the kernel holds one packet message (qthreshold 1);
 * this leaves room for many more than that. */
#define RECV_BUF_SIZE 65536
/* Datagrams read per dispatch, so a flood cannot hold the caller's loop. */
#define RECV_PER_DISPATCH 64
/* Socket receive buffer: what waits while the caller is busy.  When it
 * is full the kernel drops log messages (never packets: NFLOG is
 * asynchronous) and the next recv says ENOBUFS. */
#define SOCKET_RCVBUF (4 * 1024 * 1024)
/* Extension headers walked in an IPv6 packet. */
#define MAX_EXT_HEADERS 8

const char *
hv_egress_l4_name (hv_egress_l4 p)
{
  switch (p)
    {
    case HV_EGRESS_L4_TCP:
      return "tcp";
    case HV_EGRESS_L4_UDP:
      return "udp";
    case HV_EGRESS_L4_ICMP:
      return "icmp";
    case HV_EGRESS_L4_ICMPV6:
      return "icmpv6";
    case HV_EGRESS_L4_OTHER:
      break;
    }
  return "other";
}

/* --- parsing ------------------------------------------------------------- */

/* The transport header at pkt[l4] (l4 == plen: none copied, which only a
 * non-first fragment has legitimately). */
static hv_egress_parse_result
parse_l4 (int family, uint8_t proto, bool first_fragment, const uint8_t *pkt, size_t plen, size_t l4,
          hv_egress_denial *out)
{
  out->proto_number = proto;
  if (proto == IPPROTO_TCP)
    out->protocol = HV_EGRESS_L4_TCP;
  else if (proto == IPPROTO_UDP)
    out->protocol = HV_EGRESS_L4_UDP;
  else if (proto == IPPROTO_ICMP && family == AF_INET)
    out->protocol = HV_EGRESS_L4_ICMP;
  else if (proto == IPPROTO_ICMPV6 && family == AF_INET6)
    out->protocol = HV_EGRESS_L4_ICMPV6;
  else
    out->protocol = HV_EGRESS_L4_OTHER;
  out->port = 0;
  if ((out->protocol == HV_EGRESS_L4_TCP || out->protocol == HV_EGRESS_L4_UDP) && first_fragment)
    {
      /* The copy range covers the ports: without them the message was
       * cut short, and a record with a made-up port would mislead. */
      if (l4 > plen || plen - l4 < 4)
        return HV_EGRESS_PARSE_BAD;
      out->port = (uint16_t) (pkt[l4 + 2] << 8 | pkt[l4 + 3]);
    }
  return HV_EGRESS_PARSE_DENIAL;
}

static hv_egress_parse_result
parse_ipv4 (const uint8_t *pkt, size_t plen, hv_egress_denial *out)
{
  if (plen < 20 || pkt[0] >> 4 != 4)
    return HV_EGRESS_PARSE_BAD;
  size_t ihl = (size_t) (pkt[0] & 0xf) * 4;
  if (ihl < 20 || ihl > plen)
    return HV_EGRESS_PARSE_BAD;
  out->family = AF_INET;
  memset (out->addr, 0, sizeof (out->addr));
  memcpy (out->addr, pkt + 16, 4);
  bool first = ((pkt[6] & 0x1f) << 8 | pkt[7]) == 0;
  return parse_l4 (AF_INET, pkt[9], first, pkt, plen, ihl, out);
}

static hv_egress_parse_result
parse_ipv6 (const uint8_t *pkt, size_t plen, hv_egress_denial *out)
{
  if (plen < 40 || pkt[0] >> 4 != 6)
    return HV_EGRESS_PARSE_BAD;
  out->family = AF_INET6;
  memcpy (out->addr, pkt + 24, 16);
  uint8_t nh = pkt[6];
  size_t off = 40;
  bool first = true;
  for (int i = 0; i < MAX_EXT_HEADERS; i++)
    {
      size_t hlen;
      if (nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING || nh == IPPROTO_DSTOPTS)
        {
          if (plen - off < 2)
            return HV_EGRESS_PARSE_BAD;
          hlen = ((size_t) pkt[off + 1] + 1) * 8;
        }
      else if (nh == IPPROTO_AH)
        {
          if (plen - off < 2)
            return HV_EGRESS_PARSE_BAD;
          hlen = ((size_t) pkt[off + 1] + 2) * 4;
        }
      else if (nh == IPPROTO_FRAGMENT)
        {
          if (plen - off < 8)
            return HV_EGRESS_PARSE_BAD;
          hlen = 8;
          first = ((pkt[off + 2] << 8 | pkt[off + 3]) & 0xfff8) == 0;
        }
      else
        break;
      uint8_t next = pkt[off];
      if (hlen > plen - off)
        return HV_EGRESS_PARSE_BAD;
      off += hlen;
      nh = next;
      if (!first)
        break; /* what follows is the middle of a datagram */
    }
  return parse_l4 (AF_INET6, nh, first, pkt, plen, off, out);
}

hv_egress_parse_result
hv_egress_denial_parse_packet (int family, const uint8_t *pkt, size_t plen, hv_egress_denial *out)
{
  memset (out, 0, sizeof (*out));
  if (pkt == NULL)
    return HV_EGRESS_PARSE_BAD;
  if (family == AF_INET)
    return parse_ipv4 (pkt, plen, out);
  if (family == AF_INET6)
    return parse_ipv6 (pkt, plen, out);
  return HV_EGRESS_PARSE_BAD;
}

hv_egress_parse_result
hv_egress_denial_parse (const struct nlmsghdr *nlh, size_t len, const char *prefix, hv_egress_denial *out)
{
  memset (out, 0, sizeof (*out));
  if (len < sizeof (*nlh) || !hv_nlmsg_ok (nlh, (int) (len > INT32_MAX ? INT32_MAX : len)))
    return HV_EGRESS_PARSE_BAD;
  if (nlh->nlmsg_type != ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET))
    return HV_EGRESS_PARSE_OTHER;
  if (nlh->nlmsg_len < hv_nl_align (sizeof (*nlh)) + hv_nl_align (sizeof (struct nfgenmsg)))
    return HV_EGRESS_PARSE_BAD;
  const struct nfgenmsg *g = mnl_nlmsg_get_payload (nlh);
  const char *got_prefix = NULL;
  const uint8_t *pkt = NULL;
  size_t plen = 0;
  const struct nlattr *attr; /* mnl_attr_for_each_payload's name */
  size_t seen = hv_nl_align (sizeof (*g));
  /* The walk stops at the first attribute that does not fit; what is
   * left over means the message lied about its lengths.  It is bounded by
   * nlmsg_len exactly: mnl_attr_for_each rounds the end up to 4 bytes and
   * read an attribute header past the end of a message whose length is
   * not a multiple of 4 (found by tests/fuzz/fuzz_netlink). */
  const void *attrs = (const char *) g + hv_nl_align (sizeof (*g));
  size_t attrs_len = nlh->nlmsg_len - hv_nl_align (sizeof (*nlh)) - hv_nl_align (sizeof (*g));
  /* libmnl's macro hands mnl_attr_ok the distance to the end as an int:
   * it is below nlmsg_len, which hv_nlmsg_ok bounded by INT32_MAX above. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
  mnl_attr_for_each_payload (attrs, attrs_len)
#pragma GCC diagnostic pop
  {
    const struct nlattr *a = attr;
    seen += hv_nl_align (a->nla_len);
    /* libmnl rounds the message's end up to 4 bytes: the attribute must
     * end within the length the message claims. */
    if ((const char *) a + a->nla_len > (const char *) nlh + nlh->nlmsg_len)
      return HV_EGRESS_PARSE_BAD;
    switch (mnl_attr_get_type (a))
      {
      case NFULA_PREFIX:
        /* The kernel sends the prefix with its NUL. */
        if (mnl_attr_validate (a, MNL_TYPE_NUL_STRING) < 0)
          return HV_EGRESS_PARSE_BAD;
        got_prefix = mnl_attr_get_str (a);
        break;
      case NFULA_PAYLOAD:
        pkt = mnl_attr_get_payload (a);
        plen = mnl_attr_get_payload_len (a);
        break;
      default:
        break;
      }
  }
  if (seen < mnl_nlmsg_get_payload_len (nlh))
    return HV_EGRESS_PARSE_BAD;
  /* Another rule logging to the group (not the egress table's). */
  if (got_prefix == NULL || strcmp (got_prefix, prefix) != 0)
    return HV_EGRESS_PARSE_OTHER;
  if (g->nfgen_family != AF_INET && g->nfgen_family != AF_INET6)
    return HV_EGRESS_PARSE_BAD;
  return hv_egress_denial_parse_packet (g->nfgen_family, pkt, plen, out);
}

/* --- the listener -------------------------------------------------------- */

struct hv_egress_denials
{
  struct mnl_socket *nl;
  int epfd, timerfd;
  uint16_t group;
  hv_egress_denials_events events;
  hv_denial_limiter limiter;
  uint64_t malformed, lost;
  uint64_t lost_unsaid; /* overruns not yet in a summary */
  uint64_t after_cap;   /* new, not remembered, past the trail's cap: only counted */
  uint8_t *buf;
};

static uint64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static int
setup_nflog_socket (struct mnl_socket *nl, hv_error **err)
{
  int size = SOCKET_RCVBUF;
  if (setsockopt (mnl_socket_get_fd (nl), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof (size)) < 0)
    setsockopt (mnl_socket_get_fd (nl), SOL_SOCKET, SO_RCVBUF, &size, sizeof (size));
  if (mnl_socket_bind (nl, 0, MNL_SOCKET_AUTOPID) < 0)
    return hv_error_set (err, errno, "bind netfilter netlink socket");
  return 0;
}

static struct mnl_socket *
open_nflog_socket (hv_error **err)
{
  struct mnl_socket *nl = mnl_socket_open2 (NETLINK_NETFILTER, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (nl == NULL)
    {
      hv_error_set (err, errno, "open netfilter netlink socket");
      return NULL;
    }
  if (setup_nflog_socket (nl, err) < 0)
    {
      mnl_socket_close (nl);
      return NULL;
    }
  return nl;
}

/* Bind the group: copy the first HV_EGRESS_DENIAL_COPY bytes of each
 * packet, and send each message at once (qthreshold 1; the kernel would
 * otherwise gather up to 100 for up to a second).
 *
 * No NFULNL_CFG_CMD_PF_UNBIND / PF_BIND first, as old libnetfilter_log
 * examples do: they choose the default logger of a whole family in the
 * namespace (for iptables' LOG-less paths), which nftables' `log group`
 * does not use (it asks for the nfnetlink_log logger by type), and an
 * unbind would take that default away from anyone else in the
 * namespace. */
static int
bind_group (struct mnl_socket *nl, uint16_t group, hv_error **err)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = (uint32_t) now_ms ();
  struct nfgenmsg *g = mnl_nlmsg_put_extra_header (nlh, sizeof (*g));
  g->nfgen_family = AF_UNSPEC;
  g->version = NFNETLINK_V0;
  g->res_id = htons (group);
  struct nfulnl_msg_config_cmd cmd = { .command = NFULNL_CFG_CMD_BIND };
  mnl_attr_put (nlh, NFULA_CFG_CMD, sizeof (cmd), &cmd);
  struct nfulnl_msg_config_mode mode = { .copy_range = htonl (HV_EGRESS_DENIAL_COPY),
                                         .copy_mode = NFULNL_COPY_PACKET };
  mnl_attr_put (nlh, NFULA_CFG_MODE, sizeof (mode), &mode);
  mnl_attr_put_u32 (nlh, NFULA_CFG_QTHRESH, htonl (1));
  uint32_t seq = nlh->nlmsg_seq;
  if (mnl_socket_sendto (nl, nlh, nlh->nlmsg_len) < 0)
    return hv_error_set (err, errno, "bind NFLOG group %u", group);
  /* The acknowledgement (the socket is non-blocking: wait for it). */
  for (int tries = 0; tries < 100; tries++)
    {
      ssize_t n = mnl_socket_recvfrom (nl, buf, sizeof (buf));
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        {
          struct timespec ts = { 0, 10 * 1000 * 1000 };
          nanosleep (&ts, NULL);
          continue;
        }
      if (n < 0)
        return hv_error_set (err, errno, "bind NFLOG group %u", group);
      if (mnl_cb_run (buf, (size_t) n, seq, mnl_socket_get_portid (nl), NULL, NULL) < 0)
        {
          if (errno == EBUSY)
            return hv_error_set (err, errno, "bind NFLOG group %u: another listener has it in this namespace", group);
          return hv_error_set (err, errno, "bind NFLOG group %u", group);
        }
      return 0;
    }
  return hv_error_set (err, ETIMEDOUT, "bind NFLOG group %u: no answer from the kernel", group);
}

static int
add_to_epoll (int epfd, int fd, hv_error **err)
{
  struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
  if (epoll_ctl (epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
    return hv_error_set (err, errno, "epoll_ctl");
  return 0;
}

static int
call_open_nflog_socket (void *data, hv_error **err)
{
  struct mnl_socket **nl = data;
  *nl = open_nflog_socket (err);
  return *nl ? 0 : -1;
}

static int listen_on (struct mnl_socket *nl, uint16_t group, unsigned per_second,
                      const hv_egress_denials_events *events, hv_egress_denials **out, hv_error **err);

int
hv_egress_denials_open (int netns_fd, uint16_t group, unsigned per_second, const hv_egress_denials_events *events,
                        hv_egress_denials **out, hv_error **err)
{
  *out = NULL;
  struct mnl_socket *nl = NULL;
  if (netns_fd < 0)
    nl = open_nflog_socket (err);
  /* NFLOG instances are per network namespace: the socket must be made in
   * the sandbox's. */
  else if (hv_netns_call (netns_fd, -1, "the sandbox's network namespace", call_open_nflog_socket, &nl, err)
           == HV_NETNS_STRANDED)
    {
      if (nl != NULL)
        mnl_socket_close (nl);
      return -1;
    }
  if (nl == NULL)
    return hv_error_wrap (err, "NFLOG listener");
  return listen_on (nl, group, per_second, events, out, err);
}

int
hv_egress_denials_open_socket (int fd, uint16_t group, unsigned per_second, const hv_egress_denials_events *events,
                               hv_egress_denials **out, hv_error **err)
{
  cleanup_close int owned = fd;
  *out = NULL;
  if (hv_egress_check_netfilter_socket (fd, err) < 0)
    return hv_error_wrap (err, "NFLOG listener");
  /* dispatch reads until the socket is empty: it must not block. */
  int fl = fcntl (fd, F_GETFL);
  if (fl < 0 || fcntl (fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl (fd, F_SETFD, FD_CLOEXEC) < 0)
    return hv_error_set (err, errno, "NFLOG listener: socket flags");
  struct mnl_socket *nl = mnl_socket_fdopen (fd);
  if (nl == NULL)
    return hv_error_set (err, errno, "NFLOG listener: netfilter netlink socket");
  owned = -1;
  if (mnl_socket_get_portid (nl) == 0 && setup_nflog_socket (nl, err) < 0)
    {
      mnl_socket_close (nl);
      return hv_error_wrap (err, "NFLOG listener");
    }
  return listen_on (nl, group, per_second, events, out, err);
}

/* Takes nl. */
static int
listen_on (struct mnl_socket *nl, uint16_t group, unsigned per_second, const hv_egress_denials_events *events,
           hv_egress_denials **out, hv_error **err)
{
  hv_egress_denials *d = xmalloc0 (sizeof (*d));
  d->nl = nl;
  d->epfd = -1;
  d->timerfd = -1;
  d->group = group;
  if (events)
    d->events = *events;
  hv_denial_limiter_init (&d->limiter, per_second ? per_second : HV_EGRESS_DENIALS_RATE);
  if (bind_group (nl, group, err) < 0)
    goto fail;
  d->epfd = epoll_create1 (EPOLL_CLOEXEC);
  if (d->epfd < 0)
    {
      hv_error_set (err, errno, "epoll_create1");
      goto fail;
    }
  d->timerfd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (d->timerfd < 0)
    {
      hv_error_set (err, errno, "timerfd_create");
      goto fail;
    }
  if (add_to_epoll (d->epfd, mnl_socket_get_fd (nl), err) < 0 || add_to_epoll (d->epfd, d->timerfd, err) < 0)
    goto fail;
  d->buf = xmalloc0 (RECV_BUF_SIZE);
  *out = d;
  return 0;
fail:
  hv_egress_denials_free (d);
  return -1;
}

void
hv_egress_denials_free (hv_egress_denials *d)
{
  if (d == NULL)
    return;
  if (d->nl)
    mnl_socket_close (d->nl);
  if (d->epfd >= 0)
    close (d->epfd);
  if (d->timerfd >= 0)
    close (d->timerfd);
  hv_denial_limiter_release (&d->limiter);
  free (d->buf);
  free (d);
}

int
hv_egress_denials_fd (const hv_egress_denials *d)
{
  return d->epfd;
}

uint64_t
hv_egress_denials_malformed (const hv_egress_denials *d)
{
  return d->malformed;
}

uint64_t
hv_egress_denials_lost (const hv_egress_denials *d)
{
  return d->lost;
}

static void
flush_summary (hv_egress_denials *d, uint64_t now)
{
  hv_denial_summary s;
  bool due = hv_denial_limiter_tick (&d->limiter, now, &s);
  if (!due && d->lost_unsaid == 0 && d->after_cap == 0)
    return;
  s.overruns = d->lost_unsaid;
  s.per_second = d->limiter.per_second;
  s.unrecorded_new += d->after_cap;
  s.count += d->after_cap;
  d->lost_unsaid = 0;
  d->after_cap = 0;
  if (d->events.suppressed)
    d->events.suppressed (d->events.data, &s);
}

/* The timer rings when a summary falls due (disarmed when none is). */
static void
arm_timer (hv_egress_denials *d)
{
  uint64_t due = d->lost_unsaid || d->after_cap ? 1 : hv_denial_limiter_deadline (&d->limiter);
  struct itimerspec it = { 0 };
  if (due)
    {
      it.it_value.tv_sec = (time_t) (due / 1000);
      it.it_value.tv_nsec = (long) (due % 1000) * 1000000;
    }
  timerfd_settime (d->timerfd, TFD_TIMER_ABSTIME, &it, NULL);
}

/* Record a denial with this key?  Past the trail's cap only one the
 * limiter remembers as new (at most HV_DENIAL_KEYS_MAX in all). */
static bool
admit (hv_egress_denials *d, const char *key, size_t klen, uint64_t now)
{
  size_t before = hv_denial_limiter_remembered (&d->limiter);
  if (!hv_denial_limiter_admit (&d->limiter, key, klen, now))
    return false;
  if (d->events.capped && hv_denial_limiter_remembered (&d->limiter) == before
      && d->events.capped (d->events.data))
    {
      d->after_cap++;
      return false;
    }
  return true;
}

/* The limiter's key of a denial, as the summary names it: the fields
 * that make it the same ("tcp 203.0.113.9 81", "other/47 2001:db8::1 0"). */
static size_t
denial_key (const hv_egress_denial *x, char key[96])
{
  char dst[INET6_ADDRSTRLEN] = "";
  inet_ntop (x->family == AF_INET ? AF_INET : AF_INET6, x->addr, dst, sizeof (dst));
  int n;
  if (x->protocol == HV_EGRESS_L4_OTHER)
    n = snprintf (key, 96, "other/%u %s %u", x->proto_number, dst, x->port);
  else
    n = snprintf (key, 96, "%s %s %u", hv_egress_l4_name (x->protocol), dst, x->port);
  return n > 0 && n < 96 ? (size_t) n : strnlen (key, 95);
}

static void
handle_datagram (hv_egress_denials *d, const uint8_t *buf, size_t len, uint64_t now)
{
  const struct nlmsghdr *nlh = (const struct nlmsghdr *) buf;
  int left = (int) len;
  while (hv_nlmsg_ok (nlh, left))
    {
      if (nlh->nlmsg_type >= NLMSG_MIN_TYPE)
        {
          hv_egress_denial x;
          switch (hv_egress_denial_parse (nlh, (size_t) left, HV_EGRESS_LOG_PREFIX, &x))
            {
            case HV_EGRESS_PARSE_DENIAL:
              {
                char key[96];
                size_t klen = denial_key (&x, key);
                if (admit (d, key, klen, now) && d->events.denied)
                  d->events.denied (d->events.data, &x);
                break;
              }
            case HV_EGRESS_PARSE_BAD:
              d->malformed++;
              break;
            case HV_EGRESS_PARSE_OTHER:
              break;
            }
        }
      nlh = mnl_nlmsg_next (nlh, &left);
    }
  if (left > 0)
    d->malformed++;
}

int
hv_egress_denials_dispatch (hv_egress_denials *d, hv_error **err)
{
  uint64_t expirations;
  while (read (d->timerfd, &expirations, sizeof (expirations)) > 0)
    ;
  flush_summary (d, now_ms ());
  int fd = mnl_socket_get_fd (d->nl);
  for (int i = 0; i < RECV_PER_DISPATCH; i++)
    {
      struct sockaddr_nl from = { 0 };
      socklen_t fromlen = sizeof (from);
      ssize_t n = recvfrom (fd, d->buf, RECV_BUF_SIZE, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *) &from, &fromlen);
      if (n < 0)
        {
          if (errno == EAGAIN || errno == EWOULDBLOCK)
            break;
          if (errno == EINTR)
            continue;
          if (errno == ENOBUFS)
            {
              /* The kernel dropped log messages while we were busy; the
               * packets themselves were rejected all the same. */
              d->lost++;
              d->lost_unsaid++;
              continue;
            }
          arm_timer (d);
          return hv_error_set (err, errno, "receive from NFLOG group %u", d->group);
        }
      /* Any process in the namespace may send to this socket's port id:
       * only the kernel's (port 0) messages are denials. */
      if (fromlen != sizeof (from) || from.nl_family != AF_NETLINK || from.nl_pid != 0)
        {
          d->malformed++;
          continue;
        }
      if ((size_t) n > RECV_BUF_SIZE)
        {
          d->malformed++;
          continue;
        }
      uint64_t now = now_ms ();
      flush_summary (d, now);
      handle_datagram (d, d->buf, (size_t) n, now);
    }
  arm_timer (d);
  return 0;
}

void
hv_egress_denials_finish (hv_egress_denials *d)
{
  if (d == NULL)
    return;
  flush_summary (d, UINT64_MAX);
  arm_timer (d);
}

void
hv_egress_denials_refused (hv_egress_denials *d, const char *qname, uint16_t qtype, const char *why)
{
  uint64_t now = now_ms ();
  flush_summary (d, now);
  /* "dns TYPE NAME": a name asked again, of the same type, is a repeat
   * (the type is one word: the key names one query).  The resolver's
   * names are at most 255 bytes. */
  char type[16];
  cleanup_free char *key = xasprintf ("dns %s %.1024s", hv_dns_type_name (qtype, type), qname);
  if (admit (d, key, strlen (key), now) && d->events.refused)
    d->events.refused (d->events.data, qname, qtype, why);
  arm_timer (d);
}

void
hv_egress_denials_denied (hv_egress_denials *d, const hv_egress_denial *x)
{
  uint64_t now = now_ms ();
  flush_summary (d, now);
  char key[96];
  size_t klen = denial_key (x, key);
  if (admit (d, key, klen, now) && d->events.denied)
    d->events.denied (d->events.data, x);
  arm_timer (d);
}
