/* The egress resolver's upstream queries: one socket per attempt, made
 * in the upstream network namespace, marked so the egress table does
 * not send it back to us, with a random ID and a random source port;
 * answers are taken only from the upstream's address and port, with
 * our ID and our question (anti-spoofing).  UDP first, TCP when the
 * answer is truncated. */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress_upstream.h"
#include "network.h"

enum
{
  SOFT = -1,  /* this attempt cannot be made: try the next */
  FATAL = -2, /* the thread is in the wrong network namespace */
};

struct new_socket
{
  int family, type, fd;
};

static int
call_socket (void *data, hv_error **err)
{
  struct new_socket *n = data;
  n->fd = socket (n->family, n->type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (n->fd < 0)
    return hv_error_set (err, errno, "egress resolver: upstream socket");
  return 0;
}

/* A socket made in the upstream netns.  setns changes only this thread;
 * coming back must work, or every later socket (and the caller's) would
 * be made in the wrong namespace: then the resolver ends (fail closed). */
static int
upstream_socket (hv_egress_resolver *r, int family, int type, int *out, hv_error **err)
{
  int netns = r->cfg.upstream_netns_fd;
  struct new_socket n = { family, type, -1 };
  int made = netns < 0 ? call_socket (&n, err)
                       : hv_netns_call (netns, r->self_netns_fd, "the upstream network namespace", call_socket, &n, err);
  if (made == HV_NETNS_STRANDED)
    {
      if (n.fd >= 0)
        close (n.fd);
      hv_error_wrap (err, "egress resolver");
      return FATAL;
    }
  if (made < 0)
    {
      if (made == HV_NETNS_NOT_ENTERED)
        hv_error_wrap (err, "egress resolver");
      return SOFT;
    }
  int fd = n.fd;
  /* Unmarked, the query would be redirected back to the resolver by the
   * table's dns chain when the upstream netns is the sandbox's. */
  uint32_t mark = r->cfg.upstream_mark;
  if (mark && setsockopt (fd, SOL_SOCKET, SO_MARK, &mark, sizeof (mark)) < 0)
    {
      hv_error_set (err, errno, "egress resolver: SO_MARK 0x%x", mark);
      close (fd);
      return SOFT;
    }
  *out = fd;
  return 0;
}

static socklen_t
sockaddr_len (const struct sockaddr_storage *s)
{
  return s->ss_family == AF_INET ? sizeof (struct sockaddr_in) : sizeof (struct sockaddr_in6);
}

static bool
same_peer (const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
  if (a->ss_family != b->ss_family)
    return false;
  if (a->ss_family == AF_INET)
    {
      const struct sockaddr_in *x = (const void *) a, *y = (const void *) b;
      return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
  const struct sockaddr_in6 *x = (const void *) a, *y = (const void *) b;
  return x->sin6_port == y->sin6_port && memcmp (&x->sin6_addr, &y->sin6_addr, 16) == 0;
}

static int
attempt (hv_egress_resolver *r, uint32_t slot, hv_res_pending *p, hv_error **err)
{
  const struct sockaddr_storage *up = &r->cfg.upstreams[p->upstream];
  /* A fresh random ID per attempt: the client's ID never leaves the
   * sandbox, and an off-path spoofer must guess it and the port. */
  uint16_t id;
  if (getrandom (&id, sizeof (id), 0) != sizeof (id))
    {
      hv_error_set (err, errno, "egress resolver: getrandom");
      return SOFT;
    }
  cleanup_dns_message hv_dns_message q = { 0 };
  size_t len;
  const hv_dns_question *qq = &p->query.questions[0];
  if (hv_dns_query_init (&q, id, &qq->name, qq->type, true, HV_RES_UPSTREAM_EDNS, err) < 0
      || hv_dns_encode (&q, p->wire + 2, sizeof (p->wire) - 2, sizeof (p->wire) - 2, &len, NULL, err) < 0)
    return SOFT;
  p->wire[0] = (uint8_t) (len >> 8);
  p->wire[1] = (uint8_t) len;
  p->wire_len = len + 2;
  p->id = id;
  int fd = -1;
  int rc = upstream_socket (r, up->ss_family, p->over_tcp ? SOCK_STREAM : SOCK_DGRAM, &fd, err);
  if (rc < 0)
    return rc;
  /* connect() on UDP too: the kernel then drops datagrams from any other
   * address or port (checked again on receipt). */
  if (connect (fd, (const struct sockaddr *) up, sockaddr_len (up)) < 0 && errno != EINPROGRESS)
    {
      hv_error_set (err, errno, "egress resolver: connect to upstream %zu", p->upstream);
      close (fd);
      return SOFT;
    }
  if (!p->over_tcp && send (fd, p->wire + 2, len, MSG_NOSIGNAL) < 0)
    {
      hv_error_set (err, errno, "egress resolver: send to upstream %zu", p->upstream);
      close (fd);
      return SOFT;
    }
  p->gen = ++r->next_gen;
  p->token = hv_res_token (HV_RES_K_UPSTREAM, slot, p->gen);
  struct epoll_event ev = { .events = p->over_tcp ? EPOLLOUT : EPOLLIN, .data.u64 = p->token };
  if (epoll_ctl (r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
    {
      hv_error_set (err, errno, "egress resolver: epoll_ctl");
      close (fd);
      return SOFT;
    }
  p->fd = fd;
  p->tcp_sent = false;
  p->in_len = 0;
  p->in_want = 2;
  p->deadline_ms = hv_res_now_ms () + r->cfg.query_timeout_ms;
  return 0;
}

int
hv_res_upstream_start (hv_egress_resolver *r, uint32_t slot, hv_error **err)
{
  hv_res_pending *p = r->pending[slot];
  for (; p->upstream < r->cfg.n_upstreams; p->upstream++, p->over_tcp = false)
    {
      int rc = attempt (r, slot, p, err);
      if (rc == 0)
        return 1;
      if (rc == FATAL)
        return -1;
      hv_error_free (err);
      /* A truncated answer whose TCP retry cannot start: the next upstream. */
    }
  return 0;
}

void
hv_res_upstream_close (hv_egress_resolver *r, hv_res_pending *p)
{
  (void) r;
  if (p->fd >= 0)
    close (p->fd); /* leaves the epoll set with it */
  p->fd = -1;
  free (p->in);
  p->in = NULL;
  p->in_len = 0;
}

/* Ours: our ID, a response, parses, and asks exactly our question. */
static bool
is_our_answer (const hv_res_pending *p, const uint8_t *buf, size_t len, hv_dns_message *resp)
{
  uint16_t id, flags;
  if (hv_dns_peek_header (buf, len, &id, &flags) < 0 || id != p->id || !(flags & HV_DNS_FLAG_QR))
    return false;
  cleanup_error hv_error *err = NULL;
  if (hv_dns_parse (buf, len, resp, &err) < 0)
    return false;
  const hv_dns_question *q = &p->query.questions[0];
  if (resp->n_questions == 1 && resp->questions[0].type == q->type && resp->questions[0].cls == q->cls
      && hv_dns_name_equal (&resp->questions[0].name, &q->name))
    return true;
  hv_dns_message_free (resp);
  return false;
}

static int
read_udp (hv_egress_resolver *r, hv_res_pending *p, hv_dns_message *resp)
{
  const struct sockaddr_storage *up = &r->cfg.upstreams[p->upstream];
  for (int i = 0; i < HV_RES_UPSTREAM_READ_BATCH; i++)
    {
      struct sockaddr_storage from;
      socklen_t flen = sizeof (from);
      ssize_t n = recvfrom (p->fd, r->scratch, HV_DNS_MESSAGE_MAX, MSG_DONTWAIT, (struct sockaddr *) &from, &flen);
      if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1; /* ECONNREFUSED: nobody there */
      /* Anything else is ignored, not a failure: a forged datagram must
       * not be able to cut the real answer short either. */
      if (same_peer (&from, up) && is_our_answer (p, r->scratch, (size_t) n, resp))
        return 1;
    }
  return 0;
}

static int
read_tcp (hv_egress_resolver *r, hv_res_pending *p, uint32_t events, hv_dns_message *resp)
{
  if (!p->tcp_sent)
    {
      int soerr = 0;
      socklen_t sl = sizeof (soerr);
      if ((events & (EPOLLERR | EPOLLHUP)) || getsockopt (p->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr)
        return -1;
      if (!(events & EPOLLOUT))
        return 0;
      /* A new connection takes a few hundred bytes in one send. */
      if (send (p->fd, p->wire, p->wire_len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t) p->wire_len)
        return -1;
      p->tcp_sent = true;
      struct epoll_event ev = { .events = EPOLLIN, .data.u64 = p->token };
      return epoll_ctl (r->epfd, EPOLL_CTL_MOD, p->fd, &ev) < 0 ? -1 : 0;
    }
  if (p->in == NULL)
    p->in = xmalloc0 (2 + HV_DNS_MESSAGE_MAX);
  for (;;)
    {
      ssize_t n = read (p->fd, p->in + p->in_len, p->in_want - p->in_len);
      if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
      if (n == 0)
        return -1;
      p->in_len += (size_t) n;
      if (p->in_want == 2 && p->in_len == 2)
        {
          p->in_want = 2 + ((size_t) p->in[0] << 8 | p->in[1]);
          if (p->in_want < 2 + HV_DNS_HEADER_LEN)
            return -1;
        }
      else if (p->in_len == p->in_want)
        /* Over TCP nobody off-path can inject: a wrong answer is the
         * upstream's failure. */
        return is_our_answer (p, p->in + 2, p->in_len - 2, resp) ? 1 : -1;
    }
}

int
hv_res_upstream_read (hv_egress_resolver *r, hv_res_pending *p, uint32_t events, hv_dns_message *resp)
{
  return p->over_tcp ? read_tcp (r, p, events, resp) : read_udp (r, p, resp);
}
