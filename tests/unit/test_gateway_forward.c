/* Unit tests of one exchange through the gateway
 * (runtime/gateway/gateway_forward.c): the sandbox's side is a socketpair,
 * the provider a TLS server this test runs on the loopback with a CA made
 * for the run (openssl(1) into a temporary directory, trusted through
 * SSL_CERT_FILE), so no outside network is used.  The gateway runs in a
 * thread; the test is the sandbox.  What must hold: an allowed request
 * reaches the provider with the real key and without the sandbox's
 * placeholder; a streamed response reaches the sandbox piece by piece; a
 * refused path (403) or a smuggling-shaped request (400) never reaches the
 * provider, not even as a connection; a provider that is down is 502; and
 * the real key is in nothing the sandbox reads, even when the provider
 * echoes it. */
#include "config.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cmocka.h>

#include <openssl/ssl.h>

#include "gateway_forward.h"
#include "test_ca.h"
#include "unit_skip.h"
#include "utils.h"

#define OK_TIMEOUT_MS 20000
/* A test that hangs instead of failing is killed, and so fails. */
#define ALARM_S 60

#define SECRET "sk-ant-REAL-9f8e7d6c5b4a"
#define PLACEHOLDER "sk-ant-placeholder-in-the-sandbox"

static char *dir; /* the run's CA and certificate; NULL when openssl(1) is missing */
static pid_t server_pid = -1;
static int server_go = -1; /* write end: lets the streaming server send its last event */

enum server_mode
{
  ANSWER_POST, /* check the request, answer with a body and the key echoed in a header */
  STREAM_SSE,  /* answer with two events as chunks, the second only when told to */
  ANSWER_CHUNKED_POST, /* the same as ANSWER_POST for a body that came chunked */
  CLOSE_FRAMED,        /* a body that ends when the connection does, and hop-by-hop headers */
  CUT_STREAM,          /* one chunk, then the connection closed without ending TLS */
  SMUGGLED_RESPONSE,   /* a response framed both ways: the parser refuses it */
};

/* Bounds a test narrows (0: the default); reset after each test. */
static uint64_t request_body_max;
static int request_timeout_ms;
static int response_timeout_ms;

static const char post_body[] = "{\"model\":\"m\",\"max_tokens\":1}";

static int
make_certificates (void **state)
{
  (void) state;
  static const char *const leaves[] = { "localhost" };
  return test_ca_make ("gateway-forward", leaves, leaves, 1, &dir);
}

static int
remove_certificates (void **state)
{
  (void) state;
  test_ca_remove (&dir);
  return 0;
}

static int
teardown (void **state)
{
  (void) state;
  alarm (0);
  if (server_pid > 0)
    {
      kill (server_pid, SIGKILL);
      waitpid (server_pid, NULL, 0);
    }
  server_pid = -1;
  if (server_go >= 0)
    close (server_go);
  server_go = -1;
  request_body_max = 0;
  request_timeout_ms = 0;
  response_timeout_ms = 0;
  return 0;
}

static void
ssl_write_str (SSL *ssl, const char *s)
{
  if (SSL_write (ssl, s, (int) strlen (s)) != (int) strlen (s))
    _exit (5);
}

/* The chunked body of a request, de-chunked in place (a NUL-terminated
 * string), or NULL when it is not whole and well framed. */
static char *
dechunk (char *body)
{
  char *in = body, *out = body;
  for (;;)
    {
      char *endp;
      unsigned long n = strtoul (in, &endp, 16);
      if (endp == in || strncmp (endp, "\r\n", 2) != 0)
        return NULL;
      in = endp + 2;
      if (n == 0)
        return strcmp (in, "\r\n") == 0 ? (*out = '\0', body) : NULL;
      if (strlen (in) < n + 2 || strncmp (in + n, "\r\n", 2) != 0)
        return NULL;
      memmove (out, in, n);
      out += n;
      in += n + 2;
    }
}

/* The provider's child: one connection, as MODE says; never returns.  A
 * request it does not accept gets a 500, which the test sees. */
