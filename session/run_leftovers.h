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

#include <sys/types.h>

#include "error.h"

/* Create the bundle directory of this run under parent and record its
 * owner. */
int hv_run_bundle_create (const char *parent, char **out, hv_error **err);
/* Remove this run's bundle directory (what hv_run_bundle_create and the
 * run put in it). */
void hv_run_bundle_remove (const char *bundle);
/* Remove parentfd's directory name and everything in it, following no
 * link and crossing no mount, at most max_depth levels down (what is
 * deeper stays, and so does the directory).  -1 when it is still there. */
int hv_remove_tree_at (int parentfd, const char *name, int max_depth);
/* The state directories in state_root whose owner (name) is not 0: an
 * owner > 0 is a process that must be gone (pid and start time) for its
 * containers to go; -1 means a leftover of a process known to be gone
 * (its containers are killed and removed). */
void hv_leftover_containers_clean (const char *state_root, pid_t (*owner) (const char *name, void *data), void *data);
/* Remove what killed runs left in parent (bundles) and state_root (state
 * directories and cgroups).  Best effort: problems are logged. */
void hv_run_clean_leftovers (const char *parent, const char *state_root);
#endif
