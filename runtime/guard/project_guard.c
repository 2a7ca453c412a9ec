/* Find and quarantine what the sandbox left in the project for git to
 * execute on the host (see project_guard.h for the design).
 *
 * Everything here runs on files the sandbox could have written: no path
 * is followed through a symbolic link (O_NOFOLLOW on every open, openat2
 * with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS from the project's fd), no
 * content is executed or interpreted beyond git's config syntax, and
 * what is printed is escaped. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent_config.h"
#include "file_read.h"
#include "git_config.h"
#include "project_guard.h"
#include "safe_path.h"
#include "utils.h"

/* A project deeper or bigger than this is not walked to the end; the walk
 * says where it stopped.  The depth bounds open directory fds. */
#define GUARD_MAX_DEPTH 200
#define GUARD_MAX_ENTRIES 4000000
#define GUARD_MAX_HOOK_DEPTH 4
#define GUARD_MAX_CONTENT (4 << 20)
#define QUARANTINE_DIR ".haven-quarantine"

/* Hook managers' files at a worktree's top (project_guard.h).  lefthook
 * finds its config by any of these names (and merges the -local one);
 * pre-commit's hook names .pre-commit-config.yaml unless installed with
 * another (-c), which the hook file then names: a hook file is guarded
 * itself. */
const char *const hv_git_hook_manager_paths[] = {
  ".husky",
  ".pre-commit-config.yaml", ".pre-commit-config.yml",
  "lefthook.yml", "lefthook.yaml", "lefthook.toml", "lefthook.json", "lefthook.jsonc",
  ".lefthook.yml", ".lefthook.yaml", ".lefthook.toml", ".lefthook.json", ".lefthook.jsonc",
  "lefthook-local.yml", "lefthook-local.yaml", "lefthook-local.toml", "lefthook-local.json", "lefthook-local.jsonc",
  ".lefthook-local.yml", ".lefthook-local.yaml", ".lefthook-local.toml", ".lefthook-local.json",
  ".lefthook-local.jsonc",
  ".lefthook", ".lefthook-local",
  NULL,
};

enum item_kind
{
  ITEM_DOTGIT,    /* a `.git` directory: reported when new, not moved */
  ITEM_GITFILE,   /* a `.git` file ("gitdir: PATH") or link */
  ITEM_CONFIG,    /* config, config.worktree of a git directory */
  ITEM_COMMONDIR, /* commondir: where config and hooks are read from */
  ITEM_HOOK,      /* anything in hooks/ or a core.hooksPath directory */
  ITEM_MANAGER,   /* a hook manager's file: what the installed hooks run */
  ITEM_AGENT,     /* a host agent's or editor's project settings (agent_config.h), or a link in their place */
  ITEM_AGENT_CODE, /* a file in a directory of code a host agent runs (.claude/hooks) */
};

struct ident
{
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec ctime;
  mode_t mode;
};

struct item
{
  enum item_kind kind;
  char *rel; /* relative to the project */
  struct ident id;
  char *content; /* file content, or "symlink:TARGET"; NULL if unreadable */
  size_t len;
  const hv_agent_config *agent; /* ITEM_AGENT: whose settings */
  const char *who;              /* ITEM_AGENT, ITEM_AGENT_CODE: who runs it on the host */
};

struct items
{
  struct item *v;
  size_t n;
};

/* The project's directories outside git directories, by depth (for the
 * live check's watches: hv_project_guard_dirs). */
struct dir_list
{
  struct dir_entry
  {
    char *rel;
    int depth;
  } *v;
  size_t n;
};

struct hv_project_guard
{
  char *project;
  dev_t dev;
  ino_t ino;
  struct items before;
  oci_strv hooks_paths; /* core.hooksPath directories (relative) set before the run */
  FILE *out;            /* where the check reports (stderr unless set) */
  struct dir_list dirs;
};

struct walker
{
  struct dir_list *dirs; /* before the run: collected */
  struct items *items;
  oci_strv *hooks_paths;
  bool collect_hooks_paths; /* before the run: read core.hooksPath */
  FILE *out;
  size_t entries;
  char *stopped_at;
};


static char *
join (const char *dir, const char *name)
{
  return dir[0] ? xasprintf ("%s/%s", dir, name) : xstrdup (name);
}

/* Paths are the sandbox's choice: print them with control characters
 * escaped, so a name cannot rewrite the user's terminal. */
static char *
printable (const char *s)
{
  size_t n = strlen (s);
  char *out = xmalloc0 (n * 4 + 1), *o = out;
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      o += sprintf (o, "\\x%02x", *p);
    else
      *o++ = (char) *p;
  return out;
}

static void
ident_of (const struct stat *st, struct ident *id)
{
  *id = (struct ident) { st->st_dev, st->st_ino, st->st_size, st->st_ctim, st->st_mode };
}

static bool
ident_eq (const struct ident *a, const struct ident *b)
{
  return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->ctime.tv_sec == b->ctime.tv_sec
         && a->ctime.tv_nsec == b->ctime.tv_nsec && a->mode == b->mode;
}

static struct item *
items_add (struct items *it, enum item_kind kind, const char *rel, const struct stat *st)
{
  it->v = xrealloc (it->v, (it->n + 1) * sizeof (struct item));
  struct item *i = &it->v[it->n++];
  *i = (struct item) { .kind = kind, .rel = xstrdup (rel) };
  ident_of (st, &i->id);
  return i;
}

