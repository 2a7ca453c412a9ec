/* Compile a policy into an OCI config.json for `haven run`: the host seen
 * through the policy, the project writable, secrets absent. */
#ifndef HAVEN_POLICY_COMPILE_H
#define HAVEN_POLICY_COMPILE_H

#include <stdbool.h>
#include <sys/types.h>
#include <yajl/yajl_gen.h>

#include "error.h"
#include "policy.h"

struct hv_run_ctx
{
  const char *project; /* absolute, real path */
  const char *home;    /* $HOME, or NULL */
  /* The caller's homes ($HOME and the password database's, real paths;
   * NULL: just home) and, to hide as well, the other users' homes. */
  const oci_strv *homes;
  const oci_strv *other_homes;
  const char *cwd;     /* where the command starts */
  const char *rootfs;  /* empty directory the host root is mounted on */
  uid_t uid;
  gid_t gid;
  bool rootless; /* not root: a user namespace maps the caller */
  bool terminal;
  char **argv;
  char **host_env;
  /* With an audit trail: denied system calls are sent to this seccomp
   * listener socket (runtime/audit_monitor.c) instead of failing in the filter. */
  const char *audit_socket;
  /* Per-project state directory holding the upper layers of copy-on-write
   * home_allow entries (home_state.c); NULL: they are bound read-only. */
  const char *home_state;
};

/* The Landlock rules travel to the runtime in this annotation. */
#define HV_LANDLOCK_ANNOTATION "run.haven.landlock"
#define HV_POLICY_ANNOTATION "run.haven.policy"
/* On a config `haven run`/`policy compile` made: the policy it was
 * compiled from, for the record (not a request to apply one, which
 * HV_POLICY_ANNOTATION is). */
#define HV_COMPILED_ANNOTATION "run.haven.compiled-from"

/* Tighten an existing config.json (Docker's, Podman's) with a policy:
 * never loosens anything it already restricts. */
int hv_policy_apply (const hv_policy *p, const char *config_json, const char *name, char **out, hv_error **err);
/* Does the policy's syscall profile deny this system call? */
bool hv_policy_denies_syscall (const hv_policy *p, const char *name);
/* {"seccomp": {...}} with the policy's profile ({} for profile none). */
char *hv_policy_seccomp_json (const hv_policy *p);
/* The JSON array of system call names the policy denies. */
void hv_policy_gen_denied_names (yajl_gen g, const hv_policy *p);

int hv_policy_compile (const hv_policy *p, const struct hv_run_ctx *ctx, char **json, hv_error **err);
/* The environment the command gets: pass/deny globs and set values. */
char **hv_policy_filter_env (const hv_policy *p, char **host_env);
#endif
