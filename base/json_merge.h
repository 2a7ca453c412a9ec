/* Merging a JSON patch into a document, for `update`: the container's saved
 * config.json gets the new linux.resources merged in, so that a later
 * `update`, `exec` or `delete` reads the resources the cgroup really has.
 *
 * Merge rules (those of runc's update, on JSON values):
 *   - objects merge member by member; a null member in the patch removes
 *     the document's member;
 *   - scalars and arrays in the patch replace the document's;
 *   - except arrays under "blockIO" (weightDevice, throttle*), whose
 *     elements are devices: an element of the patch updates the element
 *     with the same major:minor, or is appended. */
#ifndef HAVEN_JSON_MERGE_H
#define HAVEN_JSON_MERGE_H

#include <stddef.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "error.h"

/* Emit a parsed value unchanged (numbers keep their original text). */
void jm_gen_value (yajl_gen g, yajl_val v);
/* Emit `base` with `patch` merged in (either may be NULL). */
void jm_gen_merged (yajl_gen g, yajl_val base, yajl_val patch);

/* Parse `text` (named `name` in errors), merge `patch_text` (named
 * `patch_name`) at the object path keys[0..n_keys) and return the new
 * document, compact, in *out.  Objects missing along the path are created. */
int jm_merge_at (const char *text, const char *name, const char *const *keys, size_t n_keys, const char *patch_text,
                 const char *patch_name, char **out, hv_error **err);
#endif
