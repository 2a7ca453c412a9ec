/* The forwarder's accepting side, in the monitor's loop: egress_forward.h. */
#include "config.h"
#include "egress_forward.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter_ipv4.h> /* SO_ORIGINAL_DST */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "egress_decide.h"
#include "egress_host_addrs.h"
#include "utils.h"

/* linux/netfilter_ipv6/ip6_tables.h's, without that header's baggage. */
#ifndef IP6T_SO_ORIGINAL_DST
#define IP6T_SO_ORIGINAL_DST 80
#endif
/* Connections accepted per dispatch: the loop has other work. */
#define ACCEPT_BATCH 64

struct fwd_pin
{
  int family;
  uint8_t addr[16];
  uint16_t port;
  uint64_t expires_ms;
};

struct hv_egress_forward
{
  hv_egress_forward_args a;
  int listen[2];
  int epfd;
  int spare; /* an fd kept for when accept runs out of them */
  hv_fwd_relays *relays;
  hv_egress_cidr *host; /* the host's own addresses: never a destination */
  size_t n_host;
  struct fwd_pin *pins;
  size_t n_pins;
};

static uint64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

void
hv_egress_forward_pinned (hv_egress_forward *f, const hv_egress_pin *pins, size_t n)
{
  uint64_t now = now_ms ();
  for (size_t i = 0; i < n; i++)
    {
      const hv_egress_pin *p = &pins[i];
      struct fwd_pin *slot = NULL, *soonest = NULL;
      for (size_t k = 0; k < f->n_pins; k++)
        {
          struct fwd_pin *q = &f->pins[k];
          if (q->family == p->family && q->port == p->port && memcmp (q->addr, p->addr, 16) == 0)
            {
              slot = q;
              break;
            }
          if (soonest == NULL || q->expires_ms < soonest->expires_ms)
            soonest = q;
        }
      if (slot == NULL && f->n_pins < HV_FWD_MAX_PINS)
        slot = &f->pins[f->n_pins++];
      else if (slot == NULL)
        slot = soonest; /* the one to expire first: refused from now on (fail closed) */
      slot->family = p->family;
      memcpy (slot->addr, p->addr, 16);
      slot->port = p->port;
      /* The table's pin times out in the kernel; ours at the same time. */
      slot->expires_ms = now + p->timeout_ms;
    }
}

static bool
pinned (const hv_egress_forward *f, int family, const uint8_t addr[16], uint16_t port)
{
  uint64_t now = now_ms ();
  for (size_t k = 0; k < f->n_pins; k++)
    {
      const struct fwd_pin *q = &f->pins[k];
      if (q->family == family && q->port == port && q->expires_ms > now && memcmp (q->addr, addr, 16) == 0)
        return true;
    }
  return false;
}

/* The table's order, again: what the kernel let through to the redirect
 * is checked by the monitor too (a table changed under it, a pin that
 * expired in between), and the monitor never connects where the table
 * would not. */
bool
hv_egress_forward_allows (const hv_egress_forward *f, int family, const uint8_t addr[16], uint16_t port)
{
  static const uint8_t loop4[1] = { 127 }, meta4[2] = { 169, 254 };
  static const uint8_t loop6[16] = { [15] = 1 };
  uint8_t md6[16];
  inet_pton (AF_INET6, "fd00:ec2::254", md6);
  if (family == AF_INET && (memcmp (addr, loop4, 1) == 0 || memcmp (addr, meta4, 2) == 0))
    return false;
  if (family == AF_INET6 && (memcmp (addr, loop6, 16) == 0 || memcmp (addr, md6, 16) == 0))
    return false;
  const hv_egress_config *c = f->a.config;
  if (hv_egress_cidrs_cover (c->deny, c->n_deny, family, addr, port)
      || hv_egress_cidrs_cover (f->host, f->n_host, family, addr, port))
    return false;
  return hv_egress_cidrs_cover (c->allow, c->n_allow, family, addr, port) || pinned (f, family, addr, port);
}

static void
refuse (hv_egress_forward *f, int conn, int family, const uint8_t addr[16], uint16_t port)
{
  /* A reset, as the table's reject gives: the tool fails at once. */
  struct linger l = { .l_onoff = 1, .l_linger = 0 };
  setsockopt (conn, SOL_SOCKET, SO_LINGER, &l, sizeof (l));
  close (conn);
  if (f->a.denied)
    {
      hv_egress_denial d = { .family = family, .protocol = HV_EGRESS_L4_TCP, .proto_number = IPPROTO_TCP,
                             .port = port };
      memcpy (d.addr, addr, family == AF_INET ? 4 : 16);
      f->a.denied (f->a.data, &d);
    }
}

/* One accepted connection of the sandbox's: where it was going, checked,
 * then relayed or refused. */
