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
/* <state>/home/<tag> for one expanded copy-on-write path. */
char *hv_home_state_entry (const char *state, const char *path);
/* Whether a home path that does not exist yet is made as a file (else a
 * directory): its last component has an extension (a '.' after its first
 * character: ".claude.json") or ends in "rc", "config", "profile" or
 * "history" (".npmrc", ".gitconfig", ".bash_history"; ".config" itself is
 * a directory), and the path does not end in '/'. */
bool hv_home_path_is_file (const char *path);
#endif
