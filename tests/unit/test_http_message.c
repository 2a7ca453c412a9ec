/* Unit tests of the gateway's HTTP/1.1 parser: requests as an agent sends
 * them, the API's responses (server-sent events in chunks, bodies until
 * close), every split point of a sample fed in pieces, the limits at
 * their edge, and each request-smuggling shape refused. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_message.h"

struct result
{
  int rc; /* 0 or -1 */
  char err[512];
  int heads;
  bool end;
  size_t used; /* bytes up to the message's end */
  char body[65536];
  size_t body_len;
  size_t data_events;
};

/* Feed msg[0..len) to p in pieces cut at cuts[] (increasing), stopping at
 * the message's end; finish: tell the parser the peer closed after it. */
static void
run_cuts (hv_http_parser *p, const char *msg, size_t len, const size_t *cuts, size_t n_cuts, bool finish,
          struct result *r)
{
  memset (r, 0, sizeof (*r));
  size_t start = 0;
  for (size_t c = 0; c <= n_cuts && !r->end && r->rc == 0; c++)
    {
      size_t stop = c < n_cuts ? cuts[c] : len;
      size_t off = start;
      for (;;)
        {
          size_t used = 99999;
          hv_http_data d;
          hv_error *err = NULL;
          int ev = hv_http_feed (p, (const uint8_t *) msg + off, stop - off, &used, &d, &err);
          if (ev < 0)
            {
              snprintf (r->err, sizeof (r->err), "%s", err->msg);
              hv_error_free (&err);
              r->rc = -1;
              break;
            }
          assert_true (used <= stop - off);
          off += used;
          if (ev == HV_HTTP_MORE)
            {
              assert_int_equal (off, stop);
              break;
            }
          if (ev == HV_HTTP_HEAD)
            r->heads++;
          if (ev == HV_HTTP_DATA)
            {
              /* Body bytes are a range of what was given. */
              assert_true (d.data >= (const uint8_t *) msg + start && d.data + d.len <= (const uint8_t *) msg + stop);
              assert_true (d.len > 0);
              assert_true (r->body_len + d.len <= sizeof (r->body));
              memcpy (r->body + r->body_len, d.data, d.len);
              r->body_len += d.len;
              r->data_events++;
            }
          if (ev == HV_HTTP_END)
            {
              r->end = true;
              r->used = off;
              break;
            }
        }
      start = stop;
    }
  if (finish && !r->end && r->rc == 0)
    {
      hv_error *err = NULL;
      if (hv_http_finish (p, &err) < 0)
        {
          snprintf (r->err, sizeof (r->err), "%s", err->msg);
          hv_error_free (&err);
          r->rc = -1;
        }
      else
        {
          r->end = true;
          r->used = len;
        }
    }
}

static hv_http_parser *
parser (hv_http_kind kind, bool head_request, uint64_t body_max)
{
  hv_http_parser *p = malloc (sizeof (*p));
  assert_non_null (p);
  hv_http_parser_init (p, kind, head_request, body_max);
  return p;
}

static struct result R;

/* The whole message in one piece. */
static struct result *
parse_whole (hv_http_kind kind, const char *msg, size_t len, bool finish, hv_http_parser **keep)
{
  hv_http_parser *p = parser (kind, false, 1 << 20);
  run_cuts (p, msg, len, NULL, 0, finish, &R);
  if (keep)
    *keep = p;
  else
    free (p);
  return &R;
}

static void
expect_refused (hv_http_kind kind, const char *msg, const char *why)
{
  struct result *r = parse_whole (kind, msg, strlen (msg), false, NULL);
  if (r->rc == 0 || strstr (r->err, why) == NULL)
    fail_msg ("%s: wanted a refusal with \"%s\", got rc %d \"%s\"", msg, why, r->rc, r->err);
}

