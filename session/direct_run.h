/* `haven run` without namespaces: the command runs as the caller, in the
 * host's (or container's) namespaces, under a direct plan
 * (direct_plan.h): no_new_privs, every capability dropped, rlimits,
 * Landlock (files, network, scopes), the spec's seccomp profile plus the
 * plan's socket rules, the spec's environment and directory.  haven is
 * the child subreaper: at the end, and at its timeout, every process the
 * command left is killed before the project guard runs. */
#ifndef HAVEN_DIRECT_RUN_H
#define HAVEN_DIRECT_RUN_H

#include "audit_monitor.h"
#include "direct_plan.h"
#include "error.h"
#include "oci_spec.h"
#include "run_guard.h"

/* What `haven run --isolation` asks for. */
enum hv_isolation
{
  HV_ISOLATION_AUTO,       /* namespaces where hv_probe_namespaces says so, else Landlock */
  HV_ISOLATION_NAMESPACES, /* namespaces or fail */
  HV_ISOLATION_LANDLOCK,   /* Landlock and seccomp only, even where namespaces work */
};

/* The variable that chooses the isolation where --isolation is not given. */
#define HV_ISOLATION_ENV "HAVEN_ISOLATION"
/* "auto", "namespaces" or "landlock" into *out: 0, or -1 for anything else. */
int hv_isolation_parse (const char *name, enum hv_isolation *out);

/* Run spec's process under plan; *exit_status as a shell reports it (124
 * past timeout_s, 126/127 as haven run's).  trail: the run's audit
 * trail, whose policy and run id its records name (NULL or log_fd -1:
 * none). */
int hv_direct_run (const oci_spec *spec, const hv_direct_plan *plan, unsigned timeout_s,
                   const struct hv_audit *trail, int *exit_status, hv_error **err);
/* hv_direct_run, and when haven dies before the command's end: once the
 * command and everything it left are killed, after_haven_died->fn runs
 * (in the reaper, a fork of haven made at the start; as run_guard.h's
 * after).  NULL: nothing. */
int hv_direct_run_guarded (const oci_spec *spec, const hv_direct_plan *plan, unsigned timeout_s,
                           const struct hv_audit *trail,
                           const struct hv_guard_after *after_haven_died, int *exit_status, hv_error **err);
#endif