static void
items_free (struct items *it)
{
  for (size_t i = 0; i < it->n; i++)
    {
      free (it->v[i].rel);
      free (it->v[i].content);
    }
  free (it->v);
  it->v = NULL;
  it->n = 0;
}

/* The content of a regular file (bounded) or a link's target. */
static void
read_content (int dirfd, const char *name, const struct stat *st, struct item *i)
{
  if (S_ISLNK (st->st_mode))
    {
      char target[PATH_MAX];
      ssize_t l = readlinkat (dirfd, name, target, sizeof (target) - 1);
      if (l >= 0)
        {
          target[l] = '\0';
          i->content = xasprintf ("symlink:%s", target);
          i->len = strlen (i->content);
        }
      return;
    }
  if (!S_ISREG (st->st_mode) || st->st_size > GUARD_MAX_CONTENT)
    return;
  cleanup_close int fd = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return;
  /* The size fstatat saw, and no more: what the file grew to since is
   * not what this snapshot recorded of it. */
  bool more;
  if (hv_read_fd_max (fd, (size_t) st->st_size, (size_t) st->st_size, &i->content, &i->len, &more) < 0)
    i->content = NULL;
}

static struct item *
record_file (struct walker *w, int dirfd, const char *name, const char *rel, enum item_kind kind)
{
  struct stat st;
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return NULL;
  struct item *i = items_add (w->items, kind, rel, &st);
  if (kind != ITEM_HOOK && kind != ITEM_DOTGIT)
    read_content (dirfd, name, &st, i);
  return i;
}

static bool
has_suffix (const char *s, const char *suffix)
{
  size_t n = strlen (s), m = strlen (suffix);
  return n >= m && strcmp (s + n - m, suffix) == 0;
}

/* Every entry under a hooks directory that is not a directory is a hook
 * (a link too: git runs what it points to).  git never runs *.sample. */
static void
record_hooks (struct walker *w, int dfd, const char *name, const char *rel, enum item_kind kind, int depth)
{
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return;
  if (!S_ISDIR (st.st_mode))
    {
      if (!(S_ISREG (st.st_mode) && has_suffix (name, ".sample")))
        items_add (w->items, kind, rel, &st);
      return;
    }
  if (depth >= GUARD_MAX_HOOK_DEPTH)
    return;
  int fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return;
    }
  struct dirent *de;
  while ((de = readdir (d)) && w->entries++ < GUARD_MAX_ENTRIES)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      cleanup_free char *sub = join (rel, de->d_name);
      record_hooks (w, dirfd (d), de->d_name, sub, kind, depth + 1);
    }
  closedir (d);
}

/* "a/b" + "../c/./d" -> "a/c/d"; NULL when it leaves the project. */
static char *
normalize_beneath (const char *base, const char *path)
{
  cleanup_free char *joined = base[0] ? xasprintf ("%s/%s", base, path) : xstrdup (path);
  oci_strv parts = { 0 };
  char *save = NULL;
  for (char *c = strtok_r (joined, "/", &save); c; c = strtok_r (NULL, "/", &save))
    {
      if (strcmp (c, ".") == 0)
        continue;
      if (strcmp (c, "..") == 0)
        {
          if (parts.n == 0)
            {
              oci_strv_free (&parts);
              return NULL;
            }
          free (parts.v[--parts.n]);
          continue;
        }
      oci_strv_push (&parts, c);
    }
  size_t len = 1;
  for (size_t i = 0; i < parts.n; i++)
    len += strlen (parts.v[i]) + 1;
  char *out = xmalloc0 (len);
  for (size_t i = 0; i < parts.n; i++)
    {
      if (i)
        strcat (out, "/");
      strcat (out, parts.v[i]);
    }
  oci_strv_free (&parts);
  return out;
}

/* core.hooksPath as git resolves it: relative to the working tree's top
 * (the directory holding `.git`), or to a bare repository itself.  Only
 * directories inside the project are the sandbox's to write; one outside
 * it (an absolute path, "~/...") is out of the sandbox's reach unless the
 * policy makes it writable (see policies/README.md). */
char *
hv_git_hooks_path_rel (const char *project, const char *gitdir_rel, const char *config, size_t len)
{
  if (config == NULL)
    return NULL;
  cleanup_free char *value = hv_git_config_get (config, len, "core.hookspath");
  if (value == NULL || value[0] == '\0')
    return NULL;
  cleanup_free char *top = xstrdup (gitdir_rel);
  const char *base = strrchr (top, '/') ? strrchr (top, '/') + 1 : top;
  if (strcmp (base, ".git") == 0)
    {
      char *slash = strrchr (top, '/');
      if (slash)
        *slash = '\0';
      else
        top[0] = '\0';
    }
  size_t plen = strlen (project);
  if (value[0] == '/')
    {
      if (strncmp (value, project, plen) == 0 && (value[plen] == '/' || value[plen] == '\0'))
        return normalize_beneath ("", value + plen);
      return NULL;
    }
  if (value[0] != '~')
    return normalize_beneath (top, value);
  return NULL;
}

