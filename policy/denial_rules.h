/* The table that explains a run's denials (runtime/audit/include/
 * denial_explain.h): the run.haven.denials annotation of `haven run` with
 * an audit log, and what the seccomp listener is handed (session). */
#ifndef HAVEN_DENIAL_RULES_H
#define HAVEN_DENIAL_RULES_H

#include "policy.h"
#include "run_ctx.h"

/* The table as JSON (a new string), or NULL when the policy keeps no
 * audit log (no denial is recorded, so none is explained). */
char *hv_policy_denial_rules_json (const hv_policy *p, const struct hv_run_ctx *ctx);

/* Where haven's own binary is seen in the sandbox, on PATH first, so
 * that `haven why` runs by that name (bound read-only). */
#define HV_WHY_BIN_DIR "/run/haven/bin"
#define HV_WHY_BIN HV_WHY_BIN_DIR "/haven"
#endif
