/* The model API gateway in engine containers (Docker): which providers a
 * container's gateway serves, the HV_GATEWAY_ANNOTATION that asks the
 * runtime for it, and the container's environment to match.
 *
 * An engine has no haven run to read a key at each run: the key is in a
 * file the runtime's registration names (haven install docker --api-key
 * PROVIDER=FILE), and the annotation names that file ("key_file"), which
 * create reads outside the container.  A policy's credentials.api item
 * is served where the registration named a file for its provider, and is
 * inactive otherwise, as an item whose token_env is unset is for haven
 * run: the container then gets what env passes, and a note says so.
 *
 * While the gateway serves a provider, none of the variables its agents
 * take a key from (policy_api.h), nor the item's token_env, reaches the
 * container, whatever the engine passed (-e, the image's ENV) and
 * whatever env.pass says: they are replaced by the gateway's base URL and
 * a placeholder.  exec gets the same (hv_engine_gateway_env on its
 * process, from the annotation the container was created with). */
#ifndef HAVEN_ENGINE_GATEWAY_H
#define HAVEN_ENGINE_GATEWAY_H

#include <stddef.h>

#include "error.h"
#include "gateway_route.h"
#include "oci_spec.h"
#include "policy.h"

struct hv_engine_api
{
  char *provider;  /* gateway_route.c's name */
  unsigned port;   /* the listener on 127.0.0.1 in the container's network namespace */
  char *auth;      /* "x-api-key", "bearer", "goog-api-key" */
  char *key_file;  /* absolute host path, or NULL (an annotation that names none: create refuses it) */
  char *token_env; /* the policy item's token_env, withheld too, or NULL */
};

struct hv_engine_gateway
{
  size_t n;
  struct hv_engine_api api[HV_GW_N_PROVIDERS];
};

/* An HV_GATEWAY_ANNOTATION value already in a config (an earlier
 * policy's, or the config's own) into gw, strictly: an object with
 * "apis" only, each entry provider, port (1-65535), auth (one its
 * provider takes) and optionally key_file (absolute), each provider
 * once.  -1 with *err naming where and the JSON path. */
int hv_engine_gateway_parse (const char *text, const char *where, struct hv_engine_gateway *gw, hv_error **err);

/* The policy's credentials.api items whose provider has a file in
 * key_files (by hv_gw_provider; NULL: none registered), each replacing
 * an earlier entry of the same provider (same port, this policy's auth,
 * the registration's file).  What is served and what is not is said in
 * notes (names only, never a value); engine_env (what the engine
 * passes, after the env rules) tells which key variables are withheld. */
void hv_engine_gateway_add (struct hv_engine_gateway *gw, const hv_policy *p, const char *const *key_files,
                            const oci_strv *engine_env, oci_strv *notes);

/* The annotation's value, or NULL when gw serves nothing. */
char *hv_engine_gateway_json (const struct hv_engine_gateway *gw);

/* haven run: the annotation's value for p's active credentials.api items
 * (no key_file: the session hands the keys to create in memory), or NULL
 * when none is active. */
char *hv_api_gateway_annotation (const hv_policy *p, char *const *host_env);

/* env with every key variable of each served provider and its
 * token_env taken out, then its base URL and placeholder added. */
void hv_engine_gateway_env (const struct hv_engine_gateway *gw, oci_strv *env);

void hv_engine_gateway_clear (struct hv_engine_gateway *gw);
#endif
