/* The providers' allow-lists and the request head rewrite (gateway_route.h
 * says what passes and why). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gateway_route.h"

/* The paths the agents call, from each API's reference: messages and
 * token counting (Claude Code adds ?beta=true to both), the Responses
 * API (Codex) and chat completions, Gemini's generate, stream (alt=sse),
 * count and embed verbs; and listing or reading models, which the agents
 * do at start. */
static const hv_gw_rule anthropic_rules[] = {
  { "POST", "/v1/messages", { { "beta", "true" } } },
  { "POST", "/v1/messages/count_tokens", { { "beta", "true" } } },
  { "GET", "/v1/models", { { "beta", "true" }, { "limit", NULL }, { "after_id", NULL }, { "before_id", NULL } } },
  { "GET", "/v1/models/{}", { { "beta", "true" } } },
};

static const hv_gw_rule openai_rules[] = {
  { "POST", "/v1/responses", { { NULL, NULL } } },
  { "GET", "/v1/responses/{}", { { "stream", NULL }, { "starting_after", NULL } } },
  { "DELETE", "/v1/responses/{}", { { NULL, NULL } } },
  { "POST", "/v1/responses/{}/cancel", { { NULL, NULL } } },
  { "GET", "/v1/responses/{}/input_items", { { "after", NULL }, { "before", NULL }, { "limit", NULL }, { "order", NULL } } },
  { "POST", "/v1/chat/completions", { { NULL, NULL } } },
  { "GET", "/v1/models", { { NULL, NULL } } },
  { "GET", "/v1/models/{}", { { NULL, NULL } } },
};

static const hv_gw_rule gemini_rules[] = {
  { "POST", "/v1beta/models/{}:generateContent", { { NULL, NULL } } },
  { "POST", "/v1beta/models/{}:streamGenerateContent", { { "alt", "sse" } } },
  { "POST", "/v1beta/models/{}:countTokens", { { NULL, NULL } } },
  { "POST", "/v1beta/models/{}:embedContent", { { NULL, NULL } } },
  { "POST", "/v1beta/models/{}:batchEmbedContents", { { NULL, NULL } } },
  { "GET", "/v1beta/models", { { "pageSize", NULL }, { "pageToken", NULL } } },
  { "GET", "/v1beta/models/{}", { { NULL, NULL } } },
};

static const hv_gw_api apis[HV_GW_N_PROVIDERS] = {
  { HV_GW_ANTHROPIC, "anthropic", "api.anthropic.com", (1u << HV_GW_AUTH_X_API_KEY) | (1u << HV_GW_AUTH_BEARER),
    anthropic_rules, sizeof (anthropic_rules) / sizeof (anthropic_rules[0]) },
  { HV_GW_OPENAI, "openai", "api.openai.com", 1u << HV_GW_AUTH_BEARER, openai_rules,
    sizeof (openai_rules) / sizeof (openai_rules[0]) },
  { HV_GW_GEMINI, "gemini", "generativelanguage.googleapis.com", 1u << HV_GW_AUTH_GOOG_API_KEY, gemini_rules,
    sizeof (gemini_rules) / sizeof (gemini_rules[0]) },
};

const hv_gw_api *
hv_gw_api_get (hv_gw_provider id)
{
  return (unsigned) id < HV_GW_N_PROVIDERS ? &apis[id] : NULL;
}

const hv_gw_api *
hv_gw_api_by_name (const char *name)
{
  for (size_t k = 0; k < HV_GW_N_PROVIDERS; k++)
    if (strcmp (apis[k].name, name) == 0)
      return &apis[k];
  return NULL;
}

