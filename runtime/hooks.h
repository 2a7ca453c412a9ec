/* OCI hooks: each runs with the container state on stdin, its own args
 * and env (nothing inherited), and an optional timeout. */
#ifndef HAVEN_HOOKS_H
#define HAVEN_HOOKS_H

#include "error.h"
#include "oci_spec.h"

/* Run the hooks in order; the first failure stops and is returned,
 * naming the stage ("prestart"), index and path. */
int hv_hooks_run (const oci_hook_list *hooks, const char *stage, const char *state_json, hv_error **err);
#endif
