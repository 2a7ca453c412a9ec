/* What git would execute in an engine container's projects: container_git.h. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_git.h"
#include "oci_tables.h"
#include "project_guard.h"
#include "safe_path.h"
#include "utils.h"

#define MAX_GITDIRS 64      /* submodules' and worktrees' git directories pinned per project */
#define MAX_GITDIR_DEPTH 4  /* modules/a/modules/b/...: nested submodules */
#define CONFIG_MAX (4 << 20)

struct git_plan
{
  struct hv_container_plan *plan;
  const char *dest;   /* the project in the container */
  const char *source; /* ... and on the host */
  int base;           /* O_PATH fd of source */
  size_t gitdirs;
};

/* What rel (below the project) is, reached without following a link:
 * 0 and *st, -1 with errno (ELOOP: a link on the way or at the end). */
static int
lookup (const struct git_plan *gp, const char *rel, struct stat *st)
{
  cleanup_close int fd = hv_openat2 (gp->base, rel, O_PATH | O_NOFOLLOW, 0,
                                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (fd < 0)
    return -1;
  if (fstat (fd, st) < 0)
    return -1;
  if (S_ISLNK (st->st_mode))
    {
      errno = ELOOP;
      return -1;
    }
  return 0;
}

static int
refuse_link (const struct git_plan *gp, const char *rel, hv_error **err)
{
  return hv_error_set (err, 0,
                       "git in the container: %s/%s is or passes through a symbolic link (left by an earlier "
                       "run?); haven pins and write-protects what git executes only without links: remove it "
                       "and start again",
                       gp->dest, rel);
}

/* Every directory on the way to rel (not the project itself, already a
 * mount point) is pinned, parents first, so that no rename above it can
 * carry it away and put another in its place. */
static void
pin_ancestors (struct git_plan *gp, const char *rel)
{
  cleanup_free char *copy = xstrdup (rel);
  for (char *slash = strchr (copy, '/'); slash; slash = strchr (slash + 1, '/'))
    {
      *slash = '\0';
      cleanup_free char *c = xasprintf ("%s/%s", gp->dest, copy);
      oci_strv_push_unique (&gp->plan->pins, c);
      *slash = '/';
    }
}

/* rel read-only when it exists (a link refused), with the directories
 * on the way pinned.  pin: rel itself pinned too, writable. */
static int
protect (struct git_plan *gp, const char *rel, bool pin, hv_error **err)
{
  struct stat st;
  if (lookup (gp, rel, &st) < 0)
    {
      if (errno == ENOENT || errno == ENOTDIR)
        return 0;
      if (errno == ELOOP || errno == EXDEV)
        return refuse_link (gp, rel, err);
      return hv_error_set (err, errno, "git in the container: %s/%s", gp->dest, rel);
    }
  pin_ancestors (gp, rel);
  cleanup_free char *c = xasprintf ("%s/%s", gp->dest, rel);
  oci_strv_push_unique (pin ? &gp->plan->pins : &gp->plan->readonly, c);
  return 0;
}

static char *
read_config (const struct git_plan *gp, const char *rel, size_t *len)
{
  cleanup_close int fd = hv_openat2 (gp->base, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0,
                                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_size > CONFIG_MAX)
    return NULL;
  char *text = NULL;
  cleanup_error hv_error *ignored = NULL;
  if (oci_read_fd (fd, rel, (size_t) st.st_size, &text, len, &ignored) < 0)
    return NULL;
  return text;
}

static int protect_gitdir (struct git_plan *gp, const char *rel, int depth, hv_error **err);

/* The git directories of linked worktrees (worktrees/NAME) and of
 * submodules (modules/NAME, nested): each has its own config, and a
 * submodule its own hooks, which git runs from the superproject
 * (`git status` recurses into submodules). */
static int
protect_children (struct git_plan *gp, const char *rel, const char *sub, int depth, hv_error **err)
{
  cleanup_free char *dir = xasprintf ("%s/%s", rel, sub);
  cleanup_close int fd = hv_openat2 (gp->base, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0,
                                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (fd < 0)
    return errno == ENOENT || errno == ENOTDIR ? 0 : errno == ELOOP ? refuse_link (gp, dir, err) : 0;
  DIR *d = fdopendir (fd);
  if (d == NULL)
    return 0;
  fd = -1;
  struct dirent *de;
  int r = 0;
  while (r == 0 && (de = readdir (d)))
    {
      if (de->d_name[0] == '.' && (de->d_name[1] == '\0' || (de->d_name[1] == '.' && de->d_name[2] == '\0')))
        continue;
      cleanup_free char *child = xasprintf ("%s/%s", dir, de->d_name);
      struct stat st;
      if (lookup (gp, child, &st) < 0 || !S_ISDIR (st.st_mode))
        continue;
      if (gp->gitdirs >= MAX_GITDIRS)
        {
          cleanup_free char *note = xasprintf ("git in the container: more than %d git directories under %s/.git: "
                                               "%s/%s and those after it are checked when the container ends, "
                                               "not write-protected while it runs",
                                               MAX_GITDIRS, gp->dest, gp->dest, child);
          oci_strv_push (&gp->plan->notes, note);
          break;
        }
      r = protect_gitdir (gp, child, depth + 1, err);
    }
  closedir (d);
  return r;
}

/* A git directory: pinned, its hooks, config, config.worktree and
 * commondir read-only, and the same for the git directories inside it. */
static int
protect_gitdir (struct git_plan *gp, const char *rel, int depth, hv_error **err)
{
  static const char *const names[] = { "hooks", "config", "config.worktree", "commondir", NULL };
  gp->gitdirs++;
  if (protect (gp, rel, true, err) < 0)
    return -1;
  for (size_t i = 0; names[i]; i++)
    {
      cleanup_free char *sub = xasprintf ("%s/%s", rel, names[i]);
      if (protect (gp, sub, false, err) < 0)
        return -1;
    }
  if (depth >= MAX_GITDIR_DEPTH)
    return 0;
  if (protect_children (gp, rel, "worktrees", depth, err) < 0 || protect_children (gp, rel, "modules", depth, err) < 0)
    return -1;
  return 0;
}

/* core.hooksPath inside the project: that directory and, unless it is
 * the top, the one above it (husky), read-only. */
static int
protect_hooks_path (struct git_plan *gp, hv_error **err)
{
  size_t len = 0;
  cleanup_free char *config = read_config (gp, ".git/config", &len);
  cleanup_free char *real = realpath (gp->source, NULL);
  cleanup_free char *rel = config && real ? hv_git_hooks_path_rel (real, ".git", config, len) : NULL;
  if (rel == NULL || rel[0] == '\0')
    return 0;
  cleanup_free char *parent = hv_git_hooks_path_parent (".git", rel);
  if (parent && protect (gp, parent, false, err) < 0)
    return -1;
  return protect (gp, rel, false, err);
}

static int
protect_project (struct git_plan *gp, hv_error **err)
{
  struct stat st;
  if (lookup (gp, ".git", &st) < 0)
    {
      if (errno == ELOOP)
        return refuse_link (gp, ".git", err);
      return 0; /* no repository at the top: the check at the end covers what the container makes */
    }
  if (S_ISDIR (st.st_mode))
    {
      if (protect_gitdir (gp, ".git", 0, err) < 0 || protect_hooks_path (gp, err) < 0)
        return -1;
    }
  else if (protect (gp, ".git", false, err) < 0) /* a gitfile ("gitdir: PATH") */
    return -1;
  for (const char *const *m = hv_git_hook_manager_paths; *m; m++)
    if (protect (gp, *m, false, err) < 0)
      return -1;
  return 0;
}

int
hv_container_plan_git (struct hv_container_plan *plan, hv_error **err)
{
  for (size_t j = 0; j < plan->guarded.n; j++)
    {
      const char *dest = plan->guarded.v[j], *source = plan->guarded_sources.v[j];
      cleanup_close int base = open (source, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (base < 0)
        return hv_error_set (err, errno, "git in the container: open project %s", source);
      struct git_plan gp = { .plan = plan, .dest = dest, .source = source, .base = base };
      if (protect_project (&gp, err) < 0)
        return -1;
    }
  return 0;
}
