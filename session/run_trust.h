/* haven trusts its own binary and its policy files: a sandbox that could
 * rewrite them would run its code unsandboxed at the next `haven run`.
 * Before a run, refuse when any of them lies in a place the sandbox can
 * write. */
#ifndef HAVEN_RUN_TRUST_H
#define HAVEN_RUN_TRUST_H

#include "error.h"
#include "policy.h"

/* `argv0` is how haven was invoked; `config_json` the compiled config
 * (its writable bind mounts are what the sandbox can write besides the
 * project, which always counts as writable). */
int hv_check_run_trust (const hv_policy *p, const char *project, const char *config_json, const char *argv0,
                        hv_error **err);
/* Token files a policy reads (env.set_from_file, credentials.git) are
 * refused, like policy files, where the sandbox could rewrite them. */
int hv_check_secret_files (const oci_strv *files, const char *project, const char *config_json, hv_error **err);
#endif
