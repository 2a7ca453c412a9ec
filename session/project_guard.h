/* The project guard: nothing the sandbox writes into the project becomes
 * code that git runs on the host afterwards.
 *
 * Before the run, every git repository in the project (any `.git`
 * directory or file, any directory git would take as a repository) is
 * found and what git would execute from it is recorded: hook files (in
 * hooks/ and in the directory core.hooksPath names), config,
 * config.worktree, commondir and `.git` gitfiles, each identified by
 * (dev, ino, size, ctime, mode), which nothing in the sandbox can forge.
 * After the run the project is walked again; a hook, commondir or gitfile
 * that is new or changed, and a config that gained or changed a setting
 * that makes git run a program, is moved into
 * <project>/.haven-quarantine/<time>/ (0700, files made non-executable);
 * a changed config of a repository that existed before gets its pre-run
 * content back.  One line on stderr names each item. */
#ifndef HAVEN_PROJECT_GUARD_H
#define HAVEN_PROJECT_GUARD_H

#include "error.h"

typedef struct hv_project_guard hv_project_guard;

/* Record the project's git execution state; `project` is a real path. */
int hv_project_guard_snapshot (const char *project, hv_project_guard **out, hv_error **err);
/* After the sandbox has exited: quarantine what changed.  Returns the
 * number of items quarantined, or -1 when one could not be (err says
 * which: the user must not run git there before removing it). */
int hv_project_guard_check (hv_project_guard *g, hv_error **err);
void hv_project_guard_free (hv_project_guard *g);

static inline void
cleanup_project_guardp (hv_project_guard **g)
{
  hv_project_guard_free (*g);
}
#define cleanup_project_guard __attribute__ ((cleanup (cleanup_project_guardp)))
#endif
