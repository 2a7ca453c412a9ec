/* The environment a sandboxed command gets from the host's. */
#ifndef HAVEN_POLICY_ENV_H
#define HAVEN_POLICY_ENV_H

#include <stdio.h>

#include "policy.h"
#include "run_ctx.h"

/* pass/deny globs and set values (policy_env.c): a name written out in
 * env.pass passes, a glob never passes a credential-looking name. */
char **hv_policy_filter_env (const hv_policy *p, char **host_env);
/* The same for what an engine passes into a container (and its execs):
 * env.containers.pass passes too, by the same rules. */
char **hv_policy_filter_container_env (const hv_policy *p, char **engine_env);
/* The same for `haven run`, plus what the session read for the policy's
 * set_from_file/set_from_env and credentials (ctx). */
char **hv_policy_run_env (const hv_policy *p, const struct hv_run_ctx *ctx);

/* Does the host variable `name` pass the policy's pass and deny rules? */
bool hv_env_passes (const hv_policy *p, const char *name);
/* ... or env.containers.pass, in an engine container. */
bool hv_env_passes_in_container (const hv_policy *p, const char *name);
/* The built-in credential glob `name` matches, or NULL. */
const char *hv_env_credential_glob (const char *name);
/* An env.pass entry without glob characters: one variable, named. */
bool hv_env_is_explicit (const char *pattern);

/* The "Environment" and "Credentials" sections of `haven policy explain`
 * (policy_env_explain.c); host_env: the caller's environment, which says
 * whether a run from it would serve each credentials.api item. */
void hv_env_explain (const hv_policy *p, char *const *host_env, FILE *out);
#endif
