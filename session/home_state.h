/* Per-project state for home_allow entries: writable
 * home directories must not become code the host runs.  A copy-on-write
 * entry is an overlay whose lower layer is the real directory and whose
 * upper layer lives in
 *   ${XDG_STATE_HOME:-~/.local/state}/haven/projects/<name>-<hash>/home/<entry>/
 * (0700, outside the sandbox's view), so the sandbox's writes never reach
 * the real directory.  A direct entry's protected sub-paths must exist to
 * be bound read-only: missing ones are created empty before the run.
 * The names inside the state directory come from the policy layer
 * (policy/home_allow.h), which the compiler uses too. */
#ifndef HAVEN_HOME_STATE_H
#define HAVEN_HOME_STATE_H

#include "error.h"
#include "policy.h"
#include "run_ctx.h"

/* Create the state directories and probe that an overlay can be mounted
 * here; *state is NULL (entries read-only, said on stderr) when not.
 * One run at a time uses a project's copy-on-write layers: *lock_fd is
 * the lock that says this run does (-1: none taken), to be closed once
 * the sandbox is gone; a run that starts while another holds it gets the
 * entries read-only. */
int hv_home_state_prepare (const hv_policy *p, const struct hv_run_ctx *ctx, char **state, int *lock_fd,
                           hv_error **err);
#endif
