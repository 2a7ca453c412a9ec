/* Unit tests of the gateway's routes and head rewrite: each provider's
 * paths and methods allowed and the rest refused, paths that could be
 * read two ways refused, query parameters checked, every credential
 * header the sandbox sent dropped in any case, and the head sent to the
 * provider byte for byte. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "gateway_route.h"
#include "http_message.h"

static void
allowed (hv_gw_provider id, const char *method, const char *target)
{
  hv_error *err = NULL;
  if (hv_gw_route_check (hv_gw_api_get (id), method, target, &err) < 0)
    fail_msg ("%s %s refused: %s", method, target, err->msg);
}

static void
refused (hv_gw_provider id, const char *method, const char *target, const char *why)
{
  hv_error *err = NULL;
  if (hv_gw_route_check (hv_gw_api_get (id), method, target, &err) == 0)
    fail_msg ("%s %s allowed", method, target);
  if (strstr (err->msg, why) == NULL)
    fail_msg ("%s %s: wanted \"%s\", got \"%s\"", method, target, why, err->msg);
  hv_error_free (&err);
}

static void
test_providers (void **state)
{
  (void) state;
  assert_string_equal (hv_gw_api_get (HV_GW_ANTHROPIC)->host, "api.anthropic.com");
  assert_string_equal (hv_gw_api_get (HV_GW_OPENAI)->host, "api.openai.com");
  assert_string_equal (hv_gw_api_get (HV_GW_GEMINI)->host, "generativelanguage.googleapis.com");
  assert_ptr_equal (hv_gw_api_by_name ("gemini"), hv_gw_api_get (HV_GW_GEMINI));
  assert_null (hv_gw_api_by_name ("Gemini"));
  assert_null (hv_gw_api_get (HV_GW_N_PROVIDERS));
}

static void
test_anthropic_routes (void **state)
{
  (void) state;
  const hv_gw_provider A = HV_GW_ANTHROPIC;
  allowed (A, "POST", "/v1/messages");
  allowed (A, "POST", "/v1/messages?beta=true");
  allowed (A, "POST", "/v1/messages/count_tokens?beta=true");
  allowed (A, "GET", "/v1/models");
  allowed (A, "GET", "/v1/models?limit=20&after_id=claude-3");
  allowed (A, "GET", "/v1/models/claude-sonnet-4-5-20250929");
  refused (A, "GET", "/v1/messages", "method GET not allowed");
  refused (A, "DELETE", "/v1/models/x", "method DELETE not allowed");
  refused (A, "post", "/v1/messages", "method post not allowed");
  refused (A, "POST", "/v1/messages/batches", "not on the list");
  refused (A, "POST", "/v1/files", "not on the list");
  refused (A, "GET", "/v1/organizations/api_keys", "not on the list");
  refused (A, "POST", "/v1/messages/", "empty segment");
  refused (A, "POST", "/v1/messages?beta=false", "value this path does not take");
  refused (A, "POST", "/v1/messages?beta=true&beta=true", "given twice");
  refused (A, "POST", "/v1/messages?key=x", "does not take");
  refused (A, "POST", "/v1/messages?", "empty query");
  refused (A, "POST", "/v1/messages?beta=true&", "ending in '&'");
  refused (A, "GET", "/v1/models?limit", "without '='");
  refused (A, "GET", "/v1/models?limit=", "value this path does not take");
  refused (A, "GET", "/v1/models?limit=1+1", "value this path does not take");
  allowed (A, "GET", "/v1/models?after_id=a%2Bb");
  refused (A, "GET", "/v1/models?after_id=a%2", "value this path does not take");
}

static void
test_openai_routes (void **state)
{
  (void) state;
  const hv_gw_provider O = HV_GW_OPENAI;
  allowed (O, "POST", "/v1/responses");
  allowed (O, "POST", "/v1/chat/completions");
  allowed (O, "GET", "/v1/responses/resp_123");
  allowed (O, "GET", "/v1/responses/resp_123?stream=true&starting_after=4");
  allowed (O, "DELETE", "/v1/responses/resp_123");
  allowed (O, "POST", "/v1/responses/resp_123/cancel");
  allowed (O, "GET", "/v1/responses/resp_123/input_items?limit=10&order=asc");
  allowed (O, "GET", "/v1/models");
  allowed (O, "GET", "/v1/models/ft:gpt-4o:org:custom:id");
  refused (O, "POST", "/v1/files", "not on the list");
  refused (O, "POST", "/v1/fine_tuning/jobs", "not on the list");
  refused (O, "GET", "/v1/organization/admin_api_keys", "not on the list");
  refused (O, "POST", "/v1/responses?stream=true", "does not take");
  refused (O, "GET", "/v1/responses/resp_123/cancel", "method GET not allowed");
  refused (O, "POST", "/v1/responses/resp_1/input_items/x", "not on the list");
}

static void
test_gemini_routes (void **state)
{
  (void) state;
  const hv_gw_provider G = HV_GW_GEMINI;
  allowed (G, "POST", "/v1beta/models/gemini-2.5-pro:generateContent");
  allowed (G, "POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
  allowed (G, "POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent");
  allowed (G, "POST", "/v1beta/models/gemini-2.5-flash:countTokens");
  allowed (G, "POST", "/v1beta/models/text-embedding-004:embedContent");
  allowed (G, "GET", "/v1beta/models?pageSize=50&pageToken=abc");
  allowed (G, "GET", "/v1beta/models/gemini-2.5-pro");
  refused (G, "POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=json", "value this path does not take");
  /* A key in the query is a credential the sandbox could pass. */
  refused (G, "POST", "/v1beta/models/gemini-2.5-pro:generateContent?key=AIza", "does not take");
  refused (G, "POST", "/v1beta/models/:generateContent", "not on the list");
  refused (G, "POST", "/v1beta/models/a:b:generateContent", "method POST not allowed");
  refused (G, "POST", "/v1beta/models/gemini:tuneModel", "method POST not allowed");
  refused (G, "POST", "/v1beta/tunedModels", "not on the list");
  refused (G, "POST", "/v1beta/files", "not on the list");
  refused (G, "POST", "/v1/models/gemini-2.5-pro:generateContent", "not on the list");
  refused (G, "POST", "/v1beta/models/x:generateContent/more", "not on the list");
}

