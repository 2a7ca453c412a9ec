/* The git check of an engine container's projects in its monitor
 * (run.haven.git-guard, container_monitor.h).
 *
 * At the end (hv_monitor_git_check_all), once the container's processes
 * are gone: project_guard.h's check of each project, its report lines in
 * the trail.
 *
 * While the container runs, where prevention cannot reach (a name that did
 * not exist at create cannot be pinned or made read-only): inotify watches
 * on each project's top and every worktree's top (a new `.git`, a new hook
 * manager's file), on every git directory the snapshot found (a new
 * commondir, config, config.worktree or hooks), and on hooks and hook
 * manager directories created during the run (anything in them).  Such an
 * event runs the whole check of that project at once (at most one check
 * per HV_MONITOR_GIT_INTERVAL_MS; events meanwhile are checked when it has
 * passed), so what appeared is quarantined within one walk of the project,
 * not when the container ends.  That is a short window, not a wall: git
 * run on the host in it reads what the container wrote.  Repositories
 * created below a worktree's top are not watched (the end covers them). */
#ifndef HAVEN_MONITOR_GIT_H
#define HAVEN_MONITOR_GIT_H

#include <stddef.h>

#include "audit_trail.h"
#include "project_guard.h"

#define HV_MONITOR_GIT_INTERVAL_MS 200

typedef struct hv_monitor_git hv_monitor_git;

/* Watches for the projects (the guards stay the caller's); NULL when
 * there are none.  Made before init exists. */
hv_monitor_git *hv_monitor_git_new (hv_project_guard **guards, size_t n);
/* The fds the monitor's loop waits on (-1: none). */
int hv_monitor_git_inotify_fd (const hv_monitor_git *w);
int hv_monitor_git_timer_fd (const hv_monitor_git *w);
/* The inotify fd or the timer is readable. */
void hv_monitor_git_ready (hv_monitor_git *w, struct hv_audit_trail *trail);
void hv_monitor_git_free (hv_monitor_git *w);

/* Check every project once (the end of the container). */
void hv_monitor_git_check_all (hv_project_guard **guards, size_t n, struct hv_audit_trail *trail);
#endif
