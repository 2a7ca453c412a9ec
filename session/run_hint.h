/* Hints added to a failed `haven run`'s error: what the user can do
 * about a refusal the runtime reports in its own terms (config.json
 * fields), said in the policy's terms. */
#ifndef HAVEN_RUN_HINT_H
#define HAVEN_RUN_HINT_H

#include "error.h"
#include "policy.h"

/* An ordinary user's run of a policy with resource limits that need a
 * cgroup (memory, cpus, pids), refused because this user may not create
 * one: *err gets a hint naming those limits and what to do. */
void hv_run_hint_rootless_limits (const hv_policy *p, bool rootless, hv_error **err);
/* A namespaced start that failed where the host cannot make namespaces
 * (the runtime's error says "clone container init: operation not
 * permitted" or "bring up loopback"): *err gets the step the host
 * refuses, named by the same probe haven doctor runs, and what falls
 * back.  fallback: what the user can do instead, in a few words. */
void hv_run_hint_namespaces (const char *fallback, hv_error **err);
#endif