/* Paths that a server could read as another path. */
static void
test_ambiguous_paths (void **state)
{
  (void) state;
  const hv_gw_provider A = HV_GW_ANTHROPIC;
  refused (A, "POST", "/v1/messages/../files", "'.' or '..' segment");
  refused (A, "POST", "/v1/models/..", "'.' or '..' segment");
  refused (A, "POST", "/v1/./messages", "'.' or '..' segment");
  refused (A, "GET", "/v1/models/.", "'.' or '..' segment");
  refused (A, "POST", "/v1/messages/%2e%2e/files", "percent escape");
  refused (A, "POST", "/v1/%2E%2E/v1/messages", "percent escape");
  refused (A, "POST", "/v1/messages%2fcount_tokens", "percent escape");
  refused (A, "POST", "/v1/messages%5c..", "percent escape");
  refused (A, "POST", "/v1/messages%3Fbeta=true", "percent escape");
  refused (A, "POST", "//v1/messages", "empty segment");
  refused (A, "POST", "/v1//messages", "empty segment");
  refused (A, "POST", "/v1/messages#x", "fragment");
  refused (A, "POST", "/v1/messages;x=1", "other than letters");
  refused (A, "POST", "/v1/me@ssages", "other than letters");
  refused (A, "POST", "v1/messages", "does not start with '/'");
  /* Dots inside a segment are an id's, not a dot segment. */
  allowed (A, "GET", "/v1/models/claude-3.5...x");
  refused (A, "GET", "/v1/models/.x", "not on the list");
}

/* Parse a request head with the gateway's parser. */
static hv_http_parser *
parse_head (const char *text)
{
  hv_http_parser *p = malloc (sizeof (*p));
  hv_http_parser_init (p, HV_HTTP_REQUEST, false, 0);
  size_t used;
  hv_http_data d;
  hv_error *err = NULL;
  int ev = hv_http_feed (p, (const uint8_t *) text, strlen (text), &used, &d, &err);
  if (ev != HV_HTTP_HEAD)
    fail_msg ("head does not parse: %s", err ? err->msg : "no head");
  return p;
}

