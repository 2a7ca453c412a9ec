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
 * that is new or changed, a hook manager's file (husky, pre-commit,
 * lefthook) at a worktree's top that is new or changed, and a config that
 * gained or changed a setting
 * that makes git run a program, is moved into
 * <project>/.haven-quarantine/<time>/ (0700, files made non-executable);
 * a changed config of a repository that existed before gets its pre-run
 * content back.  One line on stderr names each item.
 *
 * The same walk records the host's agents' and editors' project settings
 * in every directory (agent_config.h); a command the sandbox added to one
 * is quarantined the same way, a file that existed getting its content
 * back. */
#ifndef HAVEN_PROJECT_GUARD_H
#define HAVEN_PROJECT_GUARD_H

#include <stdio.h>

#include "error.h"
#include "oci_spec.h"

typedef struct hv_project_guard hv_project_guard;

/* Record the project's git execution state; `project` is a real path. */
int hv_project_guard_snapshot (const char *project, hv_project_guard **out, hv_error **err);
/* The same, remembering the project's directories too (for the live
 * check of engine containers: hv_project_guard_dirs). */
int hv_project_guard_snapshot_with_dirs (const char *project, hv_project_guard **out, hv_error **err);
/* After the sandbox has exited: quarantine what changed.  Returns the
 * number of items quarantined, or -1 when one could not be (err says
 * which: the user must not run git there before removing it). */
int hv_project_guard_check (hv_project_guard *g, hv_error **err);
/* Where the check's lines go (stderr by default; the per-container
 * monitor has none and puts them into its trail). */
void hv_project_guard_report_to (hv_project_guard *g, FILE *out);
const char *hv_project_guard_project (const hv_project_guard *g);
/* The core.hooksPath directories in the project (and those above them:
 * husky) the snapshot found set, relative to the project. */
const oci_strv *hv_project_guard_hooks_paths (const hv_project_guard *g);
/* The project's directories a snapshot_with_dirs walked (not those inside
 * git directories; the project itself is ""; at most 262,144 remembered),
 * shallowest first, at most max; appended to out. */
void hv_project_guard_dirs (const hv_project_guard *g, size_t max, oci_strv *out);
/* One walk per create: the policy filter, which walks a project to find
 * its repositories before the container exists, keeps the snapshot for
 * the monitor's check (a later keep of the same project replaces it);
 * take returns it (the caller's to free) or NULL. */
void hv_project_guard_keep (hv_project_guard *g);
hv_project_guard *hv_project_guard_take (const char *project);
/* The git directories (a `.git` directory, or one git takes for a
 * repository: bare, a submodule's, a worktree's) and `.git` files the
 * snapshot found, relative to the project, parents before what they hold;
 * appended to the lists. */
void hv_project_guard_repositories (const hv_project_guard *g, oci_strv *gitdirs, oci_strv *gitfiles);
/* The host agents' settings files (agent_config.h) the snapshot found,
 * relative to the project; appended to out. */
void hv_project_guard_agent_files (const hv_project_guard *g, oci_strv *out);
void hv_project_guard_free (hv_project_guard *g);

/* The hook managers' files and directories, relative to a worktree's top,
 * that the hooks they install run or read commands from (NULL-ended):
 * husky (.husky/), pre-commit (.pre-commit-config.yaml), lefthook
 * (lefthook.yml and its other names, .lefthook/ scripts, the -local
 * variants).  simple-git-hooks writes its commands into the hook files
 * themselves (package.json is read only when it installs them). */
extern const char *const hv_git_hook_manager_paths[];

/* The directory core.hooksPath names in a config text (of the git
 * directory gitdir_rel, relative to the real path `project`), relative to
 * the project; NULL when unset or outside the project. */
char *hv_git_hooks_path_rel (const char *project, const char *gitdir_rel, const char *config, size_t len);
/* The directory above it when that is not the worktree's top (husky 9's
 * .husky/_ runs .husky/NAME), or NULL: guarded like the hooks. */
char *hv_git_hooks_path_parent (const char *gitdir_rel, const char *hooks_rel);

static inline void
cleanup_project_guardp (hv_project_guard **g)
{
  hv_project_guard_free (*g);
}
#define cleanup_project_guard __attribute__ ((cleanup (cleanup_project_guardp)))
#endif
