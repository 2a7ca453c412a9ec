/* `haven run` without namespaces: the command runs as the caller, in the
 * host's (or container's) namespaces, under a direct plan
 * (direct_plan.h): no_new_privs, every capability dropped, rlimits,
 * Landlock (files, network, scopes), the spec's seccomp profile plus the
 * plan's socket rules, the spec's environment and directory.  haven is
 * the child subreaper: at the end, and at its timeout, every process the
 * command left is killed before the project guard runs. */
#ifndef HAVEN_DIRECT_RUN_H
#define HAVEN_DIRECT_RUN_H

#include "direct_plan.h"
#include "error.h"
#include "oci_spec.h"

/* What `haven run --isolation` asks for. */
enum hv_isolation
{
  HV_ISOLATION_AUTO,       /* namespaces where hv_probe_namespaces says so, else Landlock */
  HV_ISOLATION_NAMESPACES, /* namespaces or fail */
  HV_ISOLATION_LANDLOCK,   /* Landlock and seccomp only, even where namespaces work */
};

/* Run spec's process under plan; *exit_status as a shell reports it (124
 * past timeout_s, 126/127 as haven run's).  trail_fd: the run's audit
 * trail (-1: none). */
int hv_direct_run (const oci_spec *spec, const hv_direct_plan *plan, unsigned timeout_s, int trail_fd,
                   int *exit_status, hv_error **err);
#endif
