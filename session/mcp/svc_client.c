/* Requests to `haven serve` over its Unix socket, one connection each
 * (svc_client.h).  The answer is read by the gateway's strict HTTP/1.1
 * parser (http_message.h), which bounds every line, the head and the body
 * and refuses every ambiguous framing; this file adds what a client of
 * this one service expects: HTTP/1.1, no interim (1xx) answer, a body of
 * at most HV_SVC_BODY_MAX. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <yajl/yajl_tree.h>

#include "http_message.h"
#include "svc_client.h"
#include "unix_socket.h"
#include "utils.h"

/* Bytes read from the connection in one read, and reads in one
 * progress() call: a large answer then gives the caller's poll loop its
 * turn between pieces instead of holding it until the whole body is in. */
#define READ_PIECE (64 * 1024)
#define READS_PER_PROGRESS 16
/* What create_held waits for the service's answer: making a sandbox that
 * is not in the pool runs the whole of `haven run`'s setup (seconds). */
#define CREATE_TIMEOUT_MS (300 * 1000)

struct hv_svc_call
{
  int fd;
  hv_http_parser *parser;
  bool head_seen;
  bool done;
  int status;
  char *body;
  size_t body_len, body_cap;
};

int
hv_svc_call_fd (const hv_svc_call *c)
{
  return c->fd;
}

int
hv_svc_call_status (const hv_svc_call *c)
{
  return c->done ? c->status : 0;
}

const char *
hv_svc_call_body (const hv_svc_call *c, size_t *len)
{
  if (len)
    *len = c->done ? c->body_len : 0;
  return c->done && c->body ? c->body : "";
}

void
hv_svc_call_free (hv_svc_call *c)
{
  if (c == NULL)
    return;
  if (c->fd >= 0)
    close (c->fd);
  free (c->parser);
  free (c->body);
  free (c);
}

static void
body_append (hv_svc_call *c, const uint8_t *data, size_t len)
{
  /* The parser bounds the body to HV_SVC_BODY_MAX, so this cannot grow past it. */
  if (c->body_len + len + 1 > c->body_cap)
    {
      size_t cap = c->body_cap ? c->body_cap : 4096;
      while (cap < c->body_len + len + 1)
        cap *= 2;
      c->body = xrealloc (c->body, cap);
      c->body_cap = cap;
    }
  memcpy (c->body + c->body_len, data, len);
  c->body_len += len;
  c->body[c->body_len] = '\0';
}

static int
finish_answer (hv_svc_call *c)
{
  if (c->body == NULL)
    body_append (c, (const uint8_t *) "", 0);
  c->done = true;
  return 1;
}

/* Feed bytes the connection gave to the parser.  1: the answer is
 * complete (bytes after it are refused: the service sends nothing
 * unasked), 0: more to come. */
static int
feed (hv_svc_call *c, const uint8_t *data, size_t len, hv_error **err)
{
  size_t at = 0;
  for (;;)
    {
      size_t used = 0;
      hv_http_data d = { NULL, 0 };
      int ev = hv_http_feed (c->parser, data + at, len - at, &used, &d, err);
      if (ev < 0)
        return hv_error_wrap (err, "the service's answer");
      at += used;
      switch (ev)
        {
        case HV_HTTP_MORE:
          return 0;
        case HV_HTTP_HEAD:
          if (c->parser->head.minor_version != 1)
            return hv_error_set (err, 0, "the service's answer: HTTP/1.%d, not HTTP/1.1",
                                 c->parser->head.minor_version);
          if (c->parser->head.status < 200)
            return hv_error_set (err, 0, "the service's answer: an unexpected interim status %d",
                                 c->parser->head.status);
          c->status = c->parser->head.status;
          c->head_seen = true;
          break;
        case HV_HTTP_DATA:
          body_append (c, d.data, d.len);
          break;
        case HV_HTTP_END:
          if (at != len)
            return hv_error_set (err, 0, "the service's answer: %zu bytes after its end", len - at);
          return finish_answer (c);
        default:
          return hv_error_set (err, 0, "the service's answer: parser event %d", ev);
        }
    }
}

