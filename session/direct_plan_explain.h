/* `haven policy explain`'s section "Without namespaces": each rule's
 * verdict as hv_direct_plan_build gives it on this host, for the current
 * directory as the project. */
#ifndef HAVEN_DIRECT_PLAN_EXPLAIN_H
#define HAVEN_DIRECT_PLAN_EXPLAIN_H

#include <stdio.h>

#include "policy.h"

/* Prints the section to out.  What keeps the plan from being made here
 * (the current directory cannot be a project) is said in the section
 * instead of failing the explain. */
void hv_direct_plan_explain (const hv_policy *p, FILE *out);
#endif
