/* The model API gateway in the monitor: monitor_gateway.h. */
#include "config.h"
#include "monitor_gateway.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "denial_limiter.h"
#include "gateway_forward.h"
#include "json_gen.h"
#include "monitor_service.h"
#include "upstream_tls.h"
#include "utils.h"

/* New refusal keys recorded a second once the limiter's memory is full. */
#define REFUSALS_PER_SECOND 20
/* After a 429: how long, and how much, of the request is read and thrown
 * away so that the close does not reset the connection before the client
 * has read the answer. */
#define DRAIN_MS 200
#define DRAIN_MAX (64 * 1024)

struct gw_api
{
  struct hv_monitor_gateway *g;
  const hv_gw_api *api;
  hv_gw_credential cred;
  int listen_fd;
  hv_monitor_service *service;
  /* The request rate's token bucket (under lock). */
  pthread_mutex_t lock;
  double tokens;
  struct timespec last;
};

struct hv_monitor_gateway
{
  struct gw_api apis[HV_GW_N_PROVIDERS];
  size_t n;
  hv_upstream_tls_ctx *tls;
  struct hv_audit_trail *trail;
  /* Refusals' limiter, shared by the providers' threads (under lock). */
  pthread_mutex_t lock;
  hv_denial_limiter limiter;
};

static uint64_t
mono_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Under g->lock: the summary of what the limiter left out, when due. */
static void
summarize_locked (struct hv_monitor_gateway *g, uint64_t now)
{
  hv_denial_summary s;
  if (g->trail && hv_denial_limiter_tick (&g->limiter, now, &s))
    hv_audit_trail_denials_summary (g->trail, "api", &s);
}

static void
put_u64 (yajl_gen gen, const char *key, uint64_t v)
{
  jg_str (gen, key);
  yajl_gen_integer (gen, (long long) v);
}

/* One exchange's record.  A refused or failed one goes through the
 * limiter, keyed by what the sandbox chose (method, path) and the
 * reason: a flood of one refusal is one record and a count. */
static void
record (struct gw_api *a, const char *method, const char *path, int status, uint64_t req_bytes, uint64_t resp_bytes,
        uint64_t duration_ms, const char *reason)
{
  struct hv_monitor_gateway *g = a->g;
  if (g->trail == NULL)
    return;
  if (reason)
    {
      cleanup_free char *key = xasprintf ("%s %s %s: %s", a->api->name, method, path ? path : "", reason);
      uint64_t now = mono_ms ();
      pthread_mutex_lock (&g->lock);
      summarize_locked (g, now);
      bool admit = hv_denial_limiter_admit (&g->limiter, key, strlen (key), now);
      pthread_mutex_unlock (&g->lock);
      if (!admit)
        return;
    }
  yajl_gen gen = hv_audit_trail_record (g->trail, "api");
  hv_audit_put_kv (gen, "provider", a->api->name);
  hv_audit_put_kv (gen, "method", method);
  hv_audit_put_kv (gen, "path", path ? path : "");
  jg_str (gen, "status");
  yajl_gen_integer (gen, status);
  put_u64 (gen, "request_bytes", req_bytes);
  put_u64 (gen, "response_bytes", resp_bytes);
  put_u64 (gen, "duration_ms", duration_ms);
  if (reason)
    hv_audit_put_kv (gen, "reason", reason);
  hv_audit_trail_emit (g->trail, gen);
}

/* A request may start now (the bucket refilled, one token taken)? */
static bool
take_token (struct gw_api *a)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  pthread_mutex_lock (&a->lock);
  double elapsed = (double) (now.tv_sec - a->last.tv_sec) + (double) (now.tv_nsec - a->last.tv_nsec) / 1e9;
  a->tokens += elapsed * HV_MONITOR_GATEWAY_RATE;
  if (a->tokens > HV_MONITOR_GATEWAY_BURST)
    a->tokens = HV_MONITOR_GATEWAY_BURST;
  a->last = now;
  bool ok = a->tokens >= 1;
  if (ok)
    a->tokens -= 1;
  pthread_mutex_unlock (&a->lock);
  return ok;
}

/* Over the rate: 429 and close, the request unread (beyond what the
 * drain throws away) and never forwarded. */
