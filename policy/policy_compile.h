/* Compile a policy into an OCI config.json for `haven run`: the host seen
 * through the policy, the project writable, secrets absent. */
#ifndef HAVEN_POLICY_COMPILE_H
#define HAVEN_POLICY_COMPILE_H

#include <stdbool.h>
#include <yajl/yajl_gen.h>

#include "error.h"
#include "policy.h"
#include "run_ctx.h"

/* Does the policy's syscall profile deny this system call? */
bool hv_policy_denies_syscall (const hv_policy *p, const char *name);
/* {"seccomp": {...}} with the policy's profile ({} for profile none) in
 * *json; -1 when the machine's architecture has no seccomp name. */
int hv_policy_seccomp_json (const hv_policy *p, char **json, hv_error **err);
/* The run.haven.landlock rules: read everywhere, write and execute below
 * the paths given. */
char *hv_policy_landlock_json (const oci_strv *writable, const oci_strv *exec, bool best_effort);
/* The JSON array of system call names the policy denies. */
void hv_policy_gen_denied_names (yajl_gen g, const hv_policy *p);

int hv_policy_compile (const hv_policy *p, const struct hv_run_ctx *ctx, char **json, hv_error **err);
#endif
