/* A restricted view of the host's ssh-agent for the sandbox: it lists
 * only the keys a policy names, passes sign requests for those keys to
 * the real agent unchanged (so a key added with `ssh-add -c` still asks
 * for confirmation on the host: the real agent enforces that) and
 * answers everything else with SSH_AGENT_FAILURE itself, never asking
 * the real agent: the sandbox can neither add, remove nor lock keys, nor
 * send extensions (session-bind included) to it.
 *
 * Keys are named by the SHA-256 fingerprint of their public key blob, in
 * the form `ssh-keygen -l` and `ssh-add -l` print ("SHA256:" and the
 * digest in unpadded base64).  A certificate's blob is not its key's, so
 * a certificate identity is never shown, whatever the policy names: its
 * fingerprint as ssh-keygen prints it is the plain key's.
 *
 * Everything the sandbox sends is hostile: a message is read whole
 * within a bound before it is looked at, and a length over the bound or a
 * message that does not parse ends the connection. */
#ifndef HAVEN_SSH_AGENT_VIEW_H
#define HAVEN_SSH_AGENT_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* The largest message either side may send (OpenSSH's agent takes at
 * most this much too). */
#define HV_SSH_AGENT_MAX_MSG (256 * 1024)

/* The message numbers the view knows (draft-miller-ssh-agent). */
#define HV_SSH_AGENT_FAILURE 5
#define HV_SSH_AGENTC_REQUEST_IDENTITIES 11
#define HV_SSH_AGENT_IDENTITIES_ANSWER 12
#define HV_SSH_AGENTC_SIGN_REQUEST 13
#define HV_SSH_AGENT_SIGN_RESPONSE 14

/* "SHA256:" and 43 base64 digits, NUL-terminated. */
#define HV_SSH_FINGERPRINT_LEN (7 + 43)
typedef char hv_ssh_fingerprint[HV_SSH_FINGERPRINT_LEN + 1];

/* The fingerprint of a public key blob. */
void hv_ssh_key_fingerprint (const unsigned char *blob, size_t len, hv_ssh_fingerprint out);

/* Whether s is a fingerprint as hv_ssh_key_fingerprint writes it: the
 * prefix, exactly 43 digits of base64's alphabet, the last one a digit a
 * 32-byte digest can end with (so one digest has one spelling). */
bool hv_ssh_fingerprint_valid (const char *s);

/* The fingerprint of the key in an OpenSSH public key file's text
 * ("TYPE BASE64 [COMMENT]" on one line, as ssh-keygen writes *.pub).
 * Refused: more or less than one line, options before the type, base64
 * that does not decode, a blob whose own type is not TYPE. */
int hv_ssh_pubkey_fingerprint (const char *text, size_t len, hv_ssh_fingerprint out, hv_error **err);

/* The key blob of a SIGN_REQUEST message msg[0..len) (type byte first,
 * no length prefix): *blob points into msg.  -1 when it is not exactly
 * a type byte, a key blob, data and flags. */
int hv_ssh_agent_sign_key (const unsigned char *msg, size_t len, const unsigned char **blob, size_t *blob_len);

/* The IDENTITIES_ANSWER msg[0..len) with only the identities whose blob's
 * fingerprint is among allowed[0..n_allowed), in their order, comments
 * kept: a new message in *out (free it).  -1 when msg is not exactly an
 * answer with the count of identities it says. */
int hv_ssh_agent_filter_identities (const unsigned char *msg, size_t len, const hv_ssh_fingerprint *allowed,
                                    size_t n_allowed, unsigned char **out, size_t *out_len);

/* Read one message from fd: its length (at most HV_SSH_AGENT_MAX_MSG, at
 * least 1), then its bytes, all within timeout_ms.  1 with the message in
 * *msg (free it), 0 when fd ended before a message began, -1 with err on
 * an oversized or empty message, a message cut short, a timeout or a read
 * error. */
int hv_ssh_agent_read_msg (int fd, int timeout_ms, unsigned char **msg, size_t *len, hv_error **err);

typedef struct hv_ssh_agent_view
{
  const char *upstream; /* the real agent's socket, connected for each request (shorter than sun_path) */
  const hv_ssh_fingerprint *allowed;
  size_t n_allowed;
  int idle_timeout_ms;     /* for the sandbox's next message (and to take each answer) */
  int upstream_timeout_ms; /* for the real agent's answer: a confirmation is a person's time */
  /* Told of each sign request before it is answered (from the
   * connection's thread); may be NULL. */
  void (*on_sign) (const char *fingerprint, bool allowed, void *data);
  void *data;
} hv_ssh_agent_view;

/* Serve the connection conn (its messages from the sandbox) until it
 * ends: 0 when the sandbox closed it between messages, -1 with err saying
 * why the view closed it (a message too large or malformed, a timeout).
 * A request the real agent cannot answer (it is gone, it times out, its
 * answer is malformed) is answered SSH_AGENT_FAILURE and the connection
 * goes on.  Never raises SIGPIPE.  The caller closes conn. */
int hv_ssh_agent_view_serve (int conn, const hv_ssh_agent_view *v, hv_error **err);
#endif