char *
hv_git_hooks_path_parent (const char *gitdir_rel, const char *hooks_rel)
{
  /* The scripts a hooks directory holds may run what lies one level up
   * (husky 9: core.hooksPath .husky/_, whose scripts run .husky/NAME):
   * that directory counts as hooks too, unless it is the worktree's top
   * (the whole project is not a hook). */
  const char *slash = strrchr (hooks_rel, '/');
  if (slash == NULL)
    return NULL;
  cleanup_free char *top = xstrdup (gitdir_rel);
  char *s = strrchr (top, '/');
  const char *base = s ? s + 1 : top;
  if (strcmp (base, ".git") == 0)
    {
      if (s)
        *s = '\0';
      else
        top[0] = '\0';
    }
  char *parent = strndup (hooks_rel, (size_t) (slash - hooks_rel));
  if (strcmp (parent, top) == 0)
    {
      free (parent);
      return NULL;
    }
  return parent;
}

static void
note_hooks_path (struct walker *w, const char *project, const char *gitdir_rel, const struct item *config)
{
  cleanup_free char *rel = hv_git_hooks_path_rel (project, gitdir_rel, config->content, config->len);
  if (rel == NULL || rel[0] == '\0')
    return;
  oci_strv_push_unique (w->hooks_paths, rel);
  cleanup_free char *parent = hv_git_hooks_path_parent (gitdir_rel, rel);
  if (parent)
    oci_strv_push_unique (w->hooks_paths, parent);
}

static void
record_gitdir (struct walker *w, const char *project, int dirfd, const char *rel)
{
  static const char *const configs[] = { "config", "config.worktree" };
  for (size_t i = 0; i < N_ELEMENTS (configs); i++)
    {
      cleanup_free char *sub = join (rel, configs[i]);
      size_t before = w->items->n;
      record_file (w, dirfd, configs[i], sub, ITEM_CONFIG);
      if (w->collect_hooks_paths && w->items->n > before)
        note_hooks_path (w, project, rel, &w->items->v[w->items->n - 1]);
    }
  cleanup_free char *commondir = join (rel, "commondir");
  record_file (w, dirfd, "commondir", commondir, ITEM_COMMONDIR);
  cleanup_free char *hooks = join (rel, "hooks");
  record_hooks (w, dirfd, "hooks", hooks, ITEM_HOOK, 0);
}

/* What the hook managers people install run from a worktree's top
 * (hv_git_hook_manager_paths): recorded where a `.git` is. */
static void
record_managers (struct walker *w, int dirfd, const char *rel)
{
  for (const char *const *m = hv_git_hook_manager_paths; *m; m++)
    {
      cleanup_free char *sub = join (rel, *m);
      record_hooks (w, dirfd, *m, sub, ITEM_MANAGER, 0);
    }
}

/* The host's agents' and editors' settings in a directory
 * (agent_config.h), each reached without following a link: a link in
 * place of .claude or of a settings file is recorded itself (the host's
 * tool would read what it leads to). */