static bool
alnum (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool
id_char (char c, bool colon)
{
  return alnum (c) || c == '-' || c == '.' || c == '_' || c == '~' || (colon && c == ':');
}

/* The path's own shape, before any pattern: what could be read two ways. */
static int
check_path_shape (const char *path, size_t n, hv_error **err)
{
  if (n == 0 || path[0] != '/')
    return hv_error_set (err, 0, "path does not start with '/'");
  for (size_t k = 0; k < n; k++)
    {
      char c = path[k];
      if (c == '#')
        return hv_error_set (err, 0, "path with a fragment ('#')");
      if (c == '%')
        return hv_error_set (err, 0, "path with a percent escape (an encoded '.', '/' or '\\' reads as another path)");
      if (c == '/' && k + 1 < n && path[k + 1] == '/')
        return hv_error_set (err, 0, "path with an empty segment ('//')");
      if (c == '/' && k > 0 && k + 1 == n)
        return hv_error_set (err, 0, "path with an empty segment (a trailing '/')");
      if (!id_char (c, true) && c != '/')
        return hv_error_set (err, 0, "path with a character other than letters, digits and \"-._~:/\"");
    }
  /* Dot segments: "/." or "/.." followed by '/' or the end. */
  for (size_t k = 0; k < n; k++)
    if (path[k] == '/' && k + 1 < n && path[k + 1] == '.')
      {
        size_t e = k + 2;
        if (e < n && path[e] == '.')
          e++;
        if (e == n || path[e] == '/')
          return hv_error_set (err, 0, "path with a '.' or '..' segment");
      }
  return 0;
}

/* One segment of the target (s, n bytes) against one of the pattern (p, m). */
static bool
segment_matches (const char *p, size_t m, const char *s, size_t n)
{
  if (m >= 2 && p[0] == '{' && p[1] == '}')
    {
      const char *verb = p + 2;
      size_t vlen = m - 2;
      /* An id starts with a letter or digit, as the providers' ids do. */
      if (n <= vlen || !alnum (s[0]))
        return false;
      if (vlen > 0 && memcmp (s + n - vlen, verb, vlen) != 0)
        return false;
      for (size_t k = 0; k < n - vlen; k++)
        if (!id_char (s[k], vlen == 0))
          return false;
      return true;
    }
  return m == n && memcmp (p, s, n) == 0;
}

static bool
path_matches (const char *pattern, const char *path, size_t n)
{
  const char *p = pattern, *s = path, *end = path + n;
  for (;;)
    {
      const char *pe = strchr (p + 1, '/');
      size_t m = pe ? (size_t) (pe - p - 1) : strlen (p + 1);
      const char *se = memchr (s + 1, '/', (size_t) (end - s - 1));
      size_t sl = se ? (size_t) (se - s - 1) : (size_t) (end - s - 1);
      if (!segment_matches (p + 1, m, s + 1, sl))
        return false;
      if (pe == NULL || se == NULL)
        return pe == NULL && se == NULL;
      p = pe;
      s = se;
    }
}

static bool
hex (char c)
{
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool
value_ok (const char *v, size_t n)
{
  for (size_t k = 0; k < n; k++)
    {
      char c = v[k];
      if (id_char (c, false))
        continue;
      if (c == '%' && k + 2 < n && hex (v[k + 1]) && hex (v[k + 2]))
        {
          k += 2;
          continue;
        }
      return false;
    }
  return true;
}

/* Each "key=value" of the query: a parameter the rule takes, with a value
 * it allows, at most once. */
static int
check_query (const hv_gw_rule *r, const char *q, hv_error **err)
{
  bool seen[HV_GW_PARAMS_MAX] = { false };
  if (*q == '\0')
    return hv_error_set (err, 0, "empty query");
  while (*q)
    {
      const char *amp = strchr (q, '&');
      size_t n = amp ? (size_t) (amp - q) : strlen (q);
      const char *eq = memchr (q, '=', n);
      if (eq == NULL)
        return hv_error_set (err, 0, "query parameter without '='");
      size_t klen = (size_t) (eq - q), vlen = n - klen - 1;
      size_t k;
      for (k = 0; k < HV_GW_PARAMS_MAX && r->params[k].key; k++)
        if (strlen (r->params[k].key) == klen && memcmp (r->params[k].key, q, klen) == 0)
          break;
      if (k == HV_GW_PARAMS_MAX || r->params[k].key == NULL)
        return hv_error_set (err, 0, "query parameter this path does not take");
      if (seen[k])
        return hv_error_set (err, 0, "query parameter %s given twice", r->params[k].key);
      seen[k] = true;
      const char *want = r->params[k].value;
      if (want ? (strlen (want) != vlen || memcmp (want, eq + 1, vlen) != 0) : (vlen == 0 || !value_ok (eq + 1, vlen)))
        return hv_error_set (err, 0, "query parameter %s with a value this path does not take", r->params[k].key);
      q += n;
      if (*q == '&')
        {
          q++;
          if (*q == '\0')
            return hv_error_set (err, 0, "query ending in '&'");
        }
    }
  return 0;
}

static int
route_check (const hv_gw_api *api, const char *method, const char *target, hv_error **err)
{
  const char *query = strchr (target, '?');
  size_t plen = query ? (size_t) (query - target) : strlen (target);
  if (check_path_shape (target, plen, err) < 0)
    return -1;
  bool path_known = false;
  for (size_t k = 0; k < api->n_rules; k++)
    {
      const hv_gw_rule *r = &api->rules[k];
      if (!path_matches (r->path, target, plen))
        continue;
      path_known = true;
      if (strcmp (r->method, method) != 0)
        continue;
      return query ? check_query (r, query + 1, err) : 0;
    }
  if (path_known)
    return hv_error_set (err, 0, "method %s not allowed on this path", method);
  return hv_error_set (err, 0, "path not on the list of %s's API", api->name);
}

int
hv_gw_route_check (const hv_gw_api *api, const char *method, const char *target, hv_error **err)
{
  if (route_check (api, method, target, err) < 0)
    return hv_error_wrap (err, "gateway %s", api->name);
  return 0;
}

bool
hv_gw_header_dropped (const char *name)
{
  static const char *const dropped[] = {
    /* credentials, in any of the providers' ways and the general ones */
    "authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie",
    /* hop-by-hop (RFC 9110 7.6.1), and the older Keep-Alive and
     * Proxy-Connection */
    "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade",
    /* set by the gateway itself */
    "host", "content-length",
    /* 100-continue would need the gateway to relay an interim response */
    "expect",
    /* Another method or path than the one checked: Google's front ends
     * honour method overrides, some servers the URL ones */
    "x-http-method-override", "x-http-method", "x-method-override", "x-original-url", "x-rewrite-url",
    "x-forwarded-host",
  };
  if (strncasecmp (name, "proxy-", 6) == 0)
    return true;
  for (size_t k = 0; k < sizeof (dropped) / sizeof (dropped[0]); k++)
    if (strcasecmp (name, dropped[k]) == 0)
      return true;
  return false;
}

/* Whether the Connection header(s) list name as an option: those headers
 * are meant for the hop to the gateway only (RFC 9110 7.6.1). */
static bool
named_by_connection (const hv_http_head *in, const char *name)
{
  size_t n = strlen (name);
  for (size_t k = 0; k < in->n_headers; k++)
    {
      if (strcasecmp (in->headers[k].name, "connection") != 0)
        continue;
      const char *v = in->headers[k].value;
      while (*v)
        {
          while (*v == ' ' || *v == '\t' || *v == ',')
            v++;
          size_t t = 0;
          while (v[t] && v[t] != ',' && v[t] != ' ' && v[t] != '\t')
            t++;
          if (t == n && strncasecmp (v, name, n) == 0)
            return true;
          v += t;
        }
    }
  return false;
}

static const char *
auth_header (hv_gw_auth a)
{
  switch (a)
    {
    case HV_GW_AUTH_X_API_KEY:
      return "x-api-key: ";
    case HV_GW_AUTH_BEARER:
      return "Authorization: Bearer ";
    case HV_GW_AUTH_GOOG_API_KEY:
      return "x-goog-api-key: ";
    }
  return NULL;
}

struct out_buf
{
  char *data;
  size_t len, cap;
};

static void
put (struct out_buf *b, const char *s, size_t n)
{
  if (b->len + n + 1 > b->cap)
    {
      b->cap = (b->len + n + 1) * 2;
      b->data = xrealloc (b->data, b->cap);
    }
  memcpy (b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

static void
puts_ (struct out_buf *b, const char *s)
{
  put (b, s, strlen (s));
}

int
hv_gw_request_head (const hv_gw_api *api, const hv_gw_credential *cred, const hv_http_head *in, char **out,
                    size_t *out_len, hv_error **err)
{
  if (in->method == NULL || in->target == NULL)
    return hv_error_set (err, 0, "gateway %s: not a request head", api->name);
  if (hv_gw_route_check (api, in->method, in->target, err) < 0)
    return -1;
  if (!(api->auths & (1u << cred->auth)))
    return hv_error_set (err, 0, "gateway %s: the credential's header is not one %s takes", api->name, api->name);
  size_t slen = strlen (cred->secret);
  if (slen == 0)
    return hv_error_set (err, 0, "gateway %s: the credential is empty", api->name);
  for (size_t k = 0; k < slen; k++)
    if (cred->secret[k] <= 0x20 || cred->secret[k] >= 0x7f)
      return hv_error_set (err, 0, "gateway %s: the credential holds a character a header cannot carry", api->name);

  struct out_buf b = { NULL, 0, 0 };
  puts_ (&b, in->method);
  puts_ (&b, " ");
  puts_ (&b, in->target);
  puts_ (&b, " HTTP/1.1\r\nHost: ");
  puts_ (&b, api->host);
  puts_ (&b, "\r\n");
  for (size_t k = 0; k < in->n_headers; k++)
    {
      const hv_http_header *h = &in->headers[k];
      if (hv_gw_header_dropped (h->name) || named_by_connection (in, h->name))
        continue;
      puts_ (&b, h->name);
      puts_ (&b, ": ");
      puts_ (&b, h->value);
      puts_ (&b, "\r\n");
    }
  if (in->framing == HV_HTTP_BODY_CHUNKED)
    puts_ (&b, "Transfer-Encoding: chunked\r\n");
  else if (in->framing == HV_HTTP_BODY_LENGTH)
    {
      char cl[48];
      snprintf (cl, sizeof (cl), "Content-Length: %llu\r\n", (unsigned long long) in->content_length);
      puts_ (&b, cl);
    }
  puts_ (&b, auth_header (cred->auth));
  put (&b, cred->secret, slen);
  puts_ (&b, "\r\n\r\n");
  *out = b.data;
  *out_len = b.len;
  return 0;
}
