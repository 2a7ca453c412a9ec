/* Landlock rules from the run.haven.landlock annotation:
 *   {"read": [paths], "write": [paths], "exec": [paths], "bestEffort": false}
 * Everything not granted is denied for the container process and its
 * children, whatever their uid, on top of mounts and capabilities. */
#ifndef HAVEN_LANDLOCK_H
#define HAVEN_LANDLOCK_H

#include <stdbool.h>

#include "error.h"
#include "landlock_rules.h"

/* Landlock ABI version of the running kernel, or -1 if unavailable. */
int hv_landlock_abi (void);
/* Parse the rules and restrict the calling process (needs no_new_privs).
 * Without Landlock the call fails unless the rules say bestEffort.
 * log_new_exec: refusals after execve are logged to the kernel's audit
 * too (landlock_audit.h), where the kernel supports it. */
int hv_landlock_apply (const char *rules_json, bool log_new_exec, hv_error **err);
#endif
