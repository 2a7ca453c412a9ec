/* The HTTP answers: a response with its length, or chunks of a streamed
 * one, queued on the connection and sent without blocking. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "service_reply.h"
#include "utils.h"

/* How long a connection shut down for writing is drained (service_conn.c). */
#define DRAIN_MS 2000

static const char *
reason (int status)
{
  switch (status)
    {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 503:
      return "Service Unavailable";
    default:
      return status >= 500 ? "Internal Server Error" : "Unknown";
    }
}

void
svc_conn_output (struct svc *s, struct svc_conn *c)
{
  (void) s;
  while (c->out.len)
    {
      ssize_t w = send (c->fd, c->out.data, c->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
      if (w <= 0)
        {
          c->out.len = 0;
          c->dead = true;
          return;
        }
      svc_buf_drop (&c->out, (size_t) w);
    }
  if (c->close_after && !c->drain_until)
    {
      shutdown (c->fd, SHUT_WR);
      c->drain_until = svc_now_ms () + DRAIN_MS;
    }
}

void
svc_reply (struct svc_conn *c, int status, const char *content_type, const char *body, size_t len)
{
  char head[512];
  int n = snprintf (head, sizeof (head),
                    "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n", status, reason (status),
                    content_type, len, c->keep_alive ? "" : "Connection: close\r\n");
  svc_buf_add (&c->out, head, (size_t) n);
  svc_buf_add (&c->out, body, len);
  if (!c->keep_alive)
    c->close_after = true;
}

void
svc_reply_json (struct svc_conn *c, int status, char *json)
{
  svc_reply (c, status, "application/json", json, strlen (json));
  free (json);
}

void
svc_reply_error (struct svc_conn *c, int status, const char *code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *msg = xvasprintf (fmt, ap);
  va_end (ap);
  svc_reply_json (c, status, hv_api_error_json (code, msg));
}

void
svc_chunk (struct svc_conn *c, const char *data, size_t len)
{
  char size[32];
  int n = snprintf (size, sizeof (size), "%zx\r\n", len);
  svc_buf_add (&c->out, size, (size_t) n);
  svc_buf_add (&c->out, data, len);
  svc_buf_add (&c->out, "\r\n", 2);
  if (len == 0 && !c->keep_alive)
    c->close_after = true;
}

void
svc_request_done (struct svc *s, struct svc_conn *c)
{
  c->busy = false;
  c->run = NULL;
  c->maker = NULL;
  /* The reader is above the parts that answer (makers, runs): it left
   * its next step in the connection. */
  c->read_next (s, c);
}
