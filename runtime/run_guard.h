/* The guard of a foreground `haven run`: the sandbox dies with haven.
 *
 * haven runs the container in-process; when haven is killed with SIGKILL
 * it can neither forward the signal nor enforce the time limit, and the
 * sandbox used to run on unsupervised.  A small process of haven's holds
 * a pidfd of the container's init and the read end of a pipe whose only
 * write end is haven's: when the pipe closes (haven exited, however) it
 * kills init, the pid namespace's init, which takes every process of the
 * sandbox with it.  The sandbox cannot reach the guard (another pid
 * namespace) and, unlike PR_SET_PDEATHSIG on init, cannot switch it off
 * with prctl(). */
#ifndef HAVEN_RUN_GUARD_H
#define HAVEN_RUN_GUARD_H

#include <sys/types.h>

#include "error.h"

struct hv_guard
{
  pid_t pid;        /* the guard, 0 when none */
  int keepalive_fd; /* haven's write end, -1 when none */
};

/* Start guarding the process behind init_pidfd (not consumed). */
int hv_guard_start (int init_pidfd, struct hv_guard *g, hv_error **err);
/* After init exited or was killed: end the guard and reap it. */
void hv_guard_stop (struct hv_guard *g);
#endif