int
hv_svc_call_progress (hv_svc_call *c, hv_error **err)
{
  if (c->done)
    return 1;
  if (c->fd < 0)
    return hv_error_set (err, 0, "the service's answer: the connection is gone");
  uint8_t buf[READ_PIECE];
  for (int i = 0; i < READS_PER_PROGRESS; i++)
    {
      ssize_t n = recv (c->fd, buf, sizeof (buf), MSG_DONTWAIT);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
          return hv_error_set (err, errno, "read the service's answer");
        }
      int r = hv_svc_call_feed_for_test (c, buf, (size_t) n, n == 0, err);
      if (r != 0)
        return r;
    }
  return 0;
}

int
hv_svc_call_feed_for_test (hv_svc_call *c, const void *data, size_t len, bool eof, hv_error **err)
{
  if (c->done)
    return len == 0 ? 1 : hv_error_set (err, 0, "the service's answer: %zu bytes after its end", len);
  if (len > 0)
    {
      int r = feed (c, data, len, err);
      if (r != 0 || !eof)
        return r;
    }
  if (!eof)
    return 0;
  /* The service closed the connection: that ends only a body framed by
   * the close; anything else was cut short. */
  if (hv_http_finish (c->parser, err) < 0)
    return hv_error_wrap (err, "the service closed the connection before its answer was complete");
  if (!c->head_seen)
    return hv_error_set (err, 0, "the service closed the connection without an answer");
  return finish_answer (c);
}

hv_svc_call *
hv_svc_call_new_for_test (void)
{
  hv_svc_call *c = xmalloc0 (sizeof (*c));
  c->fd = -1;
  c->parser = xmalloc0 (sizeof (*c->parser));
  hv_http_parser_init (c->parser, HV_HTTP_RESPONSE, false, HV_SVC_BODY_MAX);
  return c;
}

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
hv_svc_call_wait (hv_svc_call *c, int timeout_ms, hv_error **err)
{
  int64_t deadline = timeout_ms < 0 ? -1 : now_ms () + timeout_ms;
  for (;;)
    {
      int r = hv_svc_call_progress (c, err);
      if (r < 0)
        return -1;
      if (r == 1)
        return 0;
      int wait_ms = -1;
      if (deadline >= 0)
        {
          int64_t left = deadline - now_ms ();
          if (left <= 0)
            return hv_error_set (err, ETIMEDOUT, "the service did not answer within %d ms", timeout_ms);
          wait_ms = left > 60000 ? 60000 : (int) left;
        }
      struct pollfd p = { .fd = c->fd, .events = POLLIN };
      if (poll (&p, 1, wait_ms) < 0 && errno != EINTR)
        return hv_error_set (err, errno, "poll the service's connection");
    }
}

/* A request target or header value goes into the request's head as it
 * is: a CR, LF or any other control byte (or a space, in the target)
 * would split or end the head, and a second request could ride in it. */
static int
head_text_check (const char *what, const char *s, bool target, hv_error **err)
{
  if (target && s[0] != '/')
    return hv_error_set (err, 0, "request target \"%s\": not a path", s);
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    if (*p < 0x20 || *p >= 0x7f || (target && *p == ' '))
      return hv_error_set (err, 0, "%s: a byte 0x%02x that cannot be sent in a request's head", what, *p);
  return 0;
}

