/* Unit tests of the gateway's TLS client (runtime/gateway/upstream_tls.c)
 * against a TLS server this test runs on the loopback, with a CA made for
 * the run (openssl(1) into a temporary directory): no outside network.
 * What the client must accept (the test CA named by SSL_CERT_FILE or
 * SSL_CERT_DIR) and what it must refuse: a CA the system does not trust,
 * a certificate for another name, a server offering only TLS 1.0/1.1, and
 * a server that never answers (within the timeout, not after it).  The
 * server answers only a client that sent SNI and offered ALPN http/1.1. */
#include "config.h"

#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "test_ca.h"
#include "unit_skip.h"
#include "upstream_tls.h"
#include "utils.h"

/* The bound the timeout tests expect to be kept; every other exchange
 * gets a generous one, so a loaded machine does not turn a verdict into
 * a timeout. */
#define TIMEOUT_MS 1500
#define SLACK_MS 3000
#define OK_TIMEOUT_MS 20000
/* A test that hangs instead of timing out is killed, and so fails. */
#define ALARM_S 60

static char *dir; /* the run's CA and certificates; NULL when openssl(1) is missing */
static pid_t server_pid = -1;

enum server_mode
{
  ANSWER,         /* read a request, answer it, end TLS with close_notify */
  ANSWER_NO_END,  /* the same, then close the socket without close_notify */
  SILENT_TCP,     /* never accept: the TCP connection forms, no TLS ever */
  SILENT_TLS,     /* complete the handshake, then say nothing */
  ANSWER_TWICE,   /* ANSWER, for two connections in turn (one context: its tickets resume) */
};

