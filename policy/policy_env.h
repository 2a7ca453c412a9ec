/* The environment a sandboxed command gets from the host's. */
#ifndef HAVEN_POLICY_ENV_H
#define HAVEN_POLICY_ENV_H

#include "policy.h"

/* pass/deny globs and set values; credentials never pass (policy_env.c). */
char **hv_policy_filter_env (const hv_policy *p, char **host_env);
#endif
