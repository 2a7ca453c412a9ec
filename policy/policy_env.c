/* Environment filtering: tokens never leak in by default. */
#include "config.h"

#include <fnmatch.h>
#include <string.h>

#include "policy_env.h"
#include "utils.h"

/* Denied whatever the policy passes: the usual shapes of credentials. */
static const char *const always_denied[] = { "*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*_KEY", "*_KEY_*",
                                             "*APIKEY*", "AWS_*", "GOOGLE_APPLICATION_CREDENTIALS", "SSH_AUTH_SOCK",
                                             "GPG_AGENT_INFO", "KUBECONFIG", "DOCKER_HOST", "*CREDENTIAL*", NULL };

static bool
matches (const oci_strv *globs, const char *name)
{
  for (size_t i = 0; i < globs->n; i++)
    if (fnmatch (globs->v[i], name, 0) == 0)
      return true;
  return false;
}

static bool
denied (const hv_policy *p, const char *name)
{
  for (size_t i = 0; always_denied[i]; i++)
    if (fnmatch (always_denied[i], name, 0) == 0)
      return true;
  return matches (&p->env_deny, name);
}

char **
hv_policy_filter_env (const hv_policy *p, char **host_env)
{
  size_t n = 0, cap = 16;
  char **out = xmalloc0 (cap * sizeof (char *));
  for (char **e = host_env; e && *e; e++)
    {
      const char *eq = strchr (*e, '=');
      if (eq == NULL)
        continue;
      cleanup_free char *name = strndup (*e, (size_t) (eq - *e));
      if (!matches (&p->env_pass, name) || denied (p, name))
        continue;
      if (n + 2 >= cap)
        out = xrealloc (out, (cap *= 2) * sizeof (char *));
      out[n++] = xstrdup (*e);
    }
  /* Explicit values are the policy author's choice: set even if a deny
   * glob matches the name. */
  for (size_t i = 0; i < p->env_set.n; i++)
    {
      size_t klen = strlen (p->env_set.v[i].key);
      for (size_t j = 0; j < n; j++)
        if (strncmp (out[j], p->env_set.v[i].key, klen) == 0 && out[j][klen] == '=')
          {
            free (out[j]);
            out[j] = out[--n];
            out[n] = NULL;
            break;
          }
      if (n + 2 >= cap)
        out = xrealloc (out, (cap *= 2) * sizeof (char *));
      out[n++] = xasprintf ("%s=%s", p->env_set.v[i].key, p->env_set.v[i].value);
    }
  out[n] = NULL;
  return out;
}
