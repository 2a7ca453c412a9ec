/* Credentials a policy gives the sandbox on purpose, gathered on the
 * host before the config is compiled: the values of env.set_from_file
 * and env.set_from_env, the ssh-agent socket (credentials.ssh_agent) and
 * a git credentials file for credentials.git (policies/README.md,
 * "Credentials"); and the model API keys of credentials.api, which the
 * sandbox never gets (the monitor's gateway uses them). */
#ifndef HAVEN_RUN_CREDENTIALS_H
#define HAVEN_RUN_CREDENTIALS_H

#include "container.h"
#include "error.h"
#include "oci_spec.h"
#include "policy.h"
#include "run_ctx.h"

struct hv_run_credentials
{
  oci_kv_list env;        /* NAME=value for env.set_from_* */
  char *ssh_agent_socket; /* the host's agent socket, real path */
  char *git_credentials;  /* bundle/git, holding the credentials file, or NULL */
  oci_strv files;         /* token files read (for hv_check_secret_files) */
  /* credentials.api keys of the items this run serves ("api:PROVIDER"),
   * for hv_create_opts.service_secrets: in memory only, never in the
   * config, an annotation, a file or the sandbox's environment. */
  struct hv_service_secret *services;
  size_t n_services;
};

/* Reads what p asks for (ctx: the caller's home and environment) and
 * points ctx at it; the git credentials file is written into bundle.
 * Every error names the policy entry (file:line:column). */
int hv_run_credentials_prepare (const hv_policy *p, struct hv_run_ctx *ctx, const char *bundle,
                                struct hv_run_credentials *out, hv_error **err);
/* 0 when no key of out->services appears in the compiled config; -1
 * naming the item (never the key) when one does: whatever way it took
 * (a variable that happened to hold it too), the run does not start. */
int hv_run_credentials_check_config (const hv_policy *p, const struct hv_run_credentials *c, const char *config_json,
                                     hv_error **err);
/* Forgets the values and removes the git directory (before the bundle
 * is removed: it must be empty by then). */
void hv_run_credentials_release (struct hv_run_credentials *c);
#endif
