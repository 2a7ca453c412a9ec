/* home_allow entries on the host: the paths a pattern names, and the names
 * of their copy-on-write state, which the compiler writes into the
 * config's overlay mounts and the session layer creates
 * (session/home_state.h). */
#ifndef HAVEN_HOME_ALLOW_H
#define HAVEN_HOME_ALLOW_H

#include <stdbool.h>

#include "oci_spec.h"
#include "policy.h"
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

/* write: data entries (policies/README.md, "Agent state: data, private,
 * the rest copy-on-write"). */

/* Claude Code's name for a project's directory under ~/.claude/projects:
 * the path with every UTF-16 unit that is not an ASCII letter or digit
 * made '-'; past 200 characters, the first 200, '-' and the path's
 * 32-bit string hash (JavaScript's `h = 31*h + unit`), its absolute value
 * in base 36. */
char *hv_project_dashed (const char *path);
/* A data or private sub-path with {project_dashed} (for ctx->project)
 * and {cwd_dashed} (for ctx->cwd, where the command starts: the project
 * or a directory in it) replaced; an empty string when there is none. */
char *hv_home_sub_expand (const char *sub, const struct hv_run_ctx *ctx);
/* Whether sub-path k of v (data, protect) expands to the same path as an
 * earlier one ({cwd_dashed} is {project_dashed} when the command starts
 * in the project): bound once. */
bool hv_home_sub_repeated (const oci_strv *v, size_t k, const struct hv_run_ctx *ctx);
/* The names directly in the real directory `dir` that are private for
 * this entry: matched by its `private` patterns (fnmatch; the last
 * matching one wins, a "!pattern" keeps the name shared), and not a
 * `data` sub-path itself.  Links are never private (nothing is bound over
 * them) and never followed; nor is `dir`.  Sorted. */
void hv_home_private_names (const hv_home_access *a, const struct hv_run_ctx *ctx, const char *dir, oci_strv *out);
/* <state>/private/<tag of dir/name>: the project's own copy of one
 * private name (a directory or a file, as the real one). */
char *hv_home_private_entry (const char *state, const char *dir, const char *name);
#endif
