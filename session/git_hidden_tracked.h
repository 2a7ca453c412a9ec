/* Files the policy hides that git tracks (policies/README.md, "Git in
 * the sandbox").  A hidden file is a bind of /dev/null, a character device,
 * which git cannot stage: with a tracked .env hidden, `git add -A` and
 * `git commit -a` failed ("can only add regular files").  An empty
 * regular file instead would make git commit the secret emptied, and a
 * missing one commit its deletion, silently.
 *
 * So haven reads the project's index (<project>/.git/index, the
 * top-level repository only) before the run.  A tracked file the policy
 * hides is still hidden (`haven policy explain` says hidden, and a
 * committed .env was once shown): the sandbox sees a read-only file of
 * blank lines of the staged size, and git reads it through a clean filter
 * (core.attributesFile and filter.haven-hidden-N in haven's system-level
 * config) that gives the blob the index named at the start, `git
 * cat-file blob OID`.  git finds the file unchanged (same size, same
 * content once filtered), so `git add -A` and `git commit -a` pass it by
 * and never commit the blank lines; haven never reads the file itself.
 * The content remains in .git, which the sandbox reads (git show
 * HEAD:.env): only history rewriting removes a committed secret.
 *
 * Where the filter may not decide, the file stays /dev/null and git
 * refuses it loudly rather than commit blank lines: the repository's own
 * core.attributesFile or an include (its config, and the host's global
 * config where the policy shows it), a .gitattributes (on the file's way) or
 * .git/info/attributes naming any filter, a name the attribute file
 * cannot write literally, a file over the size limits; haven says so at
 * the start.  The compiler lays the placeholders only when the sandbox's
 * GIT_CONFIG_SYSTEM is haven's config (policy_compile.c). */
#ifndef HAVEN_GIT_HIDDEN_TRACKED_H
#define HAVEN_GIT_HIDDEN_TRACKED_H

#include "error.h"
#include "oci_spec.h"
#include "policy.h"
#include "run_ctx.h"

/* paths[i] (absolute, in the project) is shown as the placeholder
 * snapshots[i] (<bundle>/git-shown-N); the filters are added to
 * <bundle>/git-config (*git_config: its path, set when it was NULL) and
 * *git_attributes names <bundle>/git-attributes (NULL: no placeholder).
 * Errors reading the index are not fatal: every hidden file then stays
 * /dev/null. */
int hv_git_hidden_tracked (const hv_policy *p, const struct hv_run_ctx *ctx, const char *bundle, char **git_config,
                           char **git_attributes, oci_strv *paths, oci_strv *snapshots, hv_error **err);
#endif
