/* The git identity's place in the sandbox (git_identity_mount.h). */
#include "config.h"

#include <string.h>

#include "git_identity_mount.h"
#include "json_gen.h"
#include "utils.h"

void
hv_git_identity_mount (yajl_gen g, const struct hv_run_ctx *ctx)
{
  static const char *const opts[]
      = { "rbind", "ro", "rro", "nosuid", "nodev", "noexec", "x-haven.nofollow", "x-haven.mkdir", NULL };
  if (ctx->git_config_dir == NULL)
    return;
  yajl_gen_map_open (g);
  jg_kv (g, "destination", HV_GIT_CONFIG_DIR);
  jg_kv (g, "type", "bind");
  jg_kv (g, "source", ctx->git_config_dir);
  jg_str (g, "options");
  yajl_gen_array_open (g);
  for (size_t i = 0; opts[i]; i++)
    jg_str (g, opts[i]);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}

char **
hv_git_identity_env (char **env, const struct hv_run_ctx *ctx)
{
  if (ctx->git_config_dir == NULL)
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
