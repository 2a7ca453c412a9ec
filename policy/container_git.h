/* Git in an engine's container: what git would execute on the host must
 * not be something the container created or changed (policies/README.md,
 * "Git in engine containers").
 *
 * While the container runs (prevention, in its mount namespace): in each
 * writable project, every git directory the guard's walk finds (a `.git`,
 * a submodule's or linked worktree's, a bare repository; at most 64) is
 * pinned (bound onto itself: the container can neither rename, remove nor
 * replace it) with every directory on the way, and its hooks, config,
 * config.worktree and commondir are read-only; for a worktree, the
 * directory core.hooksPath names in the project (and the one above it
 * unless that is the top: husky) and the hook managers' files at its top
 * (hv_git_hook_manager_paths) are read-only; a `.git` file is read-only.
 * Both are pins (the runtime's x-haven.pin, read-only ones with rro), so
 * a path gone since this look fails create rather than being skipped.
 * What another engine mount covers is not the project's in the
 * container: neither pinned nor bound (the end check still looks at it).
 * A link on any of those paths fails create, but for a nested `.git` link
 * (a note; the live check watches it).
 *
 * Names that did not exist at create, and the end: the per-container
 * monitor (run.haven.git-guard; monitor_git.h), which takes the snapshot
 * this walk made (hv_project_guard_keep). */
#ifndef HAVEN_CONTAINER_GIT_H
#define HAVEN_CONTAINER_GIT_H

#include "container_plan_result.h"

/* Adds to plan->pins and plan->pins_ro for every plan->guarded project,
 * but for what another of spec's mounts covers. */
int hv_container_plan_git (const oci_spec *spec, struct hv_container_plan *plan, hv_error **err);
#endif
