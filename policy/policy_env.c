/* Environment filtering: tokens never leak in by default.
 *
 * A host variable passes when env.pass names it, unless env.deny matches
 * it.  A glob in env.pass (`*`, `LC_*`, `ANTHROPIC_*`) never passes a
 * name that looks like a credential (always_denied): a broad pattern is
 * not a decision to hand over a key.  A name written out in full is: the
 * policy author chose that one variable (the agent policies pass their
 * API key this way), so it passes whatever the credential globs say. */
#include "config.h"

#include <fnmatch.h>
#include <string.h>

#include "policy_api.h"
#include "policy_env.h"
#include "utils.h"

/* Never passed by a glob: the usual shapes of credentials. */
static const char *const always_denied[] = { "*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*_KEY", "*_KEY_*",
                                             "*APIKEY*", "AWS_*", "GOOGLE_APPLICATION_CREDENTIALS", "SSH_AUTH_SOCK",
                                             "GPG_AGENT_INFO", "KUBECONFIG", "DOCKER_HOST", "*CREDENTIAL*", NULL };

bool
hv_env_is_explicit (const char *pattern)
{
  return strpbrk (pattern, "*?[\\") == NULL;
}

const char *
hv_env_credential_glob (const char *name)
{
  for (size_t i = 0; always_denied[i]; i++)
    if (fnmatch (always_denied[i], name, 0) == 0)
      return always_denied[i];
  return NULL;
}

static const char *
first_match (const oci_strv *globs, const char *name)
{
  for (size_t i = 0; i < globs->n; i++)
    if (fnmatch (globs->v[i], name, 0) == 0)
      return globs->v[i];
  return NULL;
}

static bool
named_explicitly (const hv_policy *p, const char *name)
{
  for (size_t i = 0; i < p->env_pass.n; i++)
    if (strcmp (p->env_pass.v[i], name) == 0)
      return true;
  return false;
}

static bool
passes (const hv_policy *p, const oci_strv *pass, const char *name)
{
  if (first_match (&p->env_deny, name))
    return false;
  for (size_t i = 0; i < pass->n; i++)
    if (strcmp (pass->v[i], name) == 0)
      return true;
  return first_match (pass, name) && hv_env_credential_glob (name) == NULL;
}

bool
hv_env_passes (const hv_policy *p, const char *name)
{
  if (first_match (&p->env_deny, name))
    return false;
  if (named_explicitly (p, name))
    return true;
  return first_match (&p->env_pass, name) && hv_env_credential_glob (name) == NULL;
}

bool
hv_env_passes_in_container (const hv_policy *p, const char *name)
{
  return hv_env_passes (p, name) || passes (p, &p->env_containers_pass, name);
}

/* out[*n] = NAME=value, replacing an earlier NAME. */
static void
put (char ***out, size_t *n, size_t *cap, char *entry)
{
  size_t klen = strcspn (entry, "=");
  for (size_t j = 0; j < *n; j++)
    if (strncmp ((*out)[j], entry, klen) == 0 && (*out)[j][klen] == '=')
      {
        free ((*out)[j]);
        (*out)[j] = entry;
        return;
      }
  if (*n + 2 >= *cap)
    *out = xrealloc (*out, (*cap *= 2) * sizeof (char *));
  (*out)[(*n)++] = entry;
  (*out)[*n] = NULL;
}

static char **
filter_env (const hv_policy *p, char **host_env, bool container)
{
  size_t n = 0, cap = 16;
  char **out = xmalloc0 (cap * sizeof (char *));
  for (char **e = host_env; e && *e; e++)
    {
      const char *eq = strchr (*e, '=');
      if (eq == NULL)
        continue;
      cleanup_free char *name = strndup (*e, (size_t) (eq - *e));
      if (container ? hv_env_passes_in_container (p, name) : hv_env_passes (p, name))
        put (&out, &n, &cap, xstrdup (*e));
    }
  /* Explicit values are the policy author's choice: set even if a deny
   * glob matches the name. */
  for (size_t i = 0; i < p->env_set.n; i++)
    put (&out, &n, &cap, xasprintf ("%s=%s", p->env_set.v[i].key, p->env_set.v[i].value));
  return out;
}

char **
hv_policy_filter_env (const hv_policy *p, char **host_env)
{
  return filter_env (p, host_env, false);
}

char **
hv_policy_filter_container_env (const hv_policy *p, char **engine_env)
{
  return filter_env (p, engine_env, true);
}

