/* TLS from the gateway to the API host, with OpenSSL (include/upstream_tls.h
 * says what each call promises).  Sockets are non-blocking from the start so
 * that every step, the TCP connect included, waits in poll() against one
 * deadline instead of in the kernel for as long as the host likes. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "upstream_tls.h"
#include "deadline.h"
#include "openssl_lib.h"
#include "utils.h"

/* The last session each host gave (a few hosts: one per provider), so
 * that the next connection resumes it: the host proved its certificate
 * in the full handshake that made the session, and resuming skips that
 * handshake's signature and chain checks on both sides, which is most
 * of what the gateway would add to a request's time.  The session is
 * bound to the host name it was made for (compared before use), so a
 * session never crosses to another host. */
#define SESSION_HOSTS 4
struct cached_session
{
  char *host;
  SSL_SESSION *session;
};

struct hv_upstream_tls_ctx
{
  SSL_CTX *ssl_ctx;
  pthread_mutex_t lock; /* the connection threads share the cache */
  struct cached_session sessions[SESSION_HOSTS];
};

struct hv_upstream_tls
{
  SSL *ssl;
  int fd;
  char *host;
  uint16_t port;
};

static void
cleanup_ssl_ctxp (SSL_CTX **p)
{
  SSL_CTX_free (*p);
}
static void
cleanup_sslp (SSL **p)
{
  SSL_free (*p);
}
static void
cleanup_addrinfop (struct addrinfo **p)
{
  if (*p)
    freeaddrinfo (*p);
}
#define cleanup_ssl_ctx __attribute__ ((cleanup (cleanup_ssl_ctxp)))
#define cleanup_ssl __attribute__ ((cleanup (cleanup_sslp)))
#define cleanup_addrinfo __attribute__ ((cleanup (cleanup_addrinfop)))

static const unsigned char alpn_http11[] = { 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };

/* OpenSSL's reason for the last failure on this thread, for a message:
 * the reason string alone ("certificate verify failed") reads better
 * than the whole packed error line. */
static const char *
openssl_reason (char *buf, size_t len)
{
  unsigned long e = ERR_peek_last_error ();
  if (e == 0)
    return "no reason given by OpenSSL";
  const char *r = ERR_reason_error_string (e);
  if (r)
    return r;
  ERR_error_string_n (e, buf, len);
  return buf;
}

/* OpenSSL hands over each session a host issues (TLS 1.3: after the
 * handshake, as tickets arrive); kept for the host it was verified for,
 * replacing that host's older one.  1: the reference is ours. */
static int
on_new_session (SSL *ssl, SSL_SESSION *session)
{
  hv_upstream_tls_ctx *ctx = SSL_CTX_get_app_data (SSL_get_SSL_CTX (ssl));
  const char *host = SSL_get_servername (ssl, TLSEXT_NAMETYPE_host_name);
  if (ctx == NULL || host == NULL || !SSL_SESSION_is_resumable (session))
    return 0;
  pthread_mutex_lock (&ctx->lock);
  struct cached_session *slot = NULL;
  for (size_t i = 0; i < SESSION_HOSTS && slot == NULL; i++)
    if (ctx->sessions[i].host && strcmp (ctx->sessions[i].host, host) == 0)
      slot = &ctx->sessions[i];
  for (size_t i = 0; i < SESSION_HOSTS && slot == NULL; i++)
    if (ctx->sessions[i].host == NULL)
      slot = &ctx->sessions[i];
  if (slot == NULL)
    slot = &ctx->sessions[0]; /* more hosts than slots: the first gives way */
  if (slot->host == NULL || strcmp (slot->host, host) != 0)
    {
      free (slot->host);
      slot->host = xstrdup (host);
    }
  SSL_SESSION_free (slot->session);
  slot->session = session;
  pthread_mutex_unlock (&ctx->lock);
  return 1;
}

/* Offer HOST's last session on SSL, if there is one still resumable. */
static void
offer_session (hv_upstream_tls_ctx *ctx, SSL *ssl, const char *host)
{
  pthread_mutex_lock (&ctx->lock);
  for (size_t i = 0; i < SESSION_HOSTS; i++)
    if (ctx->sessions[i].host && strcmp (ctx->sessions[i].host, host) == 0 && ctx->sessions[i].session
        && SSL_SESSION_is_resumable (ctx->sessions[i].session))
      SSL_set_session (ssl, ctx->sessions[i].session); /* takes its own reference */
  pthread_mutex_unlock (&ctx->lock);
}