static const char response[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

static int
make_certificates (void **state)
{
  (void) state;
  static const char *const leaves[] = { "localhost", "other" };
  static const char *const sans[] = { "localhost", "other.test" };
  if (test_ca_make ("gateway-tls", leaves, sans, 2, &dir) < 0)
    return -1;
  /* SSL_CERT_DIR is a directory of certificates under their hash names. */
  if (dir && test_ca_sh ("cd %s && mkdir certs && cp ca.pem certs/ && openssl rehash certs 2>/dev/null", dir) != 0)
    return -1;
  return 0;
}

static int
remove_certificates (void **state)
{
  (void) state;
  test_ca_remove (&dir);
  return 0;
}

static void
stop_server (void)
{
  if (server_pid > 0)
    {
      kill (server_pid, SIGKILL);
      waitpid (server_pid, NULL, 0);
    }
  server_pid = -1;
}

static int
teardown (void **state)
{
  (void) state;
  alarm (0);
  stop_server ();
  unsetenv ("SSL_CERT_FILE");
  unsetenv ("SSL_CERT_DIR");
  return 0;
}

/* The server chooses HTTP/1.1 when the client offers it, nothing else. */
static int
select_http11 (SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
               unsigned int inlen, void *arg)
{
  (void) ssl;
  (void) arg;
  for (unsigned int i = 0; i < inlen; i += 1u + in[i])
    if (in[i] == 8 && i + 9 <= inlen && memcmp (in + i + 1, "http/1.1", 8) == 0)
      {
        *out = in + i + 1;
        *outlen = 8;
        return SSL_TLSEXT_ERR_OK;
      }
  return SSL_TLSEXT_ERR_NOACK;
}

static void serve_one (int lfd, SSL_CTX *c, enum server_mode mode);

/* The server's child: one connection (two for ANSWER_TWICE), as MODE
 * says; never returns. */
static void
serve (int lfd, const char *leaf, int old_tls_only, enum server_mode mode)
{
  if (mode == SILENT_TCP)
    for (;;)
      pause ();
  SSL_CTX *c = test_ca_server_ctx (dir, leaf);
  if (old_tls_only)
    {
      /* OpenSSL 3 speaks TLS 1.0/1.1 only at security level 0. */
      SSL_CTX_set_security_level (c, 0);
      if (SSL_CTX_set_min_proto_version (c, TLS1_VERSION) != 1
          || SSL_CTX_set_max_proto_version (c, TLS1_1_VERSION) != 1
          || SSL_CTX_set_cipher_list (c, "DEFAULT:@SECLEVEL=0") != 1)
        _exit (2);
    }
  SSL_CTX_set_alpn_select_cb (c, select_http11, NULL);
  int connections = mode == ANSWER_TWICE ? 2 : 1;
  for (int i = 0; i < connections; i++)
    serve_one (lfd, c, mode == ANSWER_TWICE ? ANSWER : mode);
  for (;;)
    pause ();
}

/* One connection of serve's. */
static void
serve_one (int lfd, SSL_CTX *c, enum server_mode mode)
{
  int fd;
  SSL *ssl = test_ca_accept (lfd, c, &fd);
  /* The client must name the host (SNI) and offer HTTP/1.1 (ALPN): a
   * server that sees neither does not answer, and the client's read fails. */
  const char *sni = SSL_get_servername (ssl, TLSEXT_NAMETYPE_host_name);
  const unsigned char *alpn = NULL;
  unsigned alpn_len = 0;
  SSL_get0_alpn_selected (ssl, &alpn, &alpn_len);
  if (!sni || strcmp (sni, "localhost") != 0 || alpn_len != 8 || memcmp (alpn, "http/1.1", 8) != 0)
    _exit (6);
  if (mode == SILENT_TLS)
    for (;;)
      pause ();
  char req[4096];
  size_t got = 0;
  while (got < sizeof (req) - 1)
    {
      size_t n;
      if (SSL_read_ex (ssl, req + got, sizeof (req) - 1 - got, &n) != 1)
        _exit (4);
      got += n;
      req[got] = '\0';
      if (strstr (req, "\r\n\r\n"))
        break;
    }
  if (SSL_write (ssl, response, sizeof (response) - 1) != (int) sizeof (response) - 1)
    _exit (5);
  if (mode == ANSWER)
    SSL_shutdown (ssl);
  SSL_free (ssl);
  close (fd);
}

/* Start a server on 127.0.0.1 presenting LEAF's certificate; its port. */
static uint16_t
start_server (const char *leaf, int old_tls_only, enum server_mode mode)
{
  uint16_t port;
  int lfd = test_ca_listen (&port);
  server_pid = test_ca_fork_server (ALARM_S);
  if (server_pid == 0)
    serve (lfd, leaf, old_tls_only, mode);
  close (lfd);
  return port;
}

static void
trust_test_ca_file (void)
{
  cleanup_free char *ca = xasprintf ("%s/ca.pem", dir);
  setenv ("SSL_CERT_FILE", ca, 1);
  unsetenv ("SSL_CERT_DIR");
}

/* Connect to localhost:PORT with a context made now (so with the
 * environment as it is now): 0, or -1 with *err. */
static int
try_connect (uint16_t port, int timeout_ms, hv_upstream_tls **out, hv_error **err)
{
  cleanup_upstream_tls_ctx hv_upstream_tls_ctx *ctx = NULL;
  if (hv_upstream_tls_ctx_new (&ctx, err) < 0)
    fail_msg ("context: %s", (*err)->msg);
  return hv_upstream_tls_connect (ctx, "localhost", port, timeout_ms, out, err);
}

static void
refused_with (uint16_t port, int timeout_ms, const char *words)
{
  cleanup_error hv_error *err = NULL;
  cleanup_upstream_tls hv_upstream_tls *conn = NULL;
  if (try_connect (port, timeout_ms, &conn, &err) == 0)
    fail_msg ("connected; expected a refusal with \"%s\"", words);
  print_message ("refused: %s\n", err->msg);
  if (!strstr (err->msg, words))
    fail_msg ("refused as \"%s\", expected \"%s\"", err->msg, words);
  assert_non_null (strstr (err->msg, "TLS to localhost:"));
}

static void exchange (hv_upstream_tls *conn);

/* Send a request and read the whole response until close_notify. */
static void
round_trip (uint16_t port)
{
  cleanup_error hv_error *err = NULL;
  cleanup_upstream_tls hv_upstream_tls *conn = NULL;
  if (try_connect (port, OK_TIMEOUT_MS, &conn, &err) < 0)
    fail_msg ("connect: %s", err->msg);
  exchange (conn);
}

/* A request on CONN and its whole response, until close_notify (which
 * also reads the session tickets a TLS 1.3 server sends after the
 * handshake). */
static void
exchange (hv_upstream_tls *conn)
{
  cleanup_error hv_error *err = NULL;
  static const char request[] = "GET /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\n";
  if (hv_upstream_tls_write_all (conn, request, sizeof (request) - 1, OK_TIMEOUT_MS, &err) < 0)
    fail_msg ("write: %s", err->msg);
  char got[256];
  size_t len = 0;
  for (;;)
    {
      ssize_t n = hv_upstream_tls_read (conn, got + len, sizeof (got) - 1 - len, OK_TIMEOUT_MS, &err);
      if (n < 0)
        fail_msg ("read: %s", err->msg);
      if (n == 0)
        break;
      len += (size_t) n;
      assert_true (len < sizeof (got) - 1);
    }
  got[len] = '\0';
  assert_string_equal (got, response);
}

static void
test_trusted_by_cert_file (void **state)
{
  (void) state;
  need_test_ca (dir);
  trust_test_ca_file ();
  round_trip (start_server ("localhost", 0, ANSWER));
}

/* The second connection to a host resumes the session of the first (its
 * signature and chain checks are not done again), and a connection that
 * does not resume is verified in full: a server that cannot resume the
 * session offered (another server behind the same name, with another
 * certificate) is refused for its certificate as it would be without
 * one. */
static void
test_session_resumed_for_the_same_host (void **state)
{
  (void) state;
  need_test_ca (dir);
  trust_test_ca_file ();
  cleanup_error hv_error *err = NULL;
  cleanup_upstream_tls_ctx hv_upstream_tls_ctx *ctx = NULL;
  if (hv_upstream_tls_ctx_new (&ctx, &err) < 0)
    fail_msg ("context: %s", err->msg);
  uint16_t port = start_server ("localhost", 0, ANSWER_TWICE);
  for (int i = 0; i < 2; i++)
    {
      cleanup_upstream_tls hv_upstream_tls *conn = NULL;
      if (hv_upstream_tls_connect (ctx, "localhost", port, OK_TIMEOUT_MS, &conn, &err) < 0)
        fail_msg ("connection %d: %s", i + 1, err->msg);
      if (hv_upstream_tls_resumed (conn) != (i == 1))
        fail_msg ("connection %d: %s", i + 1, i == 1 ? "a full handshake again" : "resumed with nothing to resume");
      exchange (conn);
    }
  /* The other name's certificate, behind "localhost": the offered session
   * is not this server's, and the full handshake's name check refuses it. */
  port = start_server ("other", 0, ANSWER);
  cleanup_upstream_tls hv_upstream_tls *conn = NULL;
  if (hv_upstream_tls_connect (ctx, "localhost", port, OK_TIMEOUT_MS, &conn, &err) == 0)
    fail_msg ("connected to a server whose certificate is another name's");
  if (!strstr (err->msg, "certificate not accepted: hostname mismatch"))
    fail_msg ("refused as \"%s\"", err->msg);
}

static void
test_trusted_by_cert_dir (void **state)
{
  (void) state;
  need_test_ca (dir);
  cleanup_free char *certs = xasprintf ("%s/certs", dir);
  unsetenv ("SSL_CERT_FILE");
  setenv ("SSL_CERT_DIR", certs, 1);
  round_trip (start_server ("localhost", 0, ANSWER));
}

static void
test_unknown_ca_refused (void **state)
{
  (void) state;
  need_test_ca (dir);
  unsetenv ("SSL_CERT_FILE");
  unsetenv ("SSL_CERT_DIR");
  refused_with (start_server ("localhost", 0, ANSWER), OK_TIMEOUT_MS, "certificate not accepted: unable to get local issuer");
}

static void
test_other_name_refused (void **state)
{
  (void) state;
  need_test_ca (dir);
  trust_test_ca_file ();
  refused_with (start_server ("other", 0, ANSWER), OK_TIMEOUT_MS, "certificate not accepted: hostname mismatch");
}

static void
test_old_tls_refused (void **state)
{
  (void) state;
  need_test_ca (dir);
  trust_test_ca_file ();
  refused_with (start_server ("localhost", 1, ANSWER), OK_TIMEOUT_MS, "handshake: tlsv1 alert protocol version");
}

static void
test_silent_server_times_out (void **state)
{
  (void) state;
  need_test_ca (dir);
  trust_test_ca_file ();
  struct timespec a, b;
  clock_gettime (CLOCK_MONOTONIC, &a);
  refused_with (start_server ("localhost", 0, SILENT_TCP), TIMEOUT_MS, "handshake: no progress within 1500 ms");
  clock_gettime (CLOCK_MONOTONIC, &b);
  long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
  assert_true (ms >= TIMEOUT_MS - 50 && ms < TIMEOUT_MS + SLACK_MS);
}

/* A listener whose queue is full: Linux drops the SYNs of further
 * connections, so the TCP connect itself never completes. */
static void
test_tcp_connect_times_out (void **state)
{
  (void) state;
  cleanup_close int lfd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true (lfd >= 0);
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof (sa);
  assert_int_equal (bind (lfd, (struct sockaddr *) &sa, len), 0);
  assert_int_equal (listen (lfd, 0), 0);
  assert_int_equal (getsockname (lfd, (struct sockaddr *) &sa, &len), 0);
  int fillers[4];
  for (size_t i = 0; i < 4; i++)
    {
      fillers[i] = socket (AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      assert_true (fillers[i] >= 0);
      (void) connect (fillers[i], (struct sockaddr *) &sa, len);
    }
  alarm (ALARM_S);
  struct timespec a, b;
  clock_gettime (CLOCK_MONOTONIC, &a);
  cleanup_error hv_error *err = NULL;
  cleanup_upstream_tls hv_upstream_tls *conn = NULL;
  int r = try_connect (ntohs (sa.sin_port), TIMEOUT_MS, &conn, &err);
  clock_gettime (CLOCK_MONOTONIC, &b);
  for (size_t i = 0; i < 4; i++)
    close (fillers[i]);
  assert_int_equal (r, -1);
  print_message ("refused: %s\n", err->msg);
  assert_non_null (strstr (err->msg, "connect: no answer within 1500 ms"));
  long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
  assert_true (ms >= TIMEOUT_MS - 50 && ms < TIMEOUT_MS + SLACK_MS);
}

static void
test_silent_after_handshake_read_times_out (void **state)
{
  (void) state;
  need_test_ca (dir);
  trust_test_ca_file ();
  uint16_t port = start_server ("localhost", 0, SILENT_TLS);
  cleanup_error hv_error *err = NULL;
  cleanup_upstream_tls hv_upstream_tls *conn = NULL;
  if (try_connect (port, OK_TIMEOUT_MS, &conn, &err) < 0)
    fail_msg ("connect: %s", err->msg);
  char buf[64];
  assert_int_equal (hv_upstream_tls_read (conn, buf, sizeof (buf), 300, &err), -1);
  assert_non_null (strstr (err->msg, "read: no progress within 300 ms"));
}

static void
test_cut_response_is_an_error (void **state)
{
  (void) state;
  need_test_ca (dir);
  trust_test_ca_file ();
  uint16_t port = start_server ("localhost", 0, ANSWER_NO_END);
  cleanup_error hv_error *err = NULL;
  cleanup_upstream_tls hv_upstream_tls *conn = NULL;
  if (try_connect (port, OK_TIMEOUT_MS, &conn, &err) < 0)
    fail_msg ("connect: %s", err->msg);
  static const char request[] = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  if (hv_upstream_tls_write_all (conn, request, sizeof (request) - 1, OK_TIMEOUT_MS, &err) < 0)
    fail_msg ("write: %s", err->msg);
  char buf[256];
  ssize_t n;
  while ((n = hv_upstream_tls_read (conn, buf, sizeof (buf), OK_TIMEOUT_MS, &err)) > 0)
    ;
  assert_int_equal (n, -1);
  assert_non_null (strstr (err->msg, "closed the connection without ending TLS"));
}

static void
test_address_literal_refused (void **state)
{
  (void) state;
  cleanup_error hv_error *err = NULL;
  cleanup_upstream_tls_ctx hv_upstream_tls_ctx *ctx = NULL;
  cleanup_upstream_tls hv_upstream_tls *conn = NULL;
  if (hv_upstream_tls_ctx_new (&ctx, &err) < 0)
    fail_msg ("context: %s", err->msg);
  assert_int_equal (hv_upstream_tls_connect (ctx, "127.0.0.1", 443, TIMEOUT_MS, &conn, &err), -1);
  assert_string_equal (err->msg, "TLS to \"127.0.0.1\": not a host name");
}

int
main (void)
{
  /* A write to a server that has gone must fail, not end the test. */
  signal (SIGPIPE, SIG_IGN);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown (test_trusted_by_cert_file, teardown),
    cmocka_unit_test_teardown (test_trusted_by_cert_dir, teardown),
    cmocka_unit_test_teardown (test_session_resumed_for_the_same_host, teardown),
    cmocka_unit_test_teardown (test_unknown_ca_refused, teardown),
    cmocka_unit_test_teardown (test_other_name_refused, teardown),
    cmocka_unit_test_teardown (test_old_tls_refused, teardown),
    cmocka_unit_test_teardown (test_silent_server_times_out, teardown),
    cmocka_unit_test_teardown (test_tcp_connect_times_out, teardown),
    cmocka_unit_test_teardown (test_silent_after_handshake_read_times_out, teardown),
    cmocka_unit_test_teardown (test_cut_response_is_an_error, teardown),
    cmocka_unit_test_teardown (test_address_literal_refused, teardown),
  };
  int failed = cmocka_run_group_tests (tests, make_certificates, remove_certificates);
  return unit_tests_status (failed, sizeof (tests) / sizeof (tests[0]));
}
