/* Expanding the path patterns of a policy against the host.
 *
 * Plain patterns use glob(3).  A "**" component ("DIR/ ** /NAME") means
 * "at any depth below DIR": it is matched in one walk of DIR, with no
 * depth limit, because a secret one directory deeper than a limit would
 * otherwise stay visible.  The walk is bounded by a number of entries;
 * past it the expansion fails (fail closed) instead of hiding only part
 * of what the policy names. */
#ifndef HAVEN_POLICY_GLOB_H
#define HAVEN_POLICY_GLOB_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "oci_spec.h"

/* Entries a "**" walk may visit before it gives up. */
#define HV_GLOB_MAX_ENTRIES 2000000

/* Appends every existing path matching the absolute pattern to out.
 * max_entries bounds each "**" walk (0: HV_GLOB_MAX_ENTRIES). */
int hv_glob_expand (const char *pattern, size_t max_entries, oci_strv *out, hv_error **err);
/* The same for n patterns at once: those with "**" and the same directory
 * before it share one walk, and max_entries bounds all walks together. */
int hv_glob_expand_set (char *const *patterns, size_t n, size_t max_entries, oci_strv *out, hv_error **err);
/* Does the absolute path match the absolute pattern, as expanding the
 * pattern would have found it? */
bool hv_glob_match (const char *pattern, const char *path);
#endif
