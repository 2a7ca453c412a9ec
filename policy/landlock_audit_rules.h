/* Which policy item each kind of Landlock refusal stands for, for the
 * trail's landlock-denied records (runtime/monitor/landlock_audit.h): the
 * run.haven.landlock.audit annotation of `haven run` with an audit log. */
#ifndef HAVEN_LANDLOCK_AUDIT_RULES_H
#define HAVEN_LANDLOCK_AUDIT_RULES_H

#include "policy.h"

/* {"execute": ITEM, "write": ITEM} (a new string), or NULL when the
 * policy keeps no audit log (nobody would read the refusals, and the
 * runtime then leaves Landlock's logging as the kernel has it). */
char *hv_policy_landlock_audit_json (const hv_policy *p);
#endif
