/* A policy on top of a config.json made by Docker or Podman.
 *
 * Every change only removes rights: no_new_privs on, capabilities
 * intersected with the policy's, denied environment variables dropped,
 * blocked and read-only paths added to maskedPaths/readonlyPaths, the
 * policy's system call denials added to the seccomp profile (and taken out
 * of its allow rules), a private network namespace when the policy says
 * none and the config asked for none either.  Applying several policies
 * in a row is therefore never weaker than any one of them. */
#include "config.h"

#include <fnmatch.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "json_gen.h"
#include "json_walk.h"
#include "oci_tables.h"
#include "policy_apply.h"
#include "policy_compile.h"
#include "policy_env.h"
#include "utils.h"

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
            && oci_strv_contains (&p->capabilities, set->u.array.values[j]->u.string))
          jg_str (g, set->u.array.values[j]->u.string);
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
}

static void
emit_env (yajl_gen g, yajl_val env, const hv_policy *p)
{
  /* Reuse the run-time filter, but as a pure deny filter: what Docker was
   * told to pass stays unless the policy (or the credential rules) deny it. */
  hv_policy relaxed = *p;
  static char *everything[] = { (char *) "*" };
  relaxed.env_pass = (oci_strv) { 1, everything };
  relaxed.env_set = (oci_kv_list) { 0 };
  size_t n = env && YAJL_IS_ARRAY (env) ? env->u.array.len : 0;
  char **in = xmalloc0 ((n + 1) * sizeof (char *));
  for (size_t i = 0; i < n; i++)
    in[i] = YAJL_IS_STRING (env->u.array.values[i]) ? env->u.array.values[i]->u.string : (char *) "";
  char **out = hv_policy_filter_env (&relaxed, in);
  yajl_gen_array_open (g);
  for (char **e = out; *e; e++)
    {
      jg_str (g, *e);
      free (*e);
    }
  yajl_gen_array_close (g);
  free (out);
  free (in);
}

static void
emit_process (yajl_gen g, yajl_val proc, const hv_policy *p)
{
  yajl_gen_map_open (g);
  for (size_t i = 0; proc && i < proc->u.object.len; i++)
    {
      const char *k = proc->u.object.keys[i];
      if (strcmp (k, "noNewPrivileges") == 0 || strcmp (k, "capabilities") == 0 || strcmp (k, "env") == 0)
        continue;
      jg_str (g, k);
      jg_value (g, proc->u.object.values[i]);
    }
  jg_str (g, "noNewPrivileges");
  yajl_gen_bool (g, 1);
  jg_str (g, "capabilities");
  emit_capabilities (g, jw_lookup (proc, "capabilities"), p);
  jg_str (g, "env");
  emit_env (g, jw_lookup (proc, "env"), p);
  yajl_gen_map_close (g);
}

static void
emit_paths (yajl_gen g, yajl_val existing, const oci_strv *extra)
{
  yajl_gen_array_open (g);
  for (size_t i = 0; existing && YAJL_IS_ARRAY (existing) && i < existing->u.array.len; i++)
    jg_value (g, existing->u.array.values[i]);
  for (size_t i = 0; i < extra->n; i++)
    if (extra->v[i][0] == '/' && strpbrk (extra->v[i], "*?[") == NULL)
      jg_str (g, extra->v[i]); /* container paths; globs and ~ name host places */
  yajl_gen_array_close (g);
}

static bool
allowing (const char *action)
{
  return action && (strcmp (action, "SCMP_ACT_ALLOW") == 0 || strcmp (action, "SCMP_ACT_LOG") == 0);
}

static void
emit_seccomp (yajl_gen g, yajl_val sc, const hv_policy *p)
{
  yajl_gen_map_open (g);
  yajl_val syscalls = jw_lookup (sc, "syscalls");
  for (size_t i = 0; i < sc->u.object.len; i++)
    if (strcmp (sc->u.object.keys[i], "syscalls") != 0)
      {
        jg_str (g, sc->u.object.keys[i]);
        jg_value (g, sc->u.object.values[i]);
      }
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
  jg_str (g, "action");
  jg_str (g, "SCMP_ACT_ERRNO");
  jg_str (g, "errnoRet");
  yajl_gen_integer (g, 1);
  yajl_gen_map_close (g);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}

