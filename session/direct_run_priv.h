/* The parts of hv_direct_run (direct_run.h): the child's restrictions
 * (direct_run_child.c) and its system-call filters (direct_run_seccomp.c). */
#ifndef HAVEN_DIRECT_RUN_PRIV_H
#define HAVEN_DIRECT_RUN_PRIV_H

#include "direct_plan.h"
#include "error.h"
#include "oci_spec.h"

/* What the child needs besides the spec and the plan. */
struct hv_direct_child
{
  const oci_spec *spec;
  const hv_direct_plan *plan;
  const oci_strv *write;   /* the plan's write list, with the scratch TMPDIR */
  char **envp;             /* the spec's environment (TMPDIR: the scratch directory) */
  int report_fd;           /* close-on-exec: the reason the command did not start */
};

/* In the forked child: become the sandboxed command (setsid, rlimits,
 * cwd, capabilities, no_new_privs, Landlock, seccomp) and execve it.
 * Never returns: on failure it writes "STATUS MESSAGE" to report_fd and
 * exits with STATUS. */
_Noreturn void hv_direct_child_exec (const struct hv_direct_child *c);

/* Load the plan's socket rules (and the denials that keep them whole),
 * then the spec's linux.seccomp and its run.haven.seccomp annotation,
 * with every NOTIFY answered as EPERM: there is no monitor to ask. */
int hv_direct_seccomp_load (const oci_spec *spec, const hv_direct_plan *plan, hv_error **err);
#endif
