/* The verdict of the trial overlay mount (home_state.c), remembered in the
 * project's state directory so that only the first run of a boot pays
 * for it (a process, two namespaces and an overlay mount: 1-5 ms of every
 * `haven run` here).
 *
 * Only "an overlay can be mounted" is remembered, keyed by everything the
 * trial depends on: the boot, the user, rootless or not, and the device
 * and mount flags of the lower layer and of the state directory.  The
 * verdict is no security decision: it only chooses between mounting the
 * overlay and making the entries read-only at once.  A wrong "it works"
 * (a forged or stale file) makes the runtime's overlay mount fail, which
 * stops the start: copy-on-write entries are never writable for real. */
#ifndef HAVEN_OVERLAY_PROBE_CACHE_H
#define HAVEN_OVERLAY_PROBE_CACHE_H

#include <stdbool.h>

/* The file's name in the project's state directory. */
#define HV_OVERLAY_PROBE_FILE "overlay-probe"

/* The key of a trial with this lower layer, in the state directory
 * state_dfd; NULL when one of its parts cannot be read (then no cache). */
char *hv_overlay_probe_key (const char *lower, int state_dfd, bool rootless);

/* Whether state_dfd holds a verdict "works" for exactly this key, in a
 * regular file of ours that no one else can write. */
bool hv_overlay_probe_cached (int state_dfd, const char *key);

/* Remember "works" for this key (errors ignored: the next run probes). */
void hv_overlay_probe_remember (int state_dfd, const char *key);
#endif