static void
emit_linux (yajl_gen g, yajl_val lx, const hv_policy *p, const char *agent_profile_json)
{
  yajl_gen_map_open (g);
  bool has_net = false;
  yajl_val nss = jw_lookup (lx, "namespaces");
  for (size_t i = 0; nss && YAJL_IS_ARRAY (nss) && i < nss->u.array.len; i++)
    {
      yajl_val t = jw_lookup (nss->u.array.values[i], "type");
      if (t && YAJL_IS_STRING (t) && strcmp (t->u.string, "network") == 0)
        has_net = true;
    }
  for (size_t i = 0; lx && i < lx->u.object.len; i++)
    {
      const char *k = lx->u.object.keys[i];
      if (strcmp (k, "maskedPaths") == 0 || strcmp (k, "readonlyPaths") == 0 || strcmp (k, "seccomp") == 0
          || strcmp (k, "namespaces") == 0)
        continue;
      jg_str (g, k);
      jg_value (g, lx->u.object.values[i]);
    }
  jg_str (g, "namespaces");
  yajl_gen_array_open (g);
  for (size_t i = 0; nss && YAJL_IS_ARRAY (nss) && i < nss->u.array.len; i++)
    jg_value (g, nss->u.array.values[i]);
  if (!has_net && p->net_mode != HV_NET_OPEN)
    {
      yajl_gen_map_open (g);
      jg_str (g, "type");
      jg_str (g, "network");
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
  jg_str (g, "maskedPaths");
  {
    /* hide_home: haven run hides the caller's homes; in an engine's
     * container that is root's home at least (the home of the container's
     * own user is the engine issue's work). */
    cleanup_strv oci_strv masked = { 0 };
    for (size_t i = 0; i < p->block.n; i++)
      oci_strv_push (&masked, p->block.v[i]);
    if (p->hide_home.value)
      oci_strv_push_unique (&masked, "/root");
    emit_paths (g, jw_lookup (lx, "maskedPaths"), &masked);
  }
  jg_str (g, "readonlyPaths");
  emit_paths (g, jw_lookup (lx, "readonlyPaths"), &p->read_only);
  yajl_val sc = jw_lookup (lx, "seccomp");
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
      yajl_val agent = yajl_tree_parse (agent_profile_json, NULL, 0);
      yajl_val agent_sc = jw_lookup (agent, "seccomp");
      if (agent_sc)
        {
          jg_str (g, "seccomp");
          jg_value (g, agent_sc);
        }
      yajl_tree_free (agent);
    }
  yajl_gen_map_close (g);
}

int
hv_policy_apply (const hv_policy *p, const char *config_json, const char *name, char **out, hv_error **err)
{
  json_walk w;
  yajl_val root = NULL;
  jw_init (&w, name, err);
  if (jw_parse (&w, config_json, &root) < 0)
    return -1;
  if (jw_expect_object (&w, root) < 0)
    {
      yajl_tree_free (root);
      return -1;
    }
  if (p->allow_exec.n || p->block_shell.value)
    {
      yajl_tree_free (root);
      return hv_error_set (err, 0, "policy %s: allow_exec and block_shell cannot be applied to an existing container "
                                   "config yet (they are enforced by haven run)",
                           p->name);
    }
  /* The agent profile, for configs that come without one. */
  cleanup_free char *agent = hv_policy_seccomp_json (p);
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_gen_map_open (g);
  bool seen_linux = false, seen_annotations = false;
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *k = root->u.object.keys[i];
      yajl_val v = root->u.object.values[i];
      jg_str (g, k);
      if (strcmp (k, "process") == 0 && YAJL_IS_OBJECT (v))
        emit_process (g, v, p);
      else if (strcmp (k, "linux") == 0 && YAJL_IS_OBJECT (v))
        {
          emit_linux (g, v, p, agent);
          seen_linux = true;
        }
      else if (strcmp (k, "annotations") == 0 && YAJL_IS_OBJECT (v))
        {
          yajl_gen_map_open (g);
          for (size_t j = 0; j < v->u.object.len; j++)
            if (strcmp (v->u.object.keys[j], HV_POLICY_ANNOTATION) != 0)
              {
                jg_str (g, v->u.object.keys[j]);
                jg_value (g, v->u.object.values[j]);
              }
          jg_str (g, HV_POLICY_ANNOTATION);
          jg_str (g, p->name);
          yajl_gen_map_close (g);
          seen_annotations = true;
        }
      else
        jg_value (g, v);
    }
  if (!seen_linux)
    {
      jg_str (g, "linux");
      yajl_val empty = yajl_tree_parse ("{}", NULL, 0);
      emit_linux (g, empty, p, agent);
      yajl_tree_free (empty);
    }
  if (!seen_annotations)
    {
      jg_str (g, "annotations");
      yajl_gen_map_open (g);
      jg_str (g, HV_POLICY_ANNOTATION);
      jg_str (g, p->name);
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
  *out = jg_finish (g);
  yajl_tree_free (root);
  return 0;
}