static void
test_rewrite (void **state)
{
  (void) state;
  hv_http_parser *p = parse_head ("POST /v1/messages?beta=true HTTP/1.1\r\n"
                                  "Host: 127.0.0.1:41999\r\n"
                                  "X-Api-Key: placeholder\r\n"
                                  "AUTHORIZATION: Bearer placeholder\r\n"
                                  "x-goog-api-key: a\r\n"
                                  "Api-Key: b\r\n"
                                  "Cookie: c\r\n"
                                  "Proxy-Authorization: Basic d\r\n"
                                  "proxy-anything: e\r\n"
                                  "anthropic-version: 2023-06-01\r\n"
                                  "Connection: keep-alive, X-Hop\r\n"
                                  "x-hop: f\r\n"
                                  "Keep-Alive: timeout=5\r\n"
                                  "TE: trailers\r\n"
                                  "Upgrade: h2c\r\n"
                                  "Trailer: x\r\n"
                                  "Expect: 100-continue\r\n"
                                  "X-HTTP-Method-Override: DELETE\r\n"
                                  "x-original-url: /v1/files\r\n"
                                  "X-Forwarded-Host: evil\r\n"
                                  "content-type: application/json\r\n"
                                  "Content-Length: 2\r\n"
                                  "\r\n");
  hv_gw_credential cred = { HV_GW_AUTH_X_API_KEY, "sk-ant-real" };
  char *out = NULL;
  size_t len = 0;
  hv_error *err = NULL;
  assert_int_equal (hv_gw_request_head (hv_gw_api_get (HV_GW_ANTHROPIC), &cred, &p->head, &out, &len, &err), 0);
  const char *want = "POST /v1/messages?beta=true HTTP/1.1\r\n"
                     "Host: api.anthropic.com\r\n"
                     "anthropic-version: 2023-06-01\r\n"
                     "content-type: application/json\r\n"
                     "Content-Length: 2\r\n"
                     "x-api-key: sk-ant-real\r\n"
                     "\r\n";
  assert_string_equal (out, want);
  assert_int_equal (len, strlen (want));
  free (out);

  /* Bearer for OpenAI; a chunked body stays chunked. */
  free (p);
  p = parse_head ("POST /v1/responses HTTP/1.1\r\nhost: gw\r\nauthorization: Bearer sk-placeholder\r\n"
                  "Transfer-Encoding: chunked\r\nOpenAI-Beta: responses=v1\r\n\r\n");
  hv_gw_credential bearer = { HV_GW_AUTH_BEARER, "sk-proj-real" };
  assert_int_equal (hv_gw_request_head (hv_gw_api_get (HV_GW_OPENAI), &bearer, &p->head, &out, &len, &err), 0);
  assert_string_equal (out, "POST /v1/responses HTTP/1.1\r\nHost: api.openai.com\r\nOpenAI-Beta: responses=v1\r\n"
                            "Transfer-Encoding: chunked\r\nAuthorization: Bearer sk-proj-real\r\n\r\n");
  free (out);
  free (p);

  /* Every case of every credential header is dropped. */
  const char *names[] = { "authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie", "proxy-authorization" };
  for (size_t k = 0; k < sizeof (names) / sizeof (names[0]); k++)
    {
      char name[64];
      size_t n = strlen (names[k]);
      for (unsigned mask = 0; mask < 64; mask++)
        {
          for (size_t c = 0; c < n; c++)
            name[c] = (char) ((mask >> (c % 6)) & 1 ? (names[k][c] >= 'a' && names[k][c] <= 'z' ? names[k][c] - 32 : names[k][c])
                                                   : names[k][c]);
          name[n] = '\0';
          if (!hv_gw_header_dropped (name))
            fail_msg ("%s kept", name);
        }
    }
  assert_false (hv_gw_header_dropped ("anthropic-version"));
  assert_false (hv_gw_header_dropped ("x-api-key2"));
  assert_false (hv_gw_header_dropped ("authorizatio"));
}

static void
test_rewrite_refusals (void **state)
{
  (void) state;
  hv_http_parser *p = parse_head ("POST /v1/files HTTP/1.1\r\nHost: x\r\n\r\n");
  hv_gw_credential cred = { HV_GW_AUTH_X_API_KEY, "sk-ant-real" };
  char *out = NULL;
  size_t len = 0;
  hv_error *err = NULL;
  assert_int_equal (hv_gw_request_head (hv_gw_api_get (HV_GW_ANTHROPIC), &cred, &p->head, &out, &len, &err), -1);
  assert_non_null (strstr (err->msg, "not on the list"));
  assert_null (out);
  hv_error_free (&err);
  free (p);

  p = parse_head ("POST /v1/messages HTTP/1.1\r\nHost: x\r\n\r\n");
  /* A way the provider does not take its key. */
  hv_gw_credential goog = { HV_GW_AUTH_GOOG_API_KEY, "k" };
  assert_int_equal (hv_gw_request_head (hv_gw_api_get (HV_GW_ANTHROPIC), &goog, &p->head, &out, &len, &err), -1);
  hv_error_free (&err);
  /* A credential that would split the header, and the error not holding it. */
  const char *bad[] = { "sk\r\nX-Evil: 1", "sk key", "", "sk\x7f" };
  for (size_t k = 0; k < 4; k++)
    {
      hv_gw_credential c = { HV_GW_AUTH_X_API_KEY, bad[k] };
      assert_int_equal (hv_gw_request_head (hv_gw_api_get (HV_GW_ANTHROPIC), &c, &p->head, &out, &len, &err), -1);
      assert_null (strstr (err->msg, "sk"));
      hv_error_free (&err);
    }
  free (p);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_providers),        cmocka_unit_test (test_anthropic_routes),
    cmocka_unit_test (test_openai_routes),    cmocka_unit_test (test_gemini_routes),
    cmocka_unit_test (test_ambiguous_paths),  cmocka_unit_test (test_rewrite),
    cmocka_unit_test (test_rewrite_refusals),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