static void
record_agents (struct walker *w, int dirfd, const char *rel)
{
  for (const hv_agent_config *c = hv_agent_configs; c->name; c++)
    {
      struct item *i;
      if (c->dir == NULL)
        {
          cleanup_free char *sub = join (rel, c->name);
          if ((i = record_file (w, dirfd, c->name, sub, ITEM_AGENT)))
            {
              i->agent = c;
              i->who = c->who;
            }
          continue;
        }
      cleanup_free char *dir = join (rel, c->dir);
      struct stat st;
      if (fstatat (dirfd, c->dir, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (S_ISLNK (st.st_mode))
        {
          bool seen = w->items->n && strcmp (w->items->v[w->items->n - 1].rel, dir) == 0;
          if (!seen && (i = record_file (w, dirfd, c->dir, dir, ITEM_AGENT)))
            {
              i->agent = c;
              i->who = c->who;
            }
          continue;
        }
      if (!S_ISDIR (st.st_mode))
        continue;
      cleanup_close int dfd = openat (dirfd, c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dfd < 0)
        continue;
      cleanup_free char *sub = join (dir, c->name);
      if ((i = record_file (w, dfd, c->name, sub, ITEM_AGENT)))
        {
          i->agent = c;
          i->who = c->who;
        }
    }
  /* The code they run: every file there, like a hook. */
  for (const hv_agent_code_dir *c = hv_agent_code_dirs; c->dir; c++)
    {
      cleanup_close int dfd = openat (dirfd, c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dfd < 0)
        continue;
      cleanup_free char *dir = join (rel, c->dir);
      cleanup_free char *sub = join (dir, c->name);
      size_t before = w->items->n;
      record_hooks (w, dfd, c->name, sub, ITEM_AGENT_CODE, 0);
      for (size_t k = before; k < w->items->n; k++)
        w->items->v[k].who = c->who;
    }
}

struct entry
{
  char *name;
  unsigned char type;
};

static bool
is_dir_entry (int dirfd, const struct entry *e)
{
  if (e->type != DT_UNKNOWN)
    return e->type == DT_DIR;
  struct stat st;
  return fstatat (dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode);
}

/* Inside a git directory, what never holds another repository's config
 * or hooks is not walked (objects can be many). */
static bool
skip_in_gitdir (const char *name)
{
  static const char *const skip[] = { "objects", "refs", "logs", "hooks", "lfs", "rr-cache", NULL };
  for (size_t i = 0; skip[i]; i++)
    if (strcmp (name, skip[i]) == 0)
      return true;
  return false;
}

#define GUARD_MAX_DIRS 262144 /* directories remembered for the live check */

static void
note_dir (struct dir_list *dl, const char *rel, int depth)
{
  if (dl->n >= GUARD_MAX_DIRS)
    return;
  if ((dl->n & (dl->n - 1)) == 0) /* 0, 1, 2, 4, ...: grow by doubling */
    dl->v = xrealloc (dl->v, (dl->n ? dl->n * 2 : 1) * sizeof (*dl->v));
  dl->v[dl->n++] = (struct dir_entry) { xstrdup (rel), depth };
}

static void
stop_walk (struct walker *w, const char *rel)
{
  if (w->stopped_at == NULL)
    w->stopped_at = xstrdup (rel[0] ? rel : ".");
}

static void
walk_dir (struct walker *w, const char *project, int fd, const char *rel, bool named_git, int depth)
{
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return;
    }
  struct entry *entries = NULL;
  size_t n = 0;
  bool head = false, objects = false, refs = false, commondir = false, agents = false;
  struct dirent *de;
  while ((de = readdir (d)))
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (++w->entries > GUARD_MAX_ENTRIES)
        {
          stop_walk (w, rel);
          break;
        }
      head |= strcmp (de->d_name, "HEAD") == 0;
      objects |= strcmp (de->d_name, "objects") == 0;
      refs |= strcmp (de->d_name, "refs") == 0;
      commondir |= strcmp (de->d_name, "commondir") == 0;
      agents |= hv_agent_config_entry (de->d_name);
      /* Only what the loop below looks at (most entries are files). */
      if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN && strcmp (de->d_name, ".git") != 0)
        continue;
      if ((n & (n - 1)) == 0)
        entries = xrealloc (entries, (n ? n * 2 : 1) * sizeof (*entries));
      entries[n++] = (struct entry) { xstrdup (de->d_name), de->d_type };
    }
  /* What git takes for a repository: a `.git` directory, and any
   * directory with HEAD and objects/refs (or a commondir), since git
   * discovers bare repositories and linked worktrees' directories too. */
  bool gitdir = named_git || (head && ((objects && refs) || commondir));
  if (gitdir)
    record_gitdir (w, project, dirfd (d), rel);
  else if (w->dirs)
    note_dir (w->dirs, rel, depth);
  /* Any directory: the user may start an agent or open an editor in
   * any of them, also in one that looks like a git directory (a
   * project's top given HEAD, objects and refs). */
  if (agents)
    record_agents (w, dirfd (d), rel);
  for (size_t i = 0; i < n; i++)
    {
      const char *name = entries[i].name;
      cleanup_free char *sub = join (rel, name);
      bool is_git = strcmp (name, ".git") == 0;
      bool dir = is_dir_entry (dirfd (d), &entries[i]);
      if (is_git)
        {
          record_file (w, dirfd (d), name, sub, dir ? ITEM_DOTGIT : ITEM_GITFILE);
          record_managers (w, dirfd (d), rel);
        }
      if (!dir || (gitdir && skip_in_gitdir (name)))
        continue;
      if (depth + 1 >= GUARD_MAX_DEPTH)
        {
          stop_walk (w, sub);
          continue;
        }
      int sub_fd = openat (dirfd (d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub_fd >= 0)
        walk_dir (w, project, sub_fd, sub, is_git, depth + 1);
    }
  for (size_t i = 0; i < n; i++)
    free (entries[i].name);
  free (entries);
  closedir (d);
}

/* The hooks directories core.hooksPath named before the run, reached
 * without following links: a link planted in their place is a hook. */
static void
walk_hooks_paths (struct walker *w, int projfd)
{
  for (size_t i = 0; i < w->hooks_paths->n; i++)
    {
      const char *rel = w->hooks_paths->v[i];
      cleanup_free char *parent = xstrdup (rel);
      char *slash = strrchr (parent, '/');
      const char *base = slash ? slash + 1 : rel;
      if (slash)
        *slash = '\0';
      else
        parent[0] = '\0';
      cleanup_close int pfd = parent[0] ? hv_open_beneath_nofollow (projfd, parent, O_PATH | O_DIRECTORY) : dup (projfd);
      if (pfd >= 0 && base[0])
        record_hooks (w, pfd, base, rel, ITEM_HOOK, 0);
    }
}

static int
open_project (const char *project, hv_error **err)
{
  int fd = open (project, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "open project %s", project);
  return fd;
}

static void
walk_project (struct walker *w, const char *project, int projfd)
{
  int fd = dup (projfd);
  if (fd >= 0)
    {
      (void) fcntl (fd, F_SETFD, FD_CLOEXEC);
      walk_dir (w, project, fd, "", false, 0);
    }
  walk_hooks_paths (w, projfd);
}

static void
warn_stopped (const struct walker *w)
{
  if (w->stopped_at == NULL)
    return;
  cleanup_free char *at = printable (w->stopped_at);
  fprintf (w->out ? w->out : stderr,
           "haven: WARNING: the check for git hooks stopped at %s (more than %d entries or %d levels deep): "
           "git repositories beyond it were not checked\n",
           at, GUARD_MAX_ENTRIES, GUARD_MAX_DEPTH);
}

