/* One request through the gateway (include/gateway_forward.h).  Every
 * wait on the sandbox's fd is a poll() against a deadline, and every
 * upstream step is bounded by upstream_tls's own timeouts, so neither
 * side can hold the monitor that serves this for longer than it allows. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "gateway_forward.h"
#include "deadline.h"
#include "utils.h"

/* The size of one read from either side: a piece is relayed as soon as it
 * is read, so this bounds latency not at all, only the number of calls. */
#define IO_CHUNK 16384
/* What an error answer says of its reason, at most. */
#define REASON_MAX 512

int
hv_gw_connect_tls (void *data, const char *host, int timeout_ms, hv_upstream_tls **out, hv_error **err)
{
  return hv_upstream_tls_connect (data, host, 443, timeout_ms, out, err);
}

void
hv_gw_exchange_clear (hv_gw_exchange *x)
{
  free (x->path);
  free (x->reason);
  memset (x, 0, sizeof (*x));
}

/* Wait for EVENTS on the sandbox's fd until DEADLINE: 0, or -1 (*err,
 * errno_code ETIMEDOUT when the deadline passed). */
static int
client_wait (int fd, short events, int64_t deadline, const char *what, hv_error **err)
{
  if (hv_wait_fd (fd, events, deadline) == 0)
    return 0;
  if (errno == ETIMEDOUT)
    return hv_error_set (err, ETIMEDOUT, "gateway: %s the sandbox", what);
  return hv_error_set (err, errno, "gateway: %s the sandbox: poll", what);
}

/* MSG_DONTWAIT: the fd may be blocking, and only poll() may wait;
 * MSG_NOSIGNAL: a sandbox that went away is an error, not a signal. */
