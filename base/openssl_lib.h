/* OpenSSL, loaded by the processes that use it, when they first do.
 *
 * Why not linked: haven-runc's monitor is a fork that lives as long as
 * its container, and a linked libssl/libcrypto costs every one of them
 * about 460 KiB of private memory (the libraries' data, written by the
 * dynamic linker's relocations at start) and every start of haven about
 * 1.5 ms of CPU, while only the model API gateway and the ssh-agent
 * view's fingerprints use OpenSSL.  It stays a shared library (never a
 * static archive): it verifies the certificates of the hosts haven sends
 * API credentials to, and a fix to it must reach haven with the system's
 * update.
 *
 * A file that calls OpenSSL includes this header after OpenSSL's own
 * headers: each function it calls then names a pointer in hv_openssl,
 * typed from OpenSSL's declaration, so a call reads as before.  OpenSSL's
 * own macros (SSL_CTX_set_min_proto_version and the like) expand to the
 * functions listed here and so reach the pointers too.  A function used
 * but not listed is an undefined symbol at link time (haven links no
 * OpenSSL), never a silent link to the library.  Every call must come
 * after hv_openssl_load() succeeded. */
#ifndef HAVEN_OPENSSL_LIB_H
#define HAVEN_OPENSSL_LIB_H

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "error.h"

#define HV_OPENSSL_FUNCTIONS(X)                                                                                      \
  X (ERR_clear_error)                                                                                                \
  X (ERR_peek_last_error)                                                                                            \
  X (ERR_reason_error_string)                                                                                        \
  X (ERR_error_string_n)                                                                                             \
  X (EVP_Digest)                                                                                                     \
  X (EVP_sha256)                                                                                                     \
  X (EVP_EncodeBlock)                                                                                                \
  X (TLS_client_method)                                                                                              \
  X (SSL_CTX_new)                                                                                                    \
  X (SSL_CTX_free)                                                                                                   \
  X (SSL_CTX_ctrl)                                                                                                   \
  X (SSL_CTX_set_verify)                                                                                             \
  X (SSL_CTX_set_default_verify_paths)                                                                               \
  X (SSL_CTX_set_alpn_protos)                                                                                        \
  X (SSL_CTX_sess_set_new_cb)                                                                                        \
  X (SSL_CTX_set_ex_data)                                                                                            \
  X (SSL_CTX_get_ex_data)                                                                                            \
  X (SSL_SESSION_free)                                                                                               \
  X (SSL_SESSION_is_resumable)                                                                                       \
  X (SSL_new)                                                                                                        \
  X (SSL_free)                                                                                                       \
  X (SSL_ctrl)                                                                                                       \
  X (SSL_set_fd)                                                                                                     \
  X (SSL_set1_host)                                                                                                  \
  X (SSL_set_hostflags)                                                                                              \
  X (SSL_set_session)                                                                                                \
  X (SSL_session_reused)                                                                                             \
  X (SSL_connect)                                                                                                    \
  X (SSL_shutdown)                                                                                                   \
  X (SSL_read_ex)                                                                                                    \
  X (SSL_write_ex)                                                                                                   \
  X (SSL_get_error)                                                                                                  \
  X (SSL_get_verify_result)                                                                                          \
  X (SSL_get_SSL_CTX)                                                                                                \
  X (SSL_get_servername)                                                                                             \
  X (SSL_get0_peer_certificate)                                                                                      \
  X (X509_verify_cert_error_string)

struct hv_openssl_lib
{
#define HV_OPENSSL_FIELD(name) __typeof__ (name) *name;
  HV_OPENSSL_FUNCTIONS (HV_OPENSSL_FIELD)
#undef HV_OPENSSL_FIELD
};

/* Filled by hv_openssl_load; read only after it returned 0. */
extern struct hv_openssl_lib hv_openssl;

/* Load libssl.so.3 (and the libcrypto.so.3 it needs) and every function
 * above, once per process, from any thread: 0, or -1 and *err (the
 * library or a function missing) on this and every later call. */
int hv_openssl_load (hv_error **err);

/* The calls, through the pointers (the header's comment says why). */
#ifndef HV_OPENSSL_LIB_NO_CALLS
#define ERR_clear_error (hv_openssl.ERR_clear_error)
#define ERR_peek_last_error (hv_openssl.ERR_peek_last_error)
#define ERR_reason_error_string (hv_openssl.ERR_reason_error_string)
#define ERR_error_string_n (hv_openssl.ERR_error_string_n)
#define EVP_Digest (hv_openssl.EVP_Digest)
#define EVP_sha256 (hv_openssl.EVP_sha256)
#define EVP_EncodeBlock (hv_openssl.EVP_EncodeBlock)
#define TLS_client_method (hv_openssl.TLS_client_method)
#define SSL_CTX_new (hv_openssl.SSL_CTX_new)
#define SSL_CTX_free (hv_openssl.SSL_CTX_free)
#define SSL_CTX_ctrl (hv_openssl.SSL_CTX_ctrl)
#define SSL_CTX_set_verify (hv_openssl.SSL_CTX_set_verify)
#define SSL_CTX_set_default_verify_paths (hv_openssl.SSL_CTX_set_default_verify_paths)
#define SSL_CTX_set_alpn_protos (hv_openssl.SSL_CTX_set_alpn_protos)
#define SSL_CTX_sess_set_new_cb (hv_openssl.SSL_CTX_sess_set_new_cb)
#define SSL_CTX_set_ex_data (hv_openssl.SSL_CTX_set_ex_data)
#define SSL_CTX_get_ex_data (hv_openssl.SSL_CTX_get_ex_data)
#define SSL_SESSION_free (hv_openssl.SSL_SESSION_free)
#define SSL_SESSION_is_resumable (hv_openssl.SSL_SESSION_is_resumable)
#define SSL_new (hv_openssl.SSL_new)
#define SSL_free (hv_openssl.SSL_free)
#define SSL_ctrl (hv_openssl.SSL_ctrl)
#define SSL_set_fd (hv_openssl.SSL_set_fd)
#define SSL_set1_host (hv_openssl.SSL_set1_host)
#define SSL_set_hostflags (hv_openssl.SSL_set_hostflags)
#define SSL_set_session (hv_openssl.SSL_set_session)
#define SSL_session_reused (hv_openssl.SSL_session_reused)
#define SSL_connect (hv_openssl.SSL_connect)
#define SSL_shutdown (hv_openssl.SSL_shutdown)
#define SSL_read_ex (hv_openssl.SSL_read_ex)
#define SSL_write_ex (hv_openssl.SSL_write_ex)
#define SSL_get_error (hv_openssl.SSL_get_error)
#define SSL_get_verify_result (hv_openssl.SSL_get_verify_result)
#define SSL_get_SSL_CTX (hv_openssl.SSL_get_SSL_CTX)
#define SSL_get_servername (hv_openssl.SSL_get_servername)
#define SSL_get0_peer_certificate (hv_openssl.SSL_get0_peer_certificate)
#define X509_verify_cert_error_string (hv_openssl.X509_verify_cert_error_string)
#endif

#endif
