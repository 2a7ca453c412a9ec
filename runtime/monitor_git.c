/* The git check in an engine container's monitor: monitor_git.h. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "json_gen.h"
#include "monitor_git.h"
#include "utils.h"

#define MAX_WATCHES 4096
#define MAX_HOOKS_DEPTH 4 /* as deep as the guard looks into a hooks directory */

enum watch_kind
{
  W_TOP,    /* a worktree's top (or a project's): a new .git, a hook manager's file */
  W_GITDIR, /* a git directory: a new commondir, config, config.worktree, hooks */
  W_HOOKS,  /* a hooks or hook manager's directory made during the run: anything */
};

struct watch
{
  int wd;
  enum watch_kind kind;
  size_t project;
  char *path;
  int depth;
};

struct hv_monitor_git
{
  hv_project_guard **guards;
  size_t n;
  bool *dirty;
  int inotify, timer;
  struct watch *w;
  size_t nw;
  struct timespec last; /* the last check */
  bool armed;
};

/* ---- the check and its report ---- */

static void
record_lines (struct hv_audit_trail *trail, const char *project, const char *text)
{
  cleanup_free char *copy = xstrdup (text ? text : "");
  char *save = NULL;
  for (char *line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      yajl_gen g = hv_audit_trail_record (trail, "git_guard");
      hv_audit_put_kv (g, "project", project);
      hv_audit_put_kv (g, "message", line);
      hv_audit_trail_emit (trail, g);
    }
}

/* One check of one project, its lines (the guard prints them) into the
 * trail. */
static void
check_one (hv_project_guard *guard, struct hv_audit_trail *trail)
{
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&text, &len);
  if (out)
    hv_project_guard_report_to (guard, out);
  cleanup_error hv_error *err = NULL;
  int r = hv_project_guard_check (guard, &err);
  if (out)
    {
      if (r < 0)
        fprintf (out, "haven: %s\n", err->msg);
      fclose (out);
      hv_project_guard_report_to (guard, stderr);
    }
  record_lines (trail, hv_project_guard_project (guard), text);
  free (text);
}

void
hv_monitor_git_check_all (hv_project_guard **guards, size_t n, struct hv_audit_trail *trail)
{
  for (size_t i = 0; i < n; i++)
    check_one (guards[i], trail);
}

/* ---- watches ---- */

static void
add_watch (hv_monitor_git *w, size_t project, const char *path, enum watch_kind kind, int depth)
{
  if (w->nw >= MAX_WATCHES)
    return;
  /* Only directories, never through a link at the end; the paths are
   * pinned in the container (or the project itself), and a watch in the
   * wrong place only misses events: the end check still comes. */
  int wd = inotify_add_watch (w->inotify, path, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW);
  if (wd < 0)
    return;
  w->w = xrealloc (w->w, (w->nw + 1) * sizeof (*w->w));
  w->w[w->nw++] = (struct watch) { wd, kind, project, xstrdup (path), depth };
}

static char *
path_in (const char *project, const char *rel)
{
  return rel[0] ? xasprintf ("%s/%s", project, rel) : xstrdup (project);
}

static void
watch_project (hv_monitor_git *w, size_t i)
{
  const char *project = hv_project_guard_project (w->guards[i]);
  add_watch (w, i, project, W_TOP, 0);
  cleanup_strv oci_strv gitdirs = { 0 }, gitfiles = { 0 };
  hv_project_guard_repositories (w->guards[i], &gitdirs, &gitfiles);
  for (size_t k = 0; k < gitdirs.n + gitfiles.n; k++)
    {
      bool dir = k < gitdirs.n;
      const char *rel = dir ? gitdirs.v[k] : gitfiles.v[k - gitdirs.n];
      const char *slash = strrchr (rel, '/');
      const char *base = slash ? slash + 1 : rel;
      if (strcmp (base, ".git") == 0 && slash)
        {
          cleanup_free char *top_rel = strndup (rel, (size_t) (slash - rel));
          cleanup_free char *top = path_in (project, top_rel);
          add_watch (w, i, top, W_TOP, 0);
        }
      if (dir)
        {
          cleanup_free char *path = path_in (project, rel);
          add_watch (w, i, path, W_GITDIR, 0);
        }
    }
}

hv_monitor_git *
hv_monitor_git_new (hv_project_guard **guards, size_t n)
{
  if (n == 0)
    return NULL;
  hv_monitor_git *w = xmalloc0 (sizeof (*w));
  w->guards = guards;
  w->n = n;
  w->dirty = xmalloc0 (n * sizeof (bool));
  w->inotify = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  w->timer = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (w->inotify < 0 || w->timer < 0)
    {
      /* No live check: the end's still comes. */
      hv_monitor_git_free (w);
      return NULL;
    }
  for (size_t i = 0; i < n; i++)
    watch_project (w, i);
  return w;
}

