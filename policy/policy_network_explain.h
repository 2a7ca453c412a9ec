/* The "Network" section of `haven policy explain`: what a policy's
 * network rules let through, what they deny, what is enforced today and
 * the limits of name-based rules. */
#ifndef HAVEN_POLICY_NETWORK_EXPLAIN_H
#define HAVEN_POLICY_NETWORK_EXPLAIN_H

#include <stdio.h>

#include "policy.h"

void hv_net_explain (const hv_policy *p, FILE *out);
#endif