static int
send_all (int fd, const void *data, size_t len, bool *peer_gone, hv_error **err)
{
  const char *p = data;
  while (len > 0)
    {
      ssize_t n = send (fd, p, len, MSG_NOSIGNAL);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          /* The service answered early and closed (a 413 for a body too
           * large): its answer is still there to read. */
          if (errno == EPIPE || errno == ECONNRESET)
            {
              *peer_gone = true;
              return 0;
            }
          return hv_error_set (err, errno, "send the request to the service");
        }
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

static int
call_start (const struct hv_svc_endpoint *e, const char *method, const char *target, const char *content_type,
            const void *body, size_t len, bool keep_open, hv_svc_call **out, hv_error **err)
{
  if (head_text_check ("method", method, false, err) < 0 || head_text_check ("request target", target, true, err) < 0
      || (content_type && head_text_check ("content type", content_type, false, err) < 0))
    return -1;
  if (e == NULL || e->socket == NULL)
    return hv_error_set (err, 0, "no service endpoint");
  cleanup_close int fd = hv_unix_connect (e->socket, err);
  if (fd < 0)
    return hv_error_wrap (err, "connect to the service at %s", e->socket);
  cleanup_free char *head = NULL;
  /* Connection: close: the service ends the connection after the answer,
   * so a connection is never left between requests; a held one (the
   * sandbox lives while it is open) keeps the default, keep-alive. */
  if (body != NULL)
    head = xasprintf ("%s %s HTTP/1.1\r\nHost: haven\r\n%sContent-Type: %s\r\nContent-Length: %zu\r\n\r\n", method,
                      target, keep_open ? "" : "Connection: close\r\n",
                      content_type ? content_type : "application/octet-stream", len);
  else
    head = xasprintf ("%s %s HTTP/1.1\r\nHost: haven\r\n%s\r\n", method, target,
                      keep_open ? "" : "Connection: close\r\n");
  bool peer_gone = false;
  if (send_all (fd, head, strlen (head), &peer_gone, err) < 0
      || (body != NULL && !peer_gone && send_all (fd, body, len, &peer_gone, err) < 0))
    return -1;
  hv_svc_call *c = hv_svc_call_new_for_test ();
  c->fd = steal_fd (&fd);
  *out = c;
  return 0;
}

int
hv_svc_call_start (const struct hv_svc_endpoint *e, const char *method, const char *target, const char *content_type,
                   const void *body, size_t len, hv_svc_call **out, hv_error **err)
{
  return call_start (e, method, target, content_type, body, len, false, out, err);
}

/* The message of an error answer ({"error":{"code":..,"message":..}}),
 * or a description of the answer when it is not one. */
static char *
error_message (int status, const char *body, size_t len)
{
  char errbuf[128];
  yajl_val tree = len < 65536 ? yajl_tree_parse (body, errbuf, sizeof (errbuf)) : NULL;
  const char *path[] = { "error", "message", NULL };
  yajl_val msg = tree ? yajl_tree_get (tree, path, yajl_t_string) : NULL;
  char *out = msg ? xstrdup (YAJL_GET_STRING (msg)) : xasprintf ("the service answered %d", status);
  if (tree)
    yajl_tree_free (tree);
  return out;
}

static int
answer_check (hv_svc_call *c, char **out, size_t *out_len, int *status, hv_error **err)
{
  size_t len;
  const char *body = hv_svc_call_body (c, &len);
  if (status)
    *status = c->status;
  if (c->status < 200 || c->status > 299)
    {
      cleanup_free char *msg = error_message (c->status, body, len);
      return hv_error_set (err, 0, "%s", msg);
    }
  if (out)
    {
      *out = c->body;
      c->body = NULL;
      c->body_len = c->body_cap = 0;
    }
  if (out_len)
    *out_len = len;
  return 0;
}

int
hv_svc_request (const struct hv_svc_endpoint *e, const char *method, const char *target, const char *content_type,
                const void *body, size_t len, int timeout_ms, char **out, size_t *out_len, int *status, hv_error **err)
{
  hv_svc_call *c = NULL;
  if (status)
    *status = 0;
  if (hv_svc_call_start (e, method, target, content_type, body, len, &c, err) < 0)
    return -1;
  int r = hv_svc_call_wait (c, timeout_ms, err);
  if (r == 0)
    r = answer_check (c, out, out_len, status, err);
  hv_svc_call_free (c);
  return r;
}

int
hv_svc_create_held (const struct hv_svc_endpoint *e, const char *body, int *held_fd, char **out, hv_error **err)
{
  hv_svc_call *c = NULL;
  if (call_start (e, "POST", "/v1/sandboxes", "application/json", body, strlen (body), true, &c, err) < 0)
    return -1;
  int r = hv_svc_call_wait (c, CREATE_TIMEOUT_MS, err);
  if (r == 0)
    r = answer_check (c, out, NULL, NULL, err);
  if (r == 0)
    {
      *held_fd = c->fd;
      c->fd = -1;
    }
  hv_svc_call_free (c);
  return r;
}