int
hv_upstream_tls_ctx_new (hv_upstream_tls_ctx **out, hv_error **err)
{
  char reason[256];
  /* Every other call here takes a context or a connection made from
   * one, so OpenSSL is loaded once this succeeded. */
  if (hv_openssl_load (err) < 0)
    return -1;
  ERR_clear_error ();
  cleanup_ssl_ctx SSL_CTX *c = SSL_CTX_new (TLS_client_method ());
  if (!c)
    return hv_error_set (err, 0, "TLS client context: %s", openssl_reason (reason, sizeof (reason)));
  /* TLS 1.0 and 1.1 have no AEAD ciphers and sign with SHA-1; OpenSSL's
   * security level already refuses them, this keeps it so whatever the
   * system's openssl.cnf lowers. */
  if (SSL_CTX_set_min_proto_version (c, TLS1_2_VERSION) != 1)
    return hv_error_set (err, 0, "TLS client context: TLS 1.2 floor: %s", openssl_reason (reason, sizeof (reason)));
  SSL_CTX_set_verify (c, SSL_VERIFY_PEER, NULL);
  /* The system store, or what SSL_CERT_FILE / SSL_CERT_DIR name: OpenSSL
   * reads both variables here (and ignores them in a setuid process). */
  if (SSL_CTX_set_default_verify_paths (c) != 1)
    return hv_error_set (err, 0, "TLS client context: trust store: %s", openssl_reason (reason, sizeof (reason)));
  /* The gateway speaks HTTP/1.1 to the host; saying so keeps a host that
   * prefers HTTP/2 from choosing it.  OpenSSL refuses a host that selects
   * a protocol not offered.  (0 is success here.) */
  if (SSL_CTX_set_alpn_protos (c, alpn_http11, sizeof (alpn_http11)) != 0)
    return hv_error_set (err, 0, "TLS client context: ALPN: %s", openssl_reason (reason, sizeof (reason)));
  /* Sessions are kept by on_new_session, per host, not in OpenSSL's
   * own cache (which is keyed for servers, not by the name verified). */
  SSL_CTX_set_session_cache_mode (c, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb (c, on_new_session);
  hv_upstream_tls_ctx *ctx = xmalloc0 (sizeof (*ctx));
  pthread_mutex_init (&ctx->lock, NULL);
  SSL_CTX_set_app_data (c, ctx);
  ctx->ssl_ctx = steal_pointer (&c);
  *out = ctx;
  return 0;
}

void
hv_upstream_tls_ctx_free (hv_upstream_tls_ctx *ctx)
{
  if (!ctx)
    return;
  /* A connection may outlive the context (its SSL holds the SSL_CTX):
   * the sessions it is still handed then go nowhere, not to freed
   * memory.  The caller ends every connection thread first. */
  SSL_CTX_set_app_data (ctx->ssl_ctx, NULL);
  SSL_CTX_free (ctx->ssl_ctx);
  for (size_t i = 0; i < SESSION_HOSTS; i++)
    {
      free (ctx->sessions[i].host);
      SSL_SESSION_free (ctx->sessions[i].session);
    }
  pthread_mutex_destroy (&ctx->lock);
  free (ctx);
}

/* Wait until FD is ready for EVENTS or DEADLINE passes: 0, or -1 with
 * *err ("TLS to HOST:PORT: WHAT: no progress within N ms"). */
static int
wait_fd (int fd, short events, int64_t deadline, int timeout_ms, const char *host, uint16_t port,
         const char *what, hv_error **err)
{
  if (hv_wait_fd (fd, events, deadline) == 0)
    return 0;
  if (errno == ETIMEDOUT)
    return hv_error_set (err, 0, "TLS to %s:%u: %s: no progress within %d ms", host, port, what, timeout_ms);
  return hv_error_set (err, errno, "TLS to %s:%u: %s: poll", host, port, what);
}

/* A TCP connection to one address, made within DEADLINE: the fd, or -1
 * with errno set to why. */
static int
tcp_connect_one (const struct addrinfo *ai, int64_t deadline)
{
  cleanup_close int fd = socket (ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0)
    return -1;
  /* The head, the body and each chunk go out as soon as they are
   * written: a stream must not wait for an acknowledgement first. */
  int one = 1;
  setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof (one));
  if (connect (fd, ai->ai_addr, ai->ai_addrlen) == 0)
    return steal_fd (&fd);
  if (errno != EINPROGRESS)
    return -1;
  if (hv_wait_fd (fd, POLLOUT, deadline) < 0)
    return -1;
  int so_error = 0;
  socklen_t len = sizeof (so_error);
  if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &so_error, &len) < 0)
    return -1;
  if (so_error != 0)
    {
      errno = so_error;
      return -1;
    }
  return steal_fd (&fd);
}

