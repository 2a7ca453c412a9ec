/* The audit trail of `haven run`: what the sandbox denied, as JSON lines.
 *
 * With `audit: {log: FILE}` the system calls the policy denies are not
 * answered by the filter itself (SCMP_ACT_ERRNO) but by a small listener
 * process of haven's (SCMP_ACT_NOTIFY), which writes one record per
 * denied call and answers EPERM.  The agent sees exactly what it would
 * without the audit trail.  If the listener is gone the kernel answers
 * ENOSYS: a call is never allowed because the audit trail failed.
 *
 * Records: {"event":"start",...} when the command starts, one
 * {"event":"denied","syscall":...} per denied call, {"event":"exit",...}
 * with the exit status.  The listener reads only what the kernel reports
 * (system call number and arguments); it never reads the sandboxed
 * process's memory, and fields such as "comm" are the process's own
 * claims. */
#ifndef HAVEN_POLICY_AUDIT_H
#define HAVEN_POLICY_AUDIT_H

#include <sys/types.h>
#include <time.h>

#include "error.h"
#include "policy.h"

struct hv_audit
{
  int log_fd;          /* -1: no audit trail */
  pid_t listener;      /* the listener process, or 0 */
  char *socket_path;   /* where the runtime sends the notify fd */
  char *policy_name;
  struct timespec start;
};

/* Open the log (creating its directory), start the listener on
 * <bundle>/audit.sock and write the start record.  Does nothing when the
 * policy has no audit log. */
int hv_audit_begin (const hv_policy *p, const char *home, const char *bundle, char **cmd, const char *project,
                    struct hv_audit *a, hv_error **err);
/* Stop the listener and write the exit record (status as haven returns
 * it).  Safe to call on a struct that was never begun. */
void hv_audit_end (struct hv_audit *a, int status);
#endif
