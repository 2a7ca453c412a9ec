/* The restricted ssh-agent view serving one connection from the sandbox:
 * bounded reads and writes with deadlines, the decision for each message,
 * and the real agent asked over a connection of its own for each request
 * (so one request's failure cannot leave the next one a half-read answer).
 * See ssh_agent_view.h. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ssh_agent_view.h"
#include "deadline.h"
#include "openssl_lib.h"
#include "utils.h"

/* Read exactly len bytes by the deadline: 1 done, 0 end of stream before
 * any byte, -1 with errno (EPIPE for an end of stream after some). */
static int
read_exact (int fd, unsigned char *buf, size_t len, long long deadline)
{
  size_t got = 0;
  while (got < len)
    {
      if (hv_wait_fd (fd, POLLIN, deadline) < 0)
        return -1;
      ssize_t r = recv (fd, buf + got, len - got, MSG_DONTWAIT);
      if (r < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (r < 0)
        return -1;
      if (r == 0)
        {
          if (got == 0)
            return 0;
          errno = EPIPE;
          return -1;
        }
      got += (size_t) r;
    }
  return 1;
}

int
hv_ssh_agent_read_msg (int fd, int timeout_ms, unsigned char **msg, size_t *len, hv_error **err)
{
  long long deadline = hv_now_ms () + timeout_ms;
  unsigned char head[4];
  int r = read_exact (fd, head, 4, deadline);
  if (r == 0)
    return 0;
  if (r < 0)
    return hv_error_set (err, errno, "reading a message's length");
  uint32_t n = (uint32_t) head[0] << 24 | (uint32_t) head[1] << 16 | (uint32_t) head[2] << 8 | head[3];
  /* The bound comes before the allocation: a length is the peer's word. */
  if (n == 0 || n > HV_SSH_AGENT_MAX_MSG)
    return hv_error_set (err, 0, "a message of %u bytes (1 to %u are taken)", n, HV_SSH_AGENT_MAX_MSG);
  cleanup_free unsigned char *buf = xmalloc0 (n);
  r = read_exact (fd, buf, n, deadline);
  if (r <= 0)
    return hv_error_set (err, r == 0 ? EPIPE : errno, "reading a message of %u bytes", n);
  *msg = steal_pointer (&buf);
  *len = n;
  return 1;
}

/* Send a message with its length by the deadline.  MSG_NOSIGNAL: a peer
 * that closed its end must not kill the monitor with SIGPIPE. */
static int
send_msg (int fd, const unsigned char *msg, size_t len, long long deadline)
{
  cleanup_free unsigned char *buf = xmalloc0 (len + 4);
  buf[0] = (unsigned char) (len >> 24);
  buf[1] = (unsigned char) (len >> 16);
  buf[2] = (unsigned char) (len >> 8);
  buf[3] = (unsigned char) len;
  memcpy (buf + 4, msg, len);
  size_t sent = 0;
  while (sent < len + 4)
    {
      if (hv_wait_fd (fd, POLLOUT, deadline) < 0)
        return -1;
      ssize_t r = send (fd, buf + sent, len + 4 - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (r < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (r < 0)
        return -1;
      sent += (size_t) r;
    }
  return 0;
}

/* A connection to the real agent by the deadline.  Non-blocking: a
 * blocking connect waits without end while the agent's backlog is full
 * (an agent that stopped accepting), and the monitor waits for this
 * thread when the run ends; a full backlog is retried until the deadline. */
static int
connect_upstream (const char *path, long long deadline)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof (sa.sun_path))
    {
      errno = ENAMETOOLONG;
      return -1;
    }
  strcpy (sa.sun_path, path);
  for (;;)
    {
      int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0)
        return -1;
      if (connect (fd, (struct sockaddr *) &sa, sizeof (sa)) == 0)
        return fd;
      int e = errno;
      close (fd);
      if (e != EAGAIN || hv_now_ms () + 20 >= deadline)
        {
          errno = e;
          return -1;
        }
      nanosleep (&(struct timespec){ 0, 20 * 1000000 }, NULL);
    }
}

/* Ask the real agent: the request as the sandbox sent it, its answer
 * whole (bounded like the sandbox's messages).  -1 when it cannot be
 * reached or does not answer in time. */
