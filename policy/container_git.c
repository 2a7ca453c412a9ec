/* What git would execute in an engine container's projects: container_git.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_git.h"
#include "file_read.h"
#include "haven_annotations.h"
#include "oci_tables.h"
#include "project_guard.h"
#include "safe_path.h"
#include "utils.h"

#define MAX_GITDIRS 64 /* git directories pinned per project */
#define CONFIG_MAX (4 << 20)

struct git_plan
{
  const oci_spec *spec;
  struct hv_container_plan *plan;
  const char *dest;   /* the project in the container */
  const char *source; /* ... and on the host */
  int base;           /* O_PATH fd of source */
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

/* Whether another engine mount covers rel: the container sees that
 * mount's content there, not the project's (a volume or tmpfs over
 * node_modules), so there is nothing of the project to pin or bind, and
 * a pin would find the path missing and fail create; a project bound
 * there is planned as a project of its own. */
static bool
covered (const struct git_plan *gp, const char *rel)
{
  size_t base = strlen (gp->dest);
  cleanup_free char *c = xasprintf ("%s/%s", gp->dest, rel);
  for (size_t i = 0; i < gp->spec->n_mounts; i++)
    {
      const char *d = gp->spec->mounts[i].destination;
      size_t n = d ? strlen (d) : 0;
      /* An earlier policy's pin shows the project's own content. */
      if (oci_strv_contains (&gp->spec->mounts[i].options, HV_MOUNT_OPT_PIN))
        continue;
      if (n > base && strncmp (c, d, n) == 0 && (c[n] == '\0' || c[n] == '/'))
        return true;
    }
  return false;
}

/* rel read-only when it exists (a link refused), with the directories
 * on the way pinned.  pin: rel itself pinned too, writable. */
static int
protect (struct git_plan *gp, const char *rel, bool pin, hv_error **err)
{
  struct stat st;
  if (covered (gp, rel))
    return 0;
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
  oci_strv_push_unique (pin ? &gp->plan->pins : &gp->plan->pins_ro, c);
  return 0;
}

static char *
read_config (const struct git_plan *gp, const char *rel, size_t *len)
{
  cleanup_close int fd = hv_openat2 (gp->base, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0,
                                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  char *text = NULL;
  cleanup_error hv_error *ignored = NULL;
  if (fd < 0 || hv_read_regular_fd (fd, rel, CONFIG_MAX, &text, len, &ignored) < 0)
    return NULL;
  return text;
}

/* A git directory: pinned, and its hooks, config, config.worktree and
 * commondir read-only. */
static int
protect_gitdir (struct git_plan *gp, const char *rel, hv_error **err)
{
  static const char *const names[] = { "hooks", "config", "config.worktree", "commondir", NULL };
  if (protect (gp, rel, true, err) < 0)
    return -1;
  for (size_t i = 0; names[i]; i++)
    {
      cleanup_free char *sub = xasprintf ("%s/%s", rel, names[i]);
      if (protect (gp, sub, false, err) < 0)
        return -1;
    }
  return 0;
}

/* The worktree whose `.git` is gitdir_rel (its parent, "" for the top):
 * the directory core.hooksPath names in the project and, unless it is
 * that worktree's top, the one above it (husky); the hook managers'
 * files at its top. */
static int
protect_worktree (struct git_plan *gp, const char *real, const char *gitdir_rel, hv_error **err)
{
  const char *slash = strrchr (gitdir_rel, '/');
  cleanup_free char *top = slash ? strndup (gitdir_rel, (size_t) (slash - gitdir_rel)) : xstrdup ("");
  cleanup_free char *cfg = xasprintf ("%s/config", gitdir_rel);
  size_t len = 0;
  cleanup_free char *config = read_config (gp, cfg, &len);
  cleanup_free char *hooks = config ? hv_git_hooks_path_rel (real, gitdir_rel, config, len) : NULL;
  if (hooks && hooks[0])
    {
      cleanup_free char *parent = hv_git_hooks_path_parent (gitdir_rel, hooks);
      if ((parent && protect (gp, parent, false, err) < 0) || protect (gp, hooks, false, err) < 0)
        return -1;
    }
  for (const char *const *m = hv_git_hook_manager_paths; *m; m++)
    {
      cleanup_free char *rel = top[0] ? xasprintf ("%s/%s", top, *m) : xstrdup (*m);
      if (protect (gp, rel, false, err) < 0)
        return -1;
    }
  return 0;
}

static bool
named_dot_git (const char *rel)
{
  const char *slash = strrchr (rel, '/');
  return strcmp (slash ? slash + 1 : rel, ".git") == 0;
}

static int protect_repositories (struct git_plan *gp, const char *real, const oci_strv *gitdirs,
                                 const oci_strv *gitfiles, hv_error **err);

/* Every repository the walk found in the project (the guard's own walk,
 * project_guard.h): at most MAX_GITDIRS git directories are pinned, the
 * rest are said in a note and checked at the end only. */
static int
protect_project (struct git_plan *gp, hv_error **err)
{
  cleanup_free char *real = realpath (gp->source, NULL);
  if (real == NULL)
    return hv_error_set (err, errno, "git in the container: %s", gp->source);
  struct stat st;
  if (lookup (gp, ".git", &st) < 0 && errno == ELOOP)
    return refuse_link (gp, ".git", err);
  hv_project_guard *g = NULL;
  if (hv_project_guard_snapshot_with_dirs (real, &g, err) < 0)
    return hv_error_wrap (err, "git in the container");
  cleanup_strv oci_strv gitdirs = { 0 }, gitfiles = { 0 };
  hv_project_guard_repositories (g, &gitdirs, &gitfiles);
  int r = protect_repositories (gp, real, &gitdirs, &gitfiles, err);
  if (r == 0)
    hv_project_guard_keep (g);
  else
    hv_project_guard_free (g);
  return r;
}

static int
protect_repositories (struct git_plan *gp, const char *real, const oci_strv *gitdirs_, const oci_strv *gitfiles_,
                      hv_error **err)
{
  const oci_strv gitdirs = *gitdirs_, gitfiles = *gitfiles_;
  for (size_t i = 0; i < gitdirs.n; i++)
    {
      if (i == MAX_GITDIRS)
        {
          cleanup_free char *note = xasprintf ("git in the container: more than %d git directories in %s: %s/%s and "
                                               "those after it are checked when the container ends, not pinned "
                                               "while it runs",
                                               MAX_GITDIRS, gp->dest, gp->dest, gitdirs.v[i]);
          oci_strv_push (&gp->plan->notes, note);
          break;
        }
      if (protect_gitdir (gp, gitdirs.v[i], err) < 0
          || (named_dot_git (gitdirs.v[i]) && protect_worktree (gp, real, gitdirs.v[i], err) < 0))
        return -1;
    }
  for (size_t i = 0; i < gitfiles.n && i < MAX_GITDIRS; i++)
    {
      struct stat lst;
      if (strcmp (gitfiles.v[i], ".git") != 0 && fstatat (gp->base, gitfiles.v[i], &lst, AT_SYMLINK_NOFOLLOW) == 0
          && S_ISLNK (lst.st_mode))
        {
          /* A nested `.git` that is a link (Android's repo makes them):
           * a link cannot be bound read-only; the live check watches it. */
          cleanup_free char *note = xasprintf ("git in the container: %s/%s is a symbolic link: not write-protected; "
                                               "a change to it is quarantined when inotify reports it",
                                               gp->dest, gitfiles.v[i]);
          oci_strv_push (&gp->plan->notes, note);
          continue;
        }
      if (protect (gp, gitfiles.v[i], false, err) < 0 || protect_worktree (gp, real, gitfiles.v[i], err) < 0)
        return -1;
    }
  return 0;
}

int
hv_container_plan_git (const oci_spec *spec, struct hv_container_plan *plan, hv_error **err)
{
  for (size_t j = 0; j < plan->guarded.n; j++)
    {
      const char *dest = plan->guarded.v[j], *source = plan->guarded_sources.v[j];
      cleanup_close int base = open (source, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (base < 0)
        return hv_error_set (err, errno, "git in the container: open project %s", source);
      struct git_plan gp = { .spec = spec, .plan = plan, .dest = dest, .source = source, .base = base };
      if (protect_project (&gp, err) < 0)
        return -1;
    }
  return 0;
}