static void
expect_request (const char *msg, const char *body)
{
  struct result *r = parse_whole (HV_HTTP_REQUEST, msg, strlen (msg), false, NULL);
  if (r->rc != 0 || !r->end)
    fail_msg ("%s: wanted a request, got rc %d \"%s\" end %d", msg, r->rc, r->err, r->end);
  assert_int_equal (r->body_len, strlen (body));
  assert_memory_equal (r->body, body, r->body_len);
}

/* --- requests ---------------------------------------------------------------- */

static void
test_request_content_length (void **state)
{
  (void) state;
  const char *msg = "POST /v1/messages?beta=true HTTP/1.1\r\n"
                    "Host: 127.0.0.1:8080\r\n"
                    "x-api-key:   placeholder  \r\n"
                    "Content-Type: application/json\r\n"
                    "Content-Length: 11\r\n"
                    "\r\n"
                    "{\"a\":\"b c\"}";
  hv_http_parser *p;
  struct result *r = parse_whole (HV_HTTP_REQUEST, msg, strlen (msg), false, &p);
  assert_int_equal (r->rc, 0);
  assert_int_equal (r->heads, 1);
  assert_true (r->end);
  assert_int_equal (r->used, strlen (msg));
  assert_string_equal (p->head.method, "POST");
  assert_string_equal (p->head.target, "/v1/messages?beta=true");
  assert_int_equal (p->head.n_headers, 4);
  assert_string_equal (p->head.headers[1].name, "x-api-key");
  assert_string_equal (p->head.headers[1].value, "placeholder");
  assert_string_equal (hv_http_header_get (&p->head, "X-API-KEY"), "placeholder");
  assert_int_equal (p->head.framing, HV_HTTP_BODY_LENGTH);
  assert_int_equal (p->head.content_length, 11);
  assert_int_equal (r->body_len, 11);
  assert_memory_equal (r->body, "{\"a\":\"b c\"}", 11);
  free (p);
}

static void
test_request_without_body (void **state)
{
  (void) state;
  const char *msg = "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
  hv_http_parser *p;
  struct result *r = parse_whole (HV_HTTP_REQUEST, msg, strlen (msg), false, &p);
  assert_int_equal (r->rc, 0);
  assert_true (r->end);
  assert_int_equal (p->head.framing, HV_HTTP_BODY_NONE);
  assert_int_equal (r->body_len, 0);
  free (p);
  /* Identical Content-Length headers say one thing: accepted. */
  expect_request ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nab", "ab");
  expect_request ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", "");
  expect_request ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n", "");
}

/* The bytes of a next message are the caller's: the parser stops at the end. */
static void
test_does_not_read_past_the_end (void **state)
{
  (void) state;
  const char *first = "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
  const char *second = "GET /b HTTP/1.1\r\nHost: x\r\n\r\n";
  char both[512];
  snprintf (both, sizeof (both), "%s%s", first, second);
  hv_http_parser *p;
  struct result *r = parse_whole (HV_HTTP_REQUEST, both, strlen (both), false, &p);
  assert_int_equal (r->rc, 0);
  assert_true (r->end);
  assert_int_equal (r->used, strlen (first));
  assert_memory_equal (r->body, "abc", 3);
  hv_http_parser_init (p, HV_HTTP_REQUEST, false, 0);
  run_cuts (p, both + r->used, strlen (second), NULL, 0, false, &R);
  assert_int_equal (R.rc, 0);
  assert_true (R.end);
  assert_string_equal (p->head.target, "/b");

  /* The same after a Content-Length body, fed whole and at every split. */
  const char *cl = "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc";
  snprintf (both, sizeof (both), "%s%s", cl, second);
  for (size_t cut = 0; cut <= strlen (both); cut++)
    {
      hv_http_parser_init (p, HV_HTTP_REQUEST, false, 0);
      run_cuts (p, both, strlen (both), &cut, 1, false, &R);
      assert_int_equal (R.rc, 0);
      assert_true (R.end);
      assert_int_equal (R.used, strlen (cl));
      assert_int_equal (R.body_len, 3);
      assert_memory_equal (R.body, "abc", 3);
    }
  free (p);
}