static int
snapshot (const char *project, bool dirs, hv_project_guard **out, hv_error **err)
{
  cleanup_close int projfd = open_project (project, err);
  if (projfd < 0)
    return hv_error_wrap (err, "git hook guard");
  struct stat st;
  if (fstat (projfd, &st) < 0)
    return hv_error_set (err, errno, "git hook guard: stat %s", project);
  hv_project_guard *g = xmalloc0 (sizeof (*g));
  g->project = xstrdup (project);
  g->dev = st.st_dev;
  g->ino = st.st_ino;
  g->out = stderr;
  struct walker w = { .items = &g->before, .hooks_paths = &g->hooks_paths, .collect_hooks_paths = true, .out = stderr,
                      .dirs = dirs ? &g->dirs : NULL };
  walk_project (&w, project, projfd);
  warn_stopped (&w);
  free (w.stopped_at);
  *out = g;
  return 0;
}

int
hv_project_guard_snapshot (const char *project, hv_project_guard **out, hv_error **err)
{
  return snapshot (project, false, out, err);
}

int
hv_project_guard_snapshot_with_dirs (const char *project, hv_project_guard **out, hv_error **err)
{
  return snapshot (project, true, out, err);
}

void
hv_project_guard_repositories (const hv_project_guard *g, oci_strv *gitdirs, oci_strv *gitfiles)
{
  for (size_t i = 0; i < g->before.n; i++)
    {
      const struct item *it = &g->before.v[i];
      if (it->kind == ITEM_DOTGIT)
        oci_strv_push_unique (gitdirs, it->rel);
      else if (it->kind == ITEM_GITFILE)
        oci_strv_push_unique (gitfiles, it->rel);
      else if (it->kind == ITEM_CONFIG && has_suffix (it->rel, "/config"))
        {
          /* a git directory found by its contents (bare, a submodule's) */
          cleanup_free char *dir = strndup (it->rel, strlen (it->rel) - strlen ("/config"));
          oci_strv_push_unique (gitdirs, dir);
        }
    }
}

void
hv_project_guard_agent_files (const hv_project_guard *g, oci_strv *out)
{
  for (size_t i = 0; i < g->before.n; i++)
    if (g->before.v[i].kind == ITEM_AGENT)
      oci_strv_push_unique (out, g->before.v[i].rel);
}

/* Snapshots kept for this process's create (hv_project_guard_keep). */
static struct
{
  hv_project_guard **v;
  size_t n;
} kept;

void
hv_project_guard_keep (hv_project_guard *g)
{
  hv_project_guard_free (hv_project_guard_take (g->project));
  kept.v = xrealloc (kept.v, (kept.n + 1) * sizeof (*kept.v));
  kept.v[kept.n++] = g;
}

hv_project_guard *
hv_project_guard_take (const char *project)
{
  for (size_t i = 0; i < kept.n; i++)
    if (strcmp (kept.v[i]->project, project) == 0)
      {
        hv_project_guard *g = kept.v[i];
        kept.v[i] = kept.v[--kept.n];
        return g;
      }
  return NULL;
}

static int
by_depth (const void *a, const void *b)
{
  const struct dir_entry *x = a, *y = b;
  if (x->depth != y->depth)
    return x->depth < y->depth ? -1 : 1;
  return strcmp (x->rel, y->rel);
}

void
hv_project_guard_dirs (const hv_project_guard *g, size_t max, oci_strv *out)
{
  struct dir_entry *sorted = xmalloc0 ((g->dirs.n ? g->dirs.n : 1) * sizeof (*sorted));
  memcpy (sorted, g->dirs.v, g->dirs.n * sizeof (*sorted));
  qsort (sorted, g->dirs.n, sizeof (*sorted), by_depth);
  for (size_t i = 0; i < g->dirs.n && i < max; i++)
    oci_strv_push (out, sorted[i].rel);
  free (sorted);
}

const oci_strv *
hv_project_guard_hooks_paths (const hv_project_guard *g)
{
  return &g->hooks_paths;
}

const char *
hv_project_guard_project (const hv_project_guard *g)
{
  return g->project;
}

void
hv_project_guard_report_to (hv_project_guard *g, FILE *out)
{
  g->out = out;
}

void
hv_project_guard_free (hv_project_guard *g)
{
  if (g == NULL)
    return;
  items_free (&g->before);
  oci_strv_free (&g->hooks_paths);
  for (size_t i = 0; i < g->dirs.n; i++)
    free (g->dirs.v[i].rel);
  free (g->dirs.v);
  free (g->project);
  free (g);
}

/* ---- after the run ---- */

struct quarantine
{
  int projfd;
  int fd; /* <project>/.haven-quarantine/<time>, opened lazily */
  char *name;
  char *stamp;
  FILE *out;
};

static const struct item *
find_before (const hv_project_guard *g, enum item_kind kind, const char *rel)
{
  for (size_t i = 0; i < g->before.n; i++)
    if (g->before.v[i].kind == kind && strcmp (g->before.v[i].rel, rel) == 0)
      return &g->before.v[i];
  return NULL;
}

