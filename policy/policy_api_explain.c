/* `haven policy explain`: where each credentials.api key is (haven's side
 * only), what the sandbox holds instead, and whether a run started from
 * the caller's environment serves the item at all. */
#include "config.h"

#include <string.h>

#include "policy_api.h"

static void
explain_item (const hv_api_credential *c, char *const *host_env, FILE *out)
{
  const struct hv_api_agent_env *a = hv_api_agent_env (c->provider);
  const char *header = strcmp (c->auth, "bearer") == 0 ? "Authorization: Bearer" : c->auth;
  if (strcmp (c->auth, "goog-api-key") == 0)
    header = "x-goog-api-key";
  if (c->key.file)
    fprintf (out, "    %-28s key from the file %s (read by haven at each run; missing: the run\n"
                  "    %-28s fails), sent as %s\n",
             c->key.name, c->key.file, "", header);
  else
    fprintf (out, "    %-28s key from the host variable %s, sent as %s\n", c->key.name, c->key.host_var, header);
  fprintf (out, "    %-28s in the sandbox: %s=%s\n", "", a->base_var, a->base_url);
  fprintf (out, "    %-28s                 %s=%s\n", "", hv_api_placeholder_var (c->provider, c->auth),
           HV_GATEWAY_PLACEHOLDER_KEY);
  if (a->also_placeholder)
    fprintf (out, "    %-28s                 %s=%s\n", "", a->also_placeholder, HV_GATEWAY_PLACEHOLDER_KEY);
  fprintf (out, "    %-28s never passed while the gateway serves it:", "");
  if (c->key.host_var)
    fprintf (out, " %s", c->key.host_var);
  for (const char *const *k = a->key_vars; *k; k++)
    if (c->key.host_var == NULL || strcmp (*k, c->key.host_var) != 0)
      fprintf (out, " %s", *k);
  fprintf (out, "\n");
  if (!hv_api_active (c, host_env))
    fprintf (out, "    %-28s %s is not set here: a run from this environment has no gateway\n"
                  "    %-28s for it (inactive); the agent uses its own login, env applies as written\n",
             "", c->key.host_var, "");
  else if (c->key.host_var)
    fprintf (out, "    %-28s %s is set here: a run from this environment uses the gateway\n", "", c->key.host_var);
}

void
hv_api_explain (const hv_policy *p, char *const *host_env, FILE *out)
{
  if (p->n_api_creds == 0)
    {
      fprintf (out, "  No model API keys kept by haven (credentials.api).\n");
      return;
    }
  fprintf (out, "  Model API keys (credentials.api) stay on haven's side: haven's gateway, outside the sandbox,\n"
                "  adds the key to each request it forwards over TLS to the API's host (only the API's own\n"
                "  methods and paths pass).  The sandbox holds the gateway's address on its own loopback and\n"
                "  a placeholder, never the key; it can use the key through the gateway while the run lasts,\n"
                "  but not read it:\n");
  for (size_t i = 0; i < p->n_api_creds; i++)
    explain_item (&p->api_creds[i], host_env, out);
}
