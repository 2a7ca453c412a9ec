/* The git check of an engine container's projects in its monitor
 * (run.haven.git-guard, container_monitor.h).
 *
 * At the end (hv_monitor_git_check_all), once the container's processes
 * are gone: project_guard.h's check of each project, its report lines in
 * the trail.
 *
 * While the container runs, where prevention cannot reach (a name that did
 * not exist at create cannot be pinned or made read-only): inotify watches
 * on the project's directories, breadth-first from its top (a new `.git`
 * anywhere, a new hook manager's file where a `.git` is), on every git
 * directory (a new commondir, config, config.worktree or hooks), and on
 * hooks and hook manager directories made during the run (anything in
 * them); a directory made during the run is watched and looked into at
 * once.  Such a name runs the whole check of that project (at most one
 * check per HV_MONITOR_GIT_INTERVAL_MS; events meanwhile are checked when
 * it has passed), so what appeared is quarantined within about one walk of
 * the project, not when the container ends.  That is a short window, not a
 * wall: git run on the host in it reads what the container wrote.  At most
 * MAX_WATCHES directories are watched (the trail says when they ran out;
 * the end check covers the rest). */
#ifndef HAVEN_MONITOR_GIT_H
#define HAVEN_MONITOR_GIT_H

#include <stddef.h>

#include "audit_trail.h"
#include "project_guard.h"

#define HV_MONITOR_GIT_INTERVAL_MS 200

typedef struct hv_monitor_git hv_monitor_git;

/* Watches for the projects (the guards stay the caller's); NULL when
 * there are none.  Made before init exists.  Without inotify (the user's
 * fs.inotify.max_user_instances reached) it has no fds and says so in the
 * trail (hv_monitor_git_report_limits). */
hv_monitor_git *hv_monitor_git_new (hv_project_guard **guards, size_t n);
/* The fds the monitor's loop waits on (-1: none). */
int hv_monitor_git_inotify_fd (const hv_monitor_git *w);
int hv_monitor_git_timer_fd (const hv_monitor_git *w);
/* The inotify fd or the timer is readable. */
void hv_monitor_git_ready (hv_monitor_git *w, struct hv_audit_trail *trail);
/* Once, into the trail: no live check, or the watches ran out (the end
 * check covers the rest). */
void hv_monitor_git_report_limits (hv_monitor_git *w, struct hv_audit_trail *trail);
void hv_monitor_git_free (hv_monitor_git *w);

/* Check every project once (the end of the container). */
void hv_monitor_git_check_all (hv_project_guard **guards, size_t n, struct hv_audit_trail *trail);
#endif
