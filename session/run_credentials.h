/* Credentials a policy gives the sandbox on purpose, gathered on the
 * host before the config is compiled: the values of env.set_from_file
 * and env.set_from_env, the ssh-agent socket (credentials.ssh_agent) and
 * a git credentials file for credentials.git (policies/README.md,
 * "Credentials"). */
#ifndef HAVEN_RUN_CREDENTIALS_H
#define HAVEN_RUN_CREDENTIALS_H

#include "error.h"
#include "oci_spec.h"
#include "policy.h"
#include "run_ctx.h"

struct hv_run_credentials
{
  oci_kv_list env;        /* NAME=value for env.set_from_* */
  char *ssh_agent_socket; /* the host's agent socket, real path */
  /* credentials.ssh_agent {keys: [...]}: bundle/ssh-agent, where create
   * binds the view's socket, and the keys' fingerprints; NULL, empty: none. */
  char *ssh_agent_view_dir;
  oci_strv ssh_agent_view_keys;
  char *git_credentials;  /* bundle/git, holding the credentials file, or NULL */
  oci_strv files;         /* token files read (for hv_check_secret_files) */
};

/* Reads what p asks for (ctx: the caller's home and environment) and
 * points ctx at it; the git credentials file is written into bundle.
 * Every error names the policy entry (file:line:column). */
int hv_run_credentials_prepare (const hv_policy *p, struct hv_run_ctx *ctx, const char *bundle,
                                struct hv_run_credentials *out, hv_error **err);
/* Forgets the values and removes the git directory (before the bundle
 * is removed: it must be empty by then). */
void hv_run_credentials_release (struct hv_run_credentials *c);
#endif
