/* Compile a policy into an OCI config.json for `haven run`: the host seen
 * through the policy, the project writable, secrets absent. */
#ifndef HAVEN_POLICY_COMPILE_H
#define HAVEN_POLICY_COMPILE_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "policy.h"

struct hv_run_ctx
{
  const char *project; /* absolute, real path */
  const char *home;    /* $HOME, or NULL */
  const char *cwd;     /* where the command starts */
  const char *rootfs;  /* empty directory the host root is mounted on */
  uid_t uid;
  gid_t gid;
  bool rootless; /* not root: a user namespace maps the caller */
  bool terminal;
  char **argv;
  char **host_env;
};

/* The Landlock rules travel to the runtime in this annotation. */
#define HV_LANDLOCK_ANNOTATION "run.haven.landlock"
#define HV_POLICY_ANNOTATION "run.haven.policy"

int hv_policy_compile (const hv_policy *p, const struct hv_run_ctx *ctx, char **json, hv_error **err);
/* The environment the command gets: pass/deny globs and set values. */
char **hv_policy_filter_env (const hv_policy *p, char **host_env);
#endif
