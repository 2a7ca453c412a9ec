/* One request through the model API gateway: read it from the sandbox,
 * check and rewrite it, send it to the provider over TLS with the real
 * credential, and relay the response back as it arrives.
 *
 * The client fd is the sandbox's side of one connection; one request is
 * served on it (the response says Connection: close, and so does the
 * request sent upstream), then the caller closes it.  What the sandbox
 * sends is read with the bounded parser under one deadline; a request the
 * parser refuses is answered 400 (431 for a head over its limits, 413 for
 * a body over its limit, 408 when the deadline passes), one the provider's
 * allow-list refuses 403, and in both cases the upstream is never
 * contacted.  A provider that cannot be reached, or whose response is not
 * one the parser accepts, is answered 502 while nothing of the response
 * has been sent yet; after that the connection is closed mid-body, and
 * the client sees a chunked body that never ends rather than a short one
 * taken for a whole one.
 *
 * The request body is re-framed as the parser read it (Content-Length
 * kept, chunks re-chunked); the response body goes out with
 * Content-Length when the provider gave one, otherwise chunked, each
 * piece written as soon as it is read (server-sent events flow as they
 * come).  The response's hop-by-hop and framing headers are dropped, and
 * so is any response header whose value holds the credential: nothing
 * the gateway writes to the sandbox holds it, error texts included. */
#ifndef HAVEN_GATEWAY_FORWARD_H
#define HAVEN_GATEWAY_FORWARD_H

#include <stdint.h>

#include "error.h"
#include "gateway_route.h"
#include "http_message.h"
#include "upstream_tls.h"

/* Opens the TLS connection to HOST (the provider's real host) within
 * TIMEOUT_MS.  Tests point it at a local server; the gateway uses
 * hv_gw_connect_tls. */
typedef int (*hv_gw_connect_fn) (void *data, const char *host, int timeout_ms, hv_upstream_tls **out,
                                 hv_error **err);

/* The connector to HOST:443; data is an hv_upstream_tls_ctx. */
int hv_gw_connect_tls (void *data, const char *host, int timeout_ms, hv_upstream_tls **out, hv_error **err);

typedef struct hv_gw_forward_cfg
{
  const hv_gw_api *api;
  const hv_gw_credential *cred;
  hv_gw_connect_fn connect;
  void *connect_data;
  uint64_t request_body_max;  /* 0: no limit */
  uint64_t response_body_max; /* 0: no limit */
  int request_timeout_ms;     /* the whole request, head and body, from the sandbox */
  int io_timeout_ms;          /* each upstream step, each wait for a response byte, each write */
  int response_timeout_ms;    /* the whole response, from the request's end (0: no limit) */
} hv_gw_forward_cfg;

/* What the audit record says of one exchange; never a header value, a
 * body or the credential. */
typedef struct hv_gw_exchange
{
  char method[HV_HTTP_METHOD_MAX + 1]; /* "" when no head was read */
  char *path;                          /* the target as the sandbox sent it, or NULL */
  int status;                          /* what the sandbox was answered; 0 for nothing */
  uint64_t request_bytes;              /* request body bytes forwarded */
  uint64_t response_bytes;             /* response body bytes relayed */
  char *reason;                        /* why it was refused or failed; NULL when it was served */
} hv_gw_exchange;

void hv_gw_exchange_clear (hv_gw_exchange *x);

/* Serve one request read from CLIENT.  0 when the response was relayed
 * whole; -1 with *err (the same text as x->reason) when the request was
 * refused or the exchange failed.  x is filled in either case. */
int hv_gw_forward (int client, const hv_gw_forward_cfg *cfg, hv_gw_exchange *x, hv_error **err);

#endif
