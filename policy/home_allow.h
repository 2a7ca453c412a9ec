/* home_allow entries on the host: the paths a pattern names, and the names
 * of their copy-on-write state, which the compiler writes into the
 * config's overlay mounts and the session layer creates
 * (session/home_state.h). */
#ifndef HAVEN_HOME_ALLOW_H
#define HAVEN_HOME_ALLOW_H

#include <stdbool.h>

#include "oci_spec.h"
#include "run_ctx.h"

/* The host paths a "~/x" pattern names: x in each of the caller's homes
 * ($HOME's and the password database's); other patterns as they are. */
void hv_home_allow_expand (const char *pattern, const struct hv_run_ctx *ctx, oci_strv *out);
/* A readable, unique name for a path: its last component and a hash of
 * the whole path. */
char *hv_state_tag (const char *path);
/* <state>/home/<tag> for one expanded copy-on-write path: a file's copy,
 * or the layers of a directory that has an overlay of its own. */
char *hv_home_state_entry (const char *state, const char *path);
/* The copy-on-write directories of one home share one overlay of the
 * whole home, each shown through a bind of its own sub-directory: one
 * mount and, at the sandbox's end, one sync of the upper layer's
 * filesystem instead of one per directory.  The home a directory shares
 * with (one of the caller's homes, on whose mount it lies: an overlay
 * never crosses into another mount), or NULL: the directory gets an
 * overlay of its own, as before. */
const char *hv_home_layers_home (const struct hv_run_ctx *ctx, const char *path);
/* <state>/home-layers/<tag of home>: the shared overlay's upper and work
 * directories, one pair per home (two overlays must never share one). */
char *hv_home_layers_dir (const char *state, const char *home);
/* Whether a home path that does not exist yet is made as a file (else a
 * directory): its last component has an extension (a '.' after its first
 * character: ".claude.json") or ends in "rc", "config", "profile" or
 * "history" (".npmrc", ".gitconfig", ".bash_history"; ".config" itself is
 * a directory), and the path does not end in '/'. */
bool hv_home_path_is_file (const char *path);
#endif
