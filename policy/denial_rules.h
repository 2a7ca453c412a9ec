/* The table that explains a run's denials (runtime/audit/include/
 * denial_explain.h): the run.haven.denials annotation of `haven run`, the
 * view's rules.json, and what the seccomp listener is handed (session). */
#ifndef HAVEN_DENIAL_RULES_H
#define HAVEN_DENIAL_RULES_H

#include "policy.h"
#include "run_ctx.h"

/* The table as JSON (a new string), "trail" saying whether the policy
 * keeps an audit log (without one no denial is recorded, but `haven why
 * PATH` still names the rule behind a path). */
char *hv_policy_denial_rules_json (const hv_policy *p, const struct hv_run_ctx *ctx);

/* Where haven's own binary is seen in the sandbox, on PATH first, so
 * that `haven why` runs by that name (bound read-only). */
#define HV_WHY_BIN_DIR "/run/haven/bin"
#define HV_WHY_BIN HV_WHY_BIN_DIR "/haven"
#endif
