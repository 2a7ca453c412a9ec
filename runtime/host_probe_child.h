/* The host probes' one way of trying something: in a forked child, so
 * that nothing of the caller changes (host_probe.h). */
#ifndef HAVEN_HOST_PROBE_CHILD_H
#define HAVEN_HOST_PROBE_CHILD_H

#include "probe.h"

/* Runs child (fd, data) in a forked process.  The child writes why it
 * failed to fd, if it did, and exits: status 0 means ok (a child that
 * returns exits 0).  out->ok is whether it exited 0; out->why its words,
 * or "the probe's child ended with status N" when it said nothing, or ""
 * when ok.  Returns the child's wait status (-1 when it could not run:
 * out->why says why), for a caller that words a signal its own way. */
int hv_probe_in_child (hv_probe *out, void (*child) (int fd, void *data), void *data);
#endif
