/* Unit tests of the live git check of engine containers
 * (runtime/monitor/monitor_git.c): a name git reads made in a watched place is
 * quarantined when the monitor reads the events, and a monitor without
 * inotify says so in the trail. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "audit_trail.h"
#include "monitor_git.h"
#include "project_guard.h"
#include "utils.h"

struct world
{
  char dir[64];
  char *project;
  char *trail_path;
  int trail_fd;
  struct hv_audit_trail trail;
  hv_project_guard *guard;
};

static void
put_file (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
}

static bool
exists (const char *dir, const char *rel)
{
  cleanup_free char *p = xasprintf ("%s/%s", dir, rel);
  struct stat st;
  return lstat (p, &st) == 0;
}

static char *
slurp (const char *path)
{
  FILE *f = fopen (path, "r");
  assert_non_null (f);
  char *text = xmalloc0 (1 << 16);
  size_t n = fread (text, 1, (1 << 16) - 1, f);
  text[n] = '\0';
  fclose (f);
  return text;
}

/* A project with a repository (HEAD, objects, refs, hooks, config) and a
 * trail file. */
static void
world_make (struct world *w)
{
  strcpy (w->dir, "/tmp/hv-mgit-XXXXXX");
  assert_non_null (mkdtemp (w->dir));
  w->project = xasprintf ("%s/p", w->dir);
  cleanup_free char *mk = xasprintf ("mkdir -p %s/.git/objects %s/.git/refs/heads %s/.git/hooks %s/src", w->project,
                                     w->project, w->project, w->project);
  assert_int_equal (system (mk), 0);
  cleanup_free char *head = xasprintf ("%s/.git/HEAD", w->project);
  put_file (head, "ref: refs/heads/main\n");
  cleanup_free char *cfg = xasprintf ("%s/.git/config", w->project);
  put_file (cfg, "[core]\n\trepositoryformatversion = 0\n");
  w->trail_path = xasprintf ("%s/trail.jsonl", w->dir);
  w->trail_fd = open (w->trail_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  assert_true (w->trail_fd >= 0);
  hv_audit_trail_init (&w->trail, w->trail_fd, "test", "ctr");
  hv_error *err = NULL;
  if (hv_project_guard_snapshot_with_dirs (w->project, &w->guard, &err) < 0)
    fail_msg ("snapshot: %s", err->msg);
}

static void
world_remove (struct world *w)
{
  hv_project_guard_free (w->guard);
  hv_audit_trail_release (&w->trail);
  close (w->trail_fd);
  cleanup_free char *rm = xasprintf ("rm -rf %s", w->dir);
  assert_int_equal (system (rm), 0);
  free (w->project);
  free (w->trail_path);
}

/* A commondir in the git directory, a repository made in a directory
 * created after the watches (its config first empty, then filled): each
 * gone once the monitor has read the events. */
static void
test_new_names_quarantined (void **state)
{
  (void) state;
  struct world w;
  world_make (&w);
  hv_monitor_git *mg = hv_monitor_git_new (&w.guard, 1);
  assert_non_null (mg);
  assert_true (hv_monitor_git_inotify_fd (mg) >= 0);
  cleanup_free char *commondir = xasprintf ("%s/.git/commondir", w.project);
  put_file (commondir, "../elsewhere\n");
  hv_monitor_git_ready (mg, &w.trail);
  assert_false (exists (w.project, ".git/commondir"));

  cleanup_free char *mk = xasprintf ("mkdir -p %s/src/dep/.git/objects %s/src/dep/.git/refs", w.project, w.project);
  assert_int_equal (system (mk), 0);
  cleanup_free char *cfg = xasprintf ("%s/src/dep/.git/config", w.project);
  put_file (cfg, "");
  usleep ((HV_MONITOR_GIT_INTERVAL_MS + 50) * 1000);
  hv_monitor_git_ready (mg, &w.trail);
  assert_true (exists (w.project, "src/dep/.git/config")); /* nothing to run yet */
  usleep ((HV_MONITOR_GIT_INTERVAL_MS + 50) * 1000);
  put_file (cfg, "[core]\n\tfsmonitor = \"touch /tmp/x; false\"\n");
  hv_monitor_git_ready (mg, &w.trail);
  assert_false (exists (w.project, "src/dep/.git/config"));
  cleanup_free char *trail = slurp (w.trail_path);
  assert_non_null (strstr (trail, "quarantined .git/commondir (created by the sandbox"));
  assert_non_null (strstr (trail, "quarantined src/dep/.git/config (the sandbox set core.fsmonitor"));
  hv_monitor_git_free (mg);
  world_remove (&w);
}

/* A core.hooksPath directory that did not exist: a hook made in it
 * (with the directories on the way, mkdir -p) is quarantined. */
static void
test_hooks_path_made_later (void **state)
{
  (void) state;
  struct world w;
  world_make (&w);
  cleanup_free char *cfg = xasprintf ("%s/.git/config", w.project);
  put_file (cfg, "[core]\n\thooksPath = tools/githooks\n");
  hv_project_guard_free (w.guard);
  hv_error *err = NULL;
  assert_int_equal (hv_project_guard_snapshot_with_dirs (w.project, &w.guard, &err), 0);
  hv_monitor_git *mg = hv_monitor_git_new (&w.guard, 1);
  cleanup_free char *mk = xasprintf ("mkdir -p %s/tools/githooks", w.project);
  assert_int_equal (system (mk), 0);
  cleanup_free char *hook = xasprintf ("%s/tools/githooks/pre-commit", w.project);
  put_file (hook, "#!/bin/sh\ntouch /tmp/x\n");
  hv_monitor_git_ready (mg, &w.trail);
  usleep ((HV_MONITOR_GIT_INTERVAL_MS + 50) * 1000);
  hv_monitor_git_ready (mg, &w.trail);
  assert_false (exists (w.project, "tools/githooks/pre-commit"));
  hv_monitor_git_free (mg);
  world_remove (&w);
}

/* A bare repository made during the run (a copy of .git: git finds it
 * from inside), its config filled after the copy: quarantined. */
static void
test_bare_copy_quarantined (void **state)
{
  (void) state;
  struct world w;
  world_make (&w);
  hv_monitor_git *mg = hv_monitor_git_new (&w.guard, 1);
  cleanup_free char *cp = xasprintf ("cp -a %s/.git %s/src/crafted", w.project, w.project);
  assert_int_equal (system (cp), 0);
  hv_monitor_git_ready (mg, &w.trail);
  usleep ((HV_MONITOR_GIT_INTERVAL_MS + 50) * 1000);
  cleanup_free char *cfg = xasprintf ("%s/src/crafted/config", w.project);
  put_file (cfg, "[core]\n\tfsmonitor = \"touch /tmp/x; false\"\n");
  hv_monitor_git_ready (mg, &w.trail);
  assert_false (exists (w.project, "src/crafted/config"));
  hv_monitor_git_free (mg);
  world_remove (&w);
}

/* Events within the interval of the last check are checked when the
 * timer fires, not lost. */
static void
test_events_within_interval_checked_later (void **state)
{
  (void) state;
  struct world w;
  world_make (&w);
  hv_monitor_git *mg = hv_monitor_git_new (&w.guard, 1);
  cleanup_free char *commondir = xasprintf ("%s/.git/commondir", w.project);
  put_file (commondir, "x\n");
  hv_monitor_git_ready (mg, &w.trail); /* checked now */
  put_file (commondir, "y\n");
  hv_monitor_git_ready (mg, &w.trail); /* within the interval: the timer is armed */
  assert_true (exists (w.project, ".git/commondir"));
  usleep ((HV_MONITOR_GIT_INTERVAL_MS + 50) * 1000);
  hv_monitor_git_ready (mg, &w.trail);
  assert_false (exists (w.project, ".git/commondir"));
  hv_monitor_git_free (mg);
  world_remove (&w);
}

/* A host agent's settings (runtime/guard/include/agent_config.h): a command written in
 * place into the user's file (it gets its content back), a new .mcp.json,
 * settings made in a directory created after the watches: each taken
 * out once the monitor has read the events; a data-only change stays. */
static void
test_agent_settings_checked_live (void **state)
{
  (void) state;
  struct world w;
  world_make (&w);
  const char *user = "{\"permissions\":{\"allow\":[]}}";
  cleanup_free char *mk = xasprintf ("mkdir -p %s/src/.claude/hooks", w.project);
  assert_int_equal (system (mk), 0);
  cleanup_free char *settings = xasprintf ("%s/src/.claude/settings.json", w.project);
  put_file (settings, user);
  hv_project_guard_free (w.guard);
  hv_error *err = NULL;
  assert_int_equal (hv_project_guard_snapshot_with_dirs (w.project, &w.guard, &err), 0);
  hv_monitor_git *mg = hv_monitor_git_new (&w.guard, 1);
  assert_non_null (mg);

  FILE *f = fopen (settings, "r+"); /* in place: the same inode */
  assert_non_null (f);
  fputs ("{\"permissions\":{\"allow\":[]},\"apiKeyHelper\":\"touch /tmp/x\"}", f);
  fclose (f);
  hv_monitor_git_ready (mg, &w.trail);
  cleanup_free char *now = slurp (settings);
  assert_string_equal (now, user);

  usleep ((HV_MONITOR_GIT_INTERVAL_MS + 50) * 1000);
  cleanup_free char *mcp = xasprintf ("%s/.mcp.json", w.project);
  put_file (mcp, "{\"mcpServers\":{\"x\":{\"command\":\"touch\"}}}");
  hv_monitor_git_ready (mg, &w.trail);
  assert_false (exists (w.project, ".mcp.json"));

  usleep ((HV_MONITOR_GIT_INTERVAL_MS + 50) * 1000);
  cleanup_free char *mk2 = xasprintf ("mkdir -p %s/src/new/.gemini", w.project);
  assert_int_equal (system (mk2), 0);
  cleanup_free char *gemini = xasprintf ("%s/src/new/.gemini/settings.json", w.project);
  put_file (gemini, "{\"mcpServers\":{\"x\":{\"command\":\"touch\"}}}");
  hv_monitor_git_ready (mg, &w.trail);
  usleep ((HV_MONITOR_GIT_INTERVAL_MS + 50) * 1000);
  hv_monitor_git_ready (mg, &w.trail);
  assert_false (exists (w.project, "src/new/.gemini/settings.json"));

  usleep ((HV_MONITOR_GIT_INTERVAL_MS + 50) * 1000);
  put_file (settings, "{\"permissions\":{\"allow\":[\"Bash(make)\"]}}");
  hv_monitor_git_ready (mg, &w.trail);
  usleep ((HV_MONITOR_GIT_INTERVAL_MS + 50) * 1000);
  hv_monitor_git_ready (mg, &w.trail);
  cleanup_free char *data = slurp (settings);
  assert_string_equal (data, "{\"permissions\":{\"allow\":[\"Bash(make)\"]}}");

  usleep ((HV_MONITOR_GIT_INTERVAL_MS + 50) * 1000);
  cleanup_free char *script = xasprintf ("%s/src/.claude/hooks/format.sh", w.project);
  put_file (script, "#!/bin/sh\ntouch /tmp/x\n");
  hv_monitor_git_ready (mg, &w.trail);
  assert_false (exists (w.project, "src/.claude/hooks/format.sh"));

  cleanup_free char *trail = slurp (w.trail_path);
  assert_non_null (strstr (trail, "quarantined src/.claude/hooks/format.sh (created by the sandbox; code Claude Code runs"));
  assert_non_null (strstr (trail, "quarantined src/.claude/settings.json (the sandbox set apiKeyHelper"));
  assert_non_null (strstr (trail, "quarantined .mcp.json (the sandbox set mcpServers"));
  assert_non_null (strstr (trail, "quarantined src/new/.gemini/settings.json (the sandbox set mcpServers"));
  hv_monitor_git_free (mg);
  world_remove (&w);
}

/* A .mcp.json nested a million levels deep (2 MB, under the guard's
 * 4 MiB read limit) naming a command: it crashed the monitor (yajl's
 * tree and the canonical form recurse once a level) before it could be
 * quarantined; now it is refused unread and quarantined. */
static void
test_agent_settings_nested_deep (void **state)
{
  (void) state;
  struct world w;
  world_make (&w);
  hv_monitor_git *mg = hv_monitor_git_new (&w.guard, 1);
  assert_non_null (mg);
  const size_t depth = 1000000;
  char *text = xmalloc0 (2 * depth + 64), *p = text;
  p += sprintf (p, "{\"mcpServers\":");
  memset (p, '[', depth);
  p += depth;
  p += sprintf (p, "{\"command\":\"touch\"}");
  memset (p, ']', depth);
  p += depth;
  strcpy (p, "}");
  cleanup_free char *mcp = xasprintf ("%s/.mcp.json", w.project);
  put_file (mcp, text);
  free (text);
  hv_monitor_git_ready (mg, &w.trail);
  assert_false (exists (w.project, ".mcp.json"));
  cleanup_free char *trail = slurp (w.trail_path);
  assert_non_null (strstr (trail, "quarantined .mcp.json (created by the sandbox and haven cannot read it: nested "
                                  "deeper than 64 levels"));
  hv_monitor_git_free (mg);
  world_remove (&w);
}

/* No inotify (the process has no fd left for it): no live check, and
 * the trail says so. */
static void
test_no_inotify_said (void **state)
{
  (void) state;
  struct world w;
  world_make (&w);
  struct rlimit old, low;
  assert_int_equal (getrlimit (RLIMIT_NOFILE, &old), 0);
  int probe = dup (0);
  assert_true (probe >= 0);
  close (probe);
  low = old;
  low.rlim_cur = (rlim_t) probe; /* every fd from here on is refused */
  assert_int_equal (setrlimit (RLIMIT_NOFILE, &low), 0);
  hv_monitor_git *mg = hv_monitor_git_new (&w.guard, 1);
  assert_int_equal (setrlimit (RLIMIT_NOFILE, &old), 0);
  assert_non_null (mg);
  assert_int_equal (hv_monitor_git_inotify_fd (mg), -1);
  hv_monitor_git_report_limits (mg, &w.trail);
  cleanup_free char *trail = slurp (w.trail_path);
  assert_non_null (strstr (trail, "no live git check (inotify: Too many open files)"));
  hv_monitor_git_free (mg);
  world_remove (&w);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_new_names_quarantined),
    cmocka_unit_test (test_events_within_interval_checked_later),
    cmocka_unit_test (test_hooks_path_made_later),
    cmocka_unit_test (test_bare_copy_quarantined),
    cmocka_unit_test (test_no_inotify_said),
    cmocka_unit_test (test_agent_settings_checked_live),
    cmocka_unit_test (test_agent_settings_nested_deep),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
