/* Files the policy hides that git tracks (issue 11, "Git works by
 * default").  A hidden file is a bind of /dev/null, a character device,
 * which git cannot stage: with a tracked .env hidden, `git add -A` and
 * `git commit -a` failed ("can only add regular files").  An empty
 * regular file instead would make git commit the secret emptied, and a
 * missing one commit its deletion, silently.
 *
 * So haven reads the project's index (<project>/.git/index, the
 * top-level repository only) before the run.  A tracked file the policy
 * hides whose content is exactly the blob the index names is no secret
 * from the sandbox, which can read that blob in .git: it is shown as a
 * read-only snapshot of that content (taken in the run's bundle, hashed
 * from the very bytes shown, so a change made on the host during the run
 * is not seen), and git finds it unchanged.  One whose content differs
 * (a secret edited and not committed) stays /dev/null: git refuses it
 * loudly instead of committing anything, and haven says so at the start.
 * Untracked hidden files stay /dev/null, which git skips silently. */
#ifndef HAVEN_GIT_HIDDEN_TRACKED_H
#define HAVEN_GIT_HIDDEN_TRACKED_H

#include "error.h"
#include "oci_spec.h"
#include "policy.h"
#include "run_ctx.h"

/* paths[i] (absolute, in the project) is shown as the snapshot
 * snapshots[i] (<bundle>/git-shown-N).  Errors reading the index are
 * not fatal: every hidden file then stays /dev/null. */
int hv_git_hidden_tracked (const hv_policy *p, const struct hv_run_ctx *ctx, const char *bundle, oci_strv *paths,
                           oci_strv *snapshots, hv_error **err);
#endif
