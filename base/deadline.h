/* Deadlines for the services that answer a hostile peer: every wait is
 * bounded by a point on the monotonic clock, so a peer that stops
 * talking holds a thread until then only. */
#ifndef HAVEN_DEADLINE_H
#define HAVEN_DEADLINE_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds: what deadlines are measured on. */
int64_t hv_now_ms (void);
/* CLOCK_REALTIME in epoch milliseconds: for times another process
 * reads (an approval request's deadline_ms), never for waits. */
int64_t hv_realtime_ms (void);

/* Wait until fd is ready for events (poll's; an error or hang-up counts
 * as ready) or the deadline passes: 0, or -1 with errno ETIMEDOUT or
 * poll's. */
int hv_wait_fd (int fd, short events, int64_t deadline);

/* Read fd until its end of stream, at most cap bytes into buf (*len:
 * how many), before deadline: 0, or -1 with errno ETIMEDOUT (the
 * deadline passed), EMSGSIZE (more than cap bytes came), or poll's or
 * read's.  A peer that never ends its message costs the deadline only. */
int hv_read_until_eof (int fd, int64_t deadline, char *buf, size_t cap, size_t *len);
#endif