static bool
hook_known (const hv_project_guard *g, const struct item *it)
{
  /* A hook file the user had before, wherever it is now (a renamed
   * `.git` keeps its hooks): its content cannot have changed while its
   * inode, size and ctime did not. */
  for (size_t i = 0; i < g->before.n; i++)
    if (g->before.v[i].kind == it->kind && ident_eq (&g->before.v[i].id, &it->id))
      return true;
  return false;
}

/* The quarantine directory: created 0700 without following links; a
 * name the sandbox planted there is not used. */
static int
quarantine_dir (struct quarantine *q, hv_error **err)
{
  if (q->fd >= 0)
    return q->fd;
  if (mkdirat (q->projfd, QUARANTINE_DIR, 0700) < 0 && errno != EEXIST)
    return hv_error_set (err, errno, "create %s", QUARANTINE_DIR);
  cleanup_close int top = openat (q->projfd, QUARANTINE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (top < 0)
    return hv_error_set (err, errno, "open %s (not a directory?)", QUARANTINE_DIR);
  if (fchmod (top, 0700) < 0)
    return hv_error_set (err, errno, "chmod %s", QUARANTINE_DIR);
  for (int attempt = 0; attempt < 100; attempt++)
    {
      free (q->name);
      q->name = attempt ? xasprintf ("%s-%d", q->stamp, attempt) : xstrdup (q->stamp);
      if (mkdirat (top, q->name, 0700) == 0)
        {
          q->fd = openat (top, q->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (q->fd < 0)
            return hv_error_set (err, errno, "open %s/%s", QUARANTINE_DIR, q->name);
          return q->fd;
        }
      if (errno != EEXIST)
        break;
    }
  return hv_error_set (err, errno, "create a directory in %s", QUARANTINE_DIR);
}

/* The quarantine keeps the item's relative path, with every `.git`
 * component renamed `_git` (and `.claude`, `.mcp.json`... `_claude`),
 * so that nothing in it is a repository git would find or settings an
 * agent started there would read.  Returns a new string. */
static char *
quarantine_rel (const char *rel)
{
  char *renamed = xstrdup (rel);
  for (char *c = renamed; *c;)
    {
      char *e = strchrnul (c, '/');
      cleanup_free char *part = strndup (c, (size_t) (e - c));
      if (strcmp (part, ".git") == 0 || hv_agent_config_entry (part))
        *c = '_';
      c = *e ? e + 1 : e;
    }
  return renamed;
}

static int
quarantine_parent (struct quarantine *q, const char *rel_dir, hv_error **err)
{
  int qfd = quarantine_dir (q, err);
  if (qfd < 0)
    return -1;
  cleanup_free char *renamed = quarantine_rel (rel_dir);
  int fd = hv_mkdirs_beneath (qfd, renamed, 0700, false, err);
  if (fd < 0)
    return hv_error_wrap (err, "quarantine");
  return fd;
}

/* A quarantined file is never executable (a link has no mode of its own
 * and points at a name git no longer looks up). */
static void
strip_exec (int dfd, const char *name, FILE *out)
{
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode)
      && fchmodat (dfd, name, st.st_mode & 0600, 0) < 0)
    fprintf (out, "haven: could not make quarantined %s non-executable: %s\n", name, strerror (errno));
}

/* Move rel into the quarantine, not executable.  *where gets its path
 * there, relative to the project. */
static int
quarantine_item (struct quarantine *q, const char *rel, char **where, hv_error **err)
{
  cleanup_free char *dir = xstrdup (rel);
  char *slash = strrchr (dir, '/');
  const char *base = slash ? rel + (slash - dir) + 1 : rel;
  if (slash)
    *slash = '\0';
  else
    dir[0] = '\0';
  cleanup_close int from = dir[0] ? hv_open_beneath_nofollow (q->projfd, dir, O_PATH | O_DIRECTORY) : dup (q->projfd);
  if (from < 0)
    return hv_error_set (err, errno, "open %s", dir);
  cleanup_close int to = quarantine_parent (q, dir, err);
  /* Its own name renamed too (.git, .mcp.json). */
  cleanup_free char *renamed = quarantine_rel (rel);
  const char *qbase = strrchr (renamed, '/') ? strrchr (renamed, '/') + 1 : renamed;
  if (to >= 0 && renameat (from, base, to, qbase) == 0)
    {
      strip_exec (to, qbase, q->out);
      *where = xasprintf ("%s/%s/%s", QUARANTINE_DIR, q->name, renamed);
      return 0;
    }
  /* Another filesystem (a mount inside the project), or no quarantine
   * directory: rename it where it is, to a name git never reads. */
  int saved = to >= 0 ? errno : 0;
  if (to < 0)
    {
      hv_error_free (err);
      *err = NULL;
    }
  cleanup_free char *aside = xasprintf ("%s.haven-quarantined-%s", base, q->stamp);
  if (renameat (from, base, from, aside) < 0)
    return hv_error_set (err, errno ? errno : saved, "move %s aside", rel);
  strip_exec (from, aside, q->out);
  *where = dir[0] ? xasprintf ("%s/%s", dir, aside) : xstrdup (aside);
  return 0;
}

