#ifndef HAVEN_POLICY_EXEC_H
#define HAVEN_POLICY_EXEC_H
#include "error.h"
#include "policy.h"
/* Paths (files or directories) that get Landlock's execute right. */
int hv_policy_exec_paths (const hv_policy *p, const char *path_env, oci_strv *exec, hv_error **err);
#endif
