/* A policy on top of a config.json made by Docker or Podman.
 *
 * Every change only removes rights: a read-only root filesystem, the
 * home hidden behind a tmpfs, blocked and protected paths in maskedPaths
 * and readonlyPaths (container_plan.c says what the policy's paths mean
 * in a container), no_new_privs on, capabilities intersected with the
 * policy's, the environment filtered by the policy's rules, the
 * policy's system call denials added to the seccomp profile (and taken out
 * of its allow rules), limits at the stricter of the engine's and the
 * policy's, a private network namespace unless the policy's network is
 * open, and under exec rules Landlock and noexec on writable mounts.
 * Applying several policies in a row is therefore never weaker than any
 * one of them. */
#include "image_git_identity.h"
#include "host_share.h"
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "haven_annotations.h"
#include "json_gen.h"
#include "json_walk.h"
#include "oci_tables.h"
#include "container_exec_rules.h"
#include "container_network.h"
#include "container_plan.h"
#include "engine_gateway.h"
#include "k8s_token.h"
#include "policy_apply.h"
#include "policy_compile.h"
#include "policy_egress.h"
#include "policy_env.h"
#include "pod_check.h"
#include "utils.h"

/* The fields of obj (when it is an object) but the keys in skip
 * (NULL-terminated), as they are: each emitter then writes the fields it
 * replaces. */
static void
emit_fields_except (yajl_gen g, yajl_val obj, const char *const *skip)
{
  for (size_t i = 0; obj && YAJL_IS_OBJECT (obj) && i < obj->u.object.len; i++)
    {
      bool skipped = false;
      for (size_t j = 0; skip[j] && !skipped; j++)
        skipped = strcmp (obj->u.object.keys[i], skip[j]) == 0;
      if (skipped)
        continue;
      jg_str (g, obj->u.object.keys[i]);
      jg_value (g, obj->u.object.values[i]);
    }
}