/* Put the pre-run config back, written beside it and renamed into place. */
static int
restore_content (int projfd, const struct item *before, hv_error **err)
{
  cleanup_free char *dir = xstrdup (before->rel);
  char *slash = strrchr (dir, '/');
  const char *base = slash ? before->rel + (slash - dir) + 1 : before->rel;
  if (slash)
    *slash = '\0';
  else
    dir[0] = '\0';
  cleanup_close int dfd = dir[0] ? hv_open_beneath_nofollow (projfd, dir, O_PATH | O_DIRECTORY) : dup (projfd);
  if (dfd < 0)
    return hv_error_set (err, errno, "open %s", dir);
  cleanup_free char *tmp = xasprintf (".%s.haven-restore", base);
  (void) unlinkat (dfd, tmp, 0);
  cleanup_close int fd
      = openat (dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, before->id.mode & 0666);
  if (fd < 0)
    return hv_error_set (err, errno, "create %s/%s", dir, tmp);
  if (write_all (fd, before->content, before->len) < 0 || fsync (fd) < 0)
    return hv_error_set (err, errno, "write %s/%s", dir, tmp);
  if (renameat (dfd, tmp, dfd, base) < 0)
    return hv_error_set (err, errno, "rename %s/%s", dir, tmp);
  return 0;
}

/* Why a config found after the run is dangerous, or NULL when it only
 * holds execution settings it already had at the same place. */
static char *
config_verdict (const struct item *after, const struct item *before)
{
  if (before && ident_eq (&before->id, &after->id))
    return NULL;
  if (after->content == NULL)
    return xstrdup ("it is not a regular file haven could read");
  cleanup_strv oci_strv now = { 0 }, was = { 0 };
  cleanup_error hv_error *perr = NULL;
  if (hv_git_config_exec_entries (after->content, after->len, &now, &perr) < 0)
    return xasprintf ("haven cannot read it: %s", perr->msg);
  if (before && before->content)
    {
      cleanup_error hv_error *ignored = NULL;
      (void) hv_git_config_exec_entries (before->content, before->len, &was, &ignored);
    }
  for (size_t i = 0; i < now.n; i++)
    if (!oci_strv_contains (&was, now.v[i]))
      {
        cleanup_free char *key = xstrdup (now.v[i]);
        *strchr (key, '=') = '\0';
        return xasprintf ("the sandbox set %s", key);
      }
  return NULL;
}

static void
report (FILE *out, const struct item *a, const char *why, const char *where)
{
  cleanup_free char *r = printable (a->rel), *y = printable (why), *w = printable (where);
  if (a->kind == ITEM_AGENT || a->kind == ITEM_AGENT_CODE)
    fprintf (out, "haven: quarantined %s (%s; %s on the host would run it) -> %s\n", r, y, a->who, w);
  else
    fprintf (out, "haven: quarantined %s (%s; git would run it) -> %s\n", r, y, w);
}

/* Why the host's agent settings A (B before the run, or NULL) must not
 * stay, or NULL when the sandbox added no command to them. */
static char *
agent_verdict (const struct item *a, const struct item *b)
{
  if (b && ident_eq (&b->id, &a->id))
    return NULL;
  const char *how = b ? "changed" : "created";
  if (S_ISLNK (a->id.mode))
    {
      if (b && b->content && a->content && strcmp (b->content, a->content) == 0)
        return NULL;
      return xasprintf ("a link %s by the sandbox; %s reads what it leads to", how, a->agent->who);
    }
  if (a->content == NULL)
    return xasprintf ("%s by the sandbox, not a regular file haven could read", how);
  cleanup_strv oci_strv now = { 0 }, was = { 0 };
  cleanup_error hv_error *perr = NULL;
  if (hv_agent_config_exec_entries (a->agent, a->content, a->len, &now, &perr) < 0)
    return xasprintf ("%s by the sandbox and haven cannot read it: %s", how, perr->msg);
  if (b && b->content && !S_ISLNK (b->id.mode))
    {
      cleanup_error hv_error *ignored = NULL;
      (void) hv_agent_config_exec_entries (a->agent, b->content, b->len, &was, &ignored);
    }
  for (size_t i = 0; i < now.n; i++)
    if (!oci_strv_contains (&was, now.v[i]))
      {
        /* Enough of it for the user to see what it would run. */
        size_t n = strlen (now.v[i]);
        return xasprintf ("the sandbox set %.*s%s", n > 300 ? 300 : (int) n, now.v[i], n > 300 ? "..." : "");
      }
  return NULL;
}

/* A file both a hook manager's and in a hooks directory (husky's) is
 * reported as a hook. */
static bool
is_hook (const struct items *after, const char *rel)
{
  for (size_t i = 0; i < after->n; i++)
    if (after->v[i].kind == ITEM_HOOK && strcmp (after->v[i].rel, rel) == 0)
      return true;
  return false;
}

static bool
already_handled (const oci_strv *done, const char *rel)
{
  return oci_strv_contains (done, rel);
}

/* The project, opened again; refused when it is no longer the
 * directory the guard saw before the run. */
static int
reopen_project (const hv_project_guard *g, hv_error **err)
{
  cleanup_close int projfd = open_project (g->project, err);
  if (projfd < 0)
    return hv_error_wrap (err, "git hook guard");
  struct stat st;
  if (fstat (projfd, &st) < 0 || st.st_dev != g->dev || st.st_ino != g->ino)
    return hv_error_set (err, 0, "git hook guard: the project %s is no longer the directory it was", g->project);
  return steal_fd (&projfd);
}

