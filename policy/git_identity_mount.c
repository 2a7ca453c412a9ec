/* The git identity's place in the sandbox (git_identity_mount.h). */
#include "config.h"

#include <string.h>

#include "git_identity_mount.h"
#include "haven_annotations.h"
#include "json_gen.h"
#include "utils.h"

static void
bind_file (yajl_gen g, const char *dest, const char *src)
{
  static const char *const opts[]
      = { "bind", "ro", "nosuid", "nodev", "noexec", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_MKDIR, NULL };
  jg_mount (g, dest, "bind", src, opts);
}

void
hv_git_identity_mount (yajl_gen g, const struct hv_run_ctx *ctx)
{
  if (ctx->git_config)
    bind_file (g, HV_GIT_IDENTITY_PATH, ctx->git_config);
  if (ctx->git_config && ctx->git_excludes)
    bind_file (g, HV_GIT_EXCLUDES_PATH, ctx->git_excludes);
  if (ctx->git_config && ctx->git_attributes)
    bind_file (g, HV_GIT_ATTRIBUTES_PATH, ctx->git_attributes);
}

bool
hv_git_identity_read (char *const *env)
{
  for (size_t n = 0; env && env[n]; n++)
    if (strncmp (env[n], "GIT_CONFIG_NOSYSTEM=", 20) == 0)
      return false;
  for (size_t n = 0; env && env[n]; n++)
    if (strcmp (env[n], "GIT_CONFIG_SYSTEM=" HV_GIT_IDENTITY_PATH) == 0)
      return true;
  return false;
}

char **
hv_git_identity_env (char **env, const struct hv_run_ctx *ctx)
{
  if (ctx->git_config == NULL)
    return env;
  size_t n = 0;
  for (; env[n]; n++)
    if (strncmp (env[n], "GIT_CONFIG_SYSTEM=", 18) == 0 || strncmp (env[n], "GIT_CONFIG_NOSYSTEM=", 20) == 0)
      return env;
  env = xrealloc (env, (n + 2) * sizeof (char *));
  env[n] = xstrdup ("GIT_CONFIG_SYSTEM=" HV_GIT_IDENTITY_PATH);
  env[n + 1] = NULL;
  return env;
}
