/* A policy on top of a config.json made by Docker or Podman. */
#ifndef HAVEN_POLICY_APPLY_H
#define HAVEN_POLICY_APPLY_H

#include "error.h"
#include "policy.h"

/* Tighten an existing config.json (Docker's, Podman's) with a policy:
 * never loosens anything it already restricts.  name is the config's
 * path (its root.path is relative to it).  What the user should know
 * (parts of the policy a container cannot have) is appended to notes. */
int hv_policy_apply (const hv_policy *p, const char *config_json, const char *name, char **out, oci_strv *notes,
                     hv_error **err);
/* hv_policy_apply for a runtime whose registration names the files
 * holding model API keys (key_files by hv_gw_provider, NULL entries or
 * key_files NULL: none): the policy's credentials.api items for those
 * providers are served by the gateway (engine_gateway.h). */
int hv_policy_apply_keys (const hv_policy *p, const char *config_json, const char *name, const char *const *key_files,
                          char **out, oci_strv *notes, hv_error **err);
#endif