static void
answer_too_many (int conn)
{
  static const char answer[] = "HTTP/1.1 429 Too Many Requests\r\n"
                               "Content-Type: text/plain\r\n"
                               "Content-Length: 61\r\n"
                               "Retry-After: 1\r\n"
                               "Connection: close\r\n\r\n"
                               "haven gateway: over the request rate limit, try again later\r\n";
  if (send (conn, answer, sizeof (answer) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
    return;
  shutdown (conn, SHUT_WR);
  uint64_t end = mono_ms () + DRAIN_MS;
  char buf[4096];
  size_t drained = 0;
  for (uint64_t now = mono_ms (); now < end && drained < DRAIN_MAX; now = mono_ms ())
    {
      struct pollfd p = { .fd = conn, .events = POLLIN };
      if (poll (&p, 1, (int) (end - now)) <= 0)
        break;
      ssize_t r = recv (conn, buf, sizeof (buf), MSG_DONTWAIT);
      if (r <= 0)
        break;
      drained += (size_t) r;
    }
}

static void
serve (int conn, void *data)
{
  struct gw_api *a = data;
  uint64_t start = mono_ms ();
  if (!take_token (a))
    {
      answer_too_many (conn);
      record (a, "", NULL, 429, 0, 0, mono_ms () - start, "over the request rate limit");
      return;
    }
  hv_gw_forward_cfg cfg = {
    .api = a->api,
    .cred = &a->cred,
    .connect = hv_gw_connect_tls,
    .connect_data = a->g->tls,
    .request_body_max = HV_MONITOR_GATEWAY_BODY_MAX,
    .request_timeout_ms = HV_MONITOR_GATEWAY_REQUEST_MS,
    .io_timeout_ms = HV_MONITOR_GATEWAY_IO_MS,
    .response_timeout_ms = HV_MONITOR_GATEWAY_RESPONSE_MS,
  };
  hv_gw_exchange x = { 0 };
  cleanup_error hv_error *err = NULL;
  hv_gw_forward (conn, &cfg, &x, &err);
  record (a, x.method, x.path, x.status, x.request_bytes, x.response_bytes, mono_ms () - start, x.reason);
  hv_gw_exchange_clear (&x);
}

static void
refused (const char *name, const char *reason, void *data)
{
  (void) name;
  struct gw_api *a = data;
  record (a, "", NULL, 0, 0, 0, 0, reason);
}

hv_monitor_gateway *
hv_monitor_gateway_new (const hv_gw_config *cfg, const char *const *keys, hv_error **err)
{
  hv_monitor_gateway *g = xmalloc0 (sizeof (*g));
  pthread_mutex_init (&g->lock, NULL);
  hv_denial_limiter_init (&g->limiter, REFUSALS_PER_SECOND);
  for (size_t i = 0; i < cfg->n; i++)
    {
      struct gw_api *a = &g->apis[i];
      a->g = g;
      a->api = cfg->apis[i].api;
      a->cred.auth = cfg->apis[i].auth;
      a->cred.secret = keys[i];
      a->listen_fd = -1;
      a->tokens = HV_MONITOR_GATEWAY_BURST;
      clock_gettime (CLOCK_MONOTONIC, &a->last);
      pthread_mutex_init (&a->lock, NULL);
      g->n++;
    }
  if (hv_upstream_tls_ctx_new (&g->tls, err) < 0)
    {
      hv_monitor_gateway_free (g);
      hv_error_wrap (err, "model API gateway: TLS");
      return NULL;
    }
  return g;
}

bool
hv_monitor_gateway_take_fd (hv_monitor_gateway *g, const char *name, int fd)
{
  for (size_t i = 0; g && i < g->n; i++)
    if (strcmp (g->apis[i].api->name, name) == 0 && g->apis[i].listen_fd < 0 && g->apis[i].service == NULL)
      {
        g->apis[i].listen_fd = fd;
        return true;
      }
  return false;
}

int
hv_monitor_gateway_start (hv_monitor_gateway *g, struct hv_audit_trail *trail, hv_error **err)
{
  g->trail = trail;
  for (size_t i = 0; i < g->n; i++)
    {
      struct gw_api *a = &g->apis[i];
      if (a->listen_fd < 0)
        return hv_error_set (err, 0, "model API gateway: no listener for %s", a->api->name);
      cleanup_free char *name = xasprintf ("gateway %s", a->api->name);
      int fd = a->listen_fd;
      a->listen_fd = -1;
      a->service = hv_monitor_service_start_full (name, fd, HV_MONITOR_GATEWAY_CONNS, serve, refused, a, err);
      if (a->service == NULL)
        return -1;
    }
  return 0;
}

void
hv_monitor_gateway_finish (hv_monitor_gateway *g)
{
  if (g == NULL)
    return;
  pthread_mutex_lock (&g->lock);
  summarize_locked (g, UINT64_MAX);
  pthread_mutex_unlock (&g->lock);
}

void
hv_monitor_gateway_free (hv_monitor_gateway *g)
{
  if (g == NULL)
    return;
  for (size_t i = 0; i < g->n; i++)
    {
      hv_monitor_service_stop (g->apis[i].service);
      if (g->apis[i].listen_fd >= 0)
        close (g->apis[i].listen_fd);
      pthread_mutex_destroy (&g->apis[i].lock);
    }
  hv_upstream_tls_ctx_free (g->tls);
  hv_denial_limiter_release (&g->limiter);
  pthread_mutex_destroy (&g->lock);
  free (g);
}
