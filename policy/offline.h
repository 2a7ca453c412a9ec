/* What a `haven run` without network gets (session/run_offline.h):
 * the name service config haven wrote, bound read-only on
 * /etc/nsswitch.conf, and package managers told not to retry what cannot
 * work (npm retried a failed lookup for 70 s: it retries every error of
 * a request, ENOTFOUND too). */
#ifndef HAVEN_POLICY_OFFLINE_H
#define HAVEN_POLICY_OFFLINE_H

#include <yajl/yajl_gen.h>

#include "policy.h"
#include "run_ctx.h"

#define HV_NSSWITCH_PATH "/etc/nsswitch.conf"

/* The bind of ctx->nsswitch, if any. */
void hv_offline_mount (yajl_gen g, const struct hv_run_ctx *ctx);
/* env (NULL-terminated, malloc'd strings) with hv_offline_env_vars added
 * under network none, hv_allowlist_env_vars under an allowlist, each only
 * when env does not set that name already. */
char **hv_offline_env (char **env, const hv_policy *p);
/* ...and under a policy that asks, RES_OPTIONS so that glibc's resolver
 * waits for the answer (timeout and attempts from network.ask_timeout). */
char **hv_ask_env (char **env, const hv_policy *p);
/* "NAME=VALUE" entries, NULL-terminated, for explain. */
extern const char *const hv_offline_env_vars[];
extern const char *const hv_allowlist_env_vars[];
#endif