/* credentials.api: while the gateway serves a provider, no variable its
 * agents take a key from reaches the sandbox, however env passed or set
 * it (the key's own variable, and any other credential of the provider's
 * the host holds); the agent gets the gateway's URL and a placeholder. */
static void
gateway_env (const hv_policy *p, const struct hv_run_ctx *ctx, char ***out, size_t *n, size_t *cap)
{
  for (size_t i = 0; i < *n;)
    {
      const char *entry = (*out)[i];
      cleanup_free char *name = strndup (entry, strcspn (entry, "="));
      const hv_api_credential *c = hv_api_withholding (p, ctx->host_env, name);
      if (c == NULL)
        {
          i++;
          continue;
        }
      /* What the policy wrote itself is said, what the host happened to
       * hold (a passed variable) is not. */
      bool written = false;
      for (size_t j = 0; j < p->env_set.n && !written; j++)
        written = strcmp (p->env_set.v[j].key, name) == 0;
      for (size_t j = 0; j < p->n_env_from && !written; j++)
        written = strcmp (p->env_from[j].name, name) == 0;
      if (written && ctx->notes)
        {
          cleanup_free char *note = xasprintf ("env: the policy's %s is not used: credentials.api (%s) serves %s "
                                               "through haven's gateway, which sets the agent's variables itself",
                                               name, c->key.where, c->key.name);
          oci_strv_push (ctx->notes, note);
        }
      /* The entry holds the host's key itself: wiped, not only freed (the
       * memory of the process that compiles may live on: a service's
       * sandbox init keeps its maker's). */
      explicit_bzero ((*out)[i], strlen ((*out)[i]));
      free ((*out)[i]);
      memmove (&(*out)[i], &(*out)[i + 1], (*n - i) * sizeof (char *));
      (*n)--;
    }
  oci_kv_list vars = { 0 };
  hv_api_sandbox_vars (p, ctx->host_env, &vars);
  for (size_t i = 0; i < vars.n; i++)
    put (out, n, cap, xasprintf ("%s=%s", vars.v[i].key, vars.v[i].value));
  oci_kv_list_free (&vars);
}

char **
hv_policy_run_env (const hv_policy *p, const struct hv_run_ctx *ctx)
{
  char **out = hv_policy_filter_env (p, ctx->host_env);
  size_t n = 0, cap;
  while (out[n])
    n++;
  cap = n + 1;
  /* env.set_from_file and set_from_env, read by the session. */
  for (size_t i = 0; ctx->secret_env && i < ctx->secret_env->n; i++)
    put (&out, &n, &cap, xasprintf ("%s=%s", ctx->secret_env->v[i].key, ctx->secret_env->v[i].value));
  if (ctx->ssh_agent_socket)
    put (&out, &n, &cap, xstrdup ("SSH_AUTH_SOCK=" HV_SSH_AGENT_SOCKET));
  if (ctx->ssh_agent_view_dir)
    put (&out, &n, &cap, xstrdup ("SSH_AUTH_SOCK=" HV_SSH_AGENT_VIEW_SOCKET));
  if (ctx->git_credentials)
    {
      /* Command-line config is read after every file: the empty helper
       * empties the list the user's ~/.gitconfig or the project may have
       * built, then git's own cache client is the only helper: it asks
       * the broker (the monitor, outside the sandbox) over its socket, so
       * no token is in a file or variable here.  useHttpPath sends the
       * repository's path, for the policy's path prefixes and the trail. */
      put (&out, &n, &cap, xstrdup ("GIT_CONFIG_COUNT=3"));
      put (&out, &n, &cap, xstrdup ("GIT_CONFIG_KEY_0=credential.helper"));
      put (&out, &n, &cap, xstrdup ("GIT_CONFIG_VALUE_0="));
      put (&out, &n, &cap, xstrdup ("GIT_CONFIG_KEY_1=credential.helper"));
      put (&out, &n, &cap, xstrdup ("GIT_CONFIG_VALUE_1=cache --socket " HV_GIT_CREDENTIALS_SOCKET));
      put (&out, &n, &cap, xstrdup ("GIT_CONFIG_KEY_2=credential.useHttpPath"));
      put (&out, &n, &cap, xstrdup ("GIT_CONFIG_VALUE_2=true"));
    }
  gateway_env (p, ctx, &out, &n, &cap);
  return out;
}