/* The host's addresses in the resolver's order, each tried until one
 * answers; the error names the last address's failure. */
static int
tcp_connect (const char *host, uint16_t port, int64_t deadline, int timeout_ms, hv_error **err)
{
  char service[8];
  snprintf (service, sizeof (service), "%u", port);
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
  cleanup_addrinfo struct addrinfo *res = NULL;
  int r = getaddrinfo (host, service, &hints, &res);
  if (r != 0)
    return hv_error_set (err, r == EAI_SYSTEM ? errno : 0, "resolve: %s",
                         r == EAI_SYSTEM ? "system error" : gai_strerror (r));
  int last_errno = ENOENT;
  for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
    {
      int fd = tcp_connect_one (ai, deadline);
      if (fd >= 0)
        return fd;
      last_errno = errno;
      if (last_errno == ETIMEDOUT)
        break;
    }
  if (last_errno == ETIMEDOUT)
    return hv_error_set (err, 0, "connect: no answer within %d ms", timeout_ms);
  return hv_error_set (err, last_errno, "connect");
}

/* Why an SSL call failed, as an error naming the host and WHAT. */
static int
ssl_failure (hv_upstream_tls *conn, int ssl_error, const char *what, hv_error **err)
{
  char reason[256];
  if (ssl_error == SSL_ERROR_SYSCALL && ERR_peek_last_error () == 0)
    {
      if (errno != 0)
        return hv_error_set (err, errno, "TLS to %s:%u: %s", conn->host, conn->port, what);
      return hv_error_set (err, 0, "TLS to %s:%u: %s: the host closed the connection", conn->host, conn->port,
                           what);
    }
  long verify = SSL_get_verify_result (conn->ssl);
  if (verify != X509_V_OK)
    return hv_error_set (err, 0, "TLS to %s:%u: %s: certificate not accepted: %s", conn->host, conn->port, what,
                         X509_verify_cert_error_string (verify));
  if (ERR_GET_REASON (ERR_peek_last_error ()) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
    return hv_error_set (err, 0, "TLS to %s:%u: %s: the host closed the connection without ending TLS",
                         conn->host, conn->port, what);
  return hv_error_set (err, 0, "TLS to %s:%u: %s: %s", conn->host, conn->port, what,
                       openssl_reason (reason, sizeof (reason)));
}

/* After an SSL call returned SSL_ERROR_WANT_*: wait for the socket as it
 * asks; 1 to call again, or -1 with *err (the failure itself otherwise). */
static int
ssl_wait (hv_upstream_tls *conn, int ssl_error, int64_t deadline, int timeout_ms, const char *what, hv_error **err)
{
  if (ssl_error == SSL_ERROR_WANT_READ)
    return wait_fd (conn->fd, POLLIN, deadline, timeout_ms, conn->host, conn->port, what, err) < 0 ? -1 : 1;
  if (ssl_error == SSL_ERROR_WANT_WRITE)
    return wait_fd (conn->fd, POLLOUT, deadline, timeout_ms, conn->host, conn->port, what, err) < 0 ? -1 : 1;
  return ssl_failure (conn, ssl_error, what, err);
}

void
hv_upstream_tls_close (hv_upstream_tls *conn)
{
  if (!conn)
    return;
  if (conn->ssl)
    {
      /* One try: a host that does not take it at once loses nothing. */
      ERR_clear_error ();
      (void) SSL_shutdown (conn->ssl);
      SSL_free (conn->ssl);
    }
  if (conn->fd >= 0)
    close (conn->fd);
  free (conn->host);
  free (conn);
}

int
hv_upstream_tls_connect (hv_upstream_tls_ctx *ctx, const char *host, uint16_t port, int timeout_ms,
                         hv_upstream_tls **out, hv_error **err)
{
  char reason[256];
  unsigned char addr[sizeof (struct in6_addr)];
  /* A name, checked against the certificate's DNS names: an address
   * literal would need another check (IP names) and is never an API
   * host the gateway is given. */
  if (host[0] == '\0' || strlen (host) > 253 || inet_pton (AF_INET, host, addr) == 1
      || inet_pton (AF_INET6, host, addr) == 1)
    return hv_error_set (err, 0, "TLS to \"%s\": not a host name", host);
  if (timeout_ms <= 0)
    return hv_error_set (err, EINVAL, "TLS to %s:%u: timeout %d ms", host, port, timeout_ms);
  int64_t deadline = hv_now_ms () + timeout_ms;

  cleanup_upstream_tls hv_upstream_tls *conn = xmalloc0 (sizeof (*conn));
  conn->fd = -1;
  conn->host = xstrdup (host);
  conn->port = port;
  conn->fd = tcp_connect (host, port, deadline, timeout_ms, err);
  if (conn->fd < 0)
    return hv_error_wrap (err, "TLS to %s:%u", host, port);

  ERR_clear_error ();
  cleanup_ssl SSL *ssl = SSL_new (ctx->ssl_ctx);
  if (!ssl)
    return hv_error_set (err, 0, "TLS to %s:%u: %s", host, port, openssl_reason (reason, sizeof (reason)));
  /* SNI, so a host serving several names presents this one's certificate;
   * and the name the certificate must carry (no partial wildcards such
   * as "a*.example.com": only a whole leftmost label may be "*"). */
  if (SSL_set_fd (ssl, conn->fd) != 1 || SSL_set_tlsext_host_name (ssl, host) != 1
      || SSL_set1_host (ssl, host) != 1)
    return hv_error_set (err, 0, "TLS to %s:%u: set up: %s", host, port, openssl_reason (reason, sizeof (reason)));
  SSL_set_hostflags (ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  offer_session (ctx, ssl, host);
  conn->ssl = steal_pointer (&ssl);

  for (;;)
    {
      ERR_clear_error ();
      errno = 0;
      int r = SSL_connect (conn->ssl);
      if (r == 1)
        break;
      if (ssl_wait (conn, SSL_get_error (conn->ssl, r), deadline, timeout_ms, "handshake", err) < 0)
        return -1;
    }
  /* SSL_VERIFY_PEER already failed the handshake on a bad chain or name;
   * checked again because a credential follows on this connection. */
  if (SSL_get_verify_result (conn->ssl) != X509_V_OK || SSL_get0_peer_certificate (conn->ssl) == NULL)
    return hv_error_set (err, 0, "TLS to %s:%u: the host's certificate was not verified", host, port);
  *out = steal_pointer (&conn);
  return 0;
}

bool
hv_upstream_tls_resumed (const hv_upstream_tls *conn)
{
  return SSL_session_reused (conn->ssl) == 1;
}

int
hv_upstream_tls_write_all (hv_upstream_tls *conn, const void *buf, size_t len, int timeout_ms, hv_error **err)
{
  int64_t deadline = hv_now_ms () + timeout_ms;
  size_t done = 0;
  while (done < len)
    {
      size_t n = 0;
      ERR_clear_error ();
      errno = 0;
      /* Retried after WANT_* with the same arguments, as OpenSSL asks. */
      int r = SSL_write_ex (conn->ssl, (const char *) buf + done, len - done, &n);
      if (r == 1)
        {
          done += n;
          continue;
        }
      if (ssl_wait (conn, SSL_get_error (conn->ssl, r), deadline, timeout_ms, "write", err) < 0)
        return -1;
    }
  return 0;
}

ssize_t
hv_upstream_tls_read (hv_upstream_tls *conn, void *buf, size_t cap, int timeout_ms, hv_error **err)
{
  int64_t deadline = hv_now_ms () + timeout_ms;
  for (;;)
    {
      size_t n = 0;
      ERR_clear_error ();
      errno = 0;
      int r = SSL_read_ex (conn->ssl, buf, cap, &n);
      if (r == 1)
        return (ssize_t) n;
      int e = SSL_get_error (conn->ssl, r);
      if (e == SSL_ERROR_ZERO_RETURN)
        return 0;
      if (ssl_wait (conn, e, deadline, timeout_ms, "read", err) < 0)
        return -1;
    }
}
