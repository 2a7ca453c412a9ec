/* The caller's side of the keeper (keeper.h): requests out, events in.
 * The keeper runs inside the sandbox: what it sends is checked strictly
 * and an fd it sends is closed, never used. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "keeper_proto.h"
#include "utils.h"

/* How long a request may wait for room in the socket (a keeper that does
 * not read is as good as gone). */
#define KEEPER_SEND_TIMEOUT_MS 2000

static int
send_request (int keeper_fd, const void *buf, size_t len, const int *fds, size_t nfds, hv_error **err)
{
  struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
  union
  {
    char buf[CMSG_SPACE (3 * sizeof (int))];
    struct cmsghdr align;
  } ctl;
  memset (&ctl, 0, sizeof (ctl));
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (nfds)
    {
      msg.msg_control = ctl.buf;
      msg.msg_controllen = CMSG_SPACE (nfds * sizeof (int));
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (nfds * sizeof (int));
      memcpy (CMSG_DATA (c), fds, nfds * sizeof (int));
    }
  bool grown = false;
  for (;;)
    {
      ssize_t n = sendmsg (keeper_fd, &msg, MSG_NOSIGNAL);
      if (n == (ssize_t) len)
        return 0;
      if (n >= 0)
        return hv_error_set (err, 0, "keeper: request sent in part");
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN)
        {
          /* The socket may be non-blocking (the caller's event loop):
           * wait a bounded time for the keeper to take earlier ones. */
          struct pollfd p = { .fd = keeper_fd, .events = POLLOUT };
          int r = poll (&p, 1, KEEPER_SEND_TIMEOUT_MS);
          if (r > 0 || (r < 0 && errno == EINTR))
            continue;
          return hv_error_set (err, r == 0 ? ETIMEDOUT : errno, "keeper: request not taken");
        }
      if (errno == EMSGSIZE && !grown)
        {
          /* One message must fit the socket's send buffer: a host whose
           * default is below the largest request gets it raised once
           * (up to net.core.wmem_max). */
          int size = (int) len + 4096;
          setsockopt (keeper_fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof (size));
          grown = true;
          continue;
        }
      if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN)
        return hv_error_set (err, 0, "keeper ended");
      return hv_error_set (err, errno, "keeper: send request");
    }
}

int
hv_keeper_spawn (int keeper_fd, const struct hv_keeper_spawn *req, hv_error **err)
{
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (hv_keeper_encode_spawn (req, &buf, &len, err) < 0)
    return -1;
  return send_request (keeper_fd, buf, len, req->stdio, 3, err);
}

int
hv_keeper_signal (int keeper_fd, uint32_t run_id, int sig, hv_error **err)
{
  unsigned char buf[HV_KEEPER_SIGNAL_SIZE];
  if (hv_keeper_encode_signal (run_id, sig, buf, err) < 0)
    return -1;
  return send_request (keeper_fd, buf, sizeof (buf), NULL, 0, err);
}

/* Close every fd a message carried: the keeper has none to give. */
static size_t
close_passed_fds (struct msghdr *msg)
{
  size_t n = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (msg); c; c = CMSG_NXTHDR (msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN (0))
      {
        size_t k = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        for (size_t i = 0; i < k; i++)
          {
            int fd;
            memcpy (&fd, CMSG_DATA (c) + i * sizeof (int), sizeof (int));
            close (fd);
            n++;
          }
      }
  return n;
}

int
hv_keeper_event_read (int keeper_fd, struct hv_keeper_event *ev, hv_error **err)
{
  /* One byte more than an event: a longer message shows as MSG_TRUNC
   * (or as a length past the event's) and is refused. */
  unsigned char buf[HV_KEEPER_EVENT_SIZE + 1];
  struct iovec iov = { .iov_base = buf, .iov_len = sizeof (buf) };
  union
  {
    char buf[CMSG_SPACE (4 * sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof (ctl.buf) };
  ssize_t n;
  do
    n = recvmsg (keeper_fd, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    {
      if (errno == EAGAIN)
        return 0;
      if (errno == ECONNRESET || errno == ENOTCONN)
        return hv_error_set (err, 0, "keeper ended");
      return hv_error_set (err, errno, "keeper: read event");
    }
  size_t passed = close_passed_fds (&msg);
  if (passed || (msg.msg_flags & MSG_CTRUNC))
    return hv_error_set (err, 0, "keeper: an event carried file descriptors");
  if (msg.msg_flags & MSG_TRUNC)
    return hv_error_set (err, 0, "keeper: an event longer than %d bytes", HV_KEEPER_EVENT_SIZE);
  /* A SOCK_SEQPACKET read of 0 bytes: the keeper's end is closed (an
   * empty message from it is taken the same way: it has nothing to say
   * but its events). */
  if (n == 0)
    return hv_error_set (err, 0, "keeper ended");
  if (hv_keeper_decode_event (buf, (size_t) n, ev, err) < 0)
    return -1;
  return 1;
}
