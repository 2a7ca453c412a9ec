/* Allowed home paths made to exist before the run, so that an
 * agent's first run keeps its login and settings: a home_allow entry
 * (copy-on-write or direct, under hide_home) or a read_write path in the
 * home that does not exist on the host would otherwise not be mounted,
 * and whatever the agent wrote there would vanish with the scratch home.
 * Read-only entries are not made (there would be nothing to read). */
#ifndef HAVEN_HOME_CREATE_H
#define HAVEN_HOME_CREATE_H

#include "error.h"
#include "policy.h"
#include "run_ctx.h"

/* Create the missing entries in the home the sandbox's HOME names (the
 * first of ctx->homes), if the caller owns it: directories 0700, files
 * 0600 (hv_home_path_is_file says which), each component made or opened
 * beneath the home's fd without following a link, never replacing what
 * is there.  An entry that cannot be made is reported on stderr and left
 * out, as a missing one was before; -1 only on an unexpected error. */
int hv_home_entries_create (const hv_policy *p, const struct hv_run_ctx *ctx, hv_error **err);

/* A new file named `name` just created at fd: "{}" when it is .json, so
 * the tool that reads it finds an empty object rather than a parse error. */
int hv_home_json_seed (int fd, const char *name);
#endif
