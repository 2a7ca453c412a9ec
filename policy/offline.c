/* A run without network (offline.h). */
#include "config.h"

#include <string.h>

#include "haven_annotations.h"
#include "json_gen.h"
#include "offline.h"
#include "policy_egress.h"
#include "utils.h"

/* One attempt each: npm (fetch-retries, 2 by default, 10 s then 60 s
 * apart), pip (5 retries), cargo (3). */
const char *const hv_offline_env_vars[]
    = { "npm_config_fetch_retries=0", "PIP_RETRIES=0", "CARGO_NET_RETRY=0", NULL };

/* Under an allowlist npm still retries (an allowed registry's transient
 * failures are worth it), but 1 s then 2 s apart: a name the policy
 * refuses (ENOTFOUND, which npm retries too) fails in about 3 s, not 70.
 * pip and cargo give up on a lookup that is not found at once. */
const char *const hv_allowlist_env_vars[]
    = { "npm_config_fetch_retry_mintimeout=1000", "npm_config_fetch_retry_maxtimeout=2000", NULL };

void
hv_offline_mount (yajl_gen g, const struct hv_run_ctx *ctx)
{
  /* Onto the host's file in the read-only root: never through a link
   * there (the mount replaces the link itself). */
  static const char *const opts[] = { "bind", "ro", "nosuid", "nodev", "noexec", HV_MOUNT_OPT_NOFOLLOW, NULL };
  if (ctx->nsswitch)
    jg_mount (g, HV_NSSWITCH_PATH, "bind", ctx->nsswitch, opts);
}

char **
hv_offline_env (char **env, const hv_policy *p)
{
  const char *const *vars = p->net_mode == HV_NET_NONE        ? hv_offline_env_vars
                            : p->net_mode == HV_NET_ALLOWLIST ? hv_allowlist_env_vars
                                                              : NULL;
  for (size_t v = 0; vars && vars[v]; v++)
    {
      const char *var = vars[v];
      /* Every entry of the tables is NAME=VALUE: the '=' is found, after var. */
      size_t name = (size_t) (strchr (var, '=') - var) + 1;
      size_t n = 0;
      bool set = false;
      for (; env[n]; n++)
        set = set || strncmp (env[n], var, name) == 0;
      if (set)
        continue;
      env = xrealloc (env, (n + 2) * sizeof (char *));
      env[n] = xstrdup (var);
      env[n + 1] = NULL;
    }
  return hv_ask_env (env, p);
}

/* glibc's stub resolver waits `timeout` seconds (at most 30) for each
 * of `attempts` (at most 5) with one server (measured: timeout:5
 * attempts:2 gave up after 10.0 s): enough of them to outlast the ask
 * timeout where 5 x 30 s can, and at least two (a lost datagram), so that
 * a lookup held while someone answers is still waited for (a 20 s hold
 * answered "once" connected at 20.2 s).  Unless RES_OPTIONS is set. */
char **
hv_ask_env (char **env, const hv_policy *p)
{
  if (!hv_policy_asks (p))
    return env;
  unsigned t = (unsigned) (p->net_ask_timeout_s.set ? p->net_ask_timeout_s.value : HV_POLICY_ASK_TIMEOUT_DEFAULT_S);
  unsigned timeout = t + 1 < 30 ? t + 1 : 30, attempts = (t + 1 + timeout - 1) / timeout;
  if (attempts < 2)
    attempts = 2;
  if (attempts > 5)
    attempts = 5;
  size_t n = 0;
  bool set = false;
  for (; env[n]; n++)
    set = set || strncmp (env[n], "RES_OPTIONS=", 12) == 0;
  if (set)
    return env;
  env = xrealloc (env, (n + 2) * sizeof (char *));
  env[n] = xasprintf ("RES_OPTIONS=timeout:%u attempts:%u", timeout, attempts);
  env[n + 1] = NULL;
  return env;
}