/* Capability sets: keep only what the policy lists. */
static void
emit_capabilities (yajl_gen g, yajl_val caps, const hv_policy *p)
{
  yajl_gen_map_open (g);
  for (size_t i = 0; caps && YAJL_IS_OBJECT (caps) && i < caps->u.object.len; i++)
    {
      yajl_val set = caps->u.object.values[i];
      jg_str (g, caps->u.object.keys[i]);
      yajl_gen_array_open (g);
      for (size_t j = 0; set && YAJL_IS_ARRAY (set) && j < set->u.array.len; j++)
        if (YAJL_IS_STRING (set->u.array.values[j])
            && oci_strv_contains (&p->capabilities, set->u.array.values[j]->u.string)
            && !hv_policy_egress_strips_cap (p, set->u.array.values[j]->u.string))
          jg_str (g, set->u.array.values[j]->u.string);
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
}

static bool
allowing (const char *action)
{
  return action && (strcmp (action, "SCMP_ACT_ALLOW") == 0 || strcmp (action, "SCMP_ACT_LOG") == 0);
}

/* The audit trail of engine containers: every policed container gets
 * one, because an engine container has no other record of what the agent
 * tried.  The policy's denials become SCMP_ACT_NOTIFY, answered EPERM by
 * the runtime's per-container monitor (runtime/monitor/include/container_monitor.h),
 * which the run.haven.audit annotation asks for; if the monitor is gone
 * the kernel answers ENOSYS, so a call is never allowed for want of a
 * trail.  The trail's place is the monitor's default unless the config
 * already names one. */
static void
emit_audit_request (yajl_gen g, yajl_val annotations)
{
  if (jw_lookup (annotations, HV_MONITOR_ANNOTATION))
    return; /* copied as the config has it */
  jg_kv (g, HV_MONITOR_ANNOTATION, HV_AUDIT_TRAIL_DEFAULT);
}

/* resources.timeout: the monitor kills init when it is up.  An earlier
 * policy's shorter timeout stays (policies only tighten). */
static void
emit_timeout (yajl_gen g, yajl_val annotations, const hv_policy *p)
{
  yajl_val old = jw_lookup (annotations, HV_TIMEOUT_ANNOTATION);
  unsigned long long have = 0;
  if (old && YAJL_IS_STRING (old))
    have = strtoull (old->u.string, NULL, 10);
  unsigned long long want = p->timeout_s.set ? p->timeout_s.value : 0; /* at most 30 days (policy_parse) */
  if (have && (!want || have < want))
    want = have;
  if (old && !want)
    {
      jg_str (g, HV_TIMEOUT_ANNOTATION);
      jg_value (g, old); /* as the config has it: the runtime judges it */
      return;
    }
  if (!want)
    return;
  char text[32];
  snprintf (text, sizeof (text), "%llu", want);
  jg_kv (g, HV_TIMEOUT_ANNOTATION, text);
}

/* The records' "policy": the policies applied, in order. */
static void
emit_listener_metadata (yajl_gen g, yajl_val sc, const hv_policy *p)
{
  yajl_val old = jw_lookup (sc, "listenerMetadata");
  jg_str (g, "listenerMetadata");
  if (old && YAJL_IS_STRING (old) && old->u.string[0])
    {
      cleanup_free char *both = xasprintf ("%s,%s", old->u.string, p->name);
      jg_str (g, both);
    }
  else
    jg_str (g, p->name);
}

/* What a policy's denial does: notify the monitor, which records the call
 * and answers EPERM. */
static void
emit_deny_action (yajl_gen g)
{
  jg_kv (g, "action", "SCMP_ACT_NOTIFY");
}

/* A rule of the policy's own profile: its EPERM denials are sent to the
 * monitor; its ENOSYS rules (calls whose arguments seccomp cannot read,
 * refused so that libc falls back) stay as they are. */
static void
emit_agent_rule (yajl_gen g, yajl_val rule)
{
  yajl_val action = jw_lookup (rule, "action"), ret = jw_lookup (rule, "errnoRet");
  bool eperm = action && YAJL_IS_STRING (action) && strcmp (action->u.string, "SCMP_ACT_ERRNO") == 0 && ret
               && YAJL_IS_INTEGER (ret) && YAJL_GET_INTEGER (ret) == EPERM;
  if (!eperm)
    {
      jg_value (g, rule);
      return;
    }
  yajl_gen_map_open (g);
  for (size_t i = 0; i < rule->u.object.len; i++)
    if (strcmp (rule->u.object.keys[i], "action") != 0 && strcmp (rule->u.object.keys[i], "errnoRet") != 0)
      {
        jg_str (g, rule->u.object.keys[i]);
        jg_value (g, rule->u.object.values[i]);
      }
  emit_deny_action (g);
  yajl_gen_map_close (g);
}

/* Is rule a plain denial by name (EPERM, no argument test)?  Those the
 * main profile notifies (emit_seccomp, emit_agent_seccomp). */
static bool
plain_name_denial (yajl_val rule)
{
  yajl_val action = jw_lookup (rule, "action"), ret = jw_lookup (rule, "errnoRet"), args = jw_lookup (rule, "args");
  return action && YAJL_IS_STRING (action) && strcmp (action->u.string, "SCMP_ACT_ERRNO") == 0 && ret
         && YAJL_IS_INTEGER (ret) && YAJL_GET_INTEGER (ret) == EPERM
         && (args == NULL || (YAJL_IS_ARRAY (args) && args->u.array.len == 0));
}

/* The agent profile as the runtime stacks it on the main one
 * (run.haven.seccomp) when the main one records: without the plain
 * denials by name.  Seccomp lets the strictest action of all filters
 * win, and ERRNO beats USER_NOTIF: the same names refused EPERM in the
 * stacked filter would answer before the monitor could record them.  The
 * main profile always has them, as SCMP_ACT_NOTIFY.  The argument rules
 * (TIOCSTI, set-ID modes, executable memfds, CLONE_NEWUSER) stay EPERM
 * here, refused but not recorded: only one filter of a process may have a
 * listener. */
static char *
stacked_profile_json (const char *agent_profile)
{
  yajl_val root = yajl_tree_parse (agent_profile, NULL, 0);
  yajl_val sc = jw_lookup (root, "seccomp");
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_str (g, "seccomp");
  yajl_gen_map_open (g);
  for (size_t i = 0; sc && YAJL_IS_OBJECT (sc) && i < sc->u.object.len; i++)
    {
      yajl_val v = sc->u.object.values[i];
      jg_str (g, sc->u.object.keys[i]);
      if (strcmp (sc->u.object.keys[i], "syscalls") != 0 || !YAJL_IS_ARRAY (v))
        {
          jg_value (g, v);
          continue;
        }
      yajl_gen_array_open (g);
      for (size_t j = 0; j < v->u.array.len; j++)
        if (!plain_name_denial (v->u.array.values[j]))
          jg_value (g, v->u.array.values[j]);
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  yajl_tree_free (root);
  return jg_finish (g);
}

/* The policy's own profile, for a config without one. */
static void
emit_agent_seccomp (yajl_gen g, yajl_val agent_sc, const hv_policy *p)
{
  yajl_gen_map_open (g);
  for (size_t i = 0; i < agent_sc->u.object.len; i++)
    {
      const char *k = agent_sc->u.object.keys[i];
      yajl_val v = agent_sc->u.object.values[i];
      if (strcmp (k, "listenerMetadata") == 0)
        continue;
      jg_str (g, k);
      if (strcmp (k, "syscalls") != 0 || !YAJL_IS_ARRAY (v))
        {
          jg_value (g, v);
          continue;
        }
      yajl_gen_array_open (g);
      for (size_t j = 0; j < v->u.array.len; j++)
        emit_agent_rule (g, v->u.array.values[j]);
      yajl_gen_array_close (g);
    }
  emit_listener_metadata (g, agent_sc, p);
  yajl_gen_map_close (g);
}

static void
emit_seccomp (yajl_gen g, yajl_val sc, const hv_policy *p)
{
  yajl_gen_map_open (g);
  yajl_val syscalls = jw_lookup (sc, "syscalls");
  static const char *const replaced[] = { "syscalls", "listenerMetadata", NULL };
  emit_fields_except (g, sc, replaced);
  emit_listener_metadata (g, sc, p);
  jg_str (g, "syscalls");
  yajl_gen_array_open (g);
  for (size_t i = 0; syscalls && YAJL_IS_ARRAY (syscalls) && i < syscalls->u.array.len; i++)
    {
      yajl_val rule = syscalls->u.array.values[i];
      yajl_val action = jw_lookup (rule, "action");
      if (!allowing (action && YAJL_IS_STRING (action) ? action->u.string : NULL))
        {
          jg_value (g, rule);
          continue;
        }
      /* An allow rule loses the names the policy denies. */
      yajl_gen_map_open (g);
      for (size_t k = 0; k < rule->u.object.len; k++)
        {
          jg_str (g, rule->u.object.keys[k]);
          yajl_val v = rule->u.object.values[k];
          if (strcmp (rule->u.object.keys[k], "names") != 0 || !YAJL_IS_ARRAY (v))
            {
              jg_value (g, v);
              continue;
            }
          yajl_gen_array_open (g);
          for (size_t j = 0; j < v->u.array.len; j++)
            if (YAJL_IS_STRING (v->u.array.values[j]) && !hv_policy_denies_syscall (p, v->u.array.values[j]->u.string))
              jg_str (g, v->u.array.values[j]->u.string);
          yajl_gen_array_close (g);
        }
      yajl_gen_map_close (g);
    }
  yajl_gen_map_open (g);
  jg_str (g, "names");
  hv_policy_gen_denied_names (g, p);
  emit_deny_action (g);
  yajl_gen_map_close (g);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}


/* What the emitters share. */
struct apply
{
  const hv_policy *p;
  bool pod; /* a Kubernetes pod's config (pod_check.h) */
  const struct hv_container_plan *plan;
  const char *agent_profile; /* the policy's seccomp profile, for configs without one */
  bool exec_rules;           /* allow_exec or block_shell */
  const oci_strv *exec_paths; /* Landlock's execute rules under exec rules */
  const oci_strv *env;        /* the engine's variables after the policy's env rules */
  const char *gateway;        /* HV_GATEWAY_ANNOTATION's value, or NULL (engine_gateway.h) */
  bool hide_token;            /* Kubernetes' service-account token (k8s_token.h) */
};

/* The environment: the policy's pass, deny and set rules on what the
 * engine passes (the image's ENV, -e, compose's environment), as haven
 * run applies them to the caller's: a variable the policy does not pass
 * does not reach the container. */
static void
emit_env (yajl_gen g, const oci_strv *env)
{
  yajl_gen_array_open (g);
  for (size_t i = 0; i < env->n; i++)
    jg_str (g, env->v[i]);
  yajl_gen_array_close (g);
}

static void
emit_rlimit (yajl_gen g, const char *type, uint64_t soft, uint64_t hard)
{
  yajl_gen_map_open (g);
  jg_kv (g, "type", type);
  jg_str (g, "soft");
  yajl_gen_integer (g, (long long) soft);
  jg_str (g, "hard");
  yajl_gen_integer (g, (long long) hard);
  yajl_gen_map_close (g);
}

static uint64_t
json_u64 (yajl_val v, uint64_t fallback)
{
  return v && YAJL_IS_INTEGER (v) && YAJL_GET_INTEGER (v) >= 0 ? (uint64_t) YAJL_GET_INTEGER (v) : fallback;
}

/* rlimits: the policy's nofile where the engine's is higher or unset. */
static void
emit_rlimits (yajl_gen g, yajl_val rl, const hv_policy *p)
{
  bool nofile_seen = false;
  yajl_gen_array_open (g);
  for (size_t i = 0; rl && YAJL_IS_ARRAY (rl) && i < rl->u.array.len; i++)
    {
      yajl_val r = rl->u.array.values[i];
      yajl_val type = jw_lookup (r, "type");
      if (!p->nofile.set || !type || !YAJL_IS_STRING (type) || strcmp (type->u.string, "RLIMIT_NOFILE") != 0)
        {
          jg_value (g, r);
          continue;
        }
      nofile_seen = true;
      uint64_t soft = json_u64 (jw_lookup (r, "soft"), UINT64_MAX), hard = json_u64 (jw_lookup (r, "hard"), UINT64_MAX);
      emit_rlimit (g, "RLIMIT_NOFILE", soft < p->nofile.value ? soft : p->nofile.value,
                   hard < p->nofile.value ? hard : p->nofile.value);
    }
  if (p->nofile.set && !nofile_seen)
    emit_rlimit (g, "RLIMIT_NOFILE", p->nofile.value, p->nofile.value);
  yajl_gen_array_close (g);
}

static void
emit_process (yajl_gen g, yajl_val proc, const struct apply *a)
{
  const hv_policy *p = a->p;
  static const char *const replaced[] = { "noNewPrivileges", "capabilities", "env", "rlimits", NULL };
  yajl_gen_map_open (g);
  emit_fields_except (g, proc, replaced);
  jg_str (g, "noNewPrivileges");
  yajl_gen_bool (g, 1);
  jg_str (g, "capabilities");
  emit_capabilities (g, jw_lookup (proc, "capabilities"), p);
  jg_str (g, "env");
  emit_env (g, a->env);
  jg_str (g, "rlimits");
  emit_rlimits (g, jw_lookup (proc, "rlimits"), p);
  yajl_gen_map_close (g);
}

/* The root filesystem is read-only: the container writes only to its
 * projects, its tmpfs mounts and the volumes it was given. */
static void
emit_root (yajl_gen g, yajl_val root)
{
  static const char *const replaced[] = { "readonly", NULL };
  yajl_gen_map_open (g);
  emit_fields_except (g, root, replaced);
  jg_str (g, "readonly");
  yajl_gen_bool (g, 1);
  yajl_gen_map_close (g);
}

static void
emit_tmpfs (yajl_gen g, const char *dest, uint64_t size, const char *mode, uint32_t uid, uint32_t gid, bool exec,
            const char *file_name, const char *file_text)
{
  yajl_gen_map_open (g);
  jg_kv (g, "destination", dest);
  jg_kv (g, "type", "tmpfs");
  jg_kv (g, "source", "tmpfs");
  jg_str (g, "options");
  yajl_gen_array_open (g);
  jg_str (g, "nosuid");
  jg_str (g, "nodev");
  jg_str (g, exec ? "exec" : "noexec");
  cleanup_free char *m = xasprintf ("mode=%s", mode);
  cleanup_free char *sz = xasprintf ("size=%llu", (unsigned long long) (size ? size : 256ULL << 20));
  jg_str (g, m);
  jg_str (g, sz);
  if (uid || gid)
    {
      cleanup_free char *u = xasprintf ("uid=%u", uid);
      cleanup_free char *gg = xasprintf ("gid=%u", gid);
      jg_str (g, u);
      jg_str (g, gg);
    }
  if (file_name && file_text)
    {
      cleanup_free char *f = xasprintf (HV_MOUNT_OPT_FILE "%s:%s", file_name, file_text);
      jg_str (g, f);
    }
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}

/* A writable engine mount under exec rules: noexec added, so that nothing
 * the container writes can be mapped executable (ld.so ./a.out only
 * mmaps, which Landlock does not see). */
/* A mount entry with x-haven.pin (an earlier policy's). */
static bool
is_pin (yajl_val m)
{
  yajl_val opts = jw_lookup (m, "options");
  for (size_t i = 0; opts && YAJL_IS_ARRAY (opts) && i < opts->u.array.len; i++)
    if (YAJL_IS_STRING (opts->u.array.values[i]) && strcmp (opts->u.array.values[i]->u.string, HV_MOUNT_OPT_PIN) == 0)
      return true;
  return false;
}

/* Kubernetes' service-account token (k8s_token.h): the first mount that
 * brings it becomes an empty read-only tmpfs at the same destination,
 * which the runtime resolves as it would have resolved the token's, so
 * the image's own files there are not shown either.  A token mount below
 * an earlier one's place (a file bound into the directory) is left out:
 * the tmpfs above covers it, and its mount point could not be made in
 * the empty read-only tmpfs (create would fail).  The two spellings are
 * taken as one place, as they are where /var/run links to /run; where
 * they are not, leaving a token mount out still shows no token. */
enum token_mount
{
  TOKEN_NONE,
  TOKEN_REPLACE,
  TOKEN_DROP,
};

static enum token_mount
token_mount (yajl_val mounts, size_t i, const struct apply *a)
{
  yajl_val d = jw_lookup (mounts->u.array.values[i], "destination");
  cleanup_free char *rest = NULL;
  /* Every destination was checked (check_token_mounts): no error here. */
  if (!a->hide_token || d == NULL || !YAJL_IS_STRING (d)
      || hv_k8s_token_destination (d->u.string, "", &rest, NULL) != 1)
    return TOKEN_NONE;
  for (size_t j = 0; j < i; j++)
    {
      yajl_val e = jw_lookup (mounts->u.array.values[j], "destination");
      cleanup_free char *above = NULL;
      if (e && YAJL_IS_STRING (e) && hv_k8s_token_destination (e->u.string, "", &above, NULL) == 1
          && strlen (above) < strlen (rest) && strncmp (rest, above, strlen (above)) == 0
          && rest[strlen (above)] == '/')
        return TOKEN_DROP;
    }
  return TOKEN_REPLACE;
}

static void
emit_engine_mount (yajl_gen g, yajl_val mounts, size_t index, const struct apply *a)
{
  yajl_val m = mounts->u.array.values[index];
  yajl_val opts = jw_lookup (m, "options");
  enum token_mount token = token_mount (mounts, index, a);
  if (token == TOKEN_DROP)
    return;
  if (token == TOKEN_REPLACE)
    {
      static const char *const empty_ro[]
          = { "ro", "nosuid", "nodev", "noexec", "mode=0555", "size=4k", NULL };
      jg_mount (g, jw_lookup (m, "destination")->u.string, "tmpfs", "tmpfs", empty_ro);
      return;
    }
  /* An earlier policy's pin keeps the flags of what it clones (noexec
   * there already): it takes no other option (runtime/mounts.h). */
  if (!a->exec_rules || !YAJL_IS_OBJECT (m) || is_pin (m))
    {
      jg_value (g, m);
      return;
    }
  static const char *const replaced[] = { "options", NULL };
  yajl_gen_map_open (g);
  emit_fields_except (g, m, replaced);
  jg_str (g, "options");
  yajl_gen_array_open (g);
  for (size_t i = 0; opts && YAJL_IS_ARRAY (opts) && i < opts->u.array.len; i++)
    {
      yajl_val o = opts->u.array.values[i];
      if (!YAJL_IS_STRING (o) || strcmp (o->u.string, "exec") != 0)
        jg_value (g, o);
    }
  jg_str (g, "noexec");
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}

static bool
has_mount_at (yajl_val mounts, const char *dest)
{
  for (size_t i = 0; mounts && YAJL_IS_ARRAY (mounts) && i < mounts->u.array.len; i++)
    {
      yajl_val d = jw_lookup (mounts->u.array.values[i], "destination");
      if (d && YAJL_IS_STRING (d) && strcmp (d->u.string, dest) == 0)
        return true;
    }
  return false;
}

/* Whether mounts hold a pin of dest already (an earlier policy's), at
 * least as strict: read-only where ro is wanted. */
static bool
has_pin_at (yajl_val mounts, const char *dest, bool ro)
{
  for (size_t i = 0; mounts && YAJL_IS_ARRAY (mounts) && i < mounts->u.array.len; i++)
    {
      yajl_val m = mounts->u.array.values[i], d = jw_lookup (m, "destination"), opts = jw_lookup (m, "options");
      if (!d || !YAJL_IS_STRING (d) || strcmp (d->u.string, dest) != 0 || !is_pin (m))
        continue;
      if (!ro)
        return true;
      for (size_t j = 0; opts && YAJL_IS_ARRAY (opts) && j < opts->u.array.len; j++)
        if (YAJL_IS_STRING (opts->u.array.values[j]) && strcmp (opts->u.array.values[j]->u.string, "rro") == 0)
          return true;
    }
  return false;
}

/* The engine's mounts, with each hidden home's tmpfs before those that go
 * into that home, and the policy's tmpfs directories after them (unless
 * the engine already mounts something there). */
static void
emit_mounts (yajl_gen g, yajl_val mounts, const struct apply *a)
{
  const struct hv_container_plan *plan = a->plan;
  size_t n = mounts && YAJL_IS_ARRAY (mounts) ? mounts->u.array.len : 0;
  yajl_gen_array_open (g);
  for (size_t i = 0; i <= n; i++)
    {
      for (size_t h = 0; h < plan->n_homes; h++)
        if (plan->homes[h].tmpfs_at == i)
          {
            /* The image user's git identity, nothing else of the hidden
             * ~/.gitconfig (image_git_identity.h). */
            cleanup_free char *identity = plan->rootfs ? hv_image_git_identity (plan->rootfs, plan->homes[h].path)
                                                       : NULL;
            emit_tmpfs (g, plan->homes[h].path, 1ULL << 30, "0700", plan->homes[h].uid, plan->homes[h].gid,
                        !a->exec_rules, HV_IMAGE_GITCONFIG, identity);
          }
      if (i < n)
        emit_engine_mount (g, mounts, i, a);
    }
  for (size_t i = 0; i < a->p->n_tmpfs; i++)
    if (!has_mount_at (mounts, a->p->tmpfs[i].path))
      emit_tmpfs (g, a->p->tmpfs[i].path, a->p->tmpfs[i].size, "1777", 0, 0, !a->exec_rules, NULL, NULL);
  /* Last: a pin clones what the container shows there by then; the
   * read-only ones after the others, so that a read-only pin takes in a
   * writable pin below it rather than being hidden by it. */
  static const char *const pin_opts[] = { "bind", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_PIN, NULL };
  static const char *const pin_ro_opts[]
      = { "bind", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_PIN, "rro", "rnosuid", "rnodev", "rnoexec", NULL };
  for (size_t i = 0; i < plan->pins.n; i++)
    if (!has_pin_at (mounts, plan->pins.v[i], false))
      jg_mount (g, plan->pins.v[i], "bind", plan->pins.v[i], pin_opts);
  for (size_t i = 0; i < plan->pins_ro.n; i++)
    if (!has_pin_at (mounts, plan->pins_ro.v[i], true))
      jg_mount (g, plan->pins_ro.v[i], "bind", plan->pins_ro.v[i], pin_ro_opts);
  yajl_gen_array_close (g);
}

static void
emit_paths (yajl_gen g, yajl_val existing, const oci_strv *extra)
{
  yajl_gen_array_open (g);
  for (size_t i = 0; existing && YAJL_IS_ARRAY (existing) && i < existing->u.array.len; i++)
    jg_value (g, existing->u.array.values[i]);
  for (size_t i = 0; i < extra->n; i++)
    jg_str (g, extra->v[i]);
  yajl_gen_array_close (g);
}

/* Namespaces: the engine's, except that a policy with network `none`
 * gets a network namespace of its own (only loopback) instead of the
 * engine's (or the host's).  An allowlist keeps the engine's (checked
 * not to be the host's: hv_policy_egress_check_netns), where the runtime
 * installs the egress table at create (run.haven.egress).  A pod keeps
 * its namespace under `none` too (its containers talk over its loopback):
 * there the runtime's table lets nothing but loopback through
 * (pod_network.h), and a pod in the host's is refused (pod_check.h). */
static void
emit_namespaces (yajl_gen g, yajl_val nss, const hv_policy *p, bool pod)
{
  bool private_net = p->net_mode == HV_NET_NONE && !pod;
  yajl_gen_array_open (g);
  for (size_t i = 0; nss && YAJL_IS_ARRAY (nss) && i < nss->u.array.len; i++)
    {
      yajl_val t = jw_lookup (nss->u.array.values[i], "type");
      if (private_net && t && YAJL_IS_STRING (t) && strcmp (t->u.string, "network") == 0)
        continue;
      jg_value (g, nss->u.array.values[i]);
    }
  if (private_net)
    {
      yajl_gen_map_open (g);
      jg_kv (g, "type", "network");
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static uint64_t
stricter (oci_opt_u64 a, oci_opt_u64 b)
{
  if (a.set && b.set)
    return a.value < b.value ? a.value : b.value;
  return a.set ? a.value : b.set ? b.value : 0;
}

/* One limit object ("memory", "pids") with its "limit" the stricter of
 * the engine's and the policy's (0: the policy sets none). */
static void
emit_limit_object (yajl_gen g, yajl_val obj, uint64_t policy_limit, bool memory)
{
  yajl_val lim = jw_lookup (obj, "limit");
  long long engine = lim && YAJL_IS_INTEGER (lim) ? YAJL_GET_INTEGER (lim) : -1;
  bool lower = policy_limit && (engine <= 0 || (uint64_t) engine > policy_limit);
  /* A lowered memory limit takes swap with it: swap (memory plus swap,
   * as the runtime reads it) at the new limit, no more. */
  static const char *const keep_all[] = { NULL };
  static const char *const limit[] = { "limit", NULL };
  static const char *const limit_swap[] = { "limit", "swap", NULL };
  yajl_gen_map_open (g);
  emit_fields_except (g, obj, !lower ? keep_all : memory ? limit_swap : limit);
  if (lower)
    {
      jg_str (g, "limit");
      yajl_gen_integer (g, (long long) policy_limit);
      if (memory)
        {
          jg_str (g, "swap");
          yajl_gen_integer (g, (long long) policy_limit);
        }
    }
  yajl_gen_map_close (g);
}

#define CPU_PERIOD_US 100000

/* cpu: quota over period, the stricter of the engine's and the policy's. */
static void
emit_cpu (yajl_gen g, yajl_val cpu, uint64_t policy_milli)
{
  yajl_val q = jw_lookup (cpu, "quota"), per = jw_lookup (cpu, "period");
  long long quota = q && YAJL_IS_INTEGER (q) ? YAJL_GET_INTEGER (q) : -1;
  long long period = per && YAJL_IS_INTEGER (per) && YAJL_GET_INTEGER (per) > 0 ? YAJL_GET_INTEGER (per) : CPU_PERIOD_US;
  /* engine's CPUs in thousandths: quota * 1000 / period */
  bool lower = policy_milli && (quota <= 0 || (uint64_t) quota * 1000 / (uint64_t) period > policy_milli);
  static const char *const keep_all[] = { NULL };
  static const char *const quota_period[] = { "quota", "period", NULL };
  yajl_gen_map_open (g);
  emit_fields_except (g, cpu, lower ? quota_period : keep_all);
  if (lower)
    {
      jg_str (g, "quota");
      yajl_gen_integer (g, (long long) (policy_milli * CPU_PERIOD_US / 1000));
      jg_str (g, "period");
      yajl_gen_integer (g, CPU_PERIOD_US);
    }
  yajl_gen_map_close (g);
}

/* resources: memory, pids and CPUs at the strictest of the engine's, the
 * policy's and the policy's limits for containers.  Those last apply
 * where the engine gives the container a cgroup (a cgroupsPath): rootless
 * Podman on a cgroup v1 host gives none, and a limit there would refuse
 * every container instead of the policy's own limits only. */
static void
emit_resources (yajl_gen g, yajl_val res, const hv_policy *p, bool has_cgroup)
{
  oci_opt_u64 none = { 0 };
  /* A share of the host (75%) in bytes and thousandths of a CPU now. */
  oci_opt_u64 container_memory = { p->container_memory.set, hv_container_memory_limit (p) };
  oci_opt_u64 container_cpus = { p->container_cpus_milli.set, hv_container_cpus_limit (p) };
  uint64_t memory = stricter (p->memory, has_cgroup ? container_memory : none);
  uint64_t pids = stricter (p->pids, has_cgroup ? p->container_pids : none);
  uint64_t cpus = stricter (p->cpus_milli, has_cgroup ? container_cpus : none);
  static const char *const replaced[] = { "memory", "pids", "cpu", NULL };
  yajl_gen_map_open (g);
  emit_fields_except (g, res, replaced);
  jg_str (g, "memory");
  emit_limit_object (g, jw_lookup (res, "memory"), memory, true);
  jg_str (g, "pids");
  emit_limit_object (g, jw_lookup (res, "pids"), pids, false);
  jg_str (g, "cpu");
  emit_cpu (g, jw_lookup (res, "cpu"), cpus);
  yajl_gen_map_close (g);
}

static void
emit_linux_seccomp (yajl_gen g, yajl_val sc, const struct apply *a)
{
  const hv_policy *p = a->p;
  if (p->syscall_profile && strcmp (p->syscall_profile, "none") == 0 && p->syscall_deny.n == 0)
    {
      if (sc && !YAJL_IS_NULL (sc))
        {
          jg_str (g, "seccomp");
          jg_value (g, sc);
        }
    }
  else if (sc && YAJL_IS_OBJECT (sc))
    {
      jg_str (g, "seccomp");
      emit_seccomp (g, sc, p);
    }
  else
    {
      /* No profile at all: the policy's own. */
      yajl_val agent = yajl_tree_parse (a->agent_profile, NULL, 0);
      yajl_val agent_sc = jw_lookup (agent, "seccomp");
      if (agent_sc && YAJL_IS_OBJECT (agent_sc))
        {
          jg_str (g, "seccomp");
          emit_agent_seccomp (g, agent_sc, p);
        }
      yajl_tree_free (agent);
    }
}

static void
emit_linux (yajl_gen g, yajl_val lx, const struct apply *a)
{
  static const char *const replaced[] = { "maskedPaths", "readonlyPaths", "seccomp", "namespaces", "resources", NULL };
  yajl_gen_map_open (g);
  emit_fields_except (g, lx, replaced);
  jg_str (g, "namespaces");
  emit_namespaces (g, jw_lookup (lx, "namespaces"), a->p, a->pod);
  jg_str (g, "maskedPaths");
  emit_paths (g, jw_lookup (lx, "maskedPaths"), &a->plan->masked);
  jg_str (g, "readonlyPaths");
  emit_paths (g, jw_lookup (lx, "readonlyPaths"), &a->plan->readonly);
  jg_str (g, "resources");
  yajl_val cgroups_path = jw_lookup (lx, "cgroupsPath");
  bool has_cgroup = cgroups_path && YAJL_IS_STRING (cgroups_path) && cgroups_path->u.string[0];
  emit_resources (g, jw_lookup (lx, "resources"), a->p, has_cgroup);
  emit_linux_seccomp (g, jw_lookup (lx, "seccomp"), a);
  yajl_gen_map_close (g);
}

/* The policy's whole agent profile, stacked by the runtime on the
 * engine's (run.haven.seccomp): its argument rules (TIOCSTI and
 * TIOCLINUX, set-ID modes, executable memfds, CLONE_NEWUSER) cannot be
 * merged into an engine profile that allows ioctl or chmod outright
 * (libseccomp keeps the unconditional rule), but a second filter refuses
 * them whatever the first allows.  An earlier policy's profile stays
 * when this one has none. */
static void
emit_stacked_seccomp (yajl_gen g, yajl_val previous, const struct apply *a)
{
  bool none = a->p->syscall_profile && strcmp (a->p->syscall_profile, "none") == 0;
  if (previous && none)
    {
      jg_str (g, HV_SECCOMP_ANNOTATION);
      jg_value (g, previous);
      return;
    }
  cleanup_free char *stacked = stacked_profile_json (a->agent_profile);
  jg_kv (g, HV_SECCOMP_ANNOTATION, stacked);
}

/* Egress: an allowlist's rules for the runtime (hv_policy_apply refused
 * a config that already had some: two allowlists do not add up to one).
 * Network `none` drops an earlier policy's rules with the engine's
 * network; `open` keeps them (policies only tighten). */
static void
emit_egress (yajl_gen g, yajl_val previous, const hv_policy *p)
{
  cleanup_free char *mine = hv_policy_egress_annotation (p, HV_EGRESS_CONNECT_ENGINE);
  if (mine)
    jg_kv (g, HV_EGRESS_ANNOTATION, mine);
  else if (previous && p->net_mode == HV_NET_OPEN)
    {
      jg_str (g, HV_EGRESS_ANNOTATION);
      jg_value (g, previous);
    }
}

/* Network none: the runtime checks, once the engine's hooks ran, that
 * init's namespace has nothing but loopback (netns_check.h); an earlier
 * policy's none stays (policies only tighten). */
static void
emit_network (yajl_gen g, yajl_val previous, const hv_policy *p)
{
  bool earlier = previous && YAJL_IS_STRING (previous) && strcmp (previous->u.string, HV_NETWORK_NONE) == 0;
  if (p->net_mode == HV_NET_NONE || earlier)
    jg_kv (g, HV_NETWORK_ANNOTATION, HV_NETWORK_NONE);
  else if (previous)
    {
      /* Not ours to judge: the runtime refuses a value it does not know. */
      jg_str (g, HV_NETWORK_ANNOTATION);
      jg_value (g, previous);
    }
}

/* A list annotation (one item a line): an earlier policy's items, then
 * this one's not among them (policies only add). */
static void
emit_line_list (yajl_gen g, yajl_val previous, const char *key, const oci_strv *mine)
{
  cleanup_strv oci_strv all = { 0 };
  if (previous && YAJL_IS_STRING (previous))
    {
      cleanup_free char *copy = xstrdup (previous->u.string);
      char *save = NULL;
      for (char *l = strtok_r (copy, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
        oci_strv_push_unique (&all, l);
    }
  for (size_t i = 0; i < mine->n; i++)
    oci_strv_push_unique (&all, mine->v[i]);
  if (all.n == 0)
    return;
  size_t len = 1;
  for (size_t i = 0; i < all.n; i++)
    len += strlen (all.v[i]) + 1;
  cleanup_free char *text = xmalloc0 (len);
  for (size_t i = 0; i < all.n; i++)
    {
      if (i)
        strcat (text, "\n");
      strcat (text, all.v[i]);
    }
  jg_kv (g, key, text);
}

/* Annotations: what the policy is loaded by (exec reloads it), and under exec rules
 * the Landlock rules the runtime applies to init and every exec: read
 * and write everywhere (the read-only root and the masks already decide
 * those), execute only what the rules list. */
static void
emit_annotations (yajl_gen g, yajl_val ann, const struct apply *a)
{
  yajl_gen_map_open (g);
  for (size_t j = 0; ann && YAJL_IS_OBJECT (ann) && j < ann->u.object.len; j++)
    if (strcmp (ann->u.object.keys[j], HV_POLICY_ANNOTATION) != 0
        && strcmp (ann->u.object.keys[j], HV_LANDLOCK_ANNOTATION) != 0
        && strcmp (ann->u.object.keys[j], HV_SECCOMP_ANNOTATION) != 0
        && strcmp (ann->u.object.keys[j], HV_TIMEOUT_ANNOTATION) != 0
        && strcmp (ann->u.object.keys[j], HV_EGRESS_ANNOTATION) != 0
        && strcmp (ann->u.object.keys[j], HV_NETWORK_ANNOTATION) != 0
        && strcmp (ann->u.object.keys[j], HV_GIT_GUARD_ANNOTATION) != 0
        && strcmp (ann->u.object.keys[j], HV_GATEWAY_ANNOTATION) != 0)
      {
        jg_str (g, ann->u.object.keys[j]);
        jg_value (g, ann->u.object.values[j]);
      }
  jg_str (g, HV_POLICY_ANNOTATION);
  jg_str (g, a->p->reload_as ? a->p->reload_as : a->p->name);
  emit_audit_request (g, ann);
  emit_timeout (g, ann, a->p);
  emit_stacked_seccomp (g, jw_lookup (ann, HV_SECCOMP_ANNOTATION), a);
  emit_egress (g, jw_lookup (ann, HV_EGRESS_ANNOTATION), a->p);
  emit_network (g, jw_lookup (ann, HV_NETWORK_ANNOTATION), a->p);
  emit_line_list (g, jw_lookup (ann, HV_GIT_GUARD_ANNOTATION), HV_GIT_GUARD_ANNOTATION, &a->plan->guarded_sources);
  /* An earlier one's entries are in it (hv_policy_apply_keys): the
   * gateway only ever takes keys out of the container. */
  if (a->gateway)
    jg_kv (g, HV_GATEWAY_ANNOTATION, a->gateway);
  yajl_val previous = jw_lookup (ann, HV_LANDLOCK_ANNOTATION);
  if (a->exec_rules)
    {
      static char *all[] = { (char *) "/" };
      oci_strv everywhere = { .n = 1, .v = all };
      cleanup_free char *ll = hv_policy_landlock_json (&everywhere, a->exec_paths,
                                                       oci_strv_contains (&a->p->best_effort, "landlock"));
      jg_kv (g, HV_LANDLOCK_ANNOTATION, ll);
    }
  else if (previous)
    {
      /* Rules an earlier policy set stay (policies only tighten). */
      jg_str (g, HV_LANDLOCK_ANNOTATION);
      jg_value (g, previous);
    }
  yajl_gen_map_close (g);
}

static void
emit_config (yajl_gen g, yajl_val root, const struct apply *a)
{
  static const char *const added[] = { "process", "root", "mounts", "linux", "annotations", NULL };
  bool seen[5] = { false };
  yajl_gen_map_open (g);
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *k = root->u.object.keys[i];
      yajl_val v = root->u.object.values[i];
      jg_str (g, k);
      if (strcmp (k, "process") == 0 && YAJL_IS_OBJECT (v))
        emit_process (g, v, a);
      else if (strcmp (k, "root") == 0 && YAJL_IS_OBJECT (v))
        emit_root (g, v);
      else if (strcmp (k, "mounts") == 0)
        emit_mounts (g, v, a);
      else if (strcmp (k, "linux") == 0 && YAJL_IS_OBJECT (v))
        emit_linux (g, v, a);
      else if (strcmp (k, "annotations") == 0 && YAJL_IS_OBJECT (v))
        emit_annotations (g, v, a);
      else if (strcmp (k, "hooks") == 0 && YAJL_IS_OBJECT (v))
        hv_container_emit_hooks (g, v, a->p->net_mode == HV_NET_NONE);
      else
        jg_value (g, v);
      for (size_t j = 0; added[j]; j++)
        seen[j] |= strcmp (k, added[j]) == 0;
    }
  /* What the config did not have (process is required by the parser). */
  if (!seen[2])
    {
      jg_str (g, "mounts");
      emit_mounts (g, NULL, a);
    }
  if (!seen[3])
    {
      jg_str (g, "linux");
      yajl_val empty = yajl_tree_parse ("{}", NULL, 0);
      emit_linux (g, empty, a);
      yajl_tree_free (empty);
    }
  if (!seen[4])
    {
      jg_str (g, "annotations");
      emit_annotations (g, NULL, a);
    }
  yajl_gen_map_close (g);
}

/* Variables the engine passes that env rules drop are named (never
 * their values) in a note: a devcontainer's containerEnv or compose's
 * environment would otherwise vanish without a word.  HOSTNAME and
 * container are the engines' own, not the user's. */
static void
note_dropped_env (const oci_strv *engine_env, const oci_strv *kept_env, oci_strv *notes)
{
  cleanup_free char *names = NULL;
  for (size_t i = 0; i < engine_env->n; i++)
    {
      size_t len = strcspn (engine_env->v[i], "=");
      bool kept = false;
      for (size_t k = 0; k < kept_env->n && !kept; k++)
        kept = strncmp (kept_env->v[k], engine_env->v[i], len) == 0 && kept_env->v[k][len] == '=';
      cleanup_free char *name = strndup (engine_env->v[i], len);
      if (kept || len == 0 || strcmp (name, "HOSTNAME") == 0 || strcmp (name, "container") == 0)
        continue;
      char *more = xasprintf ("%s%s%s", names ? names : "", names ? ", " : "", name);
      free (names);
      names = more;
    }
  if (names)
    {
      cleanup_free char *note = xasprintf ("env: not passed into the container (env.pass does not name them): %s",
                                           names);
      oci_strv_push (notes, note);
    }
}

/* The engine's variables through the policy's pass, deny and set rules
 * (one list, for the config and for the note on what was dropped). */
static void
filter_engine_env (const hv_policy *p, const oci_strv *engine_env, oci_strv *out)
{
  static char *none[] = { NULL };
  out->v = hv_policy_filter_container_env (p, engine_env->n ? engine_env->v : none);
  out->cap = 0;
  for (out->n = 0; out->v[out->n]; out->n++)
    ;
}

/* A config with egress rules already (an earlier policy's, or the
 * config author's) and a second allowlist: the two would have to be
 * intersected, name by name; refused rather than one of them dropped. */
/* An engine container's resolver runs in root's monitor, with nobody to
 * ask: refused by name rather than silently allowed or denied. */
static int
check_ask (const hv_policy *p, const char *name, hv_error **err)
{
  if (!hv_policy_asks (p))
    return 0;
  const char *where = p->net_ask.n ? p->net_ask.v[0].where : p->net_ask_all_where;
  return hv_error_set (err, 0,
                       "%s: policy %s: %s (%s): engine containers cannot ask for names (only haven run holds a "
                       "lookup while someone answers); list the names under network.allow",
                       name, p->name, p->net_ask.n ? "network.ask" : "network.mode: ask", where ? where : "?");
}

static int
check_earlier_egress (const hv_policy *p, const oci_spec *spec, const char *name, hv_error **err)
{
  if (p->net_mode == HV_NET_ALLOWLIST && oci_kv_get (&spec->annotations, HV_EGRESS_ANNOTATION))
    return hv_error_set (err, 0,
                         "%s: .annotations[\"%s\"]: the config has egress rules already (another policy's?) and "
                         "policy %s has its own allowlist: two allowlists on one container are not supported",
                         name, HV_EGRESS_ANNOTATION, p->name);
  return 0;
}

/* Under a policy hiding Kubernetes' token, every mount destination is
 * one the filter can judge (k8s_token.h): one it cannot is refused. */
static int
check_token_mounts (const hv_policy *p, const oci_spec *spec, const char *name, hv_error **err)
{
  for (size_t i = 0; hv_k8s_token_hidden (p) && i < spec->n_mounts; i++)
    if (spec->mounts[i].destination && hv_k8s_token_destination (spec->mounts[i].destination, name, NULL, err) < 0)
      return hv_error_wrap (err, "policy %s", p->name);
  return 0;
}

/* The gateway the container gets: an earlier policy's (or the config's
 * own) with this policy's credentials.api items added where the runtime
 * has their key file; env rewritten to match (engine_gateway.h). */
static int
plan_gateway (const hv_policy *p, const oci_spec *spec, const char *name, const char *const *key_files,
              oci_strv *env, oci_strv *notes, char **json, hv_error **err)
{
  struct hv_engine_gateway gw = { 0 };
  const char *previous = oci_kv_get (&spec->annotations, HV_GATEWAY_ANNOTATION);
  if (previous && hv_engine_gateway_parse (previous, name, &gw, err) < 0)
    {
      hv_engine_gateway_clear (&gw);
      return -1;
    }
  hv_engine_gateway_add (&gw, p, key_files, env, notes);
  hv_engine_gateway_env (&gw, env);
  *json = hv_engine_gateway_json (&gw);
  hv_engine_gateway_clear (&gw);
  return 0;
}

int
hv_policy_apply (const hv_policy *p, const char *config_json, const char *name, char **out, oci_strv *notes,
                 hv_error **err)
{
  return hv_policy_apply_keys (p, config_json, name, NULL, out, notes, err);
}

int
hv_policy_apply_keys (const hv_policy *p, const char *config_json, const char *name, const char *const *key_files,
                      char **out, oci_strv *notes, hv_error **err)
{
  json_walk w;
  yajl_val root = NULL;
  cleanup_spec oci_spec *spec = NULL;
  jw_init (&w, name, err);
  if (oci_spec_parse (config_json, strlen (config_json), name, &spec, err) < 0 || jw_parse (&w, config_json, &root) < 0)
    return -1;
  bool pod = false;
  if (hv_pod_policy_check (spec, name, p->name, &pod, err) < 0)
    {
      yajl_tree_free (root);
      return -1;
    }
  struct hv_container_plan plan;
  if (hv_container_plan_make (p, spec, name, &plan, err) < 0)
    {
      yajl_tree_free (root);
      return -1;
    }
  cleanup_strv oci_strv exec_paths = { 0 }, env = { 0 };
  filter_engine_env (p, &spec->process.env, &env);
  struct apply a = { .p = p, .pod = pod, .plan = &plan, .exec_rules = p->allow_exec.n || p->block_shell.value,
                     .exec_paths = &exec_paths, .env = &env, .hide_token = hv_k8s_token_hidden (p) };
  if (a.exec_rules && hv_container_exec_rules (p, plan.rootfs, &spec->process.env, &plan.projects, &exec_paths, &plan.masked, err) < 0)
    {
      hv_container_plan_clear (&plan);
      yajl_tree_free (root);
      return hv_error_wrap (err, "policy %s", p->name);
    }
  cleanup_free char *agent = NULL;
  if (hv_policy_seccomp_json (p, &agent, err) < 0 || hv_policy_egress_check_netns (p, spec, name, err) < 0
      || check_earlier_egress (p, spec, name, err) < 0 || check_ask (p, name, err) < 0 || check_token_mounts (p, spec, name, err) < 0)
    {
      hv_container_plan_clear (&plan);
      yajl_tree_free (root);
      return -1;
    }
  a.agent_profile = agent;
  note_dropped_env (&spec->process.env, &env, &plan.notes);
  cleanup_free char *gateway = NULL;
  if (plan_gateway (p, spec, name, key_files, &env, &plan.notes, &gateway, err) < 0)
    {
      hv_container_plan_clear (&plan);
      yajl_tree_free (root);
      return -1;
    }
  a.gateway = gateway;
  if (p->refuse_project_links.value)
    oci_strv_push (&plan.notes, "filesystem.project_links: refuse is for haven run (checked after the run): links "
                                "an engine container leaves in its workspace stay");
  if (p->n_env_from || p->ssh_agent.value || p->n_git_creds)
    oci_strv_push (&plan.notes, "env.set_from_file, env.set_from_env and credentials: are for haven run: not given to "
                                "engine containers (pass secrets with the engine: -e, --secret)");
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_config (g, yajl_gen_beautify, 1);
  emit_config (g, root, &a);
  *out = jg_finish (g);
  for (size_t i = 0; notes && i < plan.notes.n; i++)
    {
      cleanup_free char *line = xasprintf ("policy %s: %s", p->name, plan.notes.v[i]);
      oci_strv_push (notes, line);
    }
  hv_container_plan_clear (&plan);
  yajl_tree_free (root);
  return 0;
}