/* --- every split point --------------------------------------------------------- */

static const char sample_request[] = "POST /v1/responses HTTP/1.1\r\n"
                                     "Host: gw\r\n"
                                     "Authorization: Bearer placeholder\r\n"
                                     "Transfer-Encoding: chunked\r\n"
                                     "\r\n"
                                     "5;ext=1\r\nhello\r\n"
                                     "1\r\n \r\n"
                                     "A\r\n{\"x\":true}\r\n"
                                     "0\r\n"
                                     "X-Trailer: t\r\n"
                                     "\r\n";

static void
check_every_split (hv_http_kind kind, const char *msg, size_t len, const char *body, bool finish)
{
  hv_http_parser *p = parser (kind, false, 1 << 20);
  /* Two pieces, cut at every point. */
  for (size_t cut = 0; cut <= len; cut++)
    {
      hv_http_parser_init (p, kind, false, 1 << 20);
      run_cuts (p, msg, len, &cut, 1, finish, &R);
      if (R.rc != 0 || !R.end || R.heads != 1)
        fail_msg ("cut at %zu: rc %d \"%s\" end %d heads %d", cut, R.rc, R.err, R.end, R.heads);
      assert_int_equal (R.used, len);
      assert_int_equal (R.body_len, strlen (body));
      assert_memory_equal (R.body, body, R.body_len);
    }
  /* One byte at a time. */
  size_t cuts[1024];
  assert_true (len <= 1024);
  for (size_t k = 0; k < len; k++)
    cuts[k] = k + 1;
  hv_http_parser_init (p, kind, false, 1 << 20);
  run_cuts (p, msg, len, cuts, len, finish, &R);
  assert_int_equal (R.rc, 0);
  assert_true (R.end);
  assert_int_equal (R.body_len, strlen (body));
  assert_memory_equal (R.body, body, R.body_len);
  free (p);
}

static void
test_request_every_split (void **state)
{
  (void) state;
  check_every_split (HV_HTTP_REQUEST, sample_request, strlen (sample_request), "hello {\"x\":true}", false);
}

/* --- responses ----------------------------------------------------------------- */

static const char sse_response[] = "HTTP/1.1 200 OK\r\n"
                                   "Content-Type: text/event-stream\r\n"
                                   "Transfer-Encoding: chunked\r\n"
                                   "\r\n"
                                   "24\r\nevent: message_start\ndata: {\"a\":1}\n\n\r\n"
                                   "28\r\nevent: content_block_delta\ndata: {\"b\"}\n\n\r\n"
                                   "0\r\n\r\n";

static void
test_response_sse_chunked (void **state)
{
  (void) state;
  const char *events = "event: message_start\ndata: {\"a\":1}\n\n"
                       "event: content_block_delta\ndata: {\"b\"}\n\n";
  assert_int_equal (strlen ("event: message_start\ndata: {\"a\":1}\n\n"), 0x24);
  assert_int_equal (strlen ("event: content_block_delta\ndata: {\"b\"}\n\n"), 0x28);
  check_every_split (HV_HTTP_RESPONSE, sse_response, strlen (sse_response), events, false);

  /* Streaming: the first event comes out before the rest has arrived. */
  hv_http_parser *p = parser (HV_HTTP_RESPONSE, false, 0);
  const char *first_end = strstr (sse_response, "28\r\nevent: content");
  run_cuts (p, sse_response, (size_t) (first_end - sse_response), NULL, 0, false, &R);
  assert_int_equal (R.rc, 0);
  assert_false (R.end);
  assert_int_equal (p->head.status, 200);
  assert_string_equal (p->head.reason, "OK");
  assert_int_equal (p->head.framing, HV_HTTP_BODY_CHUNKED);
  assert_int_equal (R.body_len, 0x24);
  /* And the peer closing there is a stream cut short. */
  hv_error *err = NULL;
  assert_int_equal (hv_http_finish (p, &err), -1);
  assert_non_null (strstr (err->msg, "before the body was complete"));
  hv_error_free (&err);
  free (p);
}