static int
ask_upstream (const hv_ssh_agent_view *v, const unsigned char *msg, size_t len, unsigned char **answer,
              size_t *answer_len)
{
  cleanup_error hv_error *err = NULL;
  long long deadline = hv_now_ms () + v->upstream_timeout_ms;
  cleanup_close int fd = connect_upstream (v->upstream, deadline);
  if (fd < 0)
    return -1;
  if (send_msg (fd, msg, len, deadline) < 0)
    return -1;
  long long left = deadline - hv_now_ms ();
  if (left <= 0 || hv_ssh_agent_read_msg (fd, (int) left, answer, answer_len, &err) <= 0)
    return -1;
  return 0;
}

static bool
is_allowed (const char *fp, const hv_ssh_agent_view *v)
{
  for (size_t i = 0; i < v->n_allowed; i++)
    if (strcmp (fp, v->allowed[i]) == 0)
      return true;
  return false;
}

/* The answer to one message from the sandbox into *answer (NULL for
 * SSH_AGENT_FAILURE); -1 with err when the message is malformed. */
static int
answer_for (const hv_ssh_agent_view *v, const unsigned char *msg, size_t len, unsigned char **answer,
            size_t *answer_len, hv_error **err)
{
  *answer = NULL;
  if (msg[0] == HV_SSH_AGENTC_REQUEST_IDENTITIES)
    {
      /* The request has no body; one with a body is not OpenSSH's. */
      if (len != 1)
        return hv_error_set (err, 0, "a request of identities with %zu bytes of body", len - 1);
      cleanup_free unsigned char *full = NULL;
      size_t full_len;
      if (ask_upstream (v, msg, len, &full, &full_len) < 0)
        return 0;
      /* An answer that is not a list, or a malformed one, is the agent's
       * failure; the sandbox gets SSH_AGENT_FAILURE, never its bytes. */
      if (hv_ssh_agent_filter_identities (full, full_len, v->allowed, v->n_allowed, answer, answer_len) < 0)
        *answer = NULL;
      return 0;
    }
  if (msg[0] == HV_SSH_AGENTC_SIGN_REQUEST)
    {
      const unsigned char *blob;
      size_t blob_len;
      if (hv_ssh_agent_sign_key (msg, len, &blob, &blob_len) < 0)
        return hv_error_set (err, 0, "a malformed sign request");
      hv_ssh_fingerprint fp;
      hv_ssh_key_fingerprint (blob, blob_len, fp);
      bool allowed = is_allowed (fp, v);
      if (v->on_sign)
        v->on_sign (fp, allowed, v->data);
      if (!allowed)
        return 0;
      /* Passed on unchanged: its flags and data are the signer's business,
       * and a key added with ssh-add -c has the real agent ask the user. */
      cleanup_free unsigned char *sig = NULL;
      size_t sig_len;
      if (ask_upstream (v, msg, len, &sig, &sig_len) < 0)
        return 0;
      if (sig[0] == HV_SSH_AGENT_SIGN_RESPONSE)
        {
          *answer = steal_pointer (&sig);
          *answer_len = sig_len;
        }
      return 0;
    }
  /* Adding, removing and locking keys, smartcards and every extension
   * (session-bind included) stay between the user and their agent. */
  return 0;
}

int
hv_ssh_agent_view_serve (int conn, const hv_ssh_agent_view *v, hv_error **err)
{
  static const unsigned char failure[1] = { HV_SSH_AGENT_FAILURE };
  /* The fingerprints the policy names keys by are OpenSSL's SHA-256:
   * without it, say why here rather than show the sandbox no key. */
  if (hv_openssl_load (err) < 0)
    return -1;
  for (;;)
    {
      cleanup_free unsigned char *msg = NULL;
      size_t len;
      int r = hv_ssh_agent_read_msg (conn, v->idle_timeout_ms, &msg, &len, err);
      if (r <= 0)
        return r;
      cleanup_free unsigned char *answer = NULL;
      size_t answer_len = 0;
      if (answer_for (v, msg, len, &answer, &answer_len, err) < 0)
        return -1;
      long long deadline = hv_now_ms () + v->idle_timeout_ms;
      if (send_msg (conn, answer ? answer : failure, answer ? answer_len : 1, deadline) < 0)
        return hv_error_set (err, errno, "answering the sandbox");
    }
}
