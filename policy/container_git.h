/* Git in an engine's container: what git would execute on the host must
 * not be something the container created or changed.
 *
 * While the container runs (prevention, in its mount namespace): in each
 * writable project, the repository at its top has its `.git` pinned (bound
 * onto itself: the container can neither rename, remove nor replace it),
 * its hooks, config, config.worktree and commondir read-only, and the
 * same for the git directories of its linked worktrees and submodules
 * (worktrees/NAME, modules/NAME); the directory core.hooksPath names in
 * the project (and the one above it unless that is the top: husky) and
 * the hook managers' files at the top (hv_git_hook_manager_paths) are
 * read-only, every directory on the way pinned.  A `.git` file at the top
 * is read-only.  A link on any of those paths fails create.
 *
 * When the container ends (detection, run.haven.git-guard): the projects
 * are recorded at create and checked by the per-container monitor once
 * the container's processes are gone, as haven run's guard does
 * (project_guard.h): new repositories, new hooks, commondir and gitfiles,
 * execution-capable config anywhere in the project. */
#ifndef HAVEN_CONTAINER_GIT_H
#define HAVEN_CONTAINER_GIT_H

#include "container_plan.h"

/* Adds to plan->pins and plan->readonly for every plan->guarded project. */
int hv_container_plan_git (struct hv_container_plan *plan, hv_error **err);
#endif
