/* Answering seccomp notifications into a trail (audit_notify.c). */
#ifndef HAVEN_AUDIT_NOTIFY_H
#define HAVEN_AUDIT_NOTIFY_H

#include <linux/seccomp.h>

#include "audit_trail.h"

/* The "denied" record of one notification (no limit applied), comm: the
 * name the process gave itself (any bytes).  Public for the fuzz target
 * (tests/fuzz). */
void hv_audit_trail_denied (struct hv_audit_trail *t, const struct seccomp_notif *req, const char *process,
                            const char *comm);

/* Receive one notification on notify_fd, record it (process: NULL, or
 * "init" / "exec" for a container) and answer EPERM.  Returns 0, or -1
 * when the fd is of no more use (every process using the filter is
 * gone, or an error). */
int hv_audit_trail_answer (struct hv_audit_trail *t, int notify_fd, const char *process);

/* Receive a seccomp notify fd over a unix socket as the runtime sends it
 * (OCI seccomp listener protocol): the fd, and in *msg (if non-NULL) the
 * JSON message that came with it.  -1 when none came. */
int hv_audit_receive_notify_fd (int sock, char **msg);
#endif
