/* The table explaining a run's denials: denial_rules.h. */
#include "config.h"
#include "denial_rules.h"

#include <string.h>
#include <yajl/yajl_gen.h>

#include "json_gen.h"
#include "utils.h"

/* "~/x" and "{project}/x" as the host's paths; "!" kept in front. */
static char *
expand (const char *entry, const struct hv_run_ctx *ctx)
{
  const char *bang = entry[0] == '!' ? "!" : "";
  const char *e = entry + (bang[0] ? 1 : 0);
  if (e[0] == '~' && (e[1] == '/' || e[1] == '\0'))
    return ctx->home ? xasprintf ("%s%s%s", bang, ctx->home, e + 1) : NULL;
  if (strncmp (e, "{project}", 9) == 0)
    return xasprintf ("%s%s%s", bang, ctx->project, e + 9);
  if (e[0] != '/')
    return xasprintf ("%s%s/%s", bang, ctx->project, e);
  return xstrdup (entry);
}

static const char *
mode_name (enum hv_net_mode m)
{
  switch (m)
    {
    case HV_NET_NONE:
      return "none";
    case HV_NET_OPEN:
      return "open";
    case HV_NET_ALLOWLIST:
      return "allowlist";
    default:
      return NULL;
    }
}

char *
hv_policy_denial_rules_json (const hv_policy *p, const struct hv_run_ctx *ctx)
{
  bool trail = p->audit_log && p->audit_log[0];
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  /* Without a trail nothing is recorded: `haven why` says so, and still
   * names the rule behind a path. */
  jg_str (g, "trail");
  yajl_gen_bool (g, trail);
  jg_kv_utf8 (g, "project", ctx->project);
  if (ctx->home)
    jg_kv_utf8 (g, "home", ctx->home);
  jg_str (g, "block");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < p->block.n; i++)
    {
      cleanup_free char *e = expand (p->block.v[i], ctx);
      if (e)
        jg_utf8 (g, e);
    }
  yajl_gen_array_close (g);
  /* haven's own: its state (the trail, approvals), its configuration
   * (policies, always-approved names), and the trail wherever it is. */
  jg_str (g, "own");
  yajl_gen_array_open (g);
  if (ctx->home)
    {
      cleanup_free char *state = xasprintf ("%s/.local/state/haven", ctx->home);
      cleanup_free char *config = xasprintf ("%s/.config/haven", ctx->home);
      jg_utf8 (g, state);
      jg_utf8 (g, config);
    }
  cleanup_free char *log = trail ? expand (p->audit_log, ctx) : NULL;
  if (log && log[0] == '/')
    jg_utf8 (g, log);
  yajl_gen_array_close (g);
  /* Execute rights come from allow_exec when it lists programs, else
   * from block_shell (policy_exec.c). */
  if (p->allow_exec.n > 0)
    jg_kv (g, "exec", "process.allow_exec");
  else if (p->block_shell.value)
    jg_kv (g, "exec", "process.block_shell");
  jg_str (g, "block_shell");
  yajl_gen_bool (g, p->block_shell.value);
  if (mode_name (p->net_mode))
    jg_kv (g, "network", mode_name (p->net_mode));
  jg_kv_utf8 (g, "profile", p->syscall_profile ? p->syscall_profile : "agent");
  jg_str (g, "deny");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < p->syscall_deny.n; i++)
    jg_utf8 (g, p->syscall_deny.v[i]);
  yajl_gen_array_close (g);
  jg_str (g, "hide_home");
  yajl_gen_bool (g, p->hide_home.value);
  if (ctx->why_dir)
    jg_kv_utf8 (g, "view", ctx->why_dir);
  yajl_gen_map_close (g);
  return jg_finish (g);
}
