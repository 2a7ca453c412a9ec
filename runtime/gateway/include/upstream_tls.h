/* The gateway's side of TLS: a connection from haven (outside the sandbox)
 * to the real API host, so that the credential haven adds to a request is
 * only ever sent to a host whose certificate the system trusts.
 *
 * One hv_upstream_tls_ctx per gateway (the trust store is read once, when
 * it is made); one hv_upstream_tls per forwarded connection.  Every
 * connection is TLS 1.2 or later, sends the host name as SNI, verifies the
 * chain against the system store (or the bundle SSL_CERT_FILE / the hashed
 * directory SSL_CERT_DIR name in haven's environment when the context is
 * made) and the name against the certificate, and offers ALPN "http/1.1".
 * Every call is bounded by a timeout; errors name the host and OpenSSL's
 * reason.  Writes to a peer that has gone raise SIGPIPE: the caller ignores
 * it (the monitor does). */
#ifndef HAVEN_UPSTREAM_TLS_H
#define HAVEN_UPSTREAM_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

typedef struct hv_upstream_tls_ctx hv_upstream_tls_ctx;
typedef struct hv_upstream_tls hv_upstream_tls;

/* The client context: TLS 1.2 floor, peer verification, the default trust
 * store as OpenSSL finds it now (SSL_CERT_FILE and SSL_CERT_DIR included),
 * and the last session of each host, which the next connection to that
 * host offers to resume (the host proved its certificate in the full
 * handshake that made it).  Connections from several threads may share
 * it; free it once no other thread uses a connection made from it. */
int hv_upstream_tls_ctx_new (hv_upstream_tls_ctx **out, hv_error **err);
void hv_upstream_tls_ctx_free (hv_upstream_tls_ctx *ctx);

/* Connect to HOST:PORT from the caller's network namespace (HOST a DNS
 * name, resolved here; every address is tried in turn) and complete the
 * handshake, all within TIMEOUT_MS.  Resolving the name is bounded by the
 * system resolver's own timeouts (resolv.conf), not by TIMEOUT_MS: a
 * caller that must not wait on DNS resolves first and passes a name its
 * resolver has cached. */
int hv_upstream_tls_connect (hv_upstream_tls_ctx *ctx, const char *host, uint16_t port, int timeout_ms,
                             hv_upstream_tls **out, hv_error **err);
/* Whether CONN resumed a session of its context (no certificate was
 * sent or checked again: the one of the handshake that made it was). */
bool hv_upstream_tls_resumed (const hv_upstream_tls *conn);

/* Write all LEN bytes of BUF within TIMEOUT_MS. */
int hv_upstream_tls_write_all (hv_upstream_tls *conn, const void *buf, size_t len, int timeout_ms,
                               hv_error **err);

/* Read what the host has sent, at most CAP bytes, waiting at most
 * TIMEOUT_MS for the first byte: the number read (> 0), 0 when the host
 * ended the TLS session (close_notify), -1 with *err on an error, on a
 * timeout, and on a connection closed without close_notify (a response
 * cut short must not pass as a whole one). */
ssize_t hv_upstream_tls_read (hv_upstream_tls *conn, void *buf, size_t cap, int timeout_ms, hv_error **err);

/* Send close_notify (best effort, not waited for) and free everything. */
void hv_upstream_tls_close (hv_upstream_tls *conn);

static inline void
cleanup_upstream_tls_ctxp (hv_upstream_tls_ctx **p)
{
  if (*p)
    hv_upstream_tls_ctx_free (*p);
}
static inline void
cleanup_upstream_tlsp (hv_upstream_tls **p)
{
  if (*p)
    hv_upstream_tls_close (*p);
}
#define cleanup_upstream_tls_ctx __attribute__ ((cleanup (cleanup_upstream_tls_ctxp)))
#define cleanup_upstream_tls __attribute__ ((cleanup (cleanup_upstream_tlsp)))

#endif
