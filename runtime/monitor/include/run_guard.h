/* The guard of a foreground `haven run`: the sandbox dies with haven.
 *
 * haven runs the container in-process; when haven is killed with SIGKILL
 * it can neither forward the signal nor enforce the time limit, and the
 * sandbox used to run on unsupervised.  A small process of haven's holds
 * a pidfd of the container's init and one end of a socket pair whose
 * only other end is haven's: when that closes (haven exited, however) it
 * kills init, the pid namespace's init, which takes every process of the
 * sandbox with it.  The sandbox cannot reach the guard (another pid
 * namespace) and, unlike PR_SET_PDEATHSIG on init, cannot switch it off
 * with prctl().
 *
 * What haven does after the sandbox (e.g. the check of the project's git
 * state) would not happen either when haven is killed.  So haven says
 * when it is done (hv_guard_stop sends one byte before closing); when its
 * end closes without that byte, haven died first, and the guard, once
 * init is gone, runs the caller's `after` function: a fork of haven made
 * when the guard started, so it has what haven had in memory then.  The
 * guard is in its own process group, so a kill of haven's (`kill -9 %1`,
 * timeout(1)) leaves it to do that. */
#ifndef HAVEN_RUN_GUARD_H
#define HAVEN_RUN_GUARD_H

#include <sys/types.h>

#include "error.h"

/* How long the guard waits for init to be gone after killing it before
 * it runs `after` anyway (a process stuck in the kernel). */
#define HV_GUARD_WAIT_MS 10000

struct hv_guard
{
  pid_t pid;        /* the guard, 0 when none */
  int keepalive_fd; /* haven's end, -1 when none */
};

/* What the guard does when haven died before hv_guard_stop, once the
 * sandbox is gone: fn (data), with haven's stderr as fd 2, keep_fd open
 * at its number (every other descriptor of haven's is closed in the
 * guard) and terminal signals ignored; the guard exits after it. */
struct hv_guard_after
{
  void (*fn) (void *data); /* NULL: nothing to do */
  void *data;
  int keep_fd; /* a descriptor of haven's that fn uses, or -1 */
};

/* Start guarding the process behind init_pidfd (not consumed); after
 * may be NULL. */
int hv_guard_start (int init_pidfd, const struct hv_guard_after *after, struct hv_guard *g, hv_error **err);
/* haven is done (init exited or was killed, and whatever `after` would
 * do is done): end the guard without `after` and reap it. */
void hv_guard_stop (struct hv_guard *g);
#endif
