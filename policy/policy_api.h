/* credentials.api: a model API's key that haven's gateway keeps on the
 * host side (docs/gateway.md).  What the policy layer makes of an item:
 * whether a run serves it, the gateway annotation the runtime reads, and
 * the environment the agent gets instead of the key (its base URL pointed
 * at the gateway, a placeholder where the key was). */
#ifndef HAVEN_POLICY_API_H
#define HAVEN_POLICY_API_H

#include <stdbool.h>
#include <stdio.h>

#include "oci_spec.h"
#include "policy.h"

/* What the agents of one provider read from their environment. */
struct hv_api_agent_env
{
  const char *provider; /* gateway_route.c's name */
  unsigned port;        /* HV_GATEWAY_PORT_*: the listener in the sandbox's network namespace */
  const char *base_var; /* the variable of the API's base URL */
  const char *base_url; /* its value: the gateway, inside the sandbox */
  /* Every variable the provider's agents take a key or token from: none
   * of them reaches the sandbox while the gateway serves the provider,
   * whatever env says (NULL-terminated). */
  const char *const *key_vars;
  /* A second key variable one of its agents reads, given the placeholder
   * too so that the agent starts (Codex's `codex exec` reads
   * CODEX_API_KEY, not OPENAI_API_KEY), or NULL. */
  const char *also_placeholder;
};

/* By provider name, or NULL. */
const struct hv_api_agent_env *hv_api_agent_env (const char *provider);
/* The variable that holds the placeholder for a provider's auth. */
const char *hv_api_placeholder_var (const char *provider, const char *auth);
/* The provider whose host this is (lower case, exactly), or NULL. */
const char *hv_api_provider_of_host (const char *host);
/* The auth a credential header names ("authorization" is "bearer"),
 * in any case, or NULL. */
const char *hv_api_auth_of_header (const char *header);
/* The headers the provider takes its key in, for messages ("x-api-key or
 * authorization"). */
const char *hv_api_headers_of (const char *provider);
/* Whether the provider takes its key in this auth (gateway_route.c). */
bool hv_api_provider_takes (const char *provider, const char *auth);

/* Whether a run started with host_env serves the item: always for a
 * token_file (a missing file fails the run), for token_env when the
 * variable is set and not empty (unset: the agent uses its own login). */
bool hv_api_active (const hv_api_credential *c, char *const *host_env);
/* The active item that keeps the variable `name` out of the sandbox
 * (its token_env, or a key or base URL variable of its provider), or
 * NULL. */
const hv_api_credential *hv_api_withholding (const hv_policy *p, char *const *host_env, const char *name);
/* The same whether or not the item is active (for explain). */
const hv_api_credential *hv_api_withholder (const hv_policy *p, const char *name);
/* What the sandbox gets for the active items: the base URL and the
 * placeholder, NAME and value (appended to out). */
void hv_api_sandbox_vars (const hv_policy *p, char *const *host_env, oci_kv_list *out);
/* The policy's own conflicts with the gateway, checked once extends are
 * merged: host networking (the gateway's listener needs the sandbox's
 * own loopback), and env.set_from_env or set_from_file reading an item's
 * key into a sandbox variable.  -1 with *err naming file:line:column. */
int hv_api_validate (const hv_policy *p, hv_error **err);

/* `haven policy explain`'s part for credentials.api (policy_env_explain.c). */
void hv_api_explain (const hv_policy *p, char *const *host_env, FILE *out);
#endif