static void
take (hv_egress_forward *f, int conn, int family)
{
  struct sockaddr_storage dst = { 0 };
  socklen_t len = sizeof (dst);
  uint8_t addr[16] = { 0 };
  uint16_t port;
  if (getsockopt (conn, family == AF_INET ? SOL_IP : SOL_IPV6,
                  family == AF_INET ? SO_ORIGINAL_DST : IP6T_SO_ORIGINAL_DST, &dst, &len) < 0
      || dst.ss_family != family)
    {
      /* A connection to the listener itself, not redirected: nowhere to go. */
      close (conn);
      return;
    }
  if (family == AF_INET)
    {
      const struct sockaddr_in *s = (const struct sockaddr_in *) &dst;
      memcpy (addr, &s->sin_addr, 4);
      port = ntohs (s->sin_port);
    }
  else
    {
      const struct sockaddr_in6 *s = (const struct sockaddr_in6 *) &dst;
      memcpy (addr, &s->sin6_addr, 16);
      port = ntohs (s->sin6_port);
      ((struct sockaddr_in6 *) &dst)->sin6_scope_id = 0;
      ((struct sockaddr_in6 *) &dst)->sin6_flowinfo = 0;
    }
  if (!hv_egress_forward_allows (f, family, addr, port))
    {
      refuse (f, conn, family, addr, port);
      return;
    }
  cleanup_error hv_error *e = NULL;
  /* At the cap the connection is closed at once: the sandbox sees it
   * end, not a queue that grows. */
  hv_fwd_relay_start (f->relays, conn, &dst, &e);
}

int
hv_egress_forward_dispatch (hv_egress_forward *f, hv_error **err)
{
  struct epoll_event ev[2];
  int n = epoll_wait (f->epfd, ev, 2, 0);
  if (n < 0 && errno != EINTR)
    return hv_error_set (err, errno, "forwarder: epoll_wait");
  for (int i = 0; i < n; i++)
    {
      int which = (int) ev[i].data.u32;
      int family = which == 0 ? AF_INET : AF_INET6;
      for (int k = 0; k < ACCEPT_BATCH; k++)
        {
          int conn = accept4 (f->listen[which], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (conn < 0)
            {
              if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
                break;
              /* Out of fds: the spare one makes room to take the
               * connection and reset it, so the listener is not left
               * readable (the loop would spin on it). */
              if ((errno == EMFILE || errno == ENFILE) && f->spare >= 0)
                {
                  close (f->spare);
                  f->spare = -1;
                  int c = accept4 (f->listen[which], NULL, NULL, SOCK_CLOEXEC);
                  if (c >= 0)
                    {
                      struct linger l = { .l_onoff = 1, .l_linger = 0 };
                      setsockopt (c, SOL_SOCKET, SO_LINGER, &l, sizeof (l));
                      close (c);
                    }
                  f->spare = open ("/dev/null", O_RDONLY | O_CLOEXEC);
                  continue;
                }
              /* Out of memory: the next turn tries again. */
              if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                break;
              return hv_error_set (err, errno, "forwarder: accept");
            }
          take (f, conn, family);
        }
    }
  return 0;
}

hv_egress_forward *
hv_egress_forward_new (const hv_egress_forward_args *a, hv_error **err)
{
  hv_egress_forward *f = xmalloc0 (sizeof (*f));
  f->a = *a;
  f->listen[0] = a->listen4;
  f->listen[1] = a->listen6;
  f->epfd = epoll_create1 (EPOLL_CLOEXEC);
  f->spare = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  f->pins = xmalloc0 (HV_FWD_MAX_PINS * sizeof (*f->pins));
  if (f->epfd < 0)
    {
      hv_error_set (err, errno, "forwarder: epoll_create1");
      goto fail;
    }
  if (f->listen[0] < 0)
    {
      hv_error_set (err, 0, "forwarder: no IPv4 listener");
      goto fail;
    }
  for (int i = 0; i < 2; i++)
    {
      if (f->listen[i] < 0)
        continue;
      struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t) i };
      if (epoll_ctl (f->epfd, EPOLL_CTL_ADD, f->listen[i], &ev) < 0)
        {
          hv_error_set (err, errno, "forwarder: epoll_ctl");
          goto fail;
        }
    }
  if (hv_egress_host_addrs (&f->host, &f->n_host, err) < 0)
    goto fail;
  f->relays = hv_fwd_relays_new (HV_FWD_MAX_CONNS, err);
  if (f->relays == NULL)
    goto fail;
  return f;
fail:
  hv_egress_forward_free (f);
  return NULL;
}

int
hv_egress_forward_fd (const hv_egress_forward *f)
{
  return f->epfd;
}

unsigned
hv_egress_forward_active (hv_egress_forward *f)
{
  return f->relays ? hv_fwd_relays_active (f->relays) : 0;
}

void
hv_egress_forward_free (hv_egress_forward *f)
{
  if (f == NULL)
    return;
  /* The listeners first: the sandbox's new connects are refused from
   * here on; then every relay ends. */
  for (int i = 0; i < 2; i++)
    if (f->listen[i] >= 0)
      close (f->listen[i]);
  hv_fwd_relays_stop (f->relays);
  if (f->epfd >= 0)
    close (f->epfd);
  if (f->spare >= 0)
    close (f->spare);
  free (f->host);
  free (f->pins);
  free (f);
}
