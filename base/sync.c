#include "config.h"
#include "sync.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exit_status.h"

struct sync_header
{
  int type;
};

int
hv_sync_send (int sock, enum hv_sync_type type, const void *data, size_t len, int fd, hv_error **err)
{
  struct sync_header h = { .type = (int) type }; /* the enum's values are small and positive */
  struct iovec iov[2] = { { &h, sizeof (h) }, { (void *) data, len } };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr msg = { .msg_iov = iov, .msg_iovlen = data ? 2 : 1 };
  if (len > HV_SYNC_MAX_PAYLOAD)
    return hv_error_set (err, 0, "sync message too large");
  if (fd >= 0)
    {
      memset (&ctl, 0, sizeof (ctl));
      msg.msg_control = ctl.buf;
      msg.msg_controllen = sizeof (ctl.buf);
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (c), &fd, sizeof (int));
    }
  ssize_t r;
  do
    r = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return hv_error_set (err, errno, "sync: send");
  return 0;
}

int
hv_sync_recv (int sock, enum hv_sync_type *type, char **data, int *fd, hv_error **err)
{
  struct sync_header h;
  char *payload = xmalloc0 (HV_SYNC_MAX_PAYLOAD + 1);
  struct iovec iov[2] = { { &h, sizeof (h) }, { payload, HV_SYNC_MAX_PAYLOAD } };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = ctl.buf, .msg_controllen = sizeof (ctl.buf) };
  ssize_t r;
  if (fd)
    *fd = -1;
  do
    r = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    {
      int e = errno;
      free (payload);
      return hv_error_set (err, e, "sync: receive");
    }
  if ((size_t) r < sizeof (h))
    {
      free (payload);
      return hv_error_set (err, 0, "container init exited unexpectedly");
    }
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      {
        int passed;
        memcpy (&passed, CMSG_DATA (c), sizeof (int));
        if (fd)
          *fd = passed;
        else
          close (passed);
      }
  payload[r - (ssize_t) sizeof (h)] = '\0';
  *type = (enum hv_sync_type) h.type;
  if (data)
    *data = payload;
  else
    free (payload);
  return 0;
}

int
hv_sync_expect (int sock, enum hv_sync_type want, char **data, int *fd, hv_error **err)
{
  enum hv_sync_type type;
  char *payload = NULL;
  if (hv_sync_recv (sock, &type, &payload, fd, err) < 0)
    return -1;
  if (type == HV_SYNC_ERROR)
    {
      hv_sync_error (payload, err);
      free (payload);
      return -1;
    }
  if (type != want)
    {
      free (payload);
      return hv_error_set (err, 0, "sync: unexpected message %d (wanted %d)", type, want);
    }
  if (data)
    *data = payload;
  else
    free (payload);
  return 0;
}

/* An HV_SYNC_ERROR payload: the error's exit status (a command that
 * could not be executed: 126, 127), then its message. */
struct sync_error_header
{
  int exit_status;
};

void
hv_sync_send_error (int sock, hv_error *err)
{
  const char *msg = err && err->msg ? err->msg : "unknown error";
  size_t len = strlen (msg);
  if (len > HV_SYNC_MAX_PAYLOAD - sizeof (struct sync_error_header))
    len = HV_SYNC_MAX_PAYLOAD - sizeof (struct sync_error_header);
  struct sync_error_header h = { .exit_status = err ? err->exit_status : 0 };
  cleanup_free char *payload = xmalloc0 (sizeof (h) + len);
  memcpy (payload, &h, sizeof (h));
  memcpy (payload + sizeof (h), msg, len);
  hv_sync_send (sock, HV_SYNC_ERROR, payload, sizeof (h) + len, -1, NULL);
}

int
hv_sync_error (const char *payload, hv_error **err)
{
  /* hv_sync_recv's buffer is zeroed past what came: a short payload
   * reads as status 0 and an empty message, never out of bounds. */
  struct sync_error_header h;
  memcpy (&h, payload, sizeof (h));
  hv_error_set (err, 0, "%s", payload + sizeof (h));
  /* Only the statuses of a command that could not be executed. */
  bool not_executed = h.exit_status == HV_EXIT_CANNOT_EXECUTE || h.exit_status == HV_EXIT_NOT_FOUND;
  return hv_error_set_exit_status (err, not_executed ? h.exit_status : 0);
}

int
hv_sync_fork_reported (int sock, const char *what, hv_error **err)
{
  /* The child reads the pipe until EOF: our write end closes when we
   * exit, after the report is on the socket. */
  int gate[2];
  if (pipe2 (gate, O_CLOEXEC) < 0)
    return hv_error_set (err, errno, "%s: pipe", what);
  pid_t pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      close (gate[0]);
      close (gate[1]);
      return hv_error_set (err, e, "%s", what);
    }
  if (pid == 0)
    {
      char c;
      close (gate[1]);
      while (read (gate[0], &c, 1) < 0 && errno == EINTR)
        ;
      close (gate[0]);
      return 0;
    }
  close (gate[0]);
  char buf[32];
  int n = snprintf (buf, sizeof (buf), "%d", pid);
  hv_sync_send (sock, HV_SYNC_GRANDCHILD, buf, (size_t) n, -1, NULL);
  _exit (0);
}
