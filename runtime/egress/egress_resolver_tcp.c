/* The egress resolver's TCP clients (RFC 7766): length-prefixed queries,
 * pipelined, answered in completion order.  Bounded: HV_RES_MAX_TCP_CLIENTS
 * connections (more are closed at once), HV_RES_QUERY_MAX per query,
 * HV_RES_TCP_OUT_MAX of replies a client has not read, an idle timeout. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress_resolver_tcp.h"

void
hv_res_tcp_close (hv_egress_resolver *r, hv_res_tcp_client *c)
{
  (void) r;
  if (c->fd >= 0)
    close (c->fd);
  c->fd = -1;
  c->gen++; /* replies still pending for it are dropped */
  c->pending = 0;
  free (c->in);
  free (c->out);
  c->in = c->out = NULL;
  c->in_len = c->out_len = 0;
  c->want_out = false;
}

static uint64_t
client_token (const hv_egress_resolver *r, const hv_res_tcp_client *c)
{
  return hv_res_token (HV_RES_K_TCP_CLIENT, (uint32_t) (c - r->tcp), c->gen);
}

void
hv_res_tcp_accept (hv_egress_resolver *r, int listen_fd)
{
  for (int i = 0; i < HV_RES_ACCEPT_BATCH; i++)
    {
      int fd = accept4 (listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0)
        return;
      hv_res_tcp_client *c = NULL;
      for (size_t k = 0; k < HV_RES_MAX_TCP_CLIENTS && c == NULL; k++)
        if (r->tcp[k].fd < 0)
          c = &r->tcp[k];
      if (c == NULL)
        {
          close (fd); /* full: the client sees the connection end */
          continue;
        }
      c->fd = fd;
      c->gen++;
      c->pending = 0;
      c->idle_ms = hv_res_now_ms () + HV_RES_TCP_IDLE_MS;
      struct epoll_event ev = { .events = EPOLLIN, .data.u64 = client_token (r, c) };
      if (epoll_ctl (r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        hv_res_tcp_close (r, c);
    }
}

static void
set_events (hv_egress_resolver *r, hv_res_tcp_client *c, bool want_out)
{
  if (c->want_out == want_out)
    return;
  struct epoll_event ev = { .events = EPOLLIN | (want_out ? EPOLLOUT : 0), .data.u64 = client_token (r, c) };
  if (epoll_ctl (r->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0)
    {
      hv_res_tcp_close (r, c);
      return;
    }
  c->want_out = want_out;
}

/* Write what is buffered; false when the client was closed. */
static bool
flush (hv_egress_resolver *r, hv_res_tcp_client *c)
{
  size_t off = 0;
  while (off < c->out_len)
    {
      ssize_t n = send (c->fd, c->out + off, c->out_len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR))
        break;
      if (n <= 0)
        {
          hv_res_tcp_close (r, c);
          return false;
        }
      off += (size_t) n;
    }
  memmove (c->out, c->out + off, c->out_len - off);
  c->out_len -= off;
  set_events (r, c, c->out_len > 0);
  return c->fd >= 0;
}

void
hv_res_tcp_send (hv_egress_resolver *r, uint32_t slot, uint32_t gen, const uint8_t *buf, size_t len)
{
  if (slot >= HV_RES_MAX_TCP_CLIENTS)
    return;
  hv_res_tcp_client *c = &r->tcp[slot];
  if (c->fd < 0 || c->gen != gen || len > HV_DNS_MESSAGE_MAX)
    return;
  if (c->out_len + 2 + len > HV_RES_TCP_OUT_MAX)
    {
      /* It does not read its answers: not worth more memory. */
      hv_res_tcp_close (r, c);
      return;
    }
  c->out = xrealloc (c->out, c->out_len + 2 + len);
  c->out[c->out_len] = (uint8_t) (len >> 8);
  c->out[c->out_len + 1] = (uint8_t) len;
  memcpy (c->out + c->out_len + 2, buf, len);
  c->out_len += 2 + len;
  flush (r, c);
}

size_t
hv_res_tcp_take_query (hv_egress_resolver *r, uint32_t slot, uint32_t gen, uint8_t query[HV_RES_QUERY_MAX])
{
  if (slot >= HV_RES_MAX_TCP_CLIENTS)
    return 0;
  hv_res_tcp_client *c = &r->tcp[slot];
  if (c->fd < 0 || c->gen != gen || c->in_len < 2)
    return 0;
  size_t len = (size_t) c->in[0] << 8 | c->in[1];
  if (len < HV_DNS_HEADER_LEN || len > HV_RES_QUERY_MAX)
    {
      hv_res_tcp_close (r, c);
      return 0;
    }
  if (c->in_len < 2 + len)
    return 0;
  memcpy (query, c->in + 2, len);
  memmove (c->in, c->in + 2 + len, c->in_len - 2 - len);
  c->in_len -= 2 + len;
  return len;
}

void
hv_res_tcp_event (hv_egress_resolver *r, uint32_t slot, uint32_t gen, uint32_t events)
{
  if (slot >= HV_RES_MAX_TCP_CLIENTS)
    return;
  hv_res_tcp_client *c = &r->tcp[slot];
  if (c->fd < 0 || c->gen != gen)
    return;
  if ((events & EPOLLOUT) && !flush (r, c))
    return;
  if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
    return;
  if (c->in == NULL)
    c->in = xmalloc0 (2 + HV_RES_QUERY_MAX);
  ssize_t n = recv (c->fd, c->in + c->in_len, 2 + HV_RES_QUERY_MAX - c->in_len, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0)
    {
      hv_res_tcp_close (r, c);
      return;
    }
  c->in_len += (size_t) n;
  c->idle_ms = hv_res_now_ms () + HV_RES_TCP_IDLE_MS;
}

uint64_t
hv_res_tcp_expire (hv_egress_resolver *r, uint64_t now)
{
  uint64_t next = UINT64_MAX;
  for (size_t i = 0; i < HV_RES_MAX_TCP_CLIENTS; i++)
    {
      hv_res_tcp_client *c = &r->tcp[i];
      if (c->fd < 0)
        continue;
      /* Queries in flight have their own deadlines; wait for them. */
      if (c->pending > 0 && c->idle_ms <= now)
        c->idle_ms = now + HV_RES_TCP_IDLE_MS;
      if (c->idle_ms <= now)
        {
          hv_res_tcp_close (r, c);
          continue;
        }
      if (c->idle_ms < next)
        next = c->idle_ms;
    }
  return next;
}
