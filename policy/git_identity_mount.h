/* Where the sandbox finds the git config haven wrote for it
 * (session/git_identity.h): read-only binds on /run's tmpfs, the config
 * named by GIT_CONFIG_SYSTEM. */
#ifndef HAVEN_POLICY_GIT_IDENTITY_MOUNT_H
#define HAVEN_POLICY_GIT_IDENTITY_MOUNT_H

#include <stdbool.h>
#include <yajl/yajl_gen.h>

#include "run_ctx.h"

#define HV_GIT_CONFIG_DIR "/run/haven/git"
#define HV_GIT_IDENTITY_PATH HV_GIT_CONFIG_DIR "/config"
#define HV_GIT_EXCLUDES_PATH HV_GIT_CONFIG_DIR "/ignore"
#define HV_GIT_ATTRIBUTES_PATH HV_GIT_CONFIG_DIR "/attributes"

/* The binds of ctx->git_config and git_excludes (after /run's tmpfs). */
void hv_git_identity_mount (yajl_gen g, const struct hv_run_ctx *ctx);
/* env (NULL-terminated, malloc'd strings) with GIT_CONFIG_SYSTEM added
 * when there is an identity and neither the host nor the policy set it. */
char **hv_git_identity_env (char **env, const struct hv_run_ctx *ctx);
/* Whether git in the sandbox reads haven's config (env as above). */
bool hv_git_identity_read (char *const *env);
#endif
