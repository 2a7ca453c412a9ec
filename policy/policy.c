/* The policy model's own functions (policy.h). */
#include "config.h"
#include "policy.h"

#include <stdlib.h>
#include <string.h>

#include "utils.h"

/* Keep in step with session/direct_plan.h's HV_WEAKER_* (the policy
 * layer does not see the session's headers) and policies/README.md. */
static const struct
{
  const char *name, *what;
} best_effort_entries[] = {
  { "landlock", "runs where the kernel has no Landlock (namespaces only)" },
  { "private_tmp", "without namespaces: filesystem.tmpfs becomes a private scratch directory as TMPDIR, the real "
                   "path visible read-only" },
  { "network_ports", "without namespaces: network.allow becomes TCP connect to its ports at any address, UDP open "
                     "(DNS)" },
  { "protect_after_run", "without namespaces: filesystem.protect is writable during the run, and what changed there "
                         "is quarantined after it" },
  { "unix_sockets", "without namespaces: pathname Unix sockets the visible files hold are reachable" },
  { "cgroups", "without namespaces: resources.memory, cpus and pids are not limited where haven cannot make a "
               "cgroup" },
};

const char *
hv_policy_best_effort_what (const char *entry)
{
  for (size_t i = 0; i < sizeof (best_effort_entries) / sizeof (best_effort_entries[0]); i++)
    if (strcmp (best_effort_entries[i].name, entry) == 0)
      return best_effort_entries[i].what;
  return NULL;
}

char *
hv_policy_best_effort_names (void)
{
  char *out = xstrdup ("");
  for (size_t i = 0; i < sizeof (best_effort_entries) / sizeof (best_effort_entries[0]); i++)
    {
      char *next = xasprintf ("%s%s%s", out, i ? ", " : "", best_effort_entries[i].name);
      free (out);
      out = next;
    }
  return out;
}

static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "ash", NULL };

bool
hv_policy_is_shell_name (const char *name)
{
  const char *base = strrchr (name, '/') ? strrchr (name, '/') + 1 : name;
  for (size_t i = 0; shells[i]; i++)
    if (strcmp (base, shells[i]) == 0)
      return true;
  return false;
}

void
hv_secret_source_free (hv_secret_source *s)
{
  free (s->name);
  free (s->file);
  free (s->host_var);
  free (s->username);
  free (s->where);
  free (s->path);
  memset (s, 0, sizeof (*s));
}

void
hv_api_credential_free (hv_api_credential *c)
{
  hv_secret_source_free (&c->key);
  free (c->provider);
  free (c->auth);
  memset (c, 0, sizeof (*c));
}

void
hv_policy_free_fields (hv_policy *p)
{
  free (p->name);
  free (p->description);
  free (p->file);
  free (p->reload_as);
  for (size_t i = 0; i < p->home_allow.n; i++)
    {
      oci_strv_free (&p->home_access[i].protect);
      oci_strv_free (&p->home_access[i].data);
      oci_strv_free (&p->home_access[i].own);
      oci_strv_free (&p->home_access[i].settings);
      oci_strv_free (&p->home_access[i].commands);
      oci_strv_free (&p->home_access[i].per_project);
    }
  free (p->home_access);
  hv_net_rules_free (&p->net_allow);
  hv_net_rules_free (&p->net_deny);
  oci_strv *lists[] = { &p->files, &p->read_only, &p->read_write, &p->block, &p->protect, &p->home_allow, &p->warnings,
                        &p->allow_exec, &p->capabilities, &p->syscall_allow, &p->syscall_deny, &p->env_pass,
                        &p->env_deny, &p->env_containers_pass, &p->best_effort };
  for (size_t i = 0; i < N_ELEMENTS (lists); i++)
    oci_strv_free (lists[i]);
  for (size_t i = 0; i < p->n_tmpfs; i++)
    free (p->tmpfs[i].path);
  free (p->tmpfs);
  free (p->syscall_profile);
  oci_kv_list_free (&p->env_set);
  for (size_t i = 0; i < p->n_env_from; i++)
    hv_secret_source_free (&p->env_from[i]);
  free (p->env_from);
  for (size_t i = 0; i < p->n_git_creds; i++)
    hv_secret_source_free (&p->git_creds[i]);
  free (p->git_creds);
  for (size_t i = 0; i < p->n_api_creds; i++)
    hv_api_credential_free (&p->api_creds[i]);
  free (p->api_creds);
  free (p->ssh_agent_where);
  oci_strv_free (&p->ssh_agent_keys);
  oci_strv_free (&p->ssh_agent_keys_where);
  free (p->audit_log);
  free (p->audit_log_where);
  memset (p, 0, sizeof (*p));
}

void
hv_policy_free (hv_policy *p)
{
  if (p == NULL)
    return;
  hv_policy_free_fields (p);
  free (p);
}
