/* The parts of hv_direct_run (direct_run.h): the child's restrictions
 * (direct_run_child.c) and its system-call filters (direct_run_seccomp.c). */
#ifndef HAVEN_DIRECT_RUN_PRIV_H
#define HAVEN_DIRECT_RUN_PRIV_H

#include <stdbool.h>
#include <sys/types.h>

#include "direct_plan.h"
#include "error.h"
#include "oci_spec.h"
#include "run_guard.h"

/* What the child needs besides the spec and the plan. */
struct hv_direct_child
{
  const oci_spec *spec;
  const hv_direct_plan *plan;
  const oci_strv *write;   /* the plan's write list, with the scratch TMPDIR */
  char **envp;             /* the spec's environment (TMPDIR: the scratch directory) */
  int report_fd;           /* close-on-exec: the reason the command did not start */
  int tty;                 /* the slave of haven's pty for process.terminal, or -1 */
  const char *scratch;     /* the scratch TMPDIR, or NULL (removed by the reaper when haven is gone) */
};
/* Remove the scratch TMPDIR and what the command put there (link-free). */
void hv_direct_remove_scratch (const char *path);

/* In the forked child: become the sandboxed command (setsid, rlimits,
 * cwd, capabilities, no_new_privs, Landlock, seccomp) and execve it.
 * Never returns: on failure it writes "STATUS MESSAGE" to report_fd and
 * exits with STATUS. */
_Noreturn void hv_direct_child_exec (const struct hv_direct_child *c);

/* Load the plan's socket rules (and the denials that keep them whole),
 * then the spec's linux.seccomp and its run.haven.seccomp annotation.
 * The spec's profile keeps its NOTIFY actions when listener (a socket
 * connected to its listenerPath: the run's audit listener,
 * runtime/monitor/include/audit_monitor.h) is >= 0, and its notify fd is
 * sent there: each denied call is recorded, then answered EPERM.
 * Otherwise, and always for the annotation's, every NOTIFY is answered
 * EPERM by the filter. */
int hv_direct_seccomp_load (const oci_spec *spec, const hv_direct_plan *plan, int listener, hv_error **err);

/* A list of process ids. */
struct pids
{
  pid_t *v;
  size_t n, cap;
};
/* haven's (the caller's) children now, but those in skip (NULL: none). */
int hv_direct_list_children (const struct pids *skip, struct pids *out, hv_error **err);
/* Kill every child of the caller's but those in before, reap each, and
 * again, until none is left (a killed process's children become the
 * caller's in turn, the caller being their subreaper); *killed: how many. */
int hv_direct_kill_left (const struct pids *before, size_t *killed, hv_error **err);
/* read(2) of exactly len bytes: -1 at an early end. */
int hv_direct_read_full (int fd, void *buf, size_t len);

/* What the reaper tells haven at the end. */
struct hv_direct_reaper_result
{
  int status; /* the command's, as waitpid gives it */
  size_t killed;
  int kill_failed;
};
/* The reaper (direct_run_reaper.c): forks the command (hv_direct_child_exec),
 * writes its pid to result_fd, waits for its end or for EOF on alive_fd
 * (haven gone: the command is killed), kills what it left, then writes a
 * struct hv_direct_reaper_result, or, haven gone, runs after. */
_Noreturn void hv_direct_reaper (const struct hv_direct_child *c, int alive_fd, int result_fd,
                                 const struct hv_guard_after *after);
#endif
