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
#endif
