/* exec into a container a policy was applied to: exec_restrict.h. */
#include "config.h"

#include <string.h>
#include <sys/resource.h>

#include "exec_restrict.h"
#include "policy_egress.h"
#include "policy_env.h"
#include "utils.h"

/* Keep only the names init's bounding set and the policy both have. */
static void
intersect (oci_strv *set, const oci_strv *bounding, const oci_strv *policy)
{
  oci_strv kept = { 0 };
  for (size_t i = 0; i < set->n; i++)
    if (oci_strv_contains (bounding, set->v[i]) && oci_strv_contains (policy, set->v[i]))
      oci_strv_push_unique (&kept, set->v[i]);
  oci_strv_free (set);
  *set = kept;
}

static void
replace_string (char **dst, const char *src)
{
  free (*dst);
  *dst = src ? xstrdup (src) : NULL;
}

static void
restrict_env (const hv_policy *p, oci_strv *env)
{
  char **out = hv_policy_filter_container_env (p, env->v);
  oci_strv kept = { 0 };
  for (char **e = out; *e; e++)
    {
      oci_strv_push (&kept, *e);
      free (*e);
    }
  free (out);
  oci_strv_free (env);
  *env = kept;
}

static void
restrict_nofile (const hv_policy *p, oci_process *proc)
{
  if (!p->nofile.set)
    return;
  for (size_t i = 0; i < proc->n_rlimits; i++)
    if (proc->rlimits[i].type && strcmp (proc->rlimits[i].type, "RLIMIT_NOFILE") == 0)
      {
        if (proc->rlimits[i].soft > p->nofile.value)
          proc->rlimits[i].soft = p->nofile.value;
        if (proc->rlimits[i].hard > p->nofile.value)
          proc->rlimits[i].hard = p->nofile.value;
        return;
      }
  proc->rlimits = xrealloc (proc->rlimits, (proc->n_rlimits + 1) * sizeof (oci_rlimit));
  oci_rlimit *r = &proc->rlimits[proc->n_rlimits++];
  memset (r, 0, sizeof (*r));
  r->resource = RLIMIT_NOFILE;
  r->type = xstrdup ("RLIMIT_NOFILE");
  r->soft = r->hard = p->nofile.value;
}

void
hv_policy_restrict_exec (const hv_policy *p, const oci_process *init, oci_process *proc)
{
  /* Capabilities: `exec --privileged` asks for all of them; the process
   * gets what init may have at most.  An init without a capabilities
   * object has none. */
  oci_capabilities *c = &proc->capabilities;
  const oci_strv *bounding = &init->capabilities.bounding;
  oci_strv *sets[] = { &c->bounding, &c->effective, &c->inheritable, &c->permitted, &c->ambient };
  for (size_t i = 0; i < N_ELEMENTS (sets); i++)
    {
      intersect (sets[i], bounding, &p->capabilities);
      /* Under an allowlist init never had these; said again here so that
       * exec does not depend on init's config having been policed. */
      for (size_t j = sets[i]->n; j-- > 0;)
        if (hv_policy_egress_strips_cap (p, sets[i]->v[j]))
          {
            free (sets[i]->v[j]);
            memmove (&sets[i]->v[j], &sets[i]->v[j + 1], (sets[i]->n - j) * sizeof (char *));
            sets[i]->n--;
          }
    }
  c->present = true;
  proc->no_new_privileges = true;
  replace_string (&proc->apparmor_profile, init->apparmor_profile);
  replace_string (&proc->selinux_label, init->selinux_label);
  restrict_env (p, &proc->env);
  restrict_nofile (p, proc);
}