static void
serve (int lfd, enum server_mode mode, int go)
{
  SSL_CTX *c = test_ca_server_ctx (dir, "localhost");
  int fd;
  SSL *ssl = test_ca_accept (lfd, c, &fd);
  char req[8192];
  size_t got = 0;
  char *end = NULL;
  size_t want = 0;
  for (;;)
    {
      if (end && got >= want)
        break;
      size_t n;
      if (got >= sizeof (req) - 1 || SSL_read_ex (ssl, req + got, sizeof (req) - 1 - got, &n) != 1)
        _exit (4);
      got += n;
      req[got] = '\0';
      if (mode == ANSWER_CHUNKED_POST)
        {
          /* Whole when the last chunk and the empty trailer have come. */
          end = strstr (req, "\r\n\r\n");
          if (end && got >= 5 && strcmp (req + got - 5, "0\r\n\r\n") == 0 && req + got - 5 > end + 2)
            break;
          end = NULL;
          continue;
        }
      if (!end && (end = strstr (req, "\r\n\r\n")))
        want = (size_t) (end + 4 - req) + strlen (post_body);
    }
  *end = '\0';
  const char *body = end + 4;
  const char *framing = "\r\nContent-Length: 28";
  if (mode == ANSWER_CHUNKED_POST)
    {
      body = dechunk (end + 4);
      framing = "\r\nTransfer-Encoding: chunked\r\n";
      if (!body || strstr (req, "Content-Length"))
        body = "";
    }
  bool ok = strncmp (req, "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.com\r\n", 53) == 0
            && strstr (req, "\r\nx-api-key: " SECRET "\r\n") && !strstr (req, PLACEHOLDER)
            && !strcasestr (req, "authorization") && strstr (req, "\r\nConnection: close")
            && strstr (req, framing) && strcmp (body, post_body) == 0;
  if (!ok)
    ssl_write_str (ssl, "HTTP/1.1 500 Request Not As Expected\r\nContent-Length: 0\r\n\r\n");
  else if (mode == CLOSE_FRAMED)
    ssl_write_str (ssl, "HTTP/1.1 200 OK\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\n"
                        "Content-Type: text/event-stream\r\n\r\ndata: x\n\n");
  else if (mode == SMUGGLED_RESPONSE)
    ssl_write_str (ssl, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  else if (mode == CUT_STREAM)
    {
      ssl_write_str (ssl, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\ndata: x\n\n\r\n");
      close (fd);
      for (;;)
        pause ();
    }
  else if (mode == ANSWER_POST || mode == ANSWER_CHUNKED_POST)
    ssl_write_str (ssl, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Echo: " SECRET
                        "\r\nContent-Length: 7\r\n\r\nok-body");
  else
    {
      ssl_write_str (ssl, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "11\r\ndata: first-one\n\n\r\n");
      char b;
      if (read (go, &b, 1) != 1)
        _exit (7);
      ssl_write_str (ssl, "11\r\ndata: second-on\n\n\r\n0\r\n\r\n");
    }
  SSL_shutdown (ssl);
  close (fd);
  for (;;)
    pause ();
}

static uint16_t
start_server (enum server_mode mode)
{
  uint16_t port;
  int lfd = test_ca_listen (&port);
  int go[2];
  assert_int_equal (pipe2 (go, O_CLOEXEC), 0);
  server_pid = test_ca_fork_server (ALARM_S);
  if (server_pid == 0)
    {
      close (go[1]);
      serve (lfd, mode, go[0]);
    }
  close (lfd);
  close (go[0]);
  server_go = go[1];
  return port;
}

/* A port nothing listens on: bound, then closed. */
static uint16_t
dead_port (void)
{
  cleanup_close int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof (sa);
  assert_int_equal (bind (fd, (struct sockaddr *) &sa, len), 0);
  assert_int_equal (getsockname (fd, (struct sockaddr *) &sa, &len), 0);
  return ntohs (sa.sin_port);
}

struct connector
{
  hv_upstream_tls_ctx *ctx;
  uint16_t port;
  int calls;
};

/* The provider's host is replaced by the local server (whose certificate
 * is for localhost); every call is counted. */
static int
test_connect (void *data, const char *host, int timeout_ms, hv_upstream_tls **out, hv_error **err)
{
  struct connector *c = data;
  (void) host;
  c->calls++;
  return hv_upstream_tls_connect (c->ctx, "localhost", c->port, timeout_ms, out, err);
}

struct gateway_run
{
  int fd;
  hv_gw_forward_cfg cfg;
  hv_gw_exchange x;
  int rc;
  char *err;
};

static void *
gateway_thread (void *arg)
{
  struct gateway_run *g = arg;
  cleanup_error hv_error *err = NULL;
  g->rc = hv_gw_forward (g->fd, &g->cfg, &g->x, &err);
  if (err)
    g->err = xstrdup (err->msg);
  close (g->fd);
  return NULL;
}

static const hv_gw_credential cred = { HV_GW_AUTH_X_API_KEY, SECRET };

struct exchange
{
  struct connector conn;
  struct gateway_run g;
  pthread_t thread;
  int sandbox; /* the test's end of the socketpair */
  char resp[65536];
  size_t resp_len;
};

/* Start the gateway on a new socketpair towards PORT (0: none). */
static void
start_gateway (struct exchange *e, uint16_t port)
{
  cleanup_free char *ca = xasprintf ("%s/ca.pem", dir);
  setenv ("SSL_CERT_FILE", ca, 1);
  cleanup_error hv_error *err = NULL;
  if (hv_upstream_tls_ctx_new (&e->conn.ctx, &err) < 0)
    fail_msg ("context: %s", err->msg);
  e->conn.port = port;
  int sv[2];
  assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  e->sandbox = sv[0];
  e->g.fd = sv[1];
  e->g.cfg = (hv_gw_forward_cfg) { .api = hv_gw_api_get (HV_GW_ANTHROPIC),
                                   .cred = &cred,
                                   .connect = test_connect,
                                   .connect_data = &e->conn,
                                   .request_body_max = request_body_max ? request_body_max : 1 << 20,
                                   .response_body_max = 1 << 20,
                                   .request_timeout_ms = request_timeout_ms ? request_timeout_ms : OK_TIMEOUT_MS,
                                   .io_timeout_ms = OK_TIMEOUT_MS,
                                   .response_timeout_ms = response_timeout_ms };
  assert_int_equal (pthread_create (&e->thread, NULL, gateway_thread, &e->g), 0);
}

static void
sandbox_send (struct exchange *e, const char *s)
{
  assert_int_equal (write (e->sandbox, s, strlen (s)), (ssize_t) strlen (s));
}

/* Read what the gateway sends until it holds WANT (NULL: until the end). */
static void
sandbox_read_until (struct exchange *e, const char *want)
{
  for (;;)
    {
      if (want && strstr (e->resp, want))
        return;
      struct pollfd p = { .fd = e->sandbox, .events = POLLIN };
      if (poll (&p, 1, OK_TIMEOUT_MS) != 1)
        fail_msg ("no answer from the gateway; so far: %s", e->resp);
      assert_true (e->resp_len < sizeof (e->resp) - 1);
      ssize_t n = read (e->sandbox, e->resp + e->resp_len, sizeof (e->resp) - 1 - e->resp_len);
      assert_true (n >= 0);
      if (n == 0)
        {
          if (want)
            fail_msg ("the gateway closed without sending \"%s\"; it sent: %s", want, e->resp);
          return;
        }
      e->resp_len += (size_t) n;
      e->resp[e->resp_len] = '\0';
    }
}

/* Wait for the gateway, then check that nothing the sandbox read or the
 * audit summary holds the real key. */
static void
finish (struct exchange *e)
{
  sandbox_read_until (e, NULL);
  assert_int_equal (pthread_join (e->thread, NULL), 0);
  close (e->sandbox);
  hv_upstream_tls_ctx_free (e->conn.ctx);
  print_message ("sandbox read: %s\n", e->resp);
  if (e->g.err)
    print_message ("gateway: %s\n", e->g.err);
  assert_null (strstr (e->resp, SECRET));
  if (e->g.x.reason)
    assert_null (strstr (e->g.x.reason, SECRET));
  if (e->g.err)
    assert_null (strstr (e->g.err, SECRET));
}

static void
clear (struct exchange *e)
{
  hv_gw_exchange_clear (&e->g.x);
  free (e->g.err);
  free (e);
}

static const char post_request[] = "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
                                   "x-api-key: " PLACEHOLDER "\r\nContent-Type: application/json\r\n"
                                   "Content-Length: 28\r\n\r\n{\"model\":\"m\",\"max_tokens\":1}";

static void
test_post_forwarded (void **state)
{
  (void) state;
  need_test_ca (dir);
  struct exchange *e = xmalloc0 (sizeof (*e));
  start_gateway (e, start_server (ANSWER_POST));
  sandbox_send (e, post_request);
  finish (e);
  assert_int_equal (e->g.rc, 0);
  assert_int_equal (e->conn.calls, 1);
  assert_int_equal (e->g.x.status, 200);
  assert_string_equal (e->g.x.method, "POST");
  assert_string_equal (e->g.x.path, "/v1/messages");
  assert_int_equal (e->g.x.request_bytes, 28);
  assert_int_equal (e->g.x.response_bytes, 7);
  assert_null (e->g.x.reason);
  assert_true (strncmp (e->resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
  assert_non_null (strstr (e->resp, "\r\nContent-Length: 7\r\nConnection: close\r\n\r\nok-body"));
  /* The provider echoed the key in X-Echo: the header is not relayed. */
  assert_null (strcasestr (e->resp, "x-echo"));
  clear (e);
}

/* A chunked body, sent in pieces, reaches the provider chunked and whole. */
static void
test_chunked_post_forwarded (void **state)
{
  (void) state;
  need_test_ca (dir);
  struct exchange *e = xmalloc0 (sizeof (*e));
  start_gateway (e, start_server (ANSWER_CHUNKED_POST));
  sandbox_send (e, "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer " PLACEHOLDER
                   "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                   "9\r\n{\"model\":\r\n");
  sandbox_send (e, "13;ext=1\r\n\"m\",\"max_tokens\":1}\r\n0\r\n\r\n");
  finish (e);
  assert_int_equal (e->g.rc, 0);
  assert_int_equal (e->g.x.status, 200);
  assert_int_equal (e->g.x.request_bytes, 28);
  assert_non_null (strstr (e->resp, "\r\n\r\nok-body"));
  clear (e);
}

static void
test_sse_streams (void **state)
{
  (void) state;
  need_test_ca (dir);
  struct exchange *e = xmalloc0 (sizeof (*e));
  start_gateway (e, start_server (STREAM_SSE));
  sandbox_send (e, post_request);
  /* The first event arrives while the provider still holds the second. */
  sandbox_read_until (e, "data: first-one\n\n");
  assert_null (strstr (e->resp, "second"));
  assert_int_equal (write (server_go, "x", 1), 1);
  finish (e);
  assert_int_equal (e->g.rc, 0);
  assert_int_equal (e->g.x.status, 200);
  assert_int_equal (e->g.x.response_bytes, 34);
  assert_non_null (strstr (e->resp, "Transfer-Encoding: chunked\r\n"));
  assert_non_null (strstr (e->resp, "\r\n\r\n11\r\ndata: first-one\n\n\r\n11\r\ndata: second-on\n\n\r\n0\r\n\r\n"));
  clear (e);
}

/* A body framed by the connection's end goes to the sandbox chunked (so
 * that a cut could not pass for the end), without the provider's
 * hop-by-hop headers. */
static void
test_close_framed_relayed_chunked (void **state)
{
  (void) state;
  need_test_ca (dir);
  struct exchange *e = xmalloc0 (sizeof (*e));
  start_gateway (e, start_server (CLOSE_FRAMED));
  sandbox_send (e, post_request);
  finish (e);
  assert_int_equal (e->g.rc, 0);
  assert_int_equal (e->g.x.response_bytes, 9);
  assert_string_equal (e->resp, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                                "Connection: close\r\n\r\n9\r\ndata: x\n\n\r\n0\r\n\r\n");
  clear (e);
}

/* A stream the provider cuts short is cut short for the sandbox too: no
 * last chunk, and the exchange is a failure. */
static void
test_cut_stream_not_ended (void **state)
{
  (void) state;
  need_test_ca (dir);
  struct exchange *e = xmalloc0 (sizeof (*e));
  start_gateway (e, start_server (CUT_STREAM));
  sandbox_send (e, post_request);
  finish (e);
  assert_int_equal (e->g.rc, -1);
  assert_int_equal (e->g.x.status, 200);
  assert_non_null (e->g.x.reason);
  assert_non_null (strstr (e->resp, "\r\n\r\n9\r\ndata: x\n\n\r\n"));
  assert_null (strstr (e->resp, "0\r\n\r\n"));
  clear (e);
}

/* A stream that outlasts the response's deadline is cut there: the
 * sandbox has the first event, no last chunk, and the exchange fails. */
static void
test_slow_stream_cut_at_deadline (void **state)
{
  (void) state;
  need_test_ca (dir);
  response_timeout_ms = 1000;
  struct exchange *e = xmalloc0 (sizeof (*e));
  start_gateway (e, start_server (STREAM_SSE));
  sandbox_send (e, post_request);
  finish (e);
  assert_int_equal (e->g.rc, -1);
  assert_int_equal (e->g.x.status, 200);
  assert_non_null (strstr (e->g.x.reason, "response not complete within 1000 ms"));
  assert_non_null (strstr (e->resp, "data: first-one"));
  assert_null (strstr (e->resp, "0\r\n\r\n"));
  clear (e);
}

/* A request refused before the provider: STATUS, and no connection. */
static void
refused (const char *request, int status, const char *words)
{
  struct exchange *e = xmalloc0 (sizeof (*e));
  start_gateway (e, dead_port ());
  alarm (ALARM_S);
  sandbox_send (e, request);
  finish (e);
  assert_int_equal (e->g.rc, -1);
  assert_int_equal (e->conn.calls, 0);
  assert_int_equal (e->g.x.status, status);
  cleanup_free char *line = xasprintf ("HTTP/1.1 %d ", status);
  assert_true (strncmp (e->resp, line, strlen (line)) == 0);
  assert_non_null (strstr (e->resp, "Connection: close\r\n"));
  assert_non_null (strstr (e->resp, words));
  assert_non_null (strstr (e->g.x.reason, words));
  clear (e);
}

static void
test_refused_path_403 (void **state)
{
  (void) state;
  need_test_ca (dir);
  refused ("POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: " PLACEHOLDER
           "\r\nContent-Length: 2\r\n\r\n{}",
           403, "gateway anthropic");
}

static void
test_smuggling_400 (void **state)
{
  (void) state;
  need_test_ca (dir);
  refused ("POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
           "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /v1/files HTTP/1.1\r\nHost: x\r\n\r\n",
           400, "both Content-Length and Transfer-Encoding");
}

static void
test_head_too_large_431 (void **state)
{
  (void) state;
  need_test_ca (dir);
  cleanup_free char *big = xmalloc0 (HV_HTTP_LINE_MAX + 64);
  memset (big, 'a', HV_HTTP_LINE_MAX + 16);
  cleanup_free char *req = xasprintf ("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: %s\r\n\r\n", big);
  refused (req, 431, "line longer than");
}

static void
test_body_too_large_413 (void **state)
{
  (void) state;
  need_test_ca (dir);
  request_body_max = 16;
  refused (post_request, 413, "over the limit of 16");
}

/* A sandbox that starts a request and never ends it is answered when the
 * request's deadline passes, not later. */
static void
test_slow_request_408 (void **state)
{
  (void) state;
  need_test_ca (dir);
  request_timeout_ms = 300;
  refused ("POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n", 408, "reading the request from the sandbox");
}

static void
test_upstream_down_502 (void **state)
{
  (void) state;
  need_test_ca (dir);
  struct exchange *e = xmalloc0 (sizeof (*e));
  start_gateway (e, dead_port ());
  alarm (ALARM_S);
  sandbox_send (e, post_request);
  finish (e);
  assert_int_equal (e->g.rc, -1);
  assert_int_equal (e->conn.calls, 1);
  assert_int_equal (e->g.x.status, 502);
  assert_true (strncmp (e->resp, "HTTP/1.1 502 Bad Gateway\r\n", 26) == 0);
  assert_non_null (strstr (e->resp, "TLS to localhost:"));
  clear (e);
}

/* A response the parser refuses, before anything of it was relayed: 502,
 * and none of its bytes reach the sandbox. */
static void
test_bad_response_502 (void **state)
{
  (void) state;
  need_test_ca (dir);
  struct exchange *e = xmalloc0 (sizeof (*e));
  start_gateway (e, start_server (SMUGGLED_RESPONSE));
  sandbox_send (e, post_request);
  finish (e);
  assert_int_equal (e->g.rc, -1);
  assert_int_equal (e->g.x.status, 502);
  assert_true (strncmp (e->resp, "HTTP/1.1 502 Bad Gateway\r\n", 26) == 0);
  assert_non_null (strstr (e->resp, "both Content-Length and Transfer-Encoding"));
  assert_null (strstr (e->resp, "200 OK"));
  clear (e);
}

int
main (void)
{
  signal (SIGPIPE, SIG_IGN);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown (test_post_forwarded, teardown),
    cmocka_unit_test_teardown (test_chunked_post_forwarded, teardown),
    cmocka_unit_test_teardown (test_sse_streams, teardown),
    cmocka_unit_test_teardown (test_close_framed_relayed_chunked, teardown),
    cmocka_unit_test_teardown (test_cut_stream_not_ended, teardown),
    cmocka_unit_test_teardown (test_slow_stream_cut_at_deadline, teardown),
    cmocka_unit_test_teardown (test_refused_path_403, teardown),
    cmocka_unit_test_teardown (test_smuggling_400, teardown),
    cmocka_unit_test_teardown (test_head_too_large_431, teardown),
    cmocka_unit_test_teardown (test_body_too_large_413, teardown),
    cmocka_unit_test_teardown (test_slow_request_408, teardown),
    cmocka_unit_test_teardown (test_upstream_down_502, teardown),
    cmocka_unit_test_teardown (test_bad_response_502, teardown),
  };
  int failed = cmocka_run_group_tests (tests, make_certificates, remove_certificates);
  return unit_tests_status (failed, sizeof (tests) / sizeof (tests[0]));
}
