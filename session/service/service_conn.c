/* The service's connections: who may connect (the service's own user,
 * by SO_PEERCRED), HTTP/1.1 through the gateway's strict parser, bodies
 * bounded, keep-alive, one request answered at a time per connection,
 * each routed to its handler.  The answers are service_reply.c's. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "service_conn.h"
#include "service_files.h"
#include "service_handlers.h"
#include "service_reply.h"
#include "service_run.h"
#include "service_sandbox.h"
#include "utils.h"

#define DRAIN_MAX (1024 * 1024)

/* A connection being closed: drop what the peer still sends. */
static void
drain (struct svc_conn *c)
{
  char buf[16384];
  for (int i = 0; i < 4; i++)
    {
      ssize_t r = recv (c->fd, buf, sizeof (buf), MSG_DONTWAIT);
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
      if (r <= 0)
        break;
      c->drained += (size_t) r;
      if (c->drained < DRAIN_MAX)
        continue;
      break;
    }
  c->dead = true;
}

static void
conn_reset_request (struct svc_conn *c)
{
  hv_http_parser_init (c->parser, HV_HTTP_REQUEST, false, HV_API_BODY_MAX);
  c->body.len = 0;
  free (c->method);
  free (c->target);
  c->method = c->target = NULL;
  c->have_head = false;
}

static void read_next (struct svc *s, struct svc_conn *c);

void
svc_conn_accept (struct svc *s)
{
  while (s->n_conns < SVC_CONNS_MAX)
    {
      int fd = accept4 (s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0)
        {
          /* The socket stays readable: without a pause the loop would spin. */
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
            s->accept_pause_until = svc_now_ms () + 100;
          if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            svc_log (s, false, "accept: %s", strerror (errno));
          return;
        }
      s->n_conns++;
      struct svc_conn *c = xmalloc0 (sizeof (*c));
      c->fd = fd;
      c->keep_alive = true;
      c->parser = xmalloc0 (sizeof (*c->parser));
      c->read_next = read_next;
      conn_reset_request (c);
      c->next = s->conns;
      s->conns = c;
      struct ucred cred;
      socklen_t len = sizeof (cred);
      if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != s->uid)
        {
          /* Another user (root included, for a user's service): the
           * sandboxes are this user's. */
          svc_log (s, false, "refused a connection from uid %d (pid %d)", len ? (int) cred.uid : -1,
                   len ? (int) cred.pid : -1);
          c->keep_alive = false;
          svc_reply_error (c, 403, "forbidden", "this service belongs to uid %u", (unsigned) s->uid);
          svc_conn_output (s, c);
        }
    }
}

static void
dispatch (struct svc *s, struct svc_conn *c)
{
  struct hv_api_target t = { 0 };
  cleanup_error hv_error *err = NULL;
  const char *conn = hv_http_header_get (&c->parser->head, "Connection");
  if (conn && strcasestr (conn, "close"))
    c->keep_alive = false;
  svc_log (s, true, "%s %s", c->method, c->target);
  if (hv_api_route (c->method, c->target, &t, &err) < 0)
    {
      svc_reply_error (c, 400, "bad_request", "%s", err->msg);
      return;
    }
  struct svc_sandbox *x = NULL;
  switch (t.route)
    {
    case HV_API_NOT_FOUND:
      svc_reply_error (c, 404, "not_found", "no such resource: %s", c->target);
      break;
    case HV_API_METHOD_NOT_ALLOWED:
      svc_reply_error (c, 405, "method_not_allowed", "%s is not allowed on %s", c->method, c->target);
      break;
    case HV_API_VERSION_GET:
      svc_reply_json (c, 200, xasprintf ("{\"api\":%d,\"version\":\"%s\"}", HV_API_VERSION, PACKAGE_VERSION));
      break;
    case HV_API_SANDBOX_CREATE:
      svc_handle_create (s, c);
      break;
    case HV_API_SANDBOX_LIST:
      svc_handle_list (s, c);
      break;
    case HV_API_SANDBOX_GET:
      svc_handle_get (s, c, t.sandbox_id);
      break;
    case HV_API_SANDBOX_DELETE:
      svc_handle_delete (s, c, t.sandbox_id);
      break;
    case HV_API_SANDBOX_RUN:
      if ((x = svc_sandbox_find (s, c, t.sandbox_id)))
        svc_handle_run (s, c, x);
      break;
    case HV_API_FILE_PUT:
      if ((x = svc_sandbox_find (s, c, t.sandbox_id)))
        svc_handle_file_put (s, c, x, t.path);
      break;
    case HV_API_FILE_GET:
      if ((x = svc_sandbox_find (s, c, t.sandbox_id)))
        svc_handle_file_get (s, c, x, t.path);
      break;
    case HV_API_FILE_LIST:
      if ((x = svc_sandbox_find (s, c, t.sandbox_id)))
        svc_handle_file_list (s, c, x, t.path);
      break;
    case HV_API_SANDBOX_DENIALS:
      svc_handle_denials (s, c, t.sandbox_id, t.limit);
      break;
    }
  hv_api_target_free (&t);
}

