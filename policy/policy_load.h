/* Finding policies by name and loading them with their `extends` chain. */
#ifndef HAVEN_POLICY_LOAD_H
#define HAVEN_POLICY_LOAD_H

#include "error.h"
#include "policy.h"

/* Load a policy by name (searched in the policy path) or by file path,
 * following `extends`. */
int hv_policy_load (const char *name_or_file, hv_policy **out, hv_error **err);
/* Directories searched for policy names, in order; NULL-terminated. */
char **hv_policy_search_path (void);
/* Every policy name on the search path once (an earlier directory
 * shadows a later one, as hv_policy_find resolves names), sorted (readdir's
 * order is the filesystem's), appended to names. */
void hv_policy_names (oci_strv *names);
/* Resolve a name to a file path, or NULL. */
char *hv_policy_find (const char *name);
#endif
