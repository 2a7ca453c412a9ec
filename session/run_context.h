/* What the policy compiler needs to know about a run on this workstation
 * (struct hv_run_ctx, policy_compile.h): the project, the caller's homes
 * and other users', ids, terminal, command and environment.  Used by
 * `haven run` and `haven policy compile`. */
#ifndef HAVEN_RUN_CONTEXT_H
#define HAVEN_RUN_CONTEXT_H

#include "error.h"
#include "oci_spec.h"
#include "policy_compile.h"

struct hv_run_context
{
  struct hv_run_ctx ctx; /* points into the fields below */
  char *project;         /* realpath of the project */
  char *cwd;
  oci_strv homes;        /* this user's homes ($HOME and the passwd entry) */
  oci_strv other_homes;  /* every other user's home */
  oci_strv engine_roots; /* container engines' data, hidden too */
};

/* project_opt: --project, or NULL for the current directory.  Refuses a
 * project that is (or contains) a home.  Release with
 * hv_run_context_release, also after a failure. */
int hv_run_context_init (const char *project_opt, char **cmd, struct hv_run_context *rc, hv_error **err);
void hv_run_context_release (struct hv_run_context *rc);
#define cleanup_run_context __attribute__ ((cleanup (hv_run_context_release)))
#endif
