/* The git credential broker's service in the monitor: one request per
 * connection from the sandbox's git cache client, answered or refused,
 * each recorded.  See git_broker.h. */
#include "config.h"
#include "git_broker.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "deadline.h"
#include "json_gen.h"
#include "monitor_service.h"
#include "utils.h"

/* Connections served at once: git asks once per operation, so a few
 * are plenty, and a sandbox that opens many cannot make the monitor
 * start thread after thread. */
#define MAX_CONNS 8

/* Everything the client sends until it shuts down its side, at most
 * HV_GIT_CREDENTIAL_CACHE_MAX_BYTES (one more is read to see the bound
 * passed), before the deadline: a client that never ends its message
 * holds a connection thread for that long only. */
static int
read_request (int conn, int timeout_ms, char *buf, size_t cap, size_t *len, hv_error **err)
{
  if (hv_read_until_eof (conn, hv_now_ms () + timeout_ms, buf, cap, len) == 0)
    return 0;
  if (errno == ETIMEDOUT)
    return hv_error_set (err, ETIMEDOUT, "credential request");
  if (errno == EMSGSIZE)
    return hv_error_set (err, 0, "credential request: over %d bytes", HV_GIT_CREDENTIAL_CACHE_MAX_BYTES);
  return hv_error_set (err, errno, "credential request: read");
}

/* One "git-credential" record: what was asked (host and path as the
 * sandbox sent them, sanitized by the trail), what was decided and why.
 * Never the token, nor the username the sandbox sent. */
static void
record (hv_git_broker *b, const hv_git_credential *req, const char *decision, const char *source, const char *reason)
{
  if (b->trail == NULL)
    return;
  yajl_gen g = hv_audit_trail_record (b->trail, "git-credential");
  hv_audit_put_kv (g, "decision", decision);
  if (req && req->protocol)
    hv_audit_put_kv (g, "protocol", req->protocol);
  if (req && req->host)
    hv_audit_put_kv (g, "host", req->host);
  if (req && req->path)
    hv_audit_put_kv (g, "path", req->path);
  if (source)
    hv_audit_put_kv (g, "source", source);
  if (reason)
    hv_audit_put_kv (g, "reason", reason);
  hv_audit_trail_emit (b->trail, g);
}

/* The answer as git's own cache daemon gives it: the credential's lines
 * without the blank line that ends a helper's answer (the client copies
 * what it reads to git as it is).  A sandbox that does not read it
 * cannot hold the thread past the send timeout. */
static void
send_answer (int conn, const char *answer)
{
  struct timeval tv = { .tv_sec = 5 };
  setsockopt (conn, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  size_t len = strlen (answer), off = 0;
  if (len >= 2 && answer[len - 1] == '\n' && answer[len - 2] == '\n')
    len--;
  while (off < len)
    {
      ssize_t n = send (conn, answer + off, len - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      off += (size_t) n;
    }
}

void
hv_git_broker_serve (int conn, void *data)
{
  hv_git_broker *b = data;
  char buf[HV_GIT_CREDENTIAL_CACHE_MAX_BYTES + 1];
  size_t len = 0;
  cleanup_error hv_error *err = NULL;
  cleanup_free char *action = NULL;
  hv_git_credential req = { 0 };
  if (read_request (conn, b->read_timeout_ms, buf, sizeof buf, &len, &err) < 0
      || hv_git_credential_parse_cache (buf, len, &action, &req, &err) < 0)
    {
      /* A password the sandbox sent (store) is no secret of ours, but
       * nothing of a request is kept either. */
      explicit_bzero (buf, sizeof buf);
      record (b, NULL, "refused", NULL, err->msg);
      return;
    }
  explicit_bzero (buf, sizeof buf);
  /* git's cache client also sends store (after a login worked), erase
   * (after one failed) and exit: nothing for the broker to do, and
   * nothing to record (they ask for no secret). */
  if (strcmp (action, "get") != 0)
    {
      hv_git_credential_clear (&req);
      return;
    }
  const char *why = NULL;
  int i = hv_git_credential_decide (action, &req, b->match, b->n_hosts, &why);
  if (i < 0)
    {
      record (b, &req, "refused", NULL, why);
      hv_git_credential_clear (&req);
      return;
    }
  const struct hv_git_broker_host *h = &b->hosts[i];
  cleanup_free char *username = NULL, *password = NULL, *answer = NULL;
  int r;
  if (h->from_host)
    r = hv_git_credential_fill (b->git, &req, b->fill_timeout_ms, &username, &password, &err);
  else
    {
      username = xstrdup (h->username);
      password = xstrdup (h->secret);
      r = 0;
    }
  if (r == 0)
    r = hv_git_credential_answer (username, password, &answer, &err);
  if (password)
    explicit_bzero (password, strlen (password));
  const char *source = h->from_host ? "host" : "token";
  if (r < 0)
    record (b, &req, "refused", source, err->msg);
  else
    {
      send_answer (conn, answer);
      explicit_bzero (answer, strlen (answer));
      record (b, &req, "answered", source, NULL);
    }
  hv_git_credential_clear (&req);
}

int
hv_git_broker_start (hv_git_broker *b, struct hv_audit_trail *trail, hv_error **err)
{
  b->trail = trail;
  int fd = b->listen_fd;
  /* The service takes the socket, whatever happens. */
  b->listen_fd = -1;
  b->service = hv_monitor_service_start ("git-credentials", fd, MAX_CONNS, hv_git_broker_serve, b, err);
  return b->service ? 0 : -1;
}

void
hv_git_broker_stop (hv_git_broker *b)
{
  if (b == NULL)
    return;
  hv_monitor_service_stop (b->service);
  b->service = NULL;
}

/* The broker's end: its service stopped first (no thread still reads a
 * secret), then each secret wiped before it is freed. */
void
hv_git_broker_free (hv_git_broker *b)
{
  if (b == NULL)
    return;
  hv_git_broker_stop (b);
  for (size_t i = 0; i < b->n_hosts; i++)
    {
      free ((char *) b->match[i].host);
      free ((char *) b->match[i].path_prefix);
      if (b->hosts[i].secret)
        explicit_bzero (b->hosts[i].secret, strlen (b->hosts[i].secret));
      free (b->hosts[i].secret);
      free (b->hosts[i].username);
    }
  free (b->match);
  free (b->hosts);
  if (b->listen_fd >= 0)
    close (b->listen_fd);
  free (b);
}
