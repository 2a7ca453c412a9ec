/* Sockets made inside a container's network namespace, for the runtime
 * and the monitor to use from outside it: the egress resolver's and the
 * model API gateway's listeners.
 *
 * A socket stays in the namespace it was made in, so they are made there,
 * by a short-lived child of the runtime that enters the namespace (and
 * first the user namespace that owns it when that is not the runtime's:
 * setns(CLONE_NEWNET) wants CAP_SYS_ADMIN over the namespace's owner *and*
 * in the caller's own user namespace, which a rootless runtime lacks,
 * though as the owner of the container's user namespace it has every
 * capability inside it).  Joining a user namespace is for good, which is
 * why a child does it and the runtime stays where it is.  The child is
 * not dumpable, sends each socket over a socket pair and exits; the whole
 * exchange is bounded in time.  One path for root and rootless. */
#ifndef HAVEN_NETNS_SOCKETS_H
#define HAVEN_NETNS_SOCKETS_H

#include <sys/types.h>

#include "error.h"

/* Runs in the child, inside the namespace: fill fds[0..n) (an fd, or -1
 * for one that the namespace cannot have, which the caller then
 * judges).  On error the child exits: nothing to close. */
typedef int (*hv_netns_make_fn) (void *data, int *fds, hv_error **err);

/* fds[i] (names[i] in the messages) as make made them in netns, or -1
 * with *err and every fd closed.  An EPERM from entering the namespace
 * keeps its errno in *err, for the caller's hint. */
int hv_netns_sockets (int netns, const char *const *names, unsigned n, hv_netns_make_fn make, void *data, int *fds,
                      hv_error **err);

/* A handle on the network namespace of pid (our child or grandchild,
 * alive and waiting), never of another that got its pid. */
int hv_netns_open_of_pid (pid_t pid, hv_error **err);
#endif