/* What git would read or run in the project after the run. */
static void
scan_project (hv_project_guard *g, int projfd, struct items *after)
{
  struct walker w = { .items = after, .hooks_paths = &g->hooks_paths, .out = g->out };
  walk_project (&w, g->project, projfd);
  warn_stopped (&w);
  free (w.stopped_at);
}

/* The quarantine's name: when, and by which haven. */
static char *
quarantine_stamp (void)
{
  char stamp[64];
  time_t now = time (NULL);
  struct tm tm;
  strftime (stamp, sizeof (stamp), "%Y%m%dT%H%M%S", gmtime_r (&now, &tm));
  return xasprintf ("%s-%d", stamp, (int) getpid ());
}

/* Why A, as the sandbox left it (B: as it was before the run, or NULL),
 * must not stay where git finds it; NULL when it may. */
static char *
suspicion (const hv_project_guard *g, const struct item *a, const struct item *b)
{
  switch (a->kind)
    {
    case ITEM_DOTGIT:
      if (b == NULL || b->id.dev != a->id.dev || b->id.ino != a->id.ino)
        {
          cleanup_free char *r = printable (a->rel);
          fprintf (g->out, "haven: note: %s is a git directory created or moved there during the run\n", r);
        }
      return NULL;
    case ITEM_HOOK:
      if (hook_known (g, a))
        return NULL;
      return xstrdup (b ? "changed by the sandbox" : "created by the sandbox");
    case ITEM_MANAGER:
      if (hook_known (g, a))
        return NULL;
      return xasprintf ("%s by the sandbox; a hook manager's file, which the repository's hooks run",
                        b ? "changed" : "created");
    case ITEM_GITFILE:
    case ITEM_COMMONDIR:
      /* Their meaning depends on where they are: same place, same
       * inode and content, or they go. */
      if (b && ident_eq (&b->id, &a->id))
        return NULL;
      if (b && b->content && a->content && b->len == a->len && memcmp (b->content, a->content, a->len) == 0)
        return NULL;
      return xasprintf ("%s by the sandbox: git would read another repository's config and hooks from it",
                        b ? "changed" : "created");
    case ITEM_CONFIG:
      return config_verdict (a, b);
    case ITEM_AGENT:
      return agent_verdict (a, b);
    case ITEM_AGENT_CODE:
      if (hook_known (g, a))
        return NULL;
      return xasprintf ("%s by the sandbox; code %s runs", b ? "changed" : "created", a->who);
    }
  return NULL;
}

/* A into the quarantine, and a config file's content from before the
 * run back in its place; -1 when A could not be moved (said so). */
static int
quarantine_one (struct quarantine *q, int projfd, const struct item *a, const struct item *b, const char *why)
{
  cleanup_free char *where = NULL;
  cleanup_error hv_error *qerr = NULL;
  if (quarantine_item (q, a->rel, &where, &qerr) < 0)
    {
      cleanup_free char *r = printable (a->rel);
      fprintf (q->out, "haven: could not quarantine %s (%s): %s\n", r, why, qerr->msg);
      return -1;
    }
  report (q->out, a, why, where);
  /* A config's or agent settings' content from before the run goes back
   * (a link's is not content). */
  if ((a->kind == ITEM_CONFIG || a->kind == ITEM_AGENT) && b && b->content && !S_ISLNK (b->id.mode)
      && !S_ISLNK (a->id.mode))
    {
      cleanup_error hv_error *rerr = NULL;
      cleanup_free char *r = printable (a->rel);
      if (restore_content (projfd, b, &rerr) < 0)
        fprintf (q->out, "haven: could not restore %s as it was before the run: %s\n", r, rerr->msg);
      else
        fprintf (q->out, "haven: restored %s as it was before the run\n", r);
    }
  return 0;
}

int
hv_project_guard_check (hv_project_guard *g, hv_error **err)
{
  cleanup_close int projfd = reopen_project (g, err);
  if (projfd < 0)
    return -1;
  struct items after = { 0 };
  scan_project (g, projfd, &after);
  struct quarantine q = { .projfd = projfd, .fd = -1, .stamp = quarantine_stamp (), .out = g->out };
  oci_strv done = { 0 };
  int moved = 0, failed = 0;
  for (size_t i = 0; i < after.n; i++)
    {
      const struct item *a = &after.v[i];
      if (already_handled (&done, a->rel) || (a->kind == ITEM_MANAGER && is_hook (&after, a->rel)))
        continue;
      oci_strv_push (&done, a->rel);
      const struct item *b = find_before (g, a->kind, a->rel);
      cleanup_free char *why = suspicion (g, a, b);
      if (why == NULL)
        continue;
      if (quarantine_one (&q, projfd, a, b, why) < 0)
        failed++;
      else
        moved++;
    }
  if (q.fd >= 0)
    close (q.fd);
  free (q.name);
  free (q.stamp);
  oci_strv_free (&done);
  items_free (&after);
  if (failed)
    return hv_error_set (err, 0,
                         "%d item(s) the sandbox left for git to execute could not be quarantined (see above): "
                         "do not run git in %s before removing them",
                         failed, g->project);
  return moved;
}
