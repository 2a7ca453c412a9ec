/* `haven policy explain`: the environment and the credentials a policy
 * gives the sandbox, each variable once, with the rule that decides it. */
#include "config.h"

#include <fnmatch.h>
#include <string.h>

#include "policy_api.h"
#include "policy_env.h"
#include "utils.h"

static bool
set_by_policy (const hv_policy *p, const char *name)
{
  for (size_t i = 0; i < p->env_set.n; i++)
    if (strcmp (p->env_set.v[i].key, name) == 0)
      return true;
  for (size_t i = 0; i < p->n_env_from; i++)
    if (strcmp (p->env_from[i].name, name) == 0)
      return true;
  return false;
}

static const char *
deny_match (const hv_policy *p, const char *name)
{
  for (size_t i = 0; i < p->env_deny.n; i++)
    if (fnmatch (p->env_deny.v[i], name, 0) == 0)
      return p->env_deny.v[i];
  return NULL;
}

/* One env.pass entry: what happens to the variables it names. */
static void
explain_pass_entry (const hv_policy *p, const char *entry, FILE *out)
{
  if (!hv_env_is_explicit (entry))
    {
      fprintf (out, "    %-28s passed when set, except names that look like credentials%s\n", entry,
               p->env_deny.n ? " or env.deny matches" : "");
      return;
    }
  const char *deny = deny_match (p, entry);
  const char *cred = hv_env_credential_glob (entry);
  const hv_api_credential *api = hv_api_withholder (p, entry);
  if (api && !deny)
    {
      const struct hv_api_agent_env *a = hv_api_agent_env (api->provider);
      bool set = strcmp (entry, a->base_var) == 0 || strcmp (entry, hv_api_placeholder_var (api->provider, api->auth)) == 0
                 || (a->also_placeholder && strcmp (entry, a->also_placeholder) == 0);
      fprintf (out, "    %-28s %s while the gateway serves %s (credentials.api); otherwise\n    %-28s ", entry,
               set ? "set by haven" : "never passed", api->key.name, "");
    }
  else
    fprintf (out, "    %-28s ", entry);
  if (deny)
    fprintf (out, "not passed: env.deny \"%s\" wins\n", deny);
  else if (cred)
    fprintf (out, "passed when set: named explicitly (it looks like a credential, %s)\n", cred);
  else
    fprintf (out, "passed when set\n");
}

static void
explain_set (const hv_policy *p, FILE *out)
{
  if (p->env_set.n == 0 && p->n_env_from == 0)
    return;
  fprintf (out, "  Set by the policy (replacing the host's value):\n");
  for (size_t i = 0; i < p->env_set.n; i++)
    fprintf (out, "    %s=%s\n", p->env_set.v[i].key, p->env_set.v[i].value);
  for (size_t i = 0; i < p->n_env_from; i++)
    {
      const hv_secret_source *s = &p->env_from[i];
      if (s->file)
        fprintf (out, "    %-28s from the file %s, read at each run (not shown)\n", s->name, s->file);
      else
        fprintf (out, "    %-28s from the host variable %s, read at each run (not shown)\n", s->name, s->host_var);
    }
}

static void
explain_credentials (const hv_policy *p, char *const *host_env, FILE *out)
{
  fprintf (out, "\nCredentials\n");
  if (p->ssh_agent.value)
    fprintf (out, "  Your ssh-agent is forwarded: its socket ($SSH_AUTH_SOCK) is bound at %s and\n"
                  "  SSH_AUTH_SOCK points there; the sandbox can ask the agent to sign with every key it holds\n"
                  "  (it never gets the keys).  haven refuses to start when no agent answers at $SSH_AUTH_SOCK.\n",
             HV_SSH_AGENT_SOCKET);
  else
    fprintf (out, "  No ssh-agent (credentials.ssh_agent is not true).\n");
  hv_api_explain (p, host_env, out);
  if (p->n_git_creds == 0)
    {
      fprintf (out, "  No git credentials.\n");
      return;
    }
  fprintf (out, "  git over https gets a token for these hosts only (git's credential-store reads this run's\n"
                "  own %s, removed after it; the helpers of your ~/.gitconfig are not used):\n",
           HV_GIT_CREDENTIALS_FILE);
  for (size_t i = 0; i < p->n_git_creds; i++)
    {
      const hv_secret_source *s = &p->git_creds[i];
      fprintf (out, "    %-28s user %s, token from %s %s\n", s->name, s->username, s->file ? "the file" : "the host variable",
               s->file ? s->file : s->host_var);
    }
  fprintf (out, "  Anything in the sandbox can read these tokens, as it can read any variable it is given.\n");
}

void
hv_env_explain (const hv_policy *p, char *const *host_env, FILE *out)
{
  fprintf (out, "\nEnvironment\n");
  fprintf (out, "  Host variables passed (env.pass); everything else is dropped:\n");
  for (size_t i = 0; i < p->env_pass.n; i++)
    {
      bool seen = false;
      for (size_t j = 0; j < i && !seen; j++)
        seen = strcmp (p->env_pass.v[j], p->env_pass.v[i]) == 0;
      if (!seen && !set_by_policy (p, p->env_pass.v[i]))
        explain_pass_entry (p, p->env_pass.v[i], out);
    }
  if (p->env_deny.n)
    {
      fprintf (out, "  Never passed (env.deny):");
      for (size_t i = 0; i < p->env_deny.n; i++)
        fprintf (out, " %s", p->env_deny.v[i]);
      fprintf (out, "\n");
    }
  fprintf (out, "  A glob never passes a name that looks like a credential (*TOKEN*, *SECRET*, *PASSWORD*,\n"
                "  *_KEY, *APIKEY*, AWS_*, *CREDENTIAL*, KUBECONFIG, DOCKER_HOST, ...); only a name written out\n"
                "  in env.pass does.  SSH_AUTH_SOCK is never passed (credentials.ssh_agent forwards the agent).\n");
  if (p->env_containers_pass.n)
    {
      fprintf (out, "  In engine containers also passed (env.containers.pass), by the same rules, from what the\n"
                    "  engine passes (the image's ENV, -e, a devcontainer's containerEnv and remoteEnv):");
      for (size_t i = 0; i < p->env_containers_pass.n; i++)
        fprintf (out, " %s", p->env_containers_pass.v[i]);
      fprintf (out, "\n");
    }
  explain_set (p, out);
  explain_credentials (p, host_env, out);
}
