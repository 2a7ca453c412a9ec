/* The git check in an engine container's monitor: monitor_git.h. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "agent_config.h"
#include "json_gen.h"
#include "monitor_git.h"
#include "utils.h"

/* Watches per container: the project's directories breadth-first from
 * its top (where people run git), its git directories, and what is made
 * during the run, until this many; deeper ones are left to the end check
 * (the trail says so).  About 1 KiB of kernel memory each. */
#define MAX_WATCHES 16384
#define MAX_SCAN_ENTRIES 1000000 /* entries read to find directories, per project or new tree */
#define MAX_HOOKS_DEPTH 4 /* as deep as the guard looks into a hooks directory */
#define QUARANTINE_NAME ".haven-quarantine"

enum watch_kind
{
  W_DIR,    /* a directory of the project: a new .git or hook manager's file, new directories */
  W_GITDIR, /* a git directory: a new commondir, config, config.worktree, hooks */
  W_HOOKS,  /* a hooks or hook manager's directory made during the run: anything */
  W_AGENTFILE, /* a host agent's settings file (agent_config.h): written */
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
  bool full_noted;    /* watches ran out (ours, or the kernel's max_user_watches) */
  bool full_reported; /* ... and the trail says so */
  int off_errno;      /* no live check at all: why (inotify_init1, timerfd_create) */
  oci_strv hooks_paths;  /* absolute core.hooksPath directories of every project */
  size_t *hooks_project; /* ... and their projects */
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

static bool hooks_path (const hv_monitor_git *w, const char *path);
static bool git_takes_for_repository (const char *dir);

/* 1: a new watch, 0: watched already (its path brought up to date), -1: none. */
static int add_watch (hv_monitor_git *w, size_t project, const char *path, enum watch_kind kind, int depth);

/* Is name, in the directory at path, a host agent's settings file? */
static bool
agent_file (const char *path, const char *name)
{
  const char *slash = strrchr (path, '/');
  return hv_agent_config_file (slash ? slash + 1 : path, name);
}

/* Is the directory path a host agent's directory of code (.claude/hooks)? */
static bool
agent_code_dir (const char *path)
{
  const char *slash = strrchr (path, '/');
  if (slash == NULL || slash == path)
    return false;
  const char *prev = slash - 1;
  while (prev > path && *prev != '/')
    prev--;
  if (*prev == '/')
    prev++;
  cleanup_free char *parent = strndup (prev, (size_t) (slash - prev));
  return hv_agent_code_dir_who (parent, slash + 1) != NULL;
}

static bool
manager_name (const char *name)
{
  for (const char *const *m = hv_git_hook_manager_paths; *m; m++)
    if (strcmp (*m, name) == 0)
      return true;
  return false;
}

/* The directories of the tree at root (root included), breadth-first,
 * watched as W_DIR, without following links and without entering git
 * directories (watched as W_GITDIR: *found set when there is one) or the
 * quarantine. */
static void
watch_tree (hv_monitor_git *w, size_t project, const char *root, bool *found_git)
{
  cleanup_strv oci_strv queue = { 0 };
  oci_strv_push (&queue, root);
  size_t entries = 0;
  for (size_t q = 0; q < queue.n && w->nw < MAX_WATCHES && entries < MAX_SCAN_ENTRIES; q++)
    {
      if (add_watch (w, project, queue.v[q], W_DIR, 0) < 0)
        continue;
      /* A repository made before its directory was watched (cp -a .git
       * crafted): its git directory is watched, its hooks too, and not
       * its objects. */
      bool gitdir = git_takes_for_repository (queue.v[q]);
      if (gitdir)
        {
          if (found_git)
            *found_git = true;
          add_watch (w, project, queue.v[q], W_GITDIR, 0);
          cleanup_free char *hooks = xasprintf ("%s/hooks", queue.v[q]);
          add_watch (w, project, hooks, W_HOOKS, 0);
          continue;
        }
      int fd = open (queue.v[q], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
      if (d == NULL)
        {
          if (fd >= 0)
            close (fd);
          continue;
        }
      struct dirent *de;
      while ((de = readdir (d)) && entries++ < MAX_SCAN_ENTRIES)
        {
          const char *name = de->d_name;
          if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0 || strcmp (name, QUARANTINE_NAME) == 0)
            continue;
          bool dir = de->d_type == DT_DIR;
          struct stat st;
          if (de->d_type == DT_UNKNOWN)
            dir = fstatat (dirfd (d), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode);
          cleanup_free char *path = xasprintf ("%s/%s", queue.v[q], name);
          if (strcmp (name, ".git") == 0)
            {
              if (found_git)
                *found_git = true;
              if (dir)
                add_watch (w, project, path, W_GITDIR, 0);
              continue;
            }
          if (dir && (hooks_path (w, path) || agent_code_dir (path)))
            {
              if (found_git)
                *found_git = true;
              add_watch (w, project, path, W_HOOKS, 0);
            }
          if (hv_agent_config_entry (name) || agent_file (queue.v[q], name))
            {
              /* (a host agent's settings: checked like git's) */
              if (found_git)
                *found_git = true;
              if (!dir)
                add_watch (w, project, path, W_AGENTFILE, 0);
            }
          if (dir)
            oci_strv_push (&queue, path);
        }
      closedir (d);
    }
  if (w->nw >= MAX_WATCHES && !w->full_noted)
    w->full_noted = true;
}

static int
add_watch (hv_monitor_git *w, size_t project, const char *path, enum watch_kind kind, int depth)
{
  if (w->nw >= MAX_WATCHES)
    {
      w->full_noted = true;
      return -1;
    }
  /* Only directories, never through a link at the end; the paths are
   * pinned in the container (or the project itself), and a watch in the
   * wrong place only misses events: the end check still comes. */
  /* In a git directory also writes: a config made empty and written
   * after its check (whose verdict reads the content).  IN_MASK_ADD: one
   * directory can be watched as two kinds (a bare repository). */
  uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW | IN_MASK_ADD;
  if (kind == W_GITDIR)
    mask |= IN_MODIFY | IN_CLOSE_WRITE;
  /* A host agent's settings file, written in place (a new one, or one
   * renamed over it, is an event of its directory). */
  if (kind == W_AGENTFILE)
    mask = IN_MODIFY | IN_CLOSE_WRITE | IN_DONT_FOLLOW | IN_MASK_ADD;
  int wd = inotify_add_watch (w->inotify, path, mask);
  if (wd < 0)
    {
      if (errno == ENOSPC)
        w->full_noted = true;
      return -1;
    }
  for (size_t i = 0; i < w->nw; i++)
    if (w->w[i].wd == wd && w->w[i].kind == kind)
      {
        /* Watched already, under the name it had: a directory moved
         * within the project is found again at its new place (a move
         * into a watched directory is an event that looks into it), and
         * what is made in it is watched at the right path. */
        if (strcmp (w->w[i].path, path) != 0)
          {
            free (w->w[i].path);
            w->w[i].path = xstrdup (path);
          }
        return 0;
      }
  w->w = xrealloc (w->w, (w->nw + 1) * sizeof (*w->w));
  w->w[w->nw++] = (struct watch) { wd, kind, project, xstrdup (path), depth };
  return 1;
}

static char *
path_in (const char *project, const char *rel)
{
  return rel[0] ? xasprintf ("%s/%s", project, rel) : xstrdup (project);
}

/* A project: its git directories from the snapshot (bare ones and
 * submodules' too), its core.hooksPath directories (a hook made there
 * where the directory did not exist), then its directories from the top
 * down (as many as there are watches left). */
static void
watch_project (hv_monitor_git *w, size_t i)
{
  const char *project = hv_project_guard_project (w->guards[i]);
  const oci_strv *hooks = hv_project_guard_hooks_paths (w->guards[i]);
  for (size_t k = 0; k < hooks->n; k++)
    {
      cleanup_free char *path = path_in (project, hooks->v[k]);
      oci_strv_push (&w->hooks_paths, path);
      w->hooks_project = xrealloc (w->hooks_project, w->hooks_paths.n * sizeof (size_t));
      w->hooks_project[w->hooks_paths.n - 1] = i;
      add_watch (w, i, path, W_HOOKS, 0);
    }
  cleanup_strv oci_strv gitdirs = { 0 }, gitfiles = { 0 };
  hv_project_guard_repositories (w->guards[i], &gitdirs, &gitfiles);
  for (size_t k = 0; k < gitdirs.n; k++)
    {
      cleanup_free char *path = path_in (project, gitdirs.v[k]);
      add_watch (w, i, path, W_GITDIR, 0);
    }
  /* The snapshot's walk found the directories (shallowest first): no
   * second walk. */
  size_t budget = MAX_WATCHES > w->nw ? MAX_WATCHES - w->nw : 0;
  cleanup_strv oci_strv dirs = { 0 };
  hv_project_guard_dirs (w->guards[i], budget + 1, &dirs);
  for (size_t k = 0; k < dirs.n && k < budget; k++)
    {
      cleanup_free char *path = path_in (project, dirs.v[k]);
      add_watch (w, i, path, W_DIR, 0);
      if (agent_code_dir (path))
        add_watch (w, i, path, W_HOOKS, 0); /* anything made there */
    }
  if (dirs.n > budget)
    w->full_noted = true;
  cleanup_strv oci_strv agents = { 0 };
  hv_project_guard_agent_files (w->guards[i], &agents);
  for (size_t k = 0; k < agents.n; k++)
    {
      cleanup_free char *path = path_in (project, agents.v[k]);
      add_watch (w, i, path, W_AGENTFILE, 0);
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
  if (w->inotify < 0)
    w->off_errno = errno;
  w->timer = w->inotify >= 0 ? timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC) : -1;
  if (w->inotify >= 0 && w->timer < 0)
    w->off_errno = errno;
  if (w->off_errno)
    {
      /* No live check (too many inotify instances of this user, say):
       * the trail says so, and the end's check still comes. */
      if (w->inotify >= 0)
        close (w->inotify);
      w->inotify = -1;
      return w;
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
  oci_strv_free (&w->hooks_paths);
  free (w->hooks_project);
  free (w);
}

/* ---- events ---- */

static bool
gitdir_name (const char *name)
{
  return strcmp (name, "commondir") == 0 || strcmp (name, "config") == 0 || strcmp (name, "config.worktree") == 0
         || strcmp (name, "hooks") == 0;
}

/* What makes git take a directory for a repository (as the guard's walk
 * does): HEAD, and objects and refs, or a commondir. */
static bool
repository_part (const char *name)
{
  return strcmp (name, "HEAD") == 0 || strcmp (name, "objects") == 0 || strcmp (name, "refs") == 0
         || strcmp (name, "commondir") == 0;
}

static bool
git_takes_for_repository (const char *dir)
{
  struct stat st;
  cleanup_free char *head = xasprintf ("%s/HEAD", dir), *objects = xasprintf ("%s/objects", dir),
                    *refs = xasprintf ("%s/refs", dir), *commondir = xasprintf ("%s/commondir", dir);
  if (lstat (head, &st) < 0)
    return false;
  return (lstat (objects, &st) == 0 && lstat (refs, &st) == 0) || lstat (commondir, &st) == 0;
}

/* Is path a core.hooksPath directory (made during the run)? */
static bool
hooks_path (const hv_monitor_git *w, const char *path)
{
  return oci_strv_contains (&w->hooks_paths, path);
}

/* Hook managers' files count where a `.git` is (a package's own .husky
 * in node_modules does not make anyone's hooks run). */
static bool
worktree_top (const char *dir)
{
  cleanup_free char *git = xasprintf ("%s/.git", dir);
  struct stat st;
  return lstat (git, &st) == 0;
}

/* A name appeared in a watched directory: is it what git reads (then
 * the project is checked), and is it a directory to watch in turn?  A
 * new directory is watched and looked into at once: what was made in it
 * before its watch (git init sub: sub/.git right after sub) is found
 * there. */
static void
on_event (hv_monitor_git *w, const struct watch *at, const struct inotify_event *ev)
{
  if (at->kind == W_AGENTFILE)
    {
      w->dirty[at->project] = true;
      return;
    }
  if (ev->len == 0)
    return;
  const char *name = ev->name;
  bool dir = (ev->mask & IN_ISDIR) != 0;
  cleanup_free char *path = xasprintf ("%s/%s", at->path, name);
  switch (at->kind)
    {
    case W_DIR:
      if (repository_part (name) && git_takes_for_repository (at->path))
        {
          /* A bare repository (or a worktree's git directory) made where
           * git finds it from inside: cp -a .git crafted. */
          w->dirty[at->project] = true;
          add_watch (w, at->project, at->path, W_GITDIR, 0);
        }
      if (strcmp (name, ".git") == 0)
        {
          w->dirty[at->project] = true;
          if (dir)
            add_watch (w, at->project, path, W_GITDIR, 0);
        }
      else if (hv_agent_config_entry (name) || agent_file (at->path, name))
        {
          /* A host agent's settings (or their directory, or a link in
           * their place): checked now, and watched for writes. */
          w->dirty[at->project] = true;
          if (!dir)
            add_watch (w, at->project, path, W_AGENTFILE, 0);
        }
      else if (manager_name (name) && worktree_top (at->path))
        {
          w->dirty[at->project] = true;
          if (dir)
            add_watch (w, at->project, path, W_HOOKS, 0);
        }
      if (dir && (hooks_path (w, path) || agent_code_dir (path)))
        {
          w->dirty[at->project] = true;
          add_watch (w, at->project, path, W_HOOKS, 0);
        }
      if (dir && strcmp (name, ".git") != 0 && strcmp (name, QUARANTINE_NAME) != 0)
        {
          bool found = false;
          watch_tree (w, at->project, path, &found);
          if (found)
            w->dirty[at->project] = true;
        }
      break;
    case W_GITDIR:
      if (!gitdir_name (name))
        return;
      w->dirty[at->project] = true;
      if (dir && strcmp (name, "hooks") == 0)
        add_watch (w, at->project, path, W_HOOKS, 0);
      break;
    case W_HOOKS:
      w->dirty[at->project] = true;
      if (dir && at->depth < MAX_HOOKS_DEPTH)
        add_watch (w, at->project, path, W_HOOKS, at->depth + 1);
      break;    case W_AGENTFILE: /* (above) */
      break;
    }
}

static void
forget_watch (hv_monitor_git *w, int wd)
{
  for (size_t i = 0; i < w->nw;)
    if (w->w[i].wd == wd)
      {
        free (w->w[i].path);
        w->w[i] = w->w[--w->nw];
      }
    else
      i++;
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
          if (ev->mask & IN_IGNORED)
            {
              forget_watch (w, ev->wd); /* its directory is gone: a place for another */
              continue;
            }
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
hv_monitor_git_report_limits (hv_monitor_git *w, struct hv_audit_trail *trail)
{
  if (w == NULL || !(w->full_noted || w->off_errno) || w->full_reported)
    return;
  w->full_reported = true;
  yajl_gen g = hv_audit_trail_record (trail, "git_guard");
  cleanup_free char *msg
      = w->off_errno ? xasprintf ("haven: no live git check (inotify: %s): what the container makes for git to "
                                  "execute is checked when it ends",
                                  strerror (w->off_errno))
                     : xasprintf ("haven: the live git check ran out of directory watches (at most %d, or the "
                                  "kernel's fs.inotify.max_user_watches): a repository made in a directory beyond "
                                  "them is checked when the container ends",
                                  MAX_WATCHES);
  hv_audit_put_kv (g, "message", msg);
  hv_audit_trail_emit (trail, g);
}

void
hv_monitor_git_ready (hv_monitor_git *w, struct hv_audit_trail *trail)
{
  uint64_t expirations;
  if (read (w->timer, &expirations, sizeof (expirations)) == (ssize_t) sizeof (expirations))
    w->armed = false;
  read_events (w);
  check_dirty (w, trail);
  hv_monitor_git_report_limits (w, trail);
}