int
hv_monitor_git_inotify_fd (const hv_monitor_git *w)
{
  return w ? w->inotify : -1;
}

int
hv_monitor_git_timer_fd (const hv_monitor_git *w)
{
  return w ? w->timer : -1;
}

void
hv_monitor_git_free (hv_monitor_git *w)
{
  if (w == NULL)
    return;
  if (w->inotify >= 0)
    close (w->inotify);
  if (w->timer >= 0)
    close (w->timer);
  for (size_t i = 0; i < w->nw; i++)
    free (w->w[i].path);
  free (w->w);
  free (w->dirty);
  free (w);
}

/* ---- events ---- */

static bool
manager_name (const char *name)
{
  for (const char *const *m = hv_git_hook_manager_paths; *m; m++)
    if (strcmp (*m, name) == 0)
      return true;
  return false;
}

static bool
gitdir_name (const char *name)
{
  return strcmp (name, "commondir") == 0 || strcmp (name, "config") == 0 || strcmp (name, "config.worktree") == 0
         || strcmp (name, "hooks") == 0;
}

/* A name appeared in a watched directory: is it what git reads, and is
 * it a directory to watch in turn (a new .git, hooks, or hook manager's
 * directory, and what is made inside those)? */
static void
on_event (hv_monitor_git *w, const struct watch *at, const struct inotify_event *ev)
{
  if (ev->len == 0)
    return;
  const char *name = ev->name;
  bool dir = (ev->mask & IN_ISDIR) != 0;
  enum watch_kind then = W_HOOKS;
  bool relevant = false;
  switch (at->kind)
    {
    case W_TOP:
      relevant = strcmp (name, ".git") == 0 || manager_name (name);
      then = strcmp (name, ".git") == 0 ? W_GITDIR : W_HOOKS;
      break;
    case W_GITDIR:
      relevant = gitdir_name (name);
      break;
    case W_HOOKS:
      relevant = true;
      break;
    }
  if (!relevant)
    return;
  w->dirty[at->project] = true;
  if (dir && (at->kind != W_HOOKS || at->depth < MAX_HOOKS_DEPTH))
    {
      cleanup_free char *path = xasprintf ("%s/%s", at->path, name);
      add_watch (w, at->project, path, then, at->kind == W_HOOKS ? at->depth + 1 : 0);
    }
}

static void
read_events (hv_monitor_git *w)
{
  char buf[16384] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  for (int rounds = 0; rounds < 64; rounds++)
    {
      ssize_t len = read (w->inotify, buf, sizeof (buf));
      if (len <= 0)
        return;
      for (char *p = buf; p < buf + len;)
        {
          const struct inotify_event *ev = (const struct inotify_event *) p;
          p += sizeof (struct inotify_event) + ev->len;
          if (ev->mask & IN_Q_OVERFLOW)
            for (size_t i = 0; i < w->n; i++)
              w->dirty[i] = true;
          size_t nw = w->nw; /* on_event may add (and move) watches */
          for (size_t i = 0; i < nw; i++)
            if (w->w[i].wd == ev->wd)
              {
                struct watch at = w->w[i];
                on_event (w, &at, ev);
              }
        }
    }
}

static long long
ms_since (const struct timespec *t)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (long long) (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/* Check the projects where something appeared, now or, within
 * HV_MONITOR_GIT_INTERVAL_MS of the last check, when the timer fires:
 * a container that makes such names in a loop costs at most five walks a
 * second. */
static void
check_dirty (hv_monitor_git *w, struct hv_audit_trail *trail)
{
  bool any = false;
  for (size_t i = 0; i < w->n; i++)
    any |= w->dirty[i];
  if (!any || w->armed)
    return;
  long long since = w->last.tv_sec || w->last.tv_nsec ? ms_since (&w->last) : HV_MONITOR_GIT_INTERVAL_MS;
  if (since < HV_MONITOR_GIT_INTERVAL_MS)
    {
      long long wait = HV_MONITOR_GIT_INTERVAL_MS - since;
      struct itimerspec its = { .it_value = { .tv_sec = wait / 1000, .tv_nsec = (wait % 1000) * 1000000 } };
      if (timerfd_settime (w->timer, 0, &its, NULL) == 0)
        {
          w->armed = true;
          return;
        }
    }
  for (size_t i = 0; i < w->n; i++)
    if (w->dirty[i])
      {
        w->dirty[i] = false;
        check_one (w->guards[i], trail);
      }
  clock_gettime (CLOCK_MONOTONIC, &w->last);
}

void
hv_monitor_git_ready (hv_monitor_git *w, struct hv_audit_trail *trail)
{
  uint64_t expirations;
  if (read (w->timer, &expirations, sizeof (expirations)) == (ssize_t) sizeof (expirations))
    w->armed = false;
  read_events (w);
  check_dirty (w, trail);
}
