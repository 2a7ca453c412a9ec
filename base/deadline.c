/* Deadlines and a bounded read: deadline.h. */
#include "config.h"
#include "deadline.h"

#include <errno.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

int64_t
hv_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
hv_realtime_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
hv_wait_fd (int fd, short events, int64_t deadline)
{
  for (;;)
    {
      int64_t left = deadline - hv_now_ms ();
      if (left <= 0)
        {
          errno = ETIMEDOUT;
          return -1;
        }
      /* At most a minute at a time: a far deadline does not overflow
       * poll's int. */
      struct pollfd p = { .fd = fd, .events = events };
      int r = poll (&p, 1, left > 60000 ? 60000 : (int) left);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return -1;
      if (r > 0)
        return 0;
    }
}

int
hv_read_until_eof (int fd, int64_t deadline, char *buf, size_t cap, size_t *len)
{
  *len = 0;
  for (;;)
    {
      if (hv_wait_fd (fd, POLLIN, deadline) < 0)
        return -1;
      if (*len == cap)
        {
          errno = EMSGSIZE;
          return -1;
        }
      /* Readable, so this read does not wait (EAGAIN: fd is non-blocking
       * and the readiness was spurious; wait again). */
      ssize_t got = read (fd, buf + *len, cap - *len);
      if (got < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (got < 0)
        return -1;
      if (got == 0)
        return 0;
      *len += (size_t) got;
    }
}
