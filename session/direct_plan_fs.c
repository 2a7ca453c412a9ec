#include "config.h"
#include "direct_plan_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "haven_annotations.h"
#include "safe_path.h"
#include "utils.h"

/* The device nodes a command needs, granted read and write one by one:
 * the namespaced sandbox's /dev is a tmpfs holding only these, and the
 * host's /dev holds disks (root, even without capabilities, owns
 * /dev/sda), the host's terminals (/dev/pts, another session's) and a
 * shared /dev/shm: none of those is granted. */
static const char *const dev_nodes[]
    = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", NULL };

bool
hv_direct_path_under (const char *path, const char *dir)
{
  size_t n = strcmp (dir, "/") == 0 ? 0 : strlen (dir);
  return strncmp (path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static bool
strictly_under (const char *path, const char *dir)
{
  return strcmp (path, dir) != 0 && hv_direct_path_under (path, dir);
}

void
hv_direct_view_free (struct hv_direct_view *view)
{
  for (size_t i = 0; i < view->n; i++)
    free (view->v[i].path);
  free (view->v);
  memset (view, 0, sizeof (*view));
}

static char *
normalize (const char *path)
{
  char *s = xstrdup (path);
  size_t n = strlen (s);
  while (n > 1 && s[n - 1] == '/')
    s[--n] = '\0';
  return s;
}

/* Set the entry at path (a later mount at the same place replaces what an
 * earlier one showed there, as in the sandbox). */
static struct hv_direct_entry *
view_set (struct hv_direct_view *view, const char *path, unsigned acc, bool mount_x)
{
  cleanup_free char *p = normalize (path);
  for (size_t i = 0; i < view->n; i++)
    if (strcmp (view->v[i].path, p) == 0)
      {
        view->v[i].acc = acc;
        view->v[i].mount_x = mount_x;
        view->v[i].protect = false;
        return &view->v[i];
      }
  view->v = xrealloc (view->v, (view->n + 1) * sizeof (*view->v));
  struct hv_direct_entry *e = &view->v[view->n++];
  *e = (struct hv_direct_entry) { .path = steal_pointer (&p), .acc = acc, .mount_x = mount_x };
  return e;
}

bool
hv_direct_view_drop (struct hv_direct_view *view, const char *path)
{
  for (size_t i = 0; i < view->n; i++)
    if (strcmp (view->v[i].path, path) == 0)
      {
        free (view->v[i].path);
        view->v[i] = view->v[--view->n];
        return true;
      }
  return false;
}

/* The deepest entry over path, or NULL. */
static const struct hv_direct_entry *
covering (const struct hv_direct_view *view, const char *path)
{
  const struct hv_direct_entry *best = NULL;
  for (size_t i = 0; i < view->n; i++)
    if (hv_direct_path_under (path, view->v[i].path) && (best == NULL || strlen (view->v[i].path) > strlen (best->path)))
      best = &view->v[i];
  return best;
}

static bool
has_opt (const oci_mount *m, const char *opt)
{
  return oci_strv_contains (&m->options, opt);
}

/* One mount of the spec, as the host would look without it. */
static void
view_mount (struct hv_direct_view *view, const oci_mount *m)
{
  if (m->destination == NULL || m->destination[0] != '/' || has_opt (m, HV_MOUNT_OPT_PIN))
    return; /* a pin holds a path still; it shows nothing new */
  const char *type = m->type ? m->type : "";
  bool noexec = has_opt (m, "noexec");
  if (strcmp (type, "proc") == 0)
    {
      /* The caller's /proc, read-only.  Another process's environ, mem
       * or fds need ptrace-mode access, which Landlock refuses across
       * its domain to a process without CAP_SYS_PTRACE (the runner drops
       * every capability first: with it, the kernel lets root read the
       * parent's environ).  The run's own processes need theirs
       * (/proc/self/fd, /dev/fd, bash's <(...)). */
      view_set (view, m->destination, HV_DIRECT_R, false);
      return;
    }
  if (strcmp (m->destination, "/dev") == 0)
    {
      view_set (view, "/dev", 0, false);
      for (size_t i = 0; dev_nodes[i]; i++)
        view_set (view, dev_nodes[i], HV_DIRECT_R | HV_DIRECT_W, false);
      return;
    }
  if (strcmp (type, "overlay") == 0)
    {
      /* Copy-on-write needs the overlay: read-only instead (stricter). */
      view_set (view, m->destination, HV_DIRECT_R | (noexec ? 0 : HV_DIRECT_X), !noexec);
      return;
    }
  bool is_bind = strcmp (type, "bind") == 0 || has_opt (m, "bind") || has_opt (m, "rbind");
  if (is_bind && m->source && strcmp (m->source, m->destination) == 0)
    {
      bool rw = has_opt (m, "rw") && !has_opt (m, "ro");
      unsigned acc = HV_DIRECT_R | (rw ? HV_DIRECT_W : 0) | (noexec ? 0 : HV_DIRECT_X);
      view_set (view, m->destination, acc, !noexec);
      return;
    }
  /* Anything else over a host path shows something that is not the
   * host's file there (a mask: /dev/null or an empty tmpfs; a credential
   * socket; a project's copy of a home file; the hidden home's scratch
   * tmpfs; devpts, /dev/shm): without the mount the host's file would
   * show instead, so the path is hidden (fail closed). */
  view_set (view, m->destination, 0, false);
}

void
hv_direct_view_build (const oci_spec *spec, bool exec_rules, struct hv_direct_view *view)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    view_mount (view, &spec->mounts[i]);
  const oci_strv *masked = &spec->linux_cfg.masked_paths;
  for (size_t i = 0; i < masked->n; i++)
    {
      /* The kernel's files a container masks in /proc (kcore, keys,
       * timer_list, sched_debug, acpi, scsi...) are read as the caller
       * reads them outside (kcore needs CAP_SYS_RAWIO, which the command
       * lacks): hiding them would split /proc into one rule per entry,
       * and the run's own processes, made after the plan, would then
       * find no /proc/self. */
      if (str_has_prefix (masked->v[i], "/proc/"))
        continue;
      view_set (view, masked->v[i], 0, false);
      /* The runtime resolves maskedPaths in the container, following
       * links (a socket under /var/run is masked at /run): hide where it
       * leads too. */
      cleanup_free char *real = realpath (masked->v[i], NULL);
      if (real && strcmp (real, masked->v[i]) != 0)
        view_set (view, real, 0, false);
    }
  /* readonlyPaths: read-only where a writable entry would show them. */
  const oci_strv *ro = &spec->linux_cfg.readonly_paths;
  for (size_t i = 0; i < ro->n; i++)
    {
      const struct hv_direct_entry *c = covering (view, ro->v[i]);
      if (c && (c->acc & HV_DIRECT_W))
        {
          bool x = c->mount_x;
          unsigned acc = c->acc & ~HV_DIRECT_W;
          view_set (view, ro->v[i], acc, x);
        }
    }
  /* Below a writable entry, a read-only one is a protected path. */
  for (size_t i = 0; i < view->n; i++)
    {
      struct hv_direct_entry *e = &view->v[i];
      if (!e->acc || (e->acc & HV_DIRECT_W))
        continue;
      const struct hv_direct_entry *parent = NULL;
      for (size_t j = 0; j < view->n; j++)
        if (strictly_under (e->path, view->v[j].path)
            && (parent == NULL || strlen (view->v[j].path) > strlen (parent->path)))
          parent = &view->v[j];
      e->protect = parent && (parent->acc & HV_DIRECT_W);
    }
  if (exec_rules)
    for (size_t i = 0; i < view->n; i++)
      view->v[i].acc &= ~HV_DIRECT_X;
}

/* --- from the view to Landlock rules ------------------------------------ */

struct granter
{
  const struct hv_direct_view *view;
  int rootfd;
  hv_direct_plan *plan;
  size_t n_rules;
};

static const char *
rel_of (const char *path)
{
  const char *rel = path + strspn (path, "/");
  return rel[0] ? rel : ".";
}

/* Open path beneath the root without following any link on the way or
 * at its end: -1 (ELOOP) for a link, or a path through one. */
static int
open_nofollow (const struct granter *g, const char *path, int flags)
{
  int fd = hv_open_beneath_nofollow (g->rootfd, rel_of (path), flags);
  struct stat st;
  if (fd >= 0 && (flags & O_PATH) && fstat (fd, &st) == 0 && S_ISLNK (st.st_mode))
    {
      close (fd);
      errno = ELOOP;
      return -1;
    }
  return fd;
}

static int
add_rule (struct granter *g, const char *path, unsigned acc, hv_error **err)
{
  if (++g->n_rules > HV_DIRECT_MAX_RULES)
    return hv_error_set (err, 0, "more than %d Landlock rules are needed to hide what lies in %s", HV_DIRECT_MAX_RULES,
                         path);
  /* write holds read; exec holds reading files only, not listing a
   * directory (runtime/landlock.c): a readable, executable tree is in
   * read and exec both. */
  if (acc & HV_DIRECT_W)
    oci_strv_push_unique (&g->plan->write, path);
  else if (acc & HV_DIRECT_R)
    oci_strv_push_unique (&g->plan->read, path);
  if (acc & HV_DIRECT_X)
    oci_strv_push_unique (&g->plan->exec, path);
  return 0;
}

static bool
is_entry (const struct hv_direct_view *view, const char *path)
{
  for (size_t i = 0; i < view->n; i++)
    if (strcmp (view->v[i].path, path) == 0)
      return true;
  return false;
}

static bool
leads_to_any (const char *path, const oci_strv *restrictors)
{
  for (size_t i = 0; i < restrictors->n; i++)
    if (strictly_under (restrictors->v[i], path))
      return true;
  return false;
}

/* Grant acc on every entry of dir except the view's own entries (each
 * granted as it says) and the directories on the way to a restrictor,
 * which are split in turn.  Links are skipped: a link carries no rule,
 * what it leads to is granted (or not) where it lies.  A directory that
 * cannot be listed gets nothing (fail closed). */
static int
split (struct granter *g, const char *dir, unsigned acc, const oci_strv *restrictors, hv_error **err)
{
  int fd = open_nofollow (g, dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return 0;
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return 0;
    }
  int r = 0;
  struct dirent *de;
  while (r == 0 && (de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      cleanup_free char *child = xasprintf ("%s/%s", strcmp (dir, "/") == 0 ? "" : dir, de->d_name);
      if (is_entry (g->view, child))
        continue;
      struct stat st;
      if (fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISLNK (st.st_mode))
        continue;
      if (leads_to_any (child, restrictors))
        {
          if (S_ISDIR (st.st_mode))
            r = split (g, child, acc, restrictors, err);
          continue;
        }
      r = add_rule (g, child, acc, err);
    }
  closedir (d);
  return r;
}

/* Is what path holds at least acc?  (X only counts as the mount's.) */
static bool
allows (const struct hv_direct_entry *e, unsigned acc, bool for_exec)
{
  if (for_exec)
    return (e->acc & HV_DIRECT_R) && e->mount_x;
  return (e->acc & acc) == acc;
}

/* Grant acc at path, split around every entry below it that allows less. */
static int
grant (struct granter *g, const char *path, unsigned acc, bool for_exec, hv_error **err)
{
  cleanup_close int fd = open_nofollow (g, path, O_PATH);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return 0; /* not there, or a link: no rule (fail closed) */
  cleanup_strv oci_strv restrictors = { 0 };
  for (size_t i = 0; i < g->view->n; i++)
    if (strictly_under (g->view->v[i].path, path) && !allows (&g->view->v[i], acc, for_exec))
      oci_strv_push (&restrictors, g->view->v[i].path);
  if (restrictors.n == 0 || !S_ISDIR (st.st_mode))
    return add_rule (g, path, acc, err);
  return split (g, path, acc, &restrictors, err);
}

int
hv_direct_grant (const struct hv_direct_view *view, const oci_strv *exec_list, const char *root, hv_direct_plan *plan,
                 hv_error **err)
{
  struct granter g = { .view = view, .plan = plan };
  cleanup_close int rootfd = open (root ? root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return hv_error_set (err, errno, "open %s", root ? root : "/");
  g.rootfd = rootfd;
  for (size_t i = 0; i < view->n; i++)
    if (view->v[i].acc && grant (&g, view->v[i].path, view->v[i].acc, false, err) < 0)
      return -1;
  /* Exec rules: execute (and read) only on the exec list, where the view
   * shows the path and its mount is not noexec, never into a hidden or
   * noexec entry below it. */
  for (size_t i = 0; exec_list && i < exec_list->n; i++)
    {
      const char *path = exec_list->v[i];
      if (path[0] != '/')
        continue;
      const struct hv_direct_entry *c = covering (view, path);
      if (c == NULL || !allows (c, 0, true))
        continue;
      if (grant (&g, path, HV_DIRECT_R | HV_DIRECT_X, true, err) < 0)
        return -1;
    }
  return 0;
}