static void
test_response_until_close (void **state)
{
  (void) state;
  const char *msg = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\ndata: 2\n\n";
  hv_http_parser *p;
  struct result *r = parse_whole (HV_HTTP_RESPONSE, msg, strlen (msg), true, &p);
  assert_int_equal (r->rc, 0);
  assert_true (r->end);
  assert_int_equal (p->head.framing, HV_HTTP_BODY_CLOSE);
  assert_int_equal (r->body_len, strlen ("data: 1\n\ndata: 2\n\n"));
  free (p);
  check_every_split (HV_HTTP_RESPONSE, msg, strlen (msg), "data: 1\n\ndata: 2\n\n", true);

  /* A Content-Length body cut short by a close is refused. */
  const char *cut = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
  r = parse_whole (HV_HTTP_RESPONSE, cut, strlen (cut), true, NULL);
  assert_int_equal (r->rc, -1);
  assert_non_null (strstr (r->err, "before the body was complete"));
  /* A status line without a reason phrase, HTTP/1.0. */
  const char *bare = "HTTP/1.0 404\r\nContent-Length: 2\r\n\r\nno";
  r = parse_whole (HV_HTTP_RESPONSE, bare, strlen (bare), false, &p);
  assert_int_equal (r->rc, 0);
  assert_int_equal (p->head.status, 404);
  assert_int_equal (p->head.minor_version, 0);
  assert_string_equal (p->head.reason, "");
  free (p);
}

