/* credentials.api (policy_api.h).
 *
 * The hosts and the headers each provider takes are gateway_route.c's:
 * one table decides both what a policy may name and what the gateway
 * sends.  The variables below are the agents' own (Claude Code, Codex,
 * Gemini CLI and the providers' SDKs): while the gateway serves a
 * provider every variable its agents take a key from is kept out of the
 * sandbox, not only the one the key came from, so a second credential in
 * the host's environment (an OAuth token beside the API key) is not
 * handed over raw either. */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "array_size.h"
#include "gateway_route.h"
#include "haven_annotations.h"
#include "policy_api.h"
#include "utils.h"

static const char *const anthropic_keys[] = { "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                                              NULL };
static const char *const openai_keys[] = { "OPENAI_API_KEY", "CODEX_API_KEY", NULL };
static const char *const gemini_keys[] = { "GEMINI_API_KEY", "GOOGLE_API_KEY", NULL };

#define STR(x) #x
#define URL(port) "http://127.0.0.1:" STR (port)

static const struct hv_api_agent_env agent_envs[] = {
  { "anthropic", HV_GATEWAY_PORT_ANTHROPIC, "ANTHROPIC_BASE_URL", URL (HV_GATEWAY_PORT_ANTHROPIC), anthropic_keys,
    NULL },
  /* The OpenAI SDKs' base URL includes the version. */
  { "openai", HV_GATEWAY_PORT_OPENAI, "OPENAI_BASE_URL", URL (HV_GATEWAY_PORT_OPENAI) "/v1", openai_keys,
    "CODEX_API_KEY" },
  { "gemini", HV_GATEWAY_PORT_GEMINI, "GOOGLE_GEMINI_BASE_URL", URL (HV_GATEWAY_PORT_GEMINI), gemini_keys, NULL },
};

/* A credential header as a policy names it, and the annotation's auth. */
static const struct
{
  const char *header;
  const char *auth;
  hv_gw_auth id;
} auths[] = {
  { "x-api-key", "x-api-key", HV_GW_AUTH_X_API_KEY },
  { "authorization", "bearer", HV_GW_AUTH_BEARER },
  { "x-goog-api-key", "goog-api-key", HV_GW_AUTH_GOOG_API_KEY },
};

const struct hv_api_agent_env *
hv_api_agent_env (const char *provider)
{
  for (size_t i = 0; i < N_ELEMENTS (agent_envs); i++)
    if (strcmp (agent_envs[i].provider, provider) == 0)
      return &agent_envs[i];
  return NULL;
}

const char *
hv_api_placeholder_var (const char *provider, const char *auth)
{
  if (strcmp (provider, "anthropic") == 0)
    return strcmp (auth, "bearer") == 0 ? "ANTHROPIC_AUTH_TOKEN" : "ANTHROPIC_API_KEY";
  if (strcmp (provider, "openai") == 0)
    return "OPENAI_API_KEY";
  return "GEMINI_API_KEY";
}

const char *
hv_api_provider_of_host (const char *host)
{
  for (int i = 0; i < HV_GW_N_PROVIDERS; i++)
    {
      const hv_gw_api *api = hv_gw_api_get ((hv_gw_provider) i);
      if (strcmp (api->host, host) == 0)
        return api->name;
    }
  return NULL;
}

const char *
hv_api_auth_of_header (const char *header)
{
  for (size_t i = 0; i < N_ELEMENTS (auths); i++)
    if (strcasecmp (auths[i].header, header) == 0)
      return auths[i].auth;
  return NULL;
}

bool
hv_api_provider_takes (const char *provider, const char *auth)
{
  const hv_gw_api *api = hv_gw_api_by_name (provider);
  for (size_t i = 0; api && i < N_ELEMENTS (auths); i++)
    if (strcmp (auths[i].auth, auth) == 0)
      return (api->auths & (1u << auths[i].id)) != 0;
  return false;
}

const char *
hv_api_headers_of (const char *provider)
{
  const hv_gw_api *api = hv_gw_api_by_name (provider);
  if (api == NULL)
    return "";
  if ((api->auths & (1u << HV_GW_AUTH_X_API_KEY)) && (api->auths & (1u << HV_GW_AUTH_BEARER)))
    return "x-api-key or authorization";
  if (api->auths & (1u << HV_GW_AUTH_BEARER))
    return "authorization";
  return "x-goog-api-key";
}

static const char *
env_value (char *const *env, const char *name)
{
  size_t len = strlen (name);
  for (char *const *e = env; e && *e; e++)
    if (strncmp (*e, name, len) == 0 && (*e)[len] == '=')
      return *e + len + 1;
  return NULL;
}

bool
hv_api_active (const hv_api_credential *c, char *const *host_env)
{
  if (c->key.file)
    return true;
  const char *v = env_value (host_env, c->key.host_var);
  return v != NULL && v[0] != '\0';
}

static bool
withholds (const hv_api_credential *c, const char *name)
{
  if (c->key.host_var && strcmp (c->key.host_var, name) == 0)
    return true;
  const struct hv_api_agent_env *a = hv_api_agent_env (c->provider);
  if (strcmp (a->base_var, name) == 0)
    return true;
  for (const char *const *k = a->key_vars; *k; k++)
    if (strcmp (*k, name) == 0)
      return true;
  return false;
}

const hv_api_credential *
hv_api_withholder (const hv_policy *p, const char *name)
{
  for (size_t i = 0; i < p->n_api_creds; i++)
    if (withholds (&p->api_creds[i], name))
      return &p->api_creds[i];
  return NULL;
}

const hv_api_credential *
hv_api_withholding (const hv_policy *p, char *const *host_env, const char *name)
{
  for (size_t i = 0; i < p->n_api_creds; i++)
    if (hv_api_active (&p->api_creds[i], host_env) && withholds (&p->api_creds[i], name))
      return &p->api_creds[i];
  return NULL;
}

void
hv_api_sandbox_vars (const hv_policy *p, char *const *host_env, oci_kv_list *out)
{
  for (size_t i = 0; i < p->n_api_creds; i++)
    {
      const hv_api_credential *c = &p->api_creds[i];
      if (!hv_api_active (c, host_env))
        continue;
      const struct hv_api_agent_env *a = hv_api_agent_env (c->provider);
      out->v = xrealloc (out->v, (out->n + 3) * sizeof (oci_kv));
      out->v[out->n++] = (oci_kv) { xstrdup (a->base_var), xstrdup (a->base_url) };
      out->v[out->n++]
          = (oci_kv) { xstrdup (hv_api_placeholder_var (c->provider, c->auth)), xstrdup (HV_GATEWAY_PLACEHOLDER_KEY) };
      if (a->also_placeholder)
        out->v[out->n++] = (oci_kv) { xstrdup (a->also_placeholder), xstrdup (HV_GATEWAY_PLACEHOLDER_KEY) };
    }
}

int
hv_api_validate (const hv_policy *p, hv_error **err)
{
  if (p->n_api_creds == 0)
    return 0;
  /* With the host's network the sandbox's loopback is the host's: a
   * listener there would be reachable by every process on the host, and
   * haven makes none rather than a weaker one. */
  if (p->net_mode == HV_NET_OPEN)
    return hv_error_set (err, 0,
                         "%s: credentials.api: %s needs the sandbox's own network (haven's gateway listens on its "
                         "loopback), but network.mode is open (the host's network): use network.mode none or an "
                         "allowlist, or drop credentials.api",
                         p->api_creds[0].key.where, p->api_creds[0].key.name);
  for (size_t i = 0; i < p->n_api_creds; i++)
    {
      const hv_secret_source *k = &p->api_creds[i].key;
      for (size_t j = 0; j < p->n_env_from; j++)
        {
          const hv_secret_source *e = &p->env_from[j];
          bool same = (k->host_var && e->host_var && strcmp (k->host_var, e->host_var) == 0)
                      || (k->file && e->file && strcmp (k->file, e->file) == 0);
          if (same)
            return hv_error_set (err, 0,
                                 "%s: env.%s: %s would be the key that credentials.api keeps out of the sandbox "
                                 "(%s, %s %s)",
                                 e->where, e->file ? "set_from_file" : "set_from_env", e->name, k->where,
                                 k->file ? "token_file" : "token_env", k->file ? k->file : k->host_var);
        }
      /* credentials.git hands its tokens to the sandbox's git through the broker. */
      for (size_t j = 0; j < p->n_git_creds; j++)
        {
          const hv_secret_source *g = &p->git_creds[j];
          if ((k->host_var && g->host_var && strcmp (k->host_var, g->host_var) == 0)
              || (k->file && g->file && strcmp (k->file, g->file) == 0))
            return hv_error_set (err, 0,
                                 "%s: credentials.git: the token for %s would be the key that credentials.api keeps "
                                 "out of the sandbox (%s, %s %s)",
                                 g->where, g->name, k->where, k->file ? "token_file" : "token_env",
                                 k->file ? k->file : k->host_var);
        }
    }
  return 0;
}
