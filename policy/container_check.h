/* Does a policy apply to engine containers?  Asked when a runtime is
 * registered with a policy (`haven install docker --policy P`), so a
 * policy that cannot apply fails there, once, instead of at every
 * container dockerd starts. */
#ifndef HAVEN_CONTAINER_CHECK_H
#define HAVEN_CONTAINER_CHECK_H

#include "error.h"
#include "oci_spec.h"
#include "policy.h"

/* Apply p to the config `docker run -v PROJECT:/workspace IMAGE sh`
 * would give, with the host's root filesystem standing for the image
 * (read, never written) and project_dir an empty directory of the
 * caller's.  key_files: the registration's model API key files
 * (hv_policy_apply_keys), or NULL.  What a container cannot have, and
 * what the gateway serves, is appended to notes. */
int hv_policy_check_for_containers (const hv_policy *p, const char *project_dir, const char *const *key_files,
                                    oci_strv *notes, hv_error **err);
#endif