static void
test_response_without_body (void **state)
{
  (void) state;
  const char *msgs[] = {
    "HTTP/1.1 204 No Content\r\n\r\n",
    "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n",
    "HTTP/1.1 100 Continue\r\n\r\n",
  };
  for (size_t k = 0; k < 3; k++)
    {
      struct result *r = parse_whole (HV_HTTP_RESPONSE, msgs[k], strlen (msgs[k]), false, NULL);
      assert_int_equal (r->rc, 0);
      assert_true (r->end);
      assert_int_equal (r->used, strlen (msgs[k]));
      assert_int_equal (r->body_len, 0);
    }
  /* A response to HEAD: its Content-Length describes what GET would get. */
  const char *head = "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n";
  hv_http_parser *p = parser (HV_HTTP_RESPONSE, true, 0);
  run_cuts (p, head, strlen (head), NULL, 0, false, &R);
  assert_int_equal (R.rc, 0);
  assert_true (R.end);
  free (p);
  expect_refused (HV_HTTP_RESPONSE, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", "status 101");
}

/* --- refusals ------------------------------------------------------------------ */

static void
test_smuggling_shapes (void **state)
{
  (void) state;
  const hv_http_kind Q = HV_HTTP_REQUEST;
  expect_refused (Q, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
                  "both Content-Length and Transfer-Encoding");
  expect_refused (Q, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
                  "both Content-Length and Transfer-Encoding");
  expect_refused (Q, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
                  "several Content-Length headers that differ");
  expect_refused (Q, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\n", "not a number of digits");
  expect_refused (Q, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\n", "not a number of digits");
  expect_refused (Q, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n", "Content-Length empty");
  expect_refused (Q, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
                  "more than 19 digits");
  expect_refused (Q, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
                  "other than exactly \"chunked\"");
  expect_refused (Q, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
                  "other than exactly \"chunked\"");
  expect_refused (Q, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n", "other than exactly");
  expect_refused (Q, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n", "other than exactly");
  expect_refused (Q, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
                  "more than one Transfer-Encoding");
  /* Chunk framing. */
  const char *te = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  struct
  {
    const char *body, *why;
  } chunks[] = {
    { "zz\r\n", "not a hex number" },
    { "-1\r\n", "not a hex number" },
    { "\r\n", "not a hex number" },
    { " 5\r\nhello\r\n0\r\n\r\n", "not a hex number" },
    { "0x5\r\nhello\r\n0\r\n\r\n", "other than an extension" },
    { "5 x\r\nhello\r\n0\r\n\r\n", "other than an extension" },
    { "1000000000000000\r\n", "more than 15 hex digits" },
    { "5;a\x01\r\nhello\r\n", "control character in a chunk extension" },
    { "3\r\nhello\r\n0\r\n\r\n", "chunk longer than its size" },
    { "5\r\nhello0\r\n\r\n", "chunk longer than its size" },
    { "5\r\nhello\r\n0\r\nX: \x01\r\n\r\n", "control character" },
    { "5\r\nhello\n0\r\n\r\n", "bare LF" },
    { "5\rhello", "bare CR" },
    { "5\0\r\n", "NUL" },
  };
  for (size_t k = 0; k < sizeof (chunks) / sizeof (chunks[0]); k++)
    {
      char msg[1024];
      size_t hl = strlen (te), bl = strcmp (chunks[k].why, "NUL") == 0 ? 4 : strlen (chunks[k].body);
      memcpy (msg, te, hl);
      memcpy (msg + hl, chunks[k].body, bl);
      struct result *r = parse_whole (Q, msg, hl + bl, false, NULL);
      if (r->rc == 0 || strstr (r->err, chunks[k].why) == NULL)
        fail_msg ("chunk body %zu: wanted \"%s\", got rc %d \"%s\"", k, chunks[k].why, r->rc, r->err);
    }
  /* Extensions up to the bound pass, one byte more does not. */
  char ext[HV_HTTP_CHUNK_EXT_MAX + 2];
  memset (ext, 'e', sizeof (ext));
  ext[0] = ';';
  char msg[1024];
  snprintf (msg, sizeof (msg), "%s5%.*s\r\nhello\r\n0\r\n\r\n", te, HV_HTTP_CHUNK_EXT_MAX, ext);
  expect_request (msg, "hello");
  snprintf (msg, sizeof (msg), "%s5%.*s\r\nhello\r\n0\r\n\r\n", te, HV_HTTP_CHUNK_EXT_MAX + 1, ext);
  expect_refused (Q, msg, "chunk extensions longer than");
  snprintf (msg, sizeof (msg), "%s000000000000005\r\nhello\r\n0\r\n\r\n", te);
  expect_request (msg, "hello");
}

static void
test_head_syntax_refused (void **state)
{
  (void) state;
  const hv_http_kind Q = HV_HTTP_REQUEST;
  expect_refused (Q, "GET / HTTP/1.1\r\nHost: x\r\nA: b\rc\r\n\r\n", "bare CR");
  expect_refused (Q, "GET / HTTP/1.1\r\nHost: x\nA: b\r\n\r\n", "bare LF");
  expect_refused (Q, "GET / HTTP/1.1\r\nHost: x\r\nA: b\r\n \tfolded\r\n\r\n", "obs-fold");
  expect_refused (Q, "GET / HTTP/1.1\r\nHost : x\r\n\r\n", "white space before the colon");
  expect_refused (Q, "GET / HTTP/1.1\r\nHost: x\r\n: v\r\n\r\n", "empty name");
  expect_refused (Q, "GET / HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n", "without a colon");
  expect_refused (Q, "GET / HTTP/1.1\r\nHost: x\r\nA: b\x7f\r\n\r\n", "control character in the value");
  expect_refused (Q, "GET / HTTP/1.1\r\nHost: x\r\nA: b\x1b[31m\r\n\r\n", "control character in the value");
  expect_refused (Q, "GET / HTTP/1.0\r\nHost: x\r\n\r\n", "not HTTP/1.1");
  expect_refused (Q, "GET / HTTP/2\r\nHost: x\r\n\r\n", "not HTTP/1.1");
  expect_refused (Q, "GET /  HTTP/1.1\r\nHost: x\r\n\r\n", "not HTTP/1.1");
  expect_refused (Q, "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", "extra spaces");
  expect_refused (Q, "GET http://evil/ HTTP/1.1\r\nHost: x\r\n\r\n", "not a path");
  expect_refused (Q, "CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: x\r\n\r\n", "not a path");
  expect_refused (Q, "GET /a#frag HTTP/1.1\r\nHost: x\r\n\r\n", "fragment");
  expect_refused (Q, "GET /a%2 HTTP/1.1\r\nHost: x\r\n\r\n", "two hex digits");
  expect_refused (Q, "GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n", "two hex digits");
  expect_refused (Q, "GET /a\\b HTTP/1.1\r\nHost: x\r\n\r\n", "a URI may not hold");
  expect_refused (Q, "GET /\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n", "a URI may not hold");
  expect_refused (Q, "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", "method with a character");
  expect_refused (Q, "GET\r\nHost: x\r\n\r\n", "without a target");
  expect_refused (Q, "GET /\r\nHost: x\r\n\r\n", "without a version");
  expect_refused (Q, "\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", "empty line before the request line");
  expect_refused (Q, "GET / HTTP/1.1\r\n\r\n", "no Host header");
  expect_refused (Q, "GET / HTTP/1.1\r\nHost: x\r\nhost: y\r\n\r\n", "more than one Host");
  const char nul[] = "GET / HTTP/1.1\r\nHost: x\0\r\n\r\n";
  struct result *r = parse_whole (Q, nul, sizeof (nul) - 1, false, NULL);
  assert_int_equal (r->rc, -1);
  assert_non_null (strstr (r->err, "NUL byte"));
  /* Responses. */
  const hv_http_kind S = HV_HTTP_RESPONSE;
  expect_refused (S, "HTTP/1.2 200 OK\r\n\r\n", "does not start with");
  expect_refused (S, "HTTP/1.1 20 OK\r\n\r\n", "three digits");
  expect_refused (S, "HTTP/1.1 2000 OK\r\n\r\n", "three digits");
  expect_refused (S, "HTTP/1.1 600 OK\r\n\r\n", "three digits");
  expect_refused (S, "HTTP/1.1 200 O\x01K\r\n\r\n", "reason phrase");
  expect_refused (S, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", "both");
  expect_refused (S, "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "other than exactly");
}

/* An error sticks: nothing after it is read. */
static void
test_error_is_final (void **state)
{
  (void) state;
  hv_http_parser *p = parser (HV_HTTP_REQUEST, false, 0);
  const char *bad = "GET / HTTP/1.0\r\n";
  run_cuts (p, bad, strlen (bad), NULL, 0, false, &R);
  assert_int_equal (R.rc, -1);
  const char *good = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  run_cuts (p, good, strlen (good), NULL, 0, false, &R);
  assert_int_equal (R.rc, -1);
  assert_non_null (strstr (R.err, "earlier error"));
  free (p);
}

/* --- limits -------------------------------------------------------------------- */

/* A request whose header line "X: vvv..." is exactly len bytes with CRLF. */
static char *
request_with_line (size_t len)
{
  size_t cap = len + 128;
  char *msg = malloc (cap);
  size_t n = (size_t) snprintf (msg, cap, "GET / HTTP/1.1\r\nHost: x\r\nX: ");
  size_t vlen = len - 5; /* "X: " and CRLF */
  memset (msg + n, 'v', vlen);
  n += vlen;
  memcpy (msg + n, "\r\n\r\n", 5);
  return msg;
}

static void
test_limits (void **state)
{
  (void) state;
  char *msg = request_with_line (HV_HTTP_LINE_MAX);
  expect_request (msg, "");
  free (msg);
  msg = request_with_line (HV_HTTP_LINE_MAX + 1);
  expect_refused (HV_HTTP_REQUEST, msg, "line longer than 8192 bytes");
  free (msg);

  /* Header count: the request line's Host is one of them. */
  size_t cap = 64 + (HV_HTTP_HEADERS_MAX + 1) * 16;
  msg = malloc (cap);
  for (int extra = 0; extra <= 1; extra++)
    {
      size_t n = (size_t) snprintf (msg, cap, "GET / HTTP/1.1\r\nHost: x\r\n");
      for (int k = 1; k < HV_HTTP_HEADERS_MAX + extra; k++)
        n += (size_t) snprintf (msg + n, cap - n, "H%d: v\r\n", k);
      snprintf (msg + n, cap - n, "\r\n");
      if (extra)
        expect_refused (HV_HTTP_REQUEST, msg, "more than 100 header fields");
      else
        expect_request (msg, "");
    }
  free (msg);

  /* The head in all: lines of 4000 bytes until past HV_HTTP_HEAD_MAX; the
   * head of exactly HV_HTTP_HEAD_MAX bytes passes. */
  cap = HV_HTTP_HEAD_MAX + 8192;
  msg = malloc (cap);
  size_t n = (size_t) snprintf (msg, cap, "GET / HTTP/1.1\r\nHost: x\r\n");
  while (n + 4000 + 2 <= HV_HTTP_HEAD_MAX)
    {
      memcpy (msg + n, "A: ", 3);
      memset (msg + n + 3, 'a', 4000 - 5);
      memcpy (msg + n + 4000 - 2, "\r\n", 2);
      n += 4000;
    }
  size_t last = HV_HTTP_HEAD_MAX - n - 2; /* a last line to fill it exactly */
  memcpy (msg + n, "B: ", 3);
  memset (msg + n + 3, 'b', last - 5);
  memcpy (msg + n + last - 2, "\r\n\r\n", 5);
  assert_int_equal (strlen (msg), HV_HTTP_HEAD_MAX);
  expect_request (msg, "");
  memcpy (msg + n + last - 2, "b\r\n\r\n", 6);
  expect_refused (HV_HTTP_REQUEST, msg, "head longer than 32768 bytes");
  free (msg);

  /* body_max, framed either way. */
  hv_http_parser *p = parser (HV_HTTP_REQUEST, false, 4);
  const char *cl = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
  run_cuts (p, cl, strlen (cl), NULL, 0, false, &R);
  assert_int_equal (R.rc, -1);
  assert_non_null (strstr (R.err, "over the limit of 4"));
  const char *ch = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n";
  hv_http_parser_init (p, HV_HTTP_REQUEST, false, 4);
  run_cuts (p, ch, strlen (ch), NULL, 0, false, &R);
  assert_int_equal (R.rc, -1);
  assert_non_null (strstr (R.err, "over the limit of 4"));
  hv_http_parser_init (p, HV_HTTP_REQUEST, false, 5);
  run_cuts (p, ch, strlen (ch), NULL, 0, false, &R);
  assert_int_equal (R.rc, 0);
  assert_int_equal (R.body_len, 5);
  /* A response until close, over its limit. */
  hv_http_parser_init (p, HV_HTTP_RESPONSE, false, 3);
  const char *rc = "HTTP/1.1 200 OK\r\n\r\nabcd";
  run_cuts (p, rc, strlen (rc), NULL, 0, false, &R);
  assert_int_equal (R.rc, -1);
  free (p);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_request_content_length),
    cmocka_unit_test (test_request_without_body),
    cmocka_unit_test (test_does_not_read_past_the_end),
    cmocka_unit_test (test_request_every_split),
    cmocka_unit_test (test_response_sse_chunked),
    cmocka_unit_test (test_response_until_close),
    cmocka_unit_test (test_response_without_body),
    cmocka_unit_test (test_smuggling_shapes),
    cmocka_unit_test (test_head_syntax_refused),
    cmocka_unit_test (test_error_is_final),
    cmocka_unit_test (test_limits),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