static int
client_write (int fd, const void *buf, size_t len, int timeout_ms, hv_error **err)
{
  int64_t deadline = hv_now_ms () + timeout_ms;
  const char *p = buf;
  while (len > 0)
    {
      ssize_t n = send (fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        {
          if (client_wait (fd, POLLOUT, deadline, "writing to", err) < 0)
            return -1;
          continue;
        }
      if (n < 0)
        return hv_error_set (err, errno, "gateway: writing to the sandbox");
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

/* Bytes read (> 0), 0 at the end, -1 with *err. */
static ssize_t
client_read (int fd, void *buf, size_t cap, int64_t deadline, hv_error **err)
{
  for (;;)
    {
      if (client_wait (fd, POLLIN, deadline, "reading the request from", err) < 0)
        return -1;
      ssize_t n = recv (fd, buf, cap, MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        continue;
      if (n < 0)
        return hv_error_set (err, errno, "gateway: reading the request from the sandbox");
      return n;
    }
}

static const char *
status_text (int status)
{
  switch (status)
    {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 502:
      return "Bad Gateway";
    default:
      return "Internal Server Error";
    }
}

/* End the exchange with STATUS and *err's text: recorded in x, answered to
 * the sandbox when nothing of a response has gone to it yet (best effort:
 * the sandbox may have gone).  The text never holds the credential: no
 * error on these paths is made from it. */
static int
refuse (int client, const hv_gw_forward_cfg *cfg, hv_gw_exchange *x, bool answer, int status, hv_error **err)
{
  free (x->reason);
  x->reason = xstrdup ((*err)->msg);
  if (!answer)
    return -1;
  x->status = status;
  char body[REASON_MAX + 32];
  int blen = snprintf (body, sizeof (body), "haven gateway: %.*s\n", REASON_MAX, (*err)->msg);
  cleanup_free char *msg = xasprintf ("HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                                      "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
                                      status, status_text (status), blen, body);
  cleanup_error hv_error *ignored = NULL;
  (void) client_write (client, msg, strlen (msg), cfg->io_timeout_ms, &ignored);
  return -1;
}

/* The answer to a request the parser refused.  The parser's limits are
 * told apart by its words: over the body limit (413), a line, the head or
 * the number of fields over theirs while the head is read (431). */
static int
request_refusal_status (bool head_done, const char *msg)
{
  if (strstr (msg, "over the limit"))
    return 413;
  if (!head_done && (strstr (msg, "longer than") || strstr (msg, "header fields")))
    return 431;
  return 400;
}

struct out_buf
{
  char *data;
  size_t len, cap;
};

static void
put (struct out_buf *b, const char *s)
{
  size_t n = strlen (s);
  if (b->len + n + 1 > b->cap)
    {
      b->cap = (b->len + n + 1) * 2;
      b->data = xrealloc (b->data, b->cap);
    }
  memcpy (b->data + b->len, s, n + 1);
  b->len += n;
}

/* Whether the response's Connection header(s) name NAME: such a header
 * was meant for the hop to the gateway only (RFC 9110 7.6.1). */
static bool
named_by_connection (const hv_http_head *h, const char *name)
{
  size_t n = strlen (name);
  for (size_t k = 0; k < h->n_headers; k++)
    {
      if (strcasecmp (h->headers[k].name, "connection") != 0)
        continue;
      for (const char *v = h->headers[k].value; *v;)
        {
          size_t t = strcspn (v, ", \t");
          if (t == n && strncasecmp (v, name, n) == 0)
            return true;
          v += t ? t : 1;
        }
    }
  return false;
}

/* The response head for the sandbox: the provider's status and headers
 * less the hop-by-hop and framing ones (the gateway frames the body
 * itself) and any whose value holds the credential (a server that echoed
 * it would hand it to the sandbox). */
static char *
response_head (const hv_http_head *h, const char *secret, bool chunked, size_t *len)
{
  struct out_buf b = { NULL, 0, 0 };
  char line[64];
  snprintf (line, sizeof (line), "HTTP/1.1 %d ", h->status);
  put (&b, line);
  put (&b, h->reason ? h->reason : "");
  put (&b, "\r\n");
  for (size_t k = 0; k < h->n_headers; k++)
    {
      const hv_http_header *f = &h->headers[k];
      if (hv_gw_header_dropped (f->name) || named_by_connection (h, f->name) || strstr (f->value, secret)
          || strstr (f->name, secret))
        continue;
      put (&b, f->name);
      put (&b, ": ");
      put (&b, f->value);
      put (&b, "\r\n");
    }
  if (chunked)
    put (&b, "Transfer-Encoding: chunked\r\n");
  else if (h->framing == HV_HTTP_BODY_LENGTH)
    {
      snprintf (line, sizeof (line), "Content-Length: %" PRIu64 "\r\n", h->content_length);
      put (&b, line);
    }
  put (&b, "Connection: close\r\n\r\n");
  *len = b.len;
  return b.data;
}

/* The upstream request head: the route's rewrite, with Connection: close
 * added before its empty line (one request per connection). */
static int
upstream_head (const hv_gw_forward_cfg *cfg, const hv_http_head *in, char **out, size_t *out_len, hv_error **err)
{
  cleanup_free char *head = NULL;
  size_t len;
  if (hv_gw_request_head (cfg->api, cfg->cred, in, &head, &len, err) < 0)
    return -1;
  static const char close_line[] = "Connection: close\r\n\r\n";
  char *h = xmalloc0 (len + sizeof (close_line));
  memcpy (h, head, len - 2);
  memcpy (h + len - 2, close_line, sizeof (close_line));
  *out_len = len - 2 + sizeof (close_line) - 1;
  explicit_bzero (head, len);
  *out = h;
  return 0;
}

/* Write one piece of a body, as a chunk when CHUNKED (an empty piece
 * would be the last chunk: never written as one). */
static int
upstream_piece (hv_upstream_tls *up, bool chunked, const uint8_t *data, size_t len, int timeout_ms, hv_error **err)
{
  if (len == 0)
    return 0;
  if (chunked)
    {
      char size[32];
      int n = snprintf (size, sizeof (size), "%zx\r\n", len);
      if (hv_upstream_tls_write_all (up, size, (size_t) n, timeout_ms, err) < 0)
        return -1;
    }
  if (hv_upstream_tls_write_all (up, data, len, timeout_ms, err) < 0)
    return -1;
  return chunked ? hv_upstream_tls_write_all (up, "\r\n", 2, timeout_ms, err) : 0;
}

static int
client_piece (int client, bool chunked, const uint8_t *data, size_t len, int timeout_ms, hv_error **err)
{
  if (len == 0)
    return 0;
  if (chunked)
    {
      char size[32];
      int n = snprintf (size, sizeof (size), "%zx\r\n", len);
      if (client_write (client, size, (size_t) n, timeout_ms, err) < 0)
        return -1;
    }
  if (client_write (client, data, len, timeout_ms, err) < 0)
    return -1;
  return chunked ? client_write (client, "\r\n", 2, timeout_ms, err) : 0;
}

/* Relay the response from UP to CLIENT as it arrives.  *answered says
 * whether anything went to the sandbox yet (after that, a failure can
 * only close the connection). */
static int
relay_response (int client, const hv_gw_forward_cfg *cfg, hv_upstream_tls *up, bool head_request, hv_gw_exchange *x,
                bool *answered, hv_error **err)
{
  cleanup_free hv_http_parser *rs = xmalloc0 (sizeof (*rs));
  hv_http_parser_init (rs, HV_HTTP_RESPONSE, head_request, cfg->response_body_max);
  cleanup_free uint8_t *buf = xmalloc0 (IO_CHUNK);
  bool chunked = false;
  /* A stream may be long, but not endless: a provider that trickles bytes
   * would otherwise hold this connection for as long as it likes. */
  int64_t deadline = cfg->response_timeout_ms > 0 ? hv_now_ms () + cfg->response_timeout_ms : INT64_MAX;
  for (;;)
    {
      int64_t left = deadline - hv_now_ms ();
      if (left <= 0)
        return hv_error_set (err, 0, "gateway %s: response not complete within %d ms", cfg->api->name,
                             cfg->response_timeout_ms);
      int wait_ms = left < cfg->io_timeout_ms ? (int) left : cfg->io_timeout_ms;
      ssize_t n = hv_upstream_tls_read (up, buf, IO_CHUNK, wait_ms, err);
      if (n < 0 && hv_now_ms () >= deadline)
        {
          /* The wait was cut to the response's deadline: say which bound ended it. */
          hv_error_free (err);
          return hv_error_set (err, 0, "gateway %s: response not complete within %d ms", cfg->api->name,
                               cfg->response_timeout_ms);
        }
      if (n < 0)
        return hv_error_wrap (err, "gateway %s: response", cfg->api->name);
      size_t off = 0;
      for (;;)
        {
          size_t used = 0;
          hv_http_data d = { NULL, 0 };
          int ev = n == 0 ? hv_http_finish (rs, err) : hv_http_feed (rs, buf + off, (size_t) n - off, &used, &d, err);
          if (ev < 0)
            return hv_error_wrap (err, "gateway %s", cfg->api->name);
          off += used;
          if (ev == HV_HTTP_MORE)
            break;
          if (ev == HV_HTTP_HEAD)
            {
              if (rs->head.status < 200)
                {
                  /* An interim response (103 Early Hints): not relayed;
                   * the final one follows on the same connection. */
                  hv_http_parser_init (rs, HV_HTTP_RESPONSE, head_request, cfg->response_body_max);
                  continue;
                }
              /* A body that ends when the connection does is relayed
               * chunked, so that a cut is not taken for the end. */
              chunked = rs->head.framing == HV_HTTP_BODY_CHUNKED || rs->head.framing == HV_HTTP_BODY_CLOSE;
              size_t hlen;
              cleanup_free char *h = response_head (&rs->head, cfg->cred->secret, chunked, &hlen);
              x->status = rs->head.status;
              *answered = true;
              if (client_write (client, h, hlen, cfg->io_timeout_ms, err) < 0)
                return -1;
              continue;
            }
          if (ev == HV_HTTP_DATA)
            {
              x->response_bytes += d.len;
              if (client_piece (client, chunked, d.data, d.len, cfg->io_timeout_ms, err) < 0)
                return -1;
              continue;
            }
          /* HV_HTTP_END; anything after it is not relayed. */
          if (chunked && client_write (client, "0\r\n\r\n", 5, cfg->io_timeout_ms, err) < 0)
            return -1;
          return 0;
        }
      if (n == 0)
        return hv_error_set (err, 0, "gateway %s: response ended early", cfg->api->name);
    }
}

int
hv_gw_forward (int client, const hv_gw_forward_cfg *cfg, hv_gw_exchange *x, hv_error **err)
{
  memset (x, 0, sizeof (*x));
  int64_t deadline = hv_now_ms () + cfg->request_timeout_ms;
  cleanup_free hv_http_parser *rq = xmalloc0 (sizeof (*rq));
  hv_http_parser_init (rq, HV_HTTP_REQUEST, false, cfg->request_body_max);
  cleanup_free uint8_t *buf = xmalloc0 (IO_CHUNK);
  size_t len = 0, off = 0;

  /* The head. */
  for (;;)
    {
      if (off == len)
        {
          ssize_t n = client_read (client, buf, IO_CHUNK, deadline, err);
          if (n < 0)
            return refuse (client, cfg, x, true, (*err)->errno_code == ETIMEDOUT ? 408 : 400, err);
          if (n == 0)
            {
              if (hv_http_finish (rq, err) >= 0)
                hv_error_set (err, 0, "gateway: the sandbox closed the connection before the head was complete");
              return refuse (client, cfg, x, true, 400, err);
            }
          len = (size_t) n;
          off = 0;
        }
      size_t used = 0;
      hv_http_data d;
      int ev = hv_http_feed (rq, buf + off, len - off, &used, &d, err);
      if (ev < 0)
        return refuse (client, cfg, x, true, request_refusal_status (false, (*err)->msg), err);
      off += used;
      if (ev == HV_HTTP_HEAD)
        break;
    }
  const hv_http_head *head = &rq->head;
  snprintf (x->method, sizeof (x->method), "%s", head->method);
  x->path = xstrdup (head->target);

  /* Checked before anything is sent: a refused request never reaches the
   * provider, not even as a connection. */
  if (hv_gw_route_check (cfg->api, head->method, head->target, err) < 0)
    return refuse (client, cfg, x, true, 403, err);
  cleanup_free char *up_head = NULL;
  size_t up_head_len = 0;
  if (upstream_head (cfg, head, &up_head, &up_head_len, err) < 0)
    return refuse (client, cfg, x, true, 500, err);
  bool chunked = head->framing == HV_HTTP_BODY_CHUNKED;
  bool head_request = strcmp (head->method, "HEAD") == 0;

  cleanup_upstream_tls hv_upstream_tls *up = NULL;
  int r = cfg->connect (cfg->connect_data, cfg->api->host, cfg->io_timeout_ms, &up, err);
  if (r == 0)
    r = hv_upstream_tls_write_all (up, up_head, up_head_len, cfg->io_timeout_ms, err);
  explicit_bzero (up_head, up_head_len);
  if (r < 0)
    {
      hv_error_wrap (err, "gateway %s", cfg->api->name);
      return refuse (client, cfg, x, true, 502, err);
    }

  /* The body, piece by piece as the parser hands it out. */
  for (;;)
    {
      size_t used = 0;
      hv_http_data d = { NULL, 0 };
      int ev = hv_http_feed (rq, buf + off, len - off, &used, &d, err);
      if (ev < 0)
        return refuse (client, cfg, x, true, request_refusal_status (true, (*err)->msg), err);
      off += used;
      if (ev == HV_HTTP_DATA)
        {
          x->request_bytes += d.len;
          if (upstream_piece (up, chunked, d.data, d.len, cfg->io_timeout_ms, err) < 0)
            {
              hv_error_wrap (err, "gateway %s", cfg->api->name);
              return refuse (client, cfg, x, true, 502, err);
            }
          continue;
        }
      if (ev == HV_HTTP_END)
        break;
      /* HV_HTTP_MORE: every byte is used. */
      ssize_t n = client_read (client, buf, IO_CHUNK, deadline, err);
      if (n < 0)
        return refuse (client, cfg, x, true, (*err)->errno_code == ETIMEDOUT ? 408 : 400, err);
      if (n == 0)
        {
          if (hv_http_finish (rq, err) >= 0)
            hv_error_set (err, 0, "gateway: the sandbox closed the connection before the body was complete");
          return refuse (client, cfg, x, true, 400, err);
        }
      len = (size_t) n;
      off = 0;
    }
  if (chunked && hv_upstream_tls_write_all (up, "0\r\n\r\n", 5, cfg->io_timeout_ms, err) < 0)
    {
      hv_error_wrap (err, "gateway %s", cfg->api->name);
      return refuse (client, cfg, x, true, 502, err);
    }

  bool answered = false;
  if (relay_response (client, cfg, up, head_request, x, &answered, err) < 0)
    return refuse (client, cfg, x, !answered, 502, err);
  return 0;
}
