/* A policy on top of a config.json made by Docker or Podman. */
#ifndef HAVEN_POLICY_APPLY_H
#define HAVEN_POLICY_APPLY_H

#include "error.h"
#include "policy.h"

/* Tighten an existing config.json (Docker's, Podman's) with a policy:
 * never loosens anything it already restricts. */
int hv_policy_apply (const hv_policy *p, const char *config_json, const char *name, char **out, hv_error **err);
#endif
