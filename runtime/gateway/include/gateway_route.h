/* What the model API gateway lets through to each provider, and the head
 * it sends in place of the sandbox's.
 *
 * Data: for each provider (Anthropic, OpenAI, Gemini) its host, the
 * header(s) its credential may travel in, and the methods and paths of
 * its API an agent uses, with the query parameters each path takes.
 * Nothing else passes: the gateway holds a real credential, so a path it
 * forwarded blindly would let the sandbox spend it on anything the
 * provider offers (files, fine-tuning, batches, admin keys).
 *
 * Paths are checked before they are matched, and refused when they could
 * mean one thing here and another to a server: empty segments ('//', a
 * trailing '/'), '.' or '..' segments, any percent escape (none of these
 * APIs needs one in a path, and %2e, %2f or %5c are how a server is made
 * to see another path), a fragment, any character other than letters,
 * digits and "-._~:/". 
 *
 * The rewrite keeps the sandbox's own headers (content type, the API's
 * version and beta headers, user agent) and drops every header that
 * carries a credential whatever its case (the sandbox holds a placeholder,
 * which must not reach the provider: it would be logged as a bad key),
 * the hop-by-hop headers and those the Connection header names, every
 * Proxy-* header, the headers that make a server see another method or
 * path than the one checked (X-HTTP-Method-Override and its kin,
 * X-Original-URL, X-Rewrite-URL, X-Forwarded-Host), Host, Expect and the
 * framing headers; then it writes
 * Host as the real host, the body's framing as the parser read it, and
 * the real credential last. */
#ifndef HAVEN_GATEWAY_ROUTE_H
#define HAVEN_GATEWAY_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "http_message.h"

typedef enum hv_gw_provider
{
  HV_GW_ANTHROPIC,
  HV_GW_OPENAI,
  HV_GW_GEMINI,
  HV_GW_N_PROVIDERS,
} hv_gw_provider;

/* How a credential travels. */
typedef enum hv_gw_auth
{
  HV_GW_AUTH_X_API_KEY,      /* x-api-key: KEY */
  HV_GW_AUTH_BEARER,         /* Authorization: Bearer KEY */
  HV_GW_AUTH_GOOG_API_KEY,   /* x-goog-api-key: KEY */
} hv_gw_auth;

/* A query parameter a path takes: value NULL for any value of URI
 * unreserved characters and percent escapes, else exactly that value. */
typedef struct hv_gw_param
{
  const char *key;
  const char *value;
} hv_gw_param;

#define HV_GW_PARAMS_MAX 4

/* A method and a path pattern: segments match literally, "{}" matches
 * one segment of letters, digits and "-._~:" that starts with a letter or
 * digit (an id), "{}:verb" such an id without ':' followed by ":verb". */
typedef struct hv_gw_rule
{
  const char *method;
  const char *path;
  hv_gw_param params[HV_GW_PARAMS_MAX];
} hv_gw_rule;

typedef struct hv_gw_api
{
  hv_gw_provider id;
  const char *name; /* "anthropic", "openai", "gemini" */
  const char *host; /* the real host, port 443 */
  unsigned auths;   /* 1 << hv_gw_auth for each way its key may travel */
  const hv_gw_rule *rules;
  size_t n_rules;
} hv_gw_api;

typedef struct hv_gw_credential
{
  hv_gw_auth auth;
  const char *secret; /* the real key: printable ASCII, no space */
} hv_gw_credential;

const hv_gw_api *hv_gw_api_get (hv_gw_provider id);
/* By name, or NULL. */
const hv_gw_api *hv_gw_api_by_name (const char *name);

/* 0 when method and target (origin-form, as the parser passed it) are on
 * the provider's list; -1 with *err saying why not. */
int hv_gw_route_check (const hv_gw_api *api, const char *method, const char *target, hv_error **err);

/* Whether a header of this name (any case) is dropped from what the
 * sandbox sent whatever the Connection header says. */
bool hv_gw_header_dropped (const char *name);

/* The head to send to the provider for the request head in: the route
 * checked, the headers rewritten, framing and credential set.  *out is a
 * new buffer of *out_len bytes ending in the empty line.  -1 with *err
 * when the route is refused or the credential is not one a header can
 * carry (the error never holds the credential). */
int hv_gw_request_head (const hv_gw_api *api, const hv_gw_credential *cred, const hv_http_head *in, char **out,
                        size_t *out_len, hv_error **err);

#endif
