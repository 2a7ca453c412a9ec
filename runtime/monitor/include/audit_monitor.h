/* The audit monitor of `haven run`: what the sandbox denied, as JSON lines.
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
 * claims.
 *
 * The trail is bounded: denials are recorded at most HV_AUDIT_RATE per
 * second after a burst of HV_AUDIT_BURST, and at most HV_AUDIT_MAX_BYTES
 * are written per run.  What is not recorded is summarized in
 * {"event":"dropped","count":N,"reason":...,"syscalls":{"name":N,...}}
 * records (one before the next recorded denial, or within a second; after
 * the size cap one final summary when the sandbox is gone).  Every string
 * is valid UTF-8 (invalid bytes become U+FFFD), so every line is JSON.
 * The sandbox gets EPERM for every denied call, recorded or not. */
#ifndef HAVEN_AUDIT_MONITOR_H
#define HAVEN_AUDIT_MONITOR_H

#include <sys/types.h>
#include <time.h>

#include "audit_trail.h" /* the records, the limits (HV_AUDIT_RATE...) */
#include "error.h"

struct hv_audit
{
  int log_fd;          /* -1: no audit trail */
  pid_t listener;      /* the listener process, or 0 */
  char *socket_path;   /* where the runtime sends the notify fd */
  char *policy_name;
  char *sandbox; /* the records' "sandbox" (audit_trail.h), or NULL */
  char *run;     /* the records' "run" (audit_trail.h), or NULL */
  char *log_path; /* the log's path as it was opened */
  struct timespec start;
};

/* Open the log at log_path (an absolute path; its directory is created),
 * start the listener on <bundle>/audit.sock and write the start record,
 * naming policy_name.  Does nothing when log_path is NULL.  sandbox: a
 * service's sandbox id, which every record of the listener's names
 * ("sandbox"), or NULL.  run: the run id (hv_audit_run_id) every record
 * names ("run"), or NULL.  denials: the table explaining denials and
 * naming the run's view of them (denial_explain.h), or NULL. */
int hv_audit_begin (const char *log_path, const char *policy_name, const char *sandbox, const char *run,
                    const char *bundle, char **cmd, const char *project, const char *denials, struct hv_audit *a,
                    hv_error **err);
/* hv_audit_begin of a run without namespaces (direct_run.h): the start
 * record also says "isolation" and the policy's rules that hold only in a
 * weaker form there ("weaker": [rule: how]). */
struct hv_audit_isolation
{
  const char *isolation; /* NULL: namespaces (no "isolation", no "weaker") */
  char *const *weaker;
  size_t n_weaker;
  /* `haven run --learn` (policies/README.md, "Learn mode and haven policy
   * suggest"): "learn": true, and "base": the policy as loaded (its file,
   * else its name), which `haven policy suggest` extends. */
  bool learn;
  const char *base;
};
int hv_audit_begin_isolated (const char *log_path, const char *policy_name, const char *sandbox, const char *run,
                             const char *bundle, char **cmd, const char *project, const char *denials,
                             const struct hv_audit_isolation *iso, struct hv_audit *a, hv_error **err);
/* A sandbox that outlives this process (a service's, whose maker exits):
 * wait, at most timeout_ms, until the listener has taken the filter's
 * connection (with a sandbox id given to hv_audit_begin, from then on it
 * no longer dies with this process). */
void hv_audit_wait_connected (const struct hv_audit *a, int timeout_ms);
/* Stop the listener and write the exit record (status as haven returns
 * it).  Safe to call on a struct that was never begun. */
void hv_audit_end (struct hv_audit *a, int status);
/* Can Landlock's refusals reach a trail from here (audit_probe.c)?  NULL
 * when they can: the kernel's audit is on and a reader of its log in
 * this process's network namespace hears it (the kernel multicasts its
 * records to one namespace only: a reader elsewhere is accepted and
 * hears nothing); else why not, a static string.  Joining the log is
 * itself an audit record (AUDIT_EVENT_LISTENER). */
const char *hv_audit_landlock_unseen (int wait_ms);
#endif
