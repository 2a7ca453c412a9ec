/* What a killed `haven run` leaves behind, and cleaning it at the next
 * start.
 *
 * A run owns a bundle directory haven-run-<pid>.XXXXXX (with an "owner"
 * file: haven's pid and start time) and a state directory haven-run-<pid>
 * in the state root (with the container's cgroup).  A run that was killed
 * with SIGKILL removes neither.  The next `haven run` removes those whose
 * owner is gone: a bundle whose owner pid no longer runs with the recorded
 * start time (a reused pid is not the owner), a state directory whose
 * container's init is gone (same check, runtime/state.c).  Nothing is
 * followed: entries are opened with O_NOFOLLOW, must belong to us, and
 * only their own entries are unlinked. */
#ifndef HAVEN_RUN_LEFTOVERS_H
#define HAVEN_RUN_LEFTOVERS_H

#include "error.h"

/* Create the bundle directory of this run under parent and record its
 * owner. */
int hv_run_bundle_create (const char *parent, char **out, hv_error **err);
/* Remove this run's bundle directory (what hv_run_bundle_create and the
 * run put in it). */
void hv_run_bundle_remove (const char *bundle);
/* Remove what killed runs left in parent (bundles) and state_root (state
 * directories and cgroups).  Best effort: problems are logged. */
void hv_run_clean_leftovers (const char *parent, const char *state_root);
#endif
