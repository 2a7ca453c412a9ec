/* Messages between the runtime (parent) and the container's init (child)
 * over a SOCK_SEQPACKET socketpair: one datagram per message, optionally
 * carrying one fd.  A child failure is an HV_SYNC_ERROR message with the
 * full error text, so the parent reports exactly what went wrong inside. */
#ifndef HAVEN_SYNC_H
#define HAVEN_SYNC_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

enum hv_sync_type
{
  HV_SYNC_GO = 1,        /* parent -> child: ids mapped, cgroup joined */
  HV_SYNC_GRANDCHILD,    /* child -> parent: pid of the real init (double fork) */
  HV_SYNC_RUN_HOOKS,     /* child -> parent: namespaces and mounts ready */
  HV_SYNC_HOOKS_DONE,    /* parent -> child: payload = state JSON */
  HV_SYNC_CONSOLE,       /* child -> parent: fd = pty master */
  HV_SYNC_READY,         /* child -> parent: waiting for start */
  HV_SYNC_ERROR,         /* child -> parent: payload = error message */
  HV_SYNC_EGRESS,        /* create -> monitor: payload what, fd (egress_sandbox.h) */
  HV_SYNC_NETNS,         /* child -> parent: namespaces made (its network's), child goes on */
};

/* Bounded by the socket buffer (net.core.wmem_max, 208 KiB by default);
 * the state JSON carries the annotations, Landlock rules included. */
#define HV_SYNC_MAX_PAYLOAD (192 * 1024)

int hv_sync_send (int sock, enum hv_sync_type type, const void *data, size_t len, int fd, hv_error **err);
/* Receive one message; *data is NUL-terminated and owned by the caller.
 * *fd receives a passed fd or -1.  A closed socket is an error. */
int hv_sync_recv (int sock, enum hv_sync_type *type, char **data, int *fd, hv_error **err);
/* Receive, requiring `want`; an HV_SYNC_ERROR becomes *err. */
int hv_sync_expect (int sock, enum hv_sync_type want, char **data, int *fd, hv_error **err);
/* Child side: report err to the parent (its message and exit status). */
void hv_sync_send_error (int sock, hv_error *err);
/* Parent side: *err from the payload of an HV_SYNC_ERROR message (as
 * hv_sync_recv returned it); returns -1. */
int hv_sync_error (const char *payload, hv_error **err);
/* Fork the process that carries on (into a new pid namespace, or inside
 * a container for exec); the calling process reports its pid with
 * HV_SYNC_GRANDCHILD and exits.  The child goes on only once that report
 * is sent: its own messages on sock (READY, CONSOLE, RUN_HOOKS) must
 * never arrive before it, or the runtime records no pid (exec wrote "-1"
 * to --pid-file under load).  Returns 0 in the child, -1 on error. */
int hv_sync_fork_reported (int sock, const char *what, hv_error **err);
#endif
