/* Copy-on-write home_allow entries and protected sub-paths of direct
 * ones (see home_state.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "home_allow.h"
#include "home_copy_filter.h"
#include "home_create.h"
#include "home_state.h"
#include "overlay_probe_cache.h"
#include "safe_path.h"
#include "utils.h"

/* mkdir -p from a trusted directory fd, never following a link, each
 * directory 0700 and ours. */
static int
mkdirs_at (int dirfd, const char *rel, hv_error **err)
{
  return hv_mkdirs_beneath (dirfd, rel, 0700, true, err);
}

static char *
state_root (const struct hv_run_ctx *ctx)
{
  const char *xdg = getenv ("XDG_STATE_HOME");
  if (xdg && xdg[0] == '/')
    return xstrdup (xdg);
  const char *home = ctx->home ? ctx->home : (ctx->homes && ctx->homes->n ? ctx->homes->v[0] : NULL);
  return home ? xasprintf ("%s/.local/state", home) : NULL;
}

/* Whether an overlay with these layers can be mounted by the sandbox:
 * tried in a throwaway child in new (user and) mount namespaces. */
static bool
overlay_works (const char *lower, const char *upper, const char *work, bool rootless, char **why)
{
  int pipefd[2];
  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    return false;
  uid_t uid = geteuid ();
  gid_t gid = getegid ();
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (pipefd[0]);
      int e = 0;
      if (unshare (CLONE_NEWNS | (rootless ? CLONE_NEWUSER : 0)) < 0)
        e = errno;
      if (e == 0 && rootless)
        {
          char map[64];
          hv_error *ignored = NULL;
          snprintf (map, sizeof (map), "%u %u 1\n", (unsigned) uid, (unsigned) uid);
          if (write_file ("/proc/self/uid_map", map, &ignored) < 0
              || write_file ("/proc/self/setgroups", "deny", &ignored) < 0)
            e = EPERM;
          snprintf (map, sizeof (map), "%u %u 1\n", (unsigned) gid, (unsigned) gid);
          if (e == 0 && write_file ("/proc/self/gid_map", map, &ignored) < 0)
            e = EPERM;
        }
      int fs = e ? -1 : (int) syscall (SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
      if (e == 0 && fs < 0)
        e = errno;
      if (e == 0
          && (syscall (SYS_fsconfig, fs, FSCONFIG_SET_STRING, "lowerdir", lower, 0) < 0
              || syscall (SYS_fsconfig, fs, FSCONFIG_SET_STRING, "upperdir", upper, 0) < 0
              || syscall (SYS_fsconfig, fs, FSCONFIG_SET_STRING, "workdir", work, 0) < 0
              || syscall (SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0))
        e = errno;
      if (write (pipefd[1], &e, sizeof (e)) < 0)
        _exit (1);
      _exit (0);
    }
  close (pipefd[1]);
  int e = -1;
  if (pid > 0)
    {
      ssize_t n;
      do
        n = read (pipefd[0], &e, sizeof (e));
      while (n < 0 && errno == EINTR);
      if (n != sizeof (e))
        e = EIO;
      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  else
    e = errno;
  close (pipefd[0]);
  if (e)
    *why = xstrdup (strerror (e));
  return e == 0;
}

/* What fsconfig and the runtime's option list cannot carry. */
static bool
overlay_safe_path (const char *path)
{
  return strpbrk (path, ",:\\\n") == NULL;
}

/* A direct entry's protected sub-path that does not exist yet is created
 * empty (a file or a directory as hv_home_path_is_file says; "{}" for
 * .json so the tool still reads it), so that a read-only bind can cover
 * it: otherwise the sandbox could create it with hooks in it. */
static int
ensure_protected (const char *dir, const char *sub, hv_error **err)
{
  cleanup_close int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    return 0; /* no such entry: nothing is bound */
  cleanup_free char *parent = xstrdup (sub);
  char *slash = strrchr (parent, '/');
  const char *base = slash ? sub + (slash - parent) + 1 : sub;
  if (slash)
    *slash = '\0';
  cleanup_close int pfd = slash ? mkdirs_at (dfd, parent, err) : dup (dfd);
  if (pfd < 0)
    return hv_error_wrap (err, "%s/%s", dir, sub);
  struct stat st;
  if (fstatat (pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (S_ISLNK (st.st_mode))
        return hv_error_set (err, 0, "%s/%s is a symbolic link: refusing to protect it through the link", dir, sub);
      return 0;
    }
  if (!hv_home_path_is_file (base))
    {
      if (mkdirat (pfd, base, 0700) < 0 && errno != EEXIST)
        return hv_error_set (err, errno, "create %s/%s", dir, sub);
      return 0;
    }
  cleanup_close int fd = openat (pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return errno == EEXIST ? 0 : hv_error_set (err, errno, "create %s/%s", dir, sub);
  if (hv_home_json_seed (fd, base) < 0)
    return hv_error_set (err, errno, "write %s/%s", dir, sub);
  return 0;
}

/* A copy-on-write file (~/.claude.json): the project's own copy, made
 * from the real file the first time and kept; the real one is never
 * written. */
static int
copy_file_once (int dfd, const char *entry_rel, const char *src, hv_error **err)
{
  cleanup_close int efd = mkdirs_at (dfd, entry_rel, err);
  if (efd < 0)
    return -1;
  struct stat st;
  if (fstatat (efd, "file", &st, AT_SYMLINK_NOFOLLOW) == 0)
    return S_ISREG (st.st_mode) ? 0 : hv_error_set (err, 0, "%s/file is not a regular file", entry_rel);
  cleanup_close int in = open (src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (in < 0)
    return hv_error_set (err, errno, "open %s", src);
  cleanup_close int out = openat (efd, "file.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return hv_error_set (err, errno, "create a copy of %s", src);
  char buf[65536];
  ssize_t n;
  while ((n = read (in, buf, sizeof (buf))) > 0 || (n < 0 && errno == EINTR))
    if (n > 0 && write_all (out, buf, (size_t) n) < 0)
      return hv_error_set (err, errno, "copy %s", src);
  if (n < 0)
    return hv_error_set (err, errno, "read %s", src);
  if (renameat (efd, "file.tmp", efd, "file") < 0)
    return hv_error_set (err, errno, "copy %s", src);
  return 0;
}

/* direct and data entries: the protected sub-paths exist before the run,
 * so the compiler can bind them read-only (links refused). */
static int
protect_direct_entries (const hv_policy *p, const struct hv_run_ctx *ctx, hv_error **err)
{
  for (size_t i = 0; i < p->home_allow.n; i++)
    {
      if (p->home_access[i].write != HV_HOME_DIRECT && p->home_access[i].write != HV_HOME_DATA)
        continue;
      cleanup_strv oci_strv paths = { 0 };
      hv_home_allow_expand (p->home_allow.v[i], ctx, &paths);
      for (size_t j = 0; j < paths.n; j++)
        for (size_t k = 0; k < p->home_access[i].protect.n; k++)
          {
            cleanup_free char *sub = hv_home_sub_expand (p->home_access[i].protect.v[k], ctx);
            if (ensure_protected (paths.v[j], sub, err) < 0)
              return hv_error_wrap (err, "home_allow %s: protect", p->home_allow.v[i]);
          }
    }
  return 0;
}

/* A data entry is copy-on-write but for its data and private parts. */
static bool
is_copy (enum hv_home_write w)
{
  return w == HV_HOME_COPY || w == HV_HOME_DATA;
}

static bool
any_copy_entry (const hv_policy *p)
{
  for (size_t i = 0; i < p->home_allow.n; i++)
    if (is_copy (p->home_access[i].write))
      return true;
  return false;
}

/* data entries: their data directories exist in the real entry before
 * the run, so that they can be bound there (and what the tool writes in
 * them is kept); made beneath the entry's fd, no link followed.  A data
 * *file* that does not exist is not made (an empty credentials file is
 * not the same as none): until the host has it, the sandbox's writes go
 * to the copy-on-write layer. */
static int
make_data_dirs (const hv_policy *p, const struct hv_run_ctx *ctx, hv_error **err)
{
  for (size_t i = 0; i < p->home_allow.n; i++)
    {
      if (p->home_access[i].write != HV_HOME_DATA)
        continue;
      cleanup_strv oci_strv paths = { 0 };
      hv_home_allow_expand (p->home_allow.v[i], ctx, &paths);
      for (size_t j = 0; j < paths.n; j++)
        {
          cleanup_close int dfd = open (paths.v[j], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (dfd < 0)
            continue; /* no such entry (or a link, not shown): nothing is bound */
          for (size_t k = 0; k < p->home_access[i].data.n; k++)
            {
              /* File or directory by the name the policy wrote: an expanded
               * {cwd_dashed} may end in "rc" ("-src") and is a directory. */
              if (hv_home_path_is_file (p->home_access[i].data.v[k]))
                continue;
              cleanup_free char *sub = hv_home_sub_expand (p->home_access[i].data.v[k], ctx);
              cleanup_close int fd = mkdirs_at (dfd, sub, err);
              if (fd < 0)
                return hv_error_wrap (err, "home_allow %s: data %s/%s", p->home_allow.v[i], paths.v[j], sub);
            }
        }
    }
  return 0;
}

/* A private name the real directory did not have before: what earlier
 * runs wrote under it went to the project's copy-on-write layer.  Now that
 * the host has it too, that becomes the private copy (moved once, under
 * the project's lock, the overlay not mounted), so that the project keeps
 * its own sessions.  Whether it moved; nothing is followed through a link,
 * and a failure leaves the layer as it is (said on stderr). */
static bool
adopt_from_layer (int dfd, const char *dir, const struct hv_run_ctx *ctx, const char *entry, const char *name,
                  const struct stat *real, int parent, const char *own_name)
{
  const char *home = hv_home_layers_home (ctx, entry);
  cleanup_free char *upper = NULL;
  if (home)
    {
      cleanup_free char *layers = hv_home_layers_dir (dir, home);
      upper = xasprintf ("%s/upper/%s/%s", layers + strlen (dir) + 1, entry + strlen (home) + 1, name);
    }
  else
    {
      cleanup_free char *e = hv_home_state_entry (dir, entry);
      upper = xasprintf ("%s/upper/%s", e + strlen (dir) + 1, name);
    }
  /* Each component beneath the state directory's fd, no link followed. */
  cleanup_free char *up_dir = xstrdup (upper);
  char *last = strrchr (up_dir, '/');
  *last = '\0';
  struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH };
  cleanup_close int ud = (int) syscall (SYS_openat2, dfd, up_dir, &how, sizeof (how));
  struct stat st;
  if (ud < 0 || fstatat (ud, last + 1, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return false;
  if (S_ISDIR (st.st_mode) != S_ISDIR (real->st_mode) || !(S_ISDIR (st.st_mode) || S_ISREG (st.st_mode)))
    return false; /* a whiteout (deleted in the sandbox), or another type */
  if (renameat2 (ud, last + 1, parent, own_name, RENAME_NOREPLACE) < 0)
    {
      oci_strv_pushf (ctx->notes,
                      "cannot move this project's %s/%s from its copy-on-write layer to its private copy (%s)", entry,
                      name, strerror (errno));
      return false;
    }
  return true;
}

/* One private name's own copy in the state directory (<state>/private/),
 * a directory or a file as the real one is (a new .json file holds
 * "{}"), and in it the mount points of the data sub-paths beneath it
 * (projects/<this project> in a private projects/). */
static int
make_private (int dfd, const char *dir, const hv_home_access *a, const struct hv_run_ctx *ctx, const char *entry,
              const char *name, hv_error **err)
{
  cleanup_free char *full = xasprintf ("%s/%s", entry, name);
  struct stat real;
  if (lstat (full, &real) < 0)
    return 0; /* gone since: the compiler binds nothing over it */
  cleanup_free char *own = hv_home_private_entry (dir, entry, name);
  const char *rel = own + strlen (dir) + 1;
  char *slash = strrchr (own, '/');
  *slash = '\0';
  cleanup_close int parent = mkdirs_at (dfd, own + strlen (dir) + 1, err);
  *slash = '/';
  if (parent < 0)
    return hv_error_wrap (err, "state directory %s", dir);
  struct stat st;
  bool exists = fstatat (parent, slash + 1, &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (!exists)
    exists = adopt_from_layer (dfd, dir, ctx, entry, name, &real, parent, slash + 1);
  if (exists && fstatat (parent, slash + 1, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return hv_error_set (err, errno, "stat %s", own);
  if (exists && (S_ISDIR (st.st_mode) != S_ISDIR (real.st_mode) || !(S_ISDIR (st.st_mode) || S_ISREG (st.st_mode))))
    return hv_error_set (err, 0, "%s: not a %s like %s; remove it to start this project's copy again", own,
                         S_ISDIR (real.st_mode) ? "directory" : "file", full);
  if (!exists && S_ISREG (real.st_mode))
    {
      cleanup_close int fd = openat (parent, slash + 1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0 || hv_home_json_seed (fd, name) < 0)
        return hv_error_set (err, errno, "create %s", own);
      return 0;
    }
  if (!S_ISDIR (real.st_mode))
    return 0;
  cleanup_close int od = mkdirs_at (dfd, rel, err);
  if (od < 0)
    return hv_error_wrap (err, "state directory %s", dir);
  size_t n = strlen (name);
  for (size_t k = 0; k < a->data.n; k++)
    {
      cleanup_free char *sub = hv_home_sub_expand (a->data.v[k], ctx);
      if (strncmp (sub, name, n) != 0 || sub[n] != '/' || sub[n + 1] == '\0')
        continue;
      if (hv_home_path_is_file (a->data.v[k]))
        continue; /* a data file is bound only when the real one exists */
      cleanup_close int fd = mkdirs_at (od, sub + n + 1, err);
      if (fd < 0)
        return hv_error_wrap (err, "state directory %s", own);
    }
  return 0;
}

static int
prepare_private (const hv_policy *p, const struct hv_run_ctx *ctx, int dfd, const char *dir, hv_error **err)
{
  for (size_t i = 0; i < p->home_allow.n; i++)
    {
      if (p->home_access[i].write != HV_HOME_DATA)
        continue;
      cleanup_strv oci_strv paths = { 0 };
      hv_home_allow_expand (p->home_allow.v[i], ctx, &paths);
      for (size_t j = 0; j < paths.n; j++)
        {
          cleanup_strv oci_strv names = { 0 };
          hv_home_private_names (&p->home_access[i], ctx, paths.v[j], &names);
          for (size_t k = 0; k < names.n; k++)
            if (make_private (dfd, dir, &p->home_access[i], ctx, paths.v[j], names.v[k], err) < 0)
              return hv_error_wrap (err, "home_allow %s: private %s", p->home_allow.v[i], names.v[k]);
        }
    }
  return 0;
}

/* Only entries that exist are mounted; none, no state directory. */
static bool
any_copy_entry_present (const hv_policy *p, const struct hv_run_ctx *ctx)
{
  bool any_present = false;
  for (size_t i = 0; i < p->home_allow.n && !any_present; i++)
    {
      cleanup_strv oci_strv paths = { 0 };
      if (is_copy (p->home_access[i].write))
        hv_home_allow_expand (p->home_allow.v[i], ctx, &paths);
      for (size_t j = 0; j < paths.n; j++)
        any_present |= access (paths.v[j], F_OK) == 0;
    }
  return any_present;
}

/* The project's state directory, created if need be: an fd, its path in
 * *dir.  -1 when there is none, having said so: copy-on-write entries
 * are then read-only. */
static int
open_state_dir (const struct hv_run_ctx *ctx, char **dir, hv_error **err)
{
  cleanup_free char *root = state_root (ctx);
  if (root == NULL)
    {
      oci_strv_pushf (ctx->notes, "no home for a state directory: copy-on-write home_allow entries are read-only");
      return -1;
    }
  cleanup_free char *tag = hv_state_tag (ctx->project);
  cleanup_free char *rel = xasprintf ("haven/projects/%s", tag);
  cleanup_close int rootfd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0 && errno == ENOENT)
    {
      cleanup_error hv_error *ignored = NULL;
      const char *xdg = getenv ("XDG_STATE_HOME");
      if (xdg && xdg[0] == '/')
        {
          /* The user named it: made as named. */
          if (mkdir_p (root, 0700, &ignored) == 0)
            rootfd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
      else
        {
          /* ~/.local/state below a home that exists, never the home
           * itself (HOME=/nonexistent must not become a directory). */
          cleanup_free char *home = xasprintf ("%.*s", (int) (strlen (root) - strlen ("/.local/state")), root);
          cleanup_close int homefd = open (home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
          if (homefd >= 0)
            rootfd = mkdirs_at (homefd, ".local/state", &ignored);
        }
    }
  cleanup_close int dfd = rootfd >= 0 ? mkdirs_at (rootfd, rel, err) : -1;
  if (dfd < 0)
    {
      /* Fail closed: read-only, and say so. */
      oci_strv_pushf (ctx->notes,
                      "cannot create the state directory in %s (%s): copy-on-write home_allow entries are "
                      "read-only in this run",
                      root, *err ? (*err)->msg : strerror (errno));
      hv_error_free (err);
      return -1;
    }
  *dir = xasprintf ("%s/%s", root, rel);
  return steal_fd (&dfd);
}

/* The upper and work directories of an overlay of lower (the entry
 * itself, or the home whose overlay it shares) in layers, and whether an
 * overlay of it can be mounted: 1 when none can (said why, for path), 0
 * when one can, -1 on error. */
static int
prepare_overlay (int dfd, const char *dir, const char *path, const char *lower, const char *layers,
                 const char *layers_rel, bool rootless, bool *probed, oci_strv *notes, hv_error **err)
{
  cleanup_free char *upper_rel = xasprintf ("%s/upper", layers_rel);
  cleanup_free char *work_rel = xasprintf ("%s/work", layers_rel);
  cleanup_close int u = mkdirs_at (dfd, upper_rel, err);
  if (u < 0)
    return hv_error_wrap (err, "state directory %s", dir);
  cleanup_close int wk = mkdirs_at (dfd, work_rel, err);
  if (wk < 0)
    return hv_error_wrap (err, "state directory %s", dir);
  cleanup_free char *upper = xasprintf ("%s/upper", layers), *work = xasprintf ("%s/work", layers);
  cleanup_free char *why = NULL;
  if (!overlay_safe_path (lower) || !overlay_safe_path (upper))
    why = xstrdup ("a path holds ',', ':' or '\\'");
  /* One trial mount per run (a process each: about a millisecond):
   * the entries share the home's and the state directory's
   * filesystems.  Should a later one still fail, the runtime's
   * mount of it stops the start: never writable for real.  That also
   * makes remembering "it works" safe (overlay_probe_cache.h): a stale
   * or forged verdict can only stop the start, never open an entry. */
  else if (!*probed)
    {
      cleanup_free char *key = hv_overlay_probe_key (lower, dfd, rootless);
      if (key == NULL || !hv_overlay_probe_cached (dfd, key))
        {
          if (!overlay_works (lower, upper, work, rootless, &why))
            {
              if (why == NULL)
                why = xstrdup ("unknown error");
            }
          else if (key)
            hv_overlay_probe_remember (dfd, key);
        }
    }
  *probed = true;
  if (why)
    {
      /* Fail closed: read-only, and say so. */
      oci_strv_pushf (notes,
                      "cannot mount a copy-on-write overlay for %s (%s): copy-on-write home_allow "
                      "entries are read-only in this run",
                      path, why);
      return 1;
    }
  return 0;
}

/* A directory that had an overlay of its own (before the home's
 * directories shared one) keeps what earlier runs wrote in it: its upper
 * layer becomes its sub-directory of the shared upper layer, once, if
 * that has none yet.  Runs under the project's lock (lock_layers).  Its
 * old work directory holds only the kernel's empty "work" and goes.
 * Nothing here follows a link; a failure leaves the old layer unused and
 * says so. */
static void
adopt_own_layers (int dfd, const char *dir, const char *path, const char *entry_rel, const char *layers_rel,
                  const char *rel, oci_strv *notes)
{
  cleanup_free char *old_upper = xasprintf ("%s/upper", entry_rel);
  struct stat st;
  if (fstatat (dfd, old_upper, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode))
    return;
  cleanup_free char *target = xasprintf ("%s/upper/%s", layers_rel, rel);
  char *slash = strrchr (target, '/');
  *slash = '\0';
  hv_error *err = NULL;
  cleanup_close int parent = mkdirs_at (dfd, target, &err);
  if (parent < 0 || renameat2 (dfd, old_upper, parent, slash + 1, RENAME_NOREPLACE) < 0)
    {
      if (parent >= 0 && errno == EEXIST)
        return; /* the shared layer has its own: the old one stays unused */
      oci_strv_pushf (notes, "cannot move the copy-on-write state of %s from %s/%s into the shared layer (%s)", path,
                      dir, old_upper, err ? err->msg : strerror (errno));
      hv_error_free (&err);
      return;
    }
  cleanup_free char *work_work = xasprintf ("%s/work/work", entry_rel);
  cleanup_free char *work = xasprintf ("%s/work", entry_rel);
  unlinkat (dfd, work_work, AT_REMOVEDIR);
  unlinkat (dfd, work, AT_REMOVEDIR);
  unlinkat (dfd, entry_rel, AT_REMOVEDIR);
  /* Empty once every directory's layers moved (a file's copy stays). */
  unlinkat (dfd, "home", AT_REMOVEDIR);
}

/* Every present copy-on-write entry's place in the state directory: a
 * file's copy, a directory's overlay.  1 when overlays cannot be
 * mounted (said why), 0 when they can, -1 on error. */
static int
prepare_copy_entries (const hv_policy *p, const struct hv_run_ctx *ctx, int dfd, const char *dir, hv_error **err)
{
  bool probed = false;
  for (size_t i = 0; i < p->home_allow.n; i++)
    {
      if (!is_copy (p->home_access[i].write))
        continue;
      cleanup_strv oci_strv paths = { 0 };
      hv_home_allow_expand (p->home_allow.v[i], ctx, &paths);
      for (size_t j = 0; j < paths.n; j++)
        {
          struct stat st;
          if (lstat (paths.v[j], &st) < 0)
            continue;
          cleanup_free char *entry = hv_home_state_entry (dir, paths.v[j]);
          cleanup_free char *entry_rel = xstrdup (entry + strlen (dir) + 1);
          if (S_ISREG (st.st_mode))
            {
              if (copy_file_once (dfd, entry_rel, paths.v[j], err) < 0)
                return hv_error_wrap (err, "home_allow %s", p->home_allow.v[i]);
              if (p->home_access[i].per_project.n)
                {
                  cleanup_close int efd = mkdirs_at (dfd, entry_rel, err);
                  if (efd < 0
                      || hv_home_copy_filter (efd, "file", paths.v[j], &p->home_access[i].per_project, ctx->project,
                                              ctx->notes, err)
                             < 0)
                    return hv_error_wrap (err, "home_allow %s", p->home_allow.v[i]);
                }
              continue;
            }
          if (!S_ISDIR (st.st_mode))
            continue;
          /* The same choice as the compiler's (policy_compile.c). */
          const char *home = hv_home_layers_home (ctx, paths.v[j]);
          int r;
          if (home)
            {
              cleanup_free char *layers = hv_home_layers_dir (dir, home);
              const char *layers_rel = layers + strlen (dir) + 1;
              adopt_own_layers (dfd, dir, paths.v[j], entry_rel, layers_rel, paths.v[j] + strlen (home) + 1,
                                ctx->notes);
              r = prepare_overlay (dfd, dir, paths.v[j], home, layers, layers_rel, ctx->rootless, &probed, ctx->notes,
                                   err);
            }
          else
            r = prepare_overlay (dfd, dir, paths.v[j], paths.v[j], entry, entry_rel, ctx->rootless, &probed,
                                 ctx->notes, err);
          if (r != 0)
            return r;
        }
    }
  return 0;
}

/* Two overlays that share an upper and a work directory are undefined
 * behaviour for the kernel ("upperdir is in-use"), and the second mount
 * empties the work directory the first one uses: writes in the first
 * sandbox then fail with ESTALE, or the second mount with ENOENT (two
 * runs at once in one project: 5 of 40 pairs here).  So one run at a
 * time holds the project's layers, by an flock kept until its sandbox is
 * gone; the lock goes with the last process holding it, a killed run's
 * too.  A run that finds it taken mounts nothing (the trial mount, which
 * uses the same directories, included) and gets the entries read-only,
 * as when no overlay can be mounted.  1: taken by another run. */
static int
lock_layers (int dfd, const char *dir, int *lock_fd, oci_strv *notes, hv_error **err)
{
  cleanup_close int fd = openat (dfd, "cow.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EROFS)
    {
      /* A read-only state directory: no overlay can be mounted on it (its
       * upper layer cannot be written), so none is shared; a lock file an
       * earlier run made is still taken. */
      fd = openat (dfd, "cow.lock", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT)
        return 0;
    }
  if (fd < 0)
    return hv_error_set (err, errno, "open %s/cow.lock", dir);
  if (flock (fd, LOCK_EX | LOCK_NB) < 0)
    {
      if (errno != EWOULDBLOCK)
        return hv_error_set (err, errno, "lock %s/cow.lock", dir);
      oci_strv_pushf (notes, "another haven run in this project uses its copy-on-write home state: "
                             "copy-on-write home_allow entries are read-only in this run");
      return 1;
    }
  *lock_fd = steal_fd (&fd);
  return 0;
}

int
hv_home_state_prepare (const hv_policy *p, const struct hv_run_ctx *ctx, char **state, int *lock_fd,
                       hv_error **err)
{
  *state = NULL;
  *lock_fd = -1;
  if (!p->hide_home.value)
    return 0;
  if (protect_direct_entries (p, ctx, err) < 0 || make_data_dirs (p, ctx, err) < 0)
    return -1;
  if (!any_copy_entry (p) || !any_copy_entry_present (p, ctx))
    return 0;
  cleanup_free char *dir = NULL;
  cleanup_close int dfd = open_state_dir (ctx, &dir, err);
  if (dfd < 0)
    return 0;
  cleanup_close int lock = -1;
  int r = lock_layers (dfd, dir, &lock, ctx->notes, err);
  if (r == 0)
    r = prepare_copy_entries (p, ctx, dfd, dir, err);
  if (r == 0)
    r = prepare_private (p, ctx, dfd, dir, err);
  if (r != 0)
    return r < 0 ? -1 : 0; /* 1: the entries stay read-only (fail closed) */
  *state = steal_pointer (&dir);
  *lock_fd = steal_fd (&lock);
  return 0;
}