/* Feed what was read to the parser; answer each complete request, one at
 * a time (a pipelined next one waits in c->in until the answer is out). */
static void
process (struct svc *s, struct svc_conn *c)
{
  while (!c->dead && !c->busy && !c->close_after)
    {
      size_t used = 0;
      hv_http_data d = { 0 };
      cleanup_error hv_error *err = NULL;
      int ev = hv_http_feed (c->parser, (const uint8_t *) c->in.data, c->in.len, &used, &d, &err);
      if (ev < 0)
        {
          svc_log (s, true, "bad request: %s", err->msg);
          c->keep_alive = false;
          svc_reply_error (c, 400, "bad_request", "%s", err->msg);
          c->in.len = 0;
          break;
        }
      if (ev == HV_HTTP_HEAD)
        {
          c->have_head = true;
          c->method = xstrdup (c->parser->head.method);
          c->target = xstrdup (c->parser->head.target);
          if (c->parser->head.framing == HV_HTTP_BODY_LENGTH && c->parser->head.content_length > HV_API_BODY_MAX)
            {
              c->keep_alive = false;
              svc_reply_error (c, 413, "too_large", "a request body is at most %d bytes", HV_API_BODY_MAX);
              c->in.len = 0;
              break;
            }
        }
      else if (ev == HV_HTTP_DATA)
        svc_buf_add (&c->body, d.data, d.len);
      svc_buf_drop (&c->in, used);
      if (ev == HV_HTTP_END)
        {
          c->busy = true;
          dispatch (s, c);
          /* Answered at once (not waiting on a maker or a run). */
          if (c->run == NULL && c->maker == NULL)
            {
              c->busy = false;
              conn_reset_request (c);
            }
        }
      else if (ev == HV_HTTP_MORE)
        break;
    }
  svc_conn_output (s, c);
}

/* Its answer is queued (svc_request_done): the next request. */
static void
read_next (struct svc *s, struct svc_conn *c)
{
  conn_reset_request (c);
  process (s, c);
}

void
svc_conn_input (struct svc *s, struct svc_conn *c)
{
  if (c->drain_until)
    {
      drain (c);
      if (c->dead)
        svc_conn_gone (s, c);
      return;
    }
  char buf[65536];
  ssize_t r = recv (c->fd, buf, sizeof (buf), MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return;
  if (r <= 0)
    {
      svc_conn_gone (s, c);
      return;
    }
  /* Bounded: a request's head and body are bounded by the parser, and
   * bytes are read only while no request is being answered. */
  svc_buf_add (&c->in, buf, (size_t) r);
  process (s, c);
}

void
svc_conn_gone (struct svc *s, struct svc_conn *c)
{
  c->dead = true;
  if (c->left)
    return;
  c->left = true;
  if (c->run)
    svc_run_client_gone (s, c->run);
  c->run = NULL;
  if (c->maker)
    c->maker->conn = NULL;
  c->maker = NULL;
  /* Sandboxes that were to live as long as this connection. */
  /* From the start after each: a destroy answers runs of other
   * connections, whose next requests may change the list. */
  for (struct svc_sandbox *x = s->sandboxes; x;)
    if (x->owner == c)
      {
        svc_sandbox_destroy (s, x, NULL, "its connection closed (destroy_on_disconnect)");
        x = s->sandboxes;
      }
    else
      x = x->next;
}

void
svc_conn_free (struct svc *s, struct svc_conn *c)
{
  svc_conn_gone (s, c);
  svc_forget (s, c);
  s->n_conns--;
  close (c->fd);
  free (c->parser);
  free (c->method);
  free (c->target);
  svc_buf_free (&c->in);
  svc_buf_free (&c->body);
  svc_buf_free (&c->out);
  free (c);
}
