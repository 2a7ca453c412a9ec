/* hv_policy + run context -> config.json for haven-runc. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "git_identity_mount.h"
#include "haven_annotations.h"
#include "offline.h"
#include "home_allow.h"
#include "json_gen.h"
#include "denial_rules.h"
#include "denial_view.h"
#include "landlock_audit_rules.h"
#include "oci_tables.h"
#include "engine_gateway.h"
#include "policy_api.h"
#include "policy_compile.h"
#include "sandbox_writes.h"
#include "policy_env.h"
#include "policy_exec.h"
#include "policy_glob.h"
#include "policy_hide.h"
#include "policy_egress.h"
#include "policy_paths.h"
#include "seccomp_arch.h"
#include "utils.h"

/* The agent seccomp profile: escape primitives answer EPERM, so an agent
 * gets an error it can read instead of being killed. */
static const char *const agent_denied_syscalls[] = {
  "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount", "umount2", "pivot_root", "move_mount",
  "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "bpf", "perf_event_open", "keyctl",
  "add_key", "request_key", "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd", "kexec_load",
  "kexec_file_load", "init_module", "finit_module", "delete_module", "setns", "unshare", "acct", "swapon",
  "swapoff", "reboot", "syslog", "quotactl", "quotactl_fd", "open_by_handle_at", "name_to_handle_at",
  "lookup_dcookie", "iopl", "ioperm", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime",
  "vm86", "vm86old", "nfsservctl", "uselib", "personality", "fanotify_init", "chroot", "kcmp", "pidfd_getfd",
  "mbind", "migrate_pages", "move_pages", "set_mempolicy", "get_kernel_syms", "query_module", "create_module",
  NULL,
};

#define TIOCSTI_NR 0x5412
#define TIOCLINUX_NR 0x541C
#define CLONE_NEWUSER_FLAG 0x10000000ULL

static void
strv (yajl_gen g, const char *key, char **v, size_t n)
{
  jg_str (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    jg_str (g, v[i]);
  yajl_gen_array_close (g);
}

/* "{project}/x" and "/project/x" -> "<project>/x" ("~" is expand_each's). */
static char *
expand (const char *pattern, const struct hv_run_ctx *ctx)
{
  if (str_has_prefix (pattern, "{project}"))
    return xasprintf ("%s%s", ctx->project, pattern + 9);
  /* The LLM-safe-haven seed format names the project by its mount point
   * in a container, /project: `read_only: ['/project']` must make the
   * project read-only, not match nothing on the host. */
  if (str_has_prefix (pattern, "/project") && (pattern[8] == '/' || pattern[8] == '\0'))
    return xasprintf ("%s%s", ctx->project, pattern + 8);
  if (pattern[0] != '/')
    return xasprintf ("%s/%s", ctx->project, pattern);
  return xstrdup (pattern);
}

/* "~/x" names x in every home of the caller: $HOME's and the password
 * database's (they differ when HOME is unset or points elsewhere, and the
 * real ~/.ssh must stay hidden then too). */
static void
expand_each (const char *pattern, const struct hv_run_ctx *ctx, oci_strv *out)
{
  if (pattern[0] == '~' && (pattern[1] == '/' || pattern[1] == '\0'))
    {
      hv_home_allow_expand (pattern, ctx, out);
      return;
    }
  cleanup_free char *path = expand (pattern, ctx);
  oci_strv_push (out, path);
}

/* Expand a policy pattern ("~/", "{project}/", globs, "**") against the
 * host; errors name the pattern. */
static int
expand_glob (const char *pattern, const struct hv_run_ctx *ctx, oci_strv *out, hv_error **err)
{
  cleanup_strv oci_strv each = { 0 };
  expand_each (pattern, ctx, &each);
  for (size_t i = 0; i < each.n; i++)
    if (hv_glob_expand (each.v[i], 0, out, err) < 0)
      return hv_error_wrap (err, "policy path \"%s\"", pattern);
  return 0;
}

/* Under exec rules (block_shell, allow_exec), nothing the sandbox can
 * write may be mapped executable: Landlock refuses execve of it, but the
 * dynamic loader run directly (ld.so ./a.out) only mmaps it, which
 * Landlock does not see and noexec refuses. */
static bool
exec_rules (const hv_policy *p)
{
  return p->allow_exec.n > 0 || p->block_shell.value;
}

/* A host path shown at the same path in the sandbox.  The runtime opens
 * the source and resolves the destination refusing every symbolic link
 * (x-haven.nofollow): the path was checked link-free here, and a link
 * swapped in since makes the start fail instead of binding its target.
 * x-haven.mkdir: the mount point may be missing in the sandbox when it
 * lies on a tmpfs laid earlier (the hidden home, /tmp). */
static void
bind (yajl_gen g, const char *path, bool writable, bool noexec)
{
  static const char *const rw[] = { "rbind", "rw", "nosuid", "nodev", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_MKDIR, NULL };
  static const char *const rw_noexec[]
      = { "rbind", "rw", "nosuid", "nodev", "noexec", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_MKDIR, NULL };
  static const char *const ro[]
      = { "rbind", "ro", "rro", "nosuid", "nodev", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_MKDIR, NULL };
  static const char *const ro_noexec[]
      = { "rbind", "ro", "rro", "nosuid", "nodev", "noexec", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_MKDIR, NULL };
  if (writable)
    jg_mount (g, path, "bind", path, noexec ? rw_noexec : rw);
  else
    jg_mount (g, path, "bind", path, noexec ? ro_noexec : ro);
}

static bool
below (const char *path, const char *dir)
{
  size_t l = dir ? strlen (dir) : 0;
  return l && strncmp (path, dir, l) == 0 && (path[l] == '/' || path[l] == '\0');
}

/* A read-only path that an earlier run could have written (in the
 * project or the home): as hostile as a writable one. */
static bool
maybe_written (const char *path, const struct hv_run_ctx *ctx)
{
  if (below (path, ctx->project) || below (path, ctx->home))
    return true;
  for (size_t i = 0; ctx->homes && i < ctx->homes->n; i++)
    if (below (path, ctx->homes->v[i]))
      return true;
  return false;
}

static void
tmpfs (yajl_gen g, const char *path, uint64_t size, bool exec)
{
  char sz[64];
  snprintf (sz, sizeof (sz), "size=%llu", (unsigned long long) (size ? size : 256ULL << 20));
  const char *opts[] = { "nosuid", "nodev", exec ? "exec" : "noexec", "mode=1777", sz, NULL };
  jg_mount (g, path, "tmpfs", "tmpfs", opts);
}

static bool
is_dir (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

/* Masks: laid after every bind, each on a path that existed, link-free,
 * when the policy was compiled.  Without x-haven.optional, a mask whose
 * path is gone when the runtime lays it (another sandbox renamed its
 * parent) stops the start instead of leaving what it hides visible. */
struct masks
{
  oci_strv paths;
  oci_strv dirs; /* the subset that is a directory: an empty tmpfs */
};

static void
masks_free (struct masks *m)
{
  oci_strv_free (&m->paths);
  oci_strv_free (&m->dirs);
}
#define cleanup_masks __attribute__ ((cleanup (masks_free)))

static void
mask_add (struct masks *m, const char *path, bool dir)
{
  oci_strv_push_unique (&m->paths, path);
  if (dir)
    oci_strv_push_unique (&m->dirs, path);
}

static bool
path_under (const char *path, const char *dir)
{
  size_t n = strcmp (dir, "/") == 0 ? 0 : strlen (dir);
  return strncmp (path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Is anything of the host visible at path, or does a tmpfs laid above
 * hide it anyway (the hidden home, /tmp, /run)?  The deepest mount over
 * the path decides. */
static bool
host_visible (const char *path, const oci_strv *shown, const oci_strv *hidden)
{
  size_t best_shown = 0, best_hidden = 0;
  for (size_t i = 0; i < shown->n; i++)
    if (path_under (path, shown->v[i]) && strlen (shown->v[i]) > best_shown)
      best_shown = strlen (shown->v[i]);
  for (size_t i = 0; i < hidden->n; i++)
    if (path_under (path, hidden->v[i]) && strlen (hidden->v[i]) > best_hidden)
      best_hidden = strlen (hidden->v[i]);
  return best_hidden == 0 || best_shown > best_hidden;
}

/* The snapshot a hidden file git tracks unchanged is shown as, or NULL
 * (session/git_hidden_tracked.h). */
static const char *
git_shown_snapshot (const struct hv_run_ctx *ctx, const char *path)
{
  for (size_t i = 0; ctx->git_shown && ctx->git_shown_snapshots && i < ctx->git_shown->n
                     && i < ctx->git_shown_snapshots->n;
       i++)
    if (strcmp (ctx->git_shown->v[i], path) == 0)
      return ctx->git_shown_snapshots->v[i];
  return NULL;
}

/* The deepest shown entry over path (the bind it lies in), or NULL. */
static const char *
shown_over (const char *path, const oci_strv *shown)
{
  const char *best = NULL;
  for (size_t i = 0; i < shown->n; i++)
    if (path_under (path, shown->v[i]) && (best == NULL || strlen (shown->v[i]) > strlen (best)))
      best = shown->v[i];
  return best;
}

static int
compare_paths (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Every directory strictly between base and path, pushed to out. */
static void
push_parents_between (const char *base, const char *path, oci_strv *out)
{
  size_t start = strcmp (base, "/") == 0 ? 0 : strlen (base);
  if (start >= strlen (path))
    return; /* the bind itself is masked: nothing between */
  for (const char *slash = path + start + 1; (slash = strchr (slash, '/')) != NULL; slash++)
    {
      cleanup_free char *dir = xasprintf ("%.*s", (int) (slash - path), path);
      oci_strv_push (out, dir);
    }
}

/* Pins: each directory on the way from a writable bind (the project, a
 * read_write path) to a path masked below it becomes a mount point of
 * itself in this sandbox (the runtime's x-haven.pin), so that nothing run
 * in it can rename or remove a parent of a hidden file: the kernel
 * refuses (EBUSY) to move or remove a mount point of the caller's own
 * namespace.  Without them one sandbox renaming sub back and forth made
 * the next sandboxes' walk for hidden files (at compile time) miss
 * sub/dir/.env, which they then read.  Every start pins the
 * paths it hides, so that every sandbox already running holds still what
 * a new one must find.  Sorted: a parent before what lies in it, each
 * once. */
static void
gen_pins (yajl_gen g, const oci_strv *laid, const oci_strv *shown, const oci_strv *writable)
{
  static const char *const pin_opts[] = { "bind", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_PIN, NULL };
  cleanup_strv oci_strv pins = { 0 };
  for (size_t i = 0; i < laid->n; i++)
    {
      const char *base = shown_over (laid->v[i], shown);
      bool in_writable = false;
      for (size_t j = 0; base && j < writable->n && !in_writable; j++)
        in_writable = strcmp (writable->v[j], base) == 0;
      /* Read-only binds need none: a rename there fails (EROFS). */
      if (in_writable)
        push_parents_between (base, laid->v[i], &pins);
    }
  if (pins.n > 1)
    qsort (pins.v, pins.n, sizeof (char *), compare_paths);
  for (size_t i = 0; i < pins.n; i++)
    if (i == 0 || strcmp (pins.v[i], pins.v[i - 1]) != 0)
      jg_mount (g, pins.v[i], "bind", pins.v[i], pin_opts);
}

static void
gen_masks (yajl_gen g, const struct hv_run_ctx *ctx, const struct masks *m, const oci_strv *shown,
           const oci_strv *hidden, const oci_strv *writable)
{
  static const char *const dir_opts[] = { "ro", "nosuid", "nodev", "noexec", "size=4k", "nr_inodes=2",
                                          "mode=0555", HV_MOUNT_OPT_NOFOLLOW, NULL };
  /* Not nodev: reading the masked file must give the null device's
   * nothing, not EACCES (a bind of /dev/null, as runtimes mask files). */
  static const char *const file_opts[] = { "bind", "ro", "nosuid", "noexec", HV_MOUNT_OPT_NOFOLLOW, NULL };
  /* Blank lines git finds unchanged (session/git_hidden_tracked.h). */
  static const char *const snapshot_opts[] = { "bind", "ro", "nosuid", "nodev", "noexec", HV_MOUNT_OPT_NOFOLLOW, NULL };
  cleanup_strv oci_strv laid = { 0 };
  for (size_t i = 0; i < m->paths.n; i++)
    {
      const char *path = m->paths.v[i];
      if (!host_visible (path, shown, hidden))
        continue;
      /* Below another masked directory: already hidden, and its mount
       * point will not exist in the empty tmpfs. */
      bool covered = false;
      for (size_t j = 0; j < m->dirs.n && !covered; j++)
        covered = strcmp (m->dirs.v[j], path) != 0 && path_under (path, m->dirs.v[j]);
      if (!covered)
        oci_strv_push (&laid, path);
    }
  gen_pins (g, &laid, shown, writable);
  for (size_t i = 0; i < laid.n; i++)
    {
      const char *path = laid.v[i];
      bool dir = false;
      for (size_t j = 0; j < m->dirs.n && !dir; j++)
        dir = strcmp (m->dirs.v[j], path) == 0;
      /* A file, a symbolic link or anything else that is not a directory
       * is covered by /dev/null: onto a link, the mount replaces the link
       * itself, whose target is never looked at. */
      const char *snapshot = dir ? NULL : git_shown_snapshot (ctx, path);
      if (dir)
        jg_mount (g, path, "tmpfs", "tmpfs", dir_opts);
      else if (snapshot)
        jg_mount (g, path, "bind", snapshot, snapshot_opts);
      else
        jg_mount (g, path, "bind", "/dev/null", file_opts);
    }
}

/* "filesystem.KEY \"PATTERN\": PATH is a symbolic link" or "crosses the
 * symbolic link L", for messages. */
static char *
link_words (const struct hv_policy_path *pp)
{
  return pp->link_last ? xasprintf ("%s is a symbolic link", pp->real)
                       : xasprintf ("%s crosses the symbolic link %s", pp->real, pp->link);
}

/* Binds that make a policy path writable (read_write, home_allow): a path
 * that is or crosses a link is not bound, with a warning, since binding
 * it would make the link's target writable. */
static int
bind_writable (yajl_gen g, const struct hv_run_ctx *ctx, const char *path, bool dirs_only, bool noexec,
               oci_strv *writable, oci_strv *shown, hv_error **err)
{
  struct hv_policy_path pp;
  int r = hv_policy_path_resolve (ctx, path, &pp, err);
  if (r < 0)
    return -1;
  if (r == HV_PATH_LINK)
    {
      cleanup_free char *why = link_words (&pp);
      oci_strv_pushf (ctx->notes, "not making %s writable: %s", path, why);
    }
  else if (r == HV_PATH_FOUND && (!dirs_only || S_ISDIR (pp.st.st_mode)))
    {
      bind (g, pp.real, true, noexec);
      oci_strv_push (writable, pp.real);
      oci_strv_push (shown, pp.real);
    }
  hv_policy_path_clear (&pp);
  return 0;
}

/* A path hidden by the policy (block): an existing file or directory is
 * masked; a link is masked itself (its target is not followed); a path
 * crossing a link in the project or home (which a run may have planted)
 * gets that link masked; crossing one elsewhere is an error, since the
 * policy then names something this run cannot hide without following it. */
static int
block_path (const struct hv_run_ctx *ctx, const char *pattern, const char *path, struct masks *m, hv_error **err)
{
  struct hv_policy_path pp;
  int r = hv_policy_path_resolve (ctx, path, &pp, err);
  if (r < 0)
    return hv_error_wrap (err, "filesystem.block \"%s\"", pattern);
  if (r == HV_PATH_FOUND)
    mask_add (m, pp.real, S_ISDIR (pp.st.st_mode));
  else if (r == HV_PATH_LINK && (pp.link_last || pp.in_sandbox_writable))
    mask_add (m, pp.link, false);
  else if (r == HV_PATH_LINK)
    {
      cleanup_free char *why = link_words (&pp);
      hv_policy_path_clear (&pp);
      return hv_error_set (err, 0, "filesystem.block \"%s\": %s; name the path without links", pattern, why);
    }
  hv_policy_path_clear (&pp);
  return 0;
}

/* Trees the kernel makes for the container (its own /proc, /dev) and
 * /sys: masked in the container's view, as OCI maskedPaths. */
static bool
kernel_tree (const char *path)
{
  return path_under (path, "/proc") || path_under (path, "/dev") || path_under (path, "/sys");
}

/* A copy-on-write home_allow directory: an overlay on the real one whose
 * writes land in the project's state directory (session/home_state.c), so that a
 * trojaned ~/.cargo/bin/cargo or venv activate never reaches the host. */
static void
overlay (yajl_gen g, const char *path, const struct hv_run_ctx *ctx, bool noexec)
{
  const char *state = ctx->home_state;
  const char *home = hv_home_layers_home (ctx, path);
  if (home)
    {
      /* One overlay of the whole home for all of them (home_allow.h); the
       * runtime mounts it once and shows only this sub-directory of it,
       * resolved beneath its root without following links
       * (x-haven.subdir).  The rest of the home stays out of the
       * sandbox: the overlay's own root is never shown to it. */
      cleanup_free char *layers = hv_home_layers_dir (state, home);
      cleanup_free char *lower = xasprintf ("lowerdir=%s", home);
      cleanup_free char *upper = xasprintf ("upperdir=%s/upper", layers);
      cleanup_free char *work = xasprintf ("workdir=%s/work", layers);
      cleanup_free char *subdir = xasprintf (HV_MOUNT_OPT_SUBDIR "%s", path + strlen (home) + 1);
      const char *opts[] = { lower, upper, work, "nosuid", "nodev", subdir, noexec ? "noexec" : NULL, NULL };
      jg_mount (g, path, "overlay", "overlay", opts);
      return;
    }
  cleanup_free char *entry = hv_home_state_entry (state, path);
  cleanup_free char *lower = xasprintf ("lowerdir=%s", path);
  cleanup_free char *upper = xasprintf ("upperdir=%s/upper", entry);
  cleanup_free char *work = xasprintf ("workdir=%s/work", entry);
  const char *opts[] = { lower, upper, work, "nosuid", "nodev", noexec ? "noexec" : NULL, NULL };
  jg_mount (g, path, "overlay", "overlay", opts);
}

/* A write: data entry's parts, over its copy-on-write overlay (or its
 * read-only bind, when none can be mounted): each private name the real
 * directory holds is the project's own copy from the state directory
 * (session/home_state.c), or, without one, an empty read-only
 * directory or file (fail closed: another project's data is never shown);
 * then each data sub-path that exists is the real one, writable and
 * noexec, and each protected sub-path read-only over it.  Nothing is followed through a link (x-haven.nofollow; a link
 * where a data path should be is not bound, and said). */
static void
gen_home_data (yajl_gen g, const char *path, const hv_home_access *access, const struct hv_run_ctx *ctx,
               oci_strv *writable)
{
  static const char *const own_opts[]
      = { "rbind", "rw", "nosuid", "nodev", "noexec", HV_MOUNT_OPT_NOFOLLOW, NULL };
  static const char *const empty_dir[] = { "nosuid", "nodev", "noexec", "mode=700", "size=64m", NULL };
  static const char *const empty_file[] = { "bind", "ro", "nosuid", "noexec", NULL };
  cleanup_strv oci_strv names = { 0 };
  hv_home_private_names (access, ctx, path, &names);
  for (size_t i = 0; i < names.n; i++)
    {
      cleanup_free char *dest = xasprintf ("%s/%s", path, names.v[i]);
      struct stat st;
      if (lstat (dest, &st) < 0)
        continue;
      if (ctx->home_state)
        {
          cleanup_free char *own = hv_home_private_entry (ctx->home_state, path, names.v[i]);
          jg_mount (g, dest, "bind", own, own_opts);
          oci_strv_push (writable, dest);
        }
      else if (S_ISDIR (st.st_mode))
        jg_mount (g, dest, "tmpfs", "tmpfs", empty_dir);
      else
        jg_mount (g, dest, "bind", "/dev/null", empty_file);
    }
  for (size_t i = 0; i < access->data.n; i++)
    {
      if (hv_home_sub_repeated (&access->data, i, ctx))
        continue;
      cleanup_free char *sub = hv_home_sub_expand (access->data.v[i], ctx);
      cleanup_free char *dest = xasprintf ("%s/%s", path, sub);
      struct hv_policy_path pp;
      hv_error *err = NULL;
      int r = hv_policy_path_resolve (ctx, dest, &pp, &err);
      if (r < 0)
        {
          oci_strv_pushf (ctx->notes, "not making %s writable: %s", dest, err->msg);
          hv_error_free (&err);
          continue;
        }
      if (r == HV_PATH_LINK)
        {
          cleanup_free char *why = link_words (&pp);
          oci_strv_pushf (ctx->notes, "not making %s writable: %s", dest, why);
        }
      else if (r == HV_PATH_FOUND && (S_ISDIR (pp.st.st_mode) || S_ISREG (pp.st.st_mode)))
        {
          bind (g, pp.real, true, true);
          oci_strv_push (writable, pp.real);
        }
      hv_policy_path_clear (&pp);
    }
  /* Protected parts of the data (Claude Code's memory of the project,
   * which its next session on the host loads as instructions): made to
   * exist before the run (session/home_state.c), read-only. */
  for (size_t i = 0; i < access->protect.n; i++)
    {
      if (hv_home_sub_repeated (&access->protect, i, ctx))
        continue;
      cleanup_free char *sub = hv_home_sub_expand (access->protect.v[i], ctx);
      cleanup_free char *dest = xasprintf ("%s/%s", path, sub);
      struct stat sst;
      if (lstat (dest, &sst) == 0)
        bind (g, dest, false, true);
    }
}

/* One home_allow entry, as its `write` says (policies/README.md): copy
 * (an overlay, or read-only when none can be mounted: ctx->home_state is
 * NULL), read-only, or direct: the real directory writable but noexec,
 * with its protected sub-paths bound read-only over it. */
static int
gen_home_allow (yajl_gen g, const char *pattern, const hv_home_access *access, const struct hv_run_ctx *ctx,
                bool noexec, oci_strv *writable, oci_strv *shown, hv_error **err)
{
  cleanup_strv oci_strv paths = { 0 };
  hv_home_allow_expand (pattern, ctx, &paths);
  for (size_t i = 0; i < paths.n; i++)
    {
      /* Never through a link: a run may have planted one in the home
       * (policies/README.md, "Links in the project"). */
      struct hv_policy_path pp;
      int r = hv_policy_path_resolve (ctx, paths.v[i], &pp, err);
      if (r < 0)
        return -1;
      if (r == HV_PATH_LINK)
        {
          cleanup_free char *why = link_words (&pp);
          oci_strv_pushf (ctx->notes, "not showing %s in the sandbox: %s", paths.v[i], why);
        }
      cleanup_free char *path = r == HV_PATH_FOUND ? xstrdup (pp.real) : NULL;
      struct stat st = pp.st;
      hv_policy_path_clear (&pp);
      if (path == NULL)
        continue;
      oci_strv_push (shown, path);
      if (S_ISREG (st.st_mode))
        {
          /* A file: copy-on-write is the project's own copy of it. */
          cleanup_free char *entry = ctx->home_state ? hv_home_state_entry (ctx->home_state, path) : NULL;
          cleanup_free char *copy = entry ? xasprintf ("%s/file", entry) : NULL;
          static const char *const rw_file[] = { "bind", "rw", "nosuid", "nodev", "noexec", NULL };
          if ((access->write == HV_HOME_COPY || access->write == HV_HOME_DATA) && copy)
            {
              jg_mount (g, path, "bind", copy, rw_file);
              oci_strv_push (writable, path);
            }
          else if (access->per_project.n)
            {
              /* No project's copy, cut down to its own entries: the real
               * file holds every project's, so none is shown (fail
               * closed). */
              static const char *const null_file[] = { "bind", "ro", "nosuid", "noexec", NULL };
              jg_mount (g, path, "bind", "/dev/null", null_file);
            }
          else
            bind (g, path, access->write == HV_HOME_DIRECT, true);
          continue;
        }
      if (!S_ISDIR (st.st_mode))
        continue;
      switch (access->write)
        {
        case HV_HOME_COPY:
        case HV_HOME_DATA:
          /* Copy-on-write where the project has its layers, else read-only;
           * data mode then binds its data paths back over it. */
          if (ctx->home_state)
            {
              overlay (g, path, ctx, noexec);
              oci_strv_push (writable, path);
            }
          else
            bind (g, path, false, noexec);
          if (access->write == HV_HOME_DATA)
            gen_home_data (g, path, access, ctx, writable);
          break;
        case HV_HOME_READ_ONLY:
          bind (g, path, false, noexec);
          break;
        case HV_HOME_DIRECT:
          bind (g, path, true, true);
          oci_strv_push (writable, path);
          for (size_t j = 0; j < access->protect.n; j++)
            {
              /* Made to exist before the run (session/home_state.c), links refused;
               * the runtime refuses a link swapped in since (nofollow). */
              cleanup_free char *sub = xasprintf ("%s/%s", path, access->protect.v[j]);
              struct stat sst;
              if (lstat (sub, &sst) == 0)
                bind (g, sub, false, true);
            }
          break;
        }
    }
  return 0;
}

/* hide_home: every home of the caller becomes an empty scratch directory
 * with the home_allow entries bound back (never through a link: see
 * bind_writable), and every other user's home an empty one (root could
 * read them; the project is bound on top later).
 * Another user's home that is gone when the runtime lays its tmpfs
 * (x-haven.optional: the host removed the user between the compile and
 * the mount; tests/load's soak hit it beside suites that add and remove
 * users) is skipped instead of stopping the run: nothing is there to
 * hide, as for a home made after the start, which the sandbox sees too.
 * No sandbox can make it go away to see it: other users' homes and their
 * parents (/home, /) are never writable in a sandbox (the project cannot
 * be or hold a home: hv_check_project_homes), unlike the masks'
 * paths, whose loss stops the start (struct masks).  x-haven.nofollow: a
 * home that became a link or a file is an error, never followed. */
/* Container engines' data roots: empty, read-only as the root around
 * them, whatever hide_home says (no one's home, every other container's
 * files).  Optional and never followed, as other users' homes. */
static void
gen_engine_roots (yajl_gen g, const struct hv_run_ctx *ctx, oci_strv *hidden)
{
  static const char *const empty_opts[]
      = { "nosuid", "nodev", "noexec", "ro", "mode=755", "size=1m", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_OPTIONAL,
          NULL };
  for (size_t i = 0; ctx->engine_roots && i < ctx->engine_roots->n; i++)
    {
      jg_mount (g, ctx->engine_roots->v[i], "tmpfs", "tmpfs", empty_opts);
      oci_strv_push (hidden, ctx->engine_roots->v[i]);
    }
}

static int
gen_hidden_homes (yajl_gen g, const hv_policy *p, const struct hv_run_ctx *ctx, bool noexec, oci_strv *writable,
                  oci_strv *shown, oci_strv *hidden, hv_error **err)
{
  static const char *const empty_opts[]
      = { "nosuid", "nodev", "noexec", "mode=755", "size=1m", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_OPTIONAL, NULL };
  for (size_t i = 0; ctx->other_homes && i < ctx->other_homes->n; i++)
    {
      jg_mount (g, ctx->other_homes->v[i], "tmpfs", "tmpfs", empty_opts);
      oci_strv_push (hidden, ctx->other_homes->v[i]);
    }
  cleanup_strv oci_strv homes = { 0 };
  expand_each ("~", ctx, &homes);
  for (size_t h = 0; h < homes.n; h++)
    if (is_dir (homes.v[h]))
      {
        tmpfs (g, homes.v[h], 64ULL << 20, false);
        oci_strv_push (writable, homes.v[h]);
        oci_strv_push (hidden, homes.v[h]);
      }
  for (size_t i = 0; i < p->home_allow.n; i++)
    if (gen_home_allow (g, p->home_allow.v[i], &p->home_access[i], ctx, noexec, writable, shown, err) < 0)
      return hv_error_wrap (err, "filesystem.home_allow \"%s\"", p->home_allow.v[i]);
  return 0;
}

/* block: the paths its patterns find, except where the last entry that
 * matches a path is an exception ("!pattern", as in .gitignore): default
 * hides {project}/ ** /.env.* and un-hides .env.example, and a policy
 * extending it can hide a template again or un-hide a fixture.  All
 * patterns are expanded together, so the "**" walks of one directory are
 * a single walk. */
static int
expand_block (const hv_policy *p, const struct hv_run_ctx *ctx, oci_strv *out, hv_error **err)
{
  cleanup_strv oci_strv pats = { 0 };
  cleanup_free bool *negative = NULL;
  bool any_negative = false;
  for (size_t i = 0; i < p->block.n; i++)
    {
      bool neg = p->block.v[i][0] == '!';
      size_t before = pats.n;
      expand_each (p->block.v[i] + neg, ctx, &pats);
      negative = xrealloc (negative, (pats.n + 1) * sizeof (bool));
      for (size_t j = before; j < pats.n; j++)
        negative[j] = neg;
      any_negative |= neg;
    }
  cleanup_strv oci_strv positive = { 0 }, found = { 0 };
  for (size_t j = 0; j < pats.n; j++)
    if (!negative[j])
      oci_strv_push (&positive, pats.v[j]);
  if (hv_glob_expand_set (positive.v, positive.n, 0, &found, err) < 0)
    return hv_error_wrap (err, "filesystem.block");
  for (size_t f = 0; f < found.n; f++)
    {
      bool hidden = true; /* also when no entry claims it: fail closed */
      for (size_t j = pats.n; any_negative && j-- > 0;)
        if (hv_glob_match (pats.v[j], found.v[f]))
          {
            hidden = !negative[j];
            break;
          }
      if (hidden)
        oci_strv_push (out, found.v[f]);
    }
  return 0;
}

/* The filesystem every sandbox starts from: the host read-only as the
 * root, private /proc, /dev and /dev/shm, and an empty /run. */
static void
gen_base_mounts (yajl_gen g, bool noexec, oci_strv *writable, oci_strv *shown, oci_strv *hidden)
{
  static const char *const root_opts[] = { "rbind", "ro", "rro", "nosuid", "nodev", NULL };
  static const char *const proc_opts[] = { "nosuid", "noexec", "nodev", NULL };
  static const char *const dev_opts[] = { "nosuid", "strictatime", "mode=755", "size=65536k", NULL };
  static const char *const dev_noexec_opts[] = { "nosuid", "noexec", "strictatime", "mode=755", "size=65536k", NULL };
  static const char *const pts_opts[] = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", NULL };
  static const char *const shm_opts[] = { "nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL };
  /* The host, read-only, as the container's root. */
  jg_mount (g, "/", "bind", "/", root_opts);
  oci_strv_push (shown, "/");
  jg_mount (g, "/proc", "proc", "proc", proc_opts);
  jg_mount (g, "/dev", "tmpfs", "tmpfs", noexec ? dev_noexec_opts : dev_opts);
  jg_mount (g, "/dev/pts", "devpts", "devpts", pts_opts);
  jg_mount (g, "/dev/shm", "tmpfs", "shm", shm_opts);
  /* /run holds daemons' sockets (docker.sock, containerd, D-Bus): a unix
   * socket stays connectable on a read-only mount, so it is replaced. */
  tmpfs (g, "/run", 16ULL << 20, false);
  oci_strv_push (writable, "/run");
  oci_strv_push (hidden, "/run");
}

/* What the session found for credentials: (run_ctx.h), on the empty /run.
 * Both read-only: connect() needs no writable mount.  The git directory
 * holds only the broker's socket (bound there at create): read-only, git's
 * cache client cannot replace it with a daemon of its own, which it tries
 * when a store finds no one listening. */
static void
gen_credential_mounts (yajl_gen g, const struct hv_run_ctx *ctx)
{
  static const char *const ro[]
      = { "bind", "ro", "nosuid", "nodev", "noexec", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_MKDIR, NULL };
  if (ctx->ssh_agent_socket)
    jg_mount (g, HV_SSH_AGENT_SOCKET, "bind", ctx->ssh_agent_socket, ro);
  /* The view's directory holds only its socket (bound there at create):
   * read-only, nothing in the sandbox can put another socket in its place. */
  if (ctx->ssh_agent_view_dir)
    jg_mount (g, HV_SSH_AGENT_VIEW_DIR, "bind", ctx->ssh_agent_view_dir, ro);
  if (ctx->git_credentials)
    jg_mount (g, HV_GIT_CREDENTIALS_DIR, "bind", ctx->git_credentials, ro);
}

/* `haven why` (runtime/audit/include/denial_view.h): the run's view of its
 * denials and haven's own binary, both read-only on the empty /run.
 * haven's side writes the view; nothing in the sandbox can write either
 * (the binary is not noexec: it is what `haven why` runs). */
static void
gen_why_mounts (yajl_gen g, const struct hv_run_ctx *ctx)
{
  static const char *const view[]
      = { "bind", "ro", "nosuid", "nodev", "noexec", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_MKDIR, NULL };
  static const char *const bin[] = { "bind", "ro", "nosuid", "nodev", HV_MOUNT_OPT_NOFOLLOW, HV_MOUNT_OPT_MKDIR, NULL };
  if (ctx->why_dir == NULL)
    return;
  jg_mount (g, HV_WHY_DIR, "bind", ctx->why_dir, view);
  if (ctx->haven_exe)
    jg_mount (g, HV_WHY_BIN, "bind", ctx->haven_exe, bin);
}

/* With haven's binary in the sandbox, its directory first on PATH: `haven`
 * by name is the binary that knows this run's view. */
static void
why_path (char **env, const struct hv_run_ctx *ctx)
{
  if (ctx->why_dir == NULL || ctx->haven_exe == NULL)
    return;
  for (char **e = env; *e; e++)
    if (str_has_prefix (*e, "PATH="))
      {
        char *next = xasprintf ("PATH=%s%s%s", HV_WHY_BIN_DIR, (*e)[5] ? ":" : "", *e + 5);
        free (*e);
        *e = next;
        return;
      }
}

/* credentials.git for the runtime: the run's directory, where create
 * binds the broker's socket, and each host with what answers for it
 * (run.haven.git-credentials, runtime/monitor/git_broker.h).  The tokens
 * are not in it: the session hands them to create in memory. */
static char *
git_credentials_annotation (const hv_policy *p, const struct hv_run_ctx *ctx)
{
  if (ctx->git_credentials == NULL || p->n_git_creds == 0)
    return NULL;
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv (g, "dir", ctx->git_credentials);
  jg_str (g, "hosts");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < p->n_git_creds; i++)
    {
      const hv_secret_source *s = &p->git_creds[i];
      yajl_gen_map_open (g);
      jg_kv (g, "host", s->name);
      if (s->path)
        jg_kv (g, "path", s->path);
      jg_kv (g, "from", s->from_host ? "host" : "token");
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  return jg_finish (g);
}

/* credentials.ssh_agent {keys: [...]} for the runtime: the run's
 * directory, where create binds the view's socket, and the fingerprints
 * of the keys it shows (run.haven.ssh-agent-view,
 * runtime/monitor/ssh_agent_service.h).  The agent's own socket is not in
 * it: the monitor asks the one at $SSH_AUTH_SOCK of haven's environment. */
static char *
ssh_agent_view_annotation (const struct hv_run_ctx *ctx)
{
  if (ctx->ssh_agent_view_dir == NULL || ctx->ssh_agent_view_keys == NULL)
    return NULL;
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv (g, "dir", ctx->ssh_agent_view_dir);
  jg_str (g, "keys");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < ctx->ssh_agent_view_keys->n; i++)
    jg_str (g, ctx->ssh_agent_view_keys->v[i]);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  return jg_finish (g);
}

/* filesystem.tmpfs: private scratch directories. */
static void
gen_policy_tmpfs (yajl_gen g, const hv_policy *p, bool noexec, oci_strv *writable, oci_strv *hidden)
{
  for (size_t i = 0; i < p->n_tmpfs; i++)
    {
      tmpfs (g, p->tmpfs[i].path, p->tmpfs[i].size, !noexec);
      oci_strv_push (writable, p->tmpfs[i].path);
      oci_strv_push (hidden, p->tmpfs[i].path);
    }
}

static void
gen_project (yajl_gen g, const hv_policy *p, const struct hv_run_ctx *ctx, bool noexec, oci_strv *writable,
             oci_strv *shown)
{
  bool project_rw = !p->project_writable.set || p->project_writable.value;
  /* noexec even when read-only: an earlier run may have written it. */
  bind (g, ctx->project, project_rw, noexec);
  oci_strv_push (shown, ctx->project);
  if (project_rw)
    oci_strv_push (writable, ctx->project);
}

/* filesystem.read_write: writable besides the project. */
static int
gen_read_write (yajl_gen g, const hv_policy *p, const struct hv_run_ctx *ctx, bool noexec, oci_strv *writable,
                oci_strv *shown, hv_error **err)
{
  for (size_t i = 0; i < p->read_write.n; i++)
    {
      cleanup_strv oci_strv found = { 0 };
      if (expand_glob (p->read_write.v[i], ctx, &found, err) < 0)
        return -1;
      for (size_t j = 0; j < found.n; j++)
        if (bind_writable (g, ctx, found.v[j], false, noexec, writable, shown, err) < 0)
          return hv_error_wrap (err, "filesystem.read_write \"%s\"", p->read_write.v[i]);
    }
  return 0;
}

/* filesystem.read_only.  A link here is an error: binding it would show
 * its target, and leaving it out would leave writable what the policy
 * says is read-only. */
static int
gen_read_only (yajl_gen g, const hv_policy *p, const struct hv_run_ctx *ctx, bool noexec, oci_strv *shown,
               hv_error **err)
{
  for (size_t i = 0; i < p->read_only.n; i++)
    {
      cleanup_strv oci_strv found = { 0 };
      if (expand_glob (p->read_only.v[i], ctx, &found, err) < 0)
        return -1;
      for (size_t j = 0; j < found.n; j++)
        {
          struct hv_policy_path pp;
          int r = hv_policy_path_resolve (ctx, found.v[j], &pp, err);
          if (r < 0)
            return hv_error_wrap (err, "filesystem.read_only \"%s\"", p->read_only.v[i]);
          if (r == HV_PATH_LINK)
            {
              cleanup_free char *why = link_words (&pp);
              hv_policy_path_clear (&pp);
              return hv_error_set (err, 0, "filesystem.read_only \"%s\": %s (haven does not follow links in policy paths)",
                                   p->read_only.v[i], why);
            }
          if (r == HV_PATH_FOUND)
            {
              bind (g, pp.real, false, noexec && maybe_written (pp.real, ctx));
              oci_strv_push (shown, pp.real);
            }
          hv_policy_path_clear (&pp);
        }
    }
  return 0;
}

/* protect: read-only inside the project.  A link there (".envrc ->
 * /tmp" left by a previous run) is masked: the sandbox sees neither the
 * link nor its target. */
static int
gen_protect (yajl_gen g, const hv_policy *p, const struct hv_run_ctx *ctx, bool noexec, oci_strv *shown,
             struct masks *masks, hv_error **err)
{
  for (size_t i = 0; i < p->protect.n; i++)
    {
      cleanup_free char *path = xasprintf ("%s/%s", ctx->project, p->protect.v[i]);
      struct hv_policy_path pp;
      int r = hv_policy_path_resolve (ctx, path, &pp, err);
      if (r < 0)
        return hv_error_wrap (err, "filesystem.protect \"%s\"", p->protect.v[i]);
      if (r == HV_PATH_FOUND)
        {
          bind (g, pp.real, false, noexec);
          oci_strv_push (shown, pp.real);
        }
      else if (r == HV_PATH_LINK)
        mask_add (masks, pp.link, false);
      hv_policy_path_clear (&pp);
    }
  return 0;
}

/* block: every path its patterns find (exceptions applied); kernel trees
 * go to the runtime's maskedPaths, the rest become masks. */
static int
gen_block (const hv_policy *p, const struct hv_run_ctx *ctx, oci_strv *masked_paths, struct masks *masks,
           hv_error **err)
{
  cleanup_strv oci_strv blocked = { 0 };
  if (expand_block (p, ctx, &blocked, err) < 0)
    return -1;
  /* Asked for, answered outside: the sandbox neither reads the requests
   * nor writes an answer or an approved name (hidden whatever the
   * policy shows of the home). */
  if (hv_policy_asks (p))
    {
      if (ctx->approvals_dir)
        oci_strv_push (&blocked, ctx->approvals_dir);
      if (ctx->approved_dir)
        oci_strv_push (&blocked, ctx->approved_dir);
    }
  for (size_t j = 0; j < blocked.n; j++)
    if (kernel_tree (blocked.v[j]))
      oci_strv_push (masked_paths, blocked.v[j]);
    else if (block_path (ctx, blocked.v[j], blocked.v[j], masks, err) < 0)
      return -1;
  return 0;
}

/* The mounts, in the order they must apply: each later one may cover an
 * earlier one. */
static int
gen_mounts (yajl_gen g, const hv_policy *p, const struct hv_run_ctx *ctx, oci_strv *writable,
            oci_strv *masked_paths, hv_error **err)
{
  bool noexec = exec_rules (p);
  /* Where the host shows through (binds) and where a tmpfs hides it, to
   * lay only the masks that hide something. */
  cleanup_strv oci_strv shown = { 0 }, hidden = { 0 };
  cleanup_masks struct masks masks = { 0 };
  jg_str (g, "mounts");
  yajl_gen_array_open (g);
  gen_base_mounts (g, noexec, writable, &shown, &hidden);
  gen_credential_mounts (g, ctx);
  gen_why_mounts (g, ctx);
  hv_git_identity_mount (g, ctx);
  hv_offline_mount (g, ctx);
  gen_policy_tmpfs (g, p, noexec, writable, &hidden);
  gen_engine_roots (g, ctx, &hidden);
  if (p->hide_home.value && gen_hidden_homes (g, p, ctx, noexec, writable, &shown, &hidden, err) < 0)
    return -1;
  gen_project (g, p, ctx, noexec, writable, &shown);
  if (gen_read_write (g, p, ctx, noexec, writable, &shown, err) < 0)
    return -1;
  /* Read-only last, so they win over the writable binds above them. */
  if (gen_read_only (g, p, ctx, noexec, &shown, err) < 0)
    return -1;
  if (gen_protect (g, p, ctx, noexec, &shown, &masks, err) < 0)
    return -1;
  if (gen_block (p, ctx, masked_paths, &masks, err) < 0)
    return -1;
  gen_masks (g, ctx, &masks, &shown, &hidden, writable);
  yajl_gen_array_close (g);
  return 0;
}


/* connect() on a Unix socket needs write permission on its inode, not a
 * writable mount: the read-only host root leaves every daemon's socket
 * outside /run connectable (LXD's /var/lib/lxd/unix.socket, anything in
 * /srv), network namespace or not.  Each one bound in haven's network
 * namespace when the run starts is masked: a /dev/null bound over it is
 * not a socket, so connect() fails.  Masked paths that vanish before the
 * container starts are skipped, as a socket may.  Directories replaced by
 * a fresh tmpfs need no masks; homes do (home_allow binds parts back). */
static int
mask_host_sockets (const hv_policy *p, oci_strv *masked, hv_error **err)
{
  cleanup_strv oci_strv replaced = { 0 };
  oci_strv_push (&replaced, "/run");
  oci_strv_push (&replaced, "/dev");
  oci_strv_push (&replaced, "/proc");
  for (size_t i = 0; i < p->n_tmpfs; i++)
    oci_strv_push (&replaced, p->tmpfs[i].path);
  return hv_host_unix_sockets ("/proc/net/unix", &replaced, masked, err);
}

bool
hv_policy_denies_syscall (const hv_policy *p, const char *name)
{
  for (size_t j = 0; j < p->syscall_deny.n; j++)
    if (strcmp (p->syscall_deny.v[j], name) == 0)
      return true;
  if (p->syscall_profile && strcmp (p->syscall_profile, "none") == 0)
    return false;
  for (size_t j = 0; j < p->syscall_allow.n; j++)
    if (strcmp (p->syscall_allow.v[j], name) == 0)
      return false;
  for (size_t i = 0; agent_denied_syscalls[i]; i++)
    if (strcmp (agent_denied_syscalls[i], name) == 0)
      return true;
  return false;
}

void
hv_policy_gen_denied_names (yajl_gen g, const hv_policy *p)
{
  yajl_gen_array_open (g);
  if (!p->syscall_profile || strcmp (p->syscall_profile, "none") != 0)
    for (size_t i = 0; agent_denied_syscalls[i]; i++)
      if (hv_policy_denies_syscall (p, agent_denied_syscalls[i]))
        jg_str (g, agent_denied_syscalls[i]);
  for (size_t j = 0; j < p->syscall_deny.n; j++)
    jg_str (g, p->syscall_deny.v[j]);
  yajl_gen_array_close (g);
}

/* One rule answering EPERM: in the filter, or through the audit
 * listener, which records the call and answers EPERM itself. */
static void
deny_action (yajl_gen g, const struct hv_run_ctx *ctx)
{
  if (ctx->audit_socket)
    jg_kv (g, "action", "SCMP_ACT_NOTIFY");
  else
    {
      jg_kv (g, "action", "SCMP_ACT_ERRNO");
      jg_str (g, "errnoRet");
      yajl_gen_integer (g, EPERM);
    }
}

static void masked_arg (yajl_gen g, unsigned index, unsigned long long mask, unsigned long long bits);

/* A rule for one system call: NAME answers like a denial when
 * (argument INDEX & MASK) == BITS.  In OCI's SCMP_CMP_MASKED_EQ "value" is
 * the mask and "valueTwo" the expected bits (libseccomp's datum_a and
 * datum_b).  Masking is also how an argument narrower than a register is
 * compared the way the kernel reads it: ioctl's request is an unsigned
 * int, so ioctl(fd, 0x100005412) is TIOCSTI and must match too. */
static void
deny_masked (yajl_gen g, const struct hv_run_ctx *ctx, const char *name, unsigned index, unsigned long long mask,
             unsigned long long bits)
{
  yajl_gen_map_open (g);
  char *names[] = { (char *) name };
  strv (g, "names", names, 1);
  deny_action (g, ctx);
  jg_str (g, "args");
  yajl_gen_array_open (g);
  masked_arg (g, index, mask, bits);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}

/* NAME denied when argument FLAG_INDEX has every bit of FLAG and argument
 * MODE_INDEX every bit of MODE (distinct arguments: the runtime ANDs
 * them). */
static void
deny_masked_when (yajl_gen g, const struct hv_run_ctx *ctx, const char *name, unsigned flag_index,
                  unsigned long long flag, unsigned mode_index, unsigned long long mode)
{
  yajl_gen_map_open (g);
  char *names[] = { (char *) name };
  strv (g, "names", names, 1);
  deny_action (g, ctx);
  jg_str (g, "args");
  yajl_gen_array_open (g);
  masked_arg (g, flag_index, flag, flag);
  masked_arg (g, mode_index, mode, mode);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}

/* NAME answers ERRNO without being a denial (not audited): for calls
 * whose arguments seccomp cannot read, so that libc falls back to an
 * older call whose arguments it can. */
static void
not_implemented (yajl_gen g, const char *name)
{
  yajl_gen_map_open (g);
  char *names[] = { (char *) name };
  strv (g, "names", names, 1);
  jg_kv (g, "action", "SCMP_ACT_ERRNO");
  jg_str (g, "errnoRet");
  yajl_gen_integer (g, ENOSYS);
  yajl_gen_map_close (g);
}

/* No set-user-ID or set-group-ID file is ever made: a root run could
 * otherwise leave a mode 4755 copy of python3 in the project (nosuid
 * only holds inside the sandbox), and any local user would get uid 0 on
 * the host.  The mode argument of every call that sets one: chmod and
 * friends, and the creating calls (open's mode applies with O_CREAT or
 * O_TMPFILE; glibc passes 0 otherwise).  The kernel reads a umode_t; the
 * mask tests the one bit whatever the rest holds. */
static void
gen_no_setid_files (yajl_gen g, const struct hv_run_ctx *ctx)
{
  static const struct
  {
    const char *name;
    unsigned mode_index;
  } setters[] = { { "chmod", 1 }, { "fchmod", 1 }, { "fchmodat", 2 }, { "fchmodat2", 2 },
                  { "creat", 1 }, { "mknod", 1 }, { "mknodat", 2 } };
  for (size_t i = 0; i < N_ELEMENTS (setters); i++)
    {
      deny_masked (g, ctx, setters[i].name, setters[i].mode_index, S_ISUID, S_ISUID);
      deny_masked (g, ctx, setters[i].name, setters[i].mode_index, S_ISGID, S_ISGID);
    }
  /* open and openat read their mode only when they make a file (O_CREAT,
   * or O_TMPFILE's __O_TMPFILE bit); otherwise it is whatever the caller's
   * register held, and refusing on it refused plain reads (dig's, through
   * libuv, got EPERM).  So: the set-id bit AND a creating flag. */
  static const struct
  {
    const char *name;
    unsigned flags_index, mode_index;
  } openers[] = { { "open", 1, 2 }, { "openat", 2, 3 } };
  static const unsigned long long creating[] = { O_CREAT, __O_TMPFILE };
  static const unsigned long long setid[] = { S_ISUID, S_ISGID };
  for (size_t i = 0; i < N_ELEMENTS (openers); i++)
    for (size_t c = 0; c < N_ELEMENTS (creating); c++)
      for (size_t b = 0; b < N_ELEMENTS (setid); b++)
        deny_masked_when (g, ctx, openers[i].name, openers[i].flags_index, creating[c], openers[i].mode_index,
                          setid[b]);
  /* openat2's mode lives in a struct seccomp cannot read: ENOSYS, and
   * glibc and the programs that try it first fall back to openat. */
  not_implemented (g, "openat2");
}

/* Under exec rules, no executable memory file: memfd_create then execve
 * of it (fexecve, /proc/self/fd/N) runs any program, and Landlock does
 * not see files on the kernel's internal mount.  MFD_EXEC is refused
 * always; a memfd without MFD_NOEXEC_SEAL is executable unless
 * vm.memfd_noexec is 2 in the sandbox's pid namespace, which only a root
 * run can set (gen_memfd_sysctl); a rootless run refuses those too. */
#define MFD_EXEC_FLAG 0x10ULL
#define MFD_NOEXEC_SEAL_FLAG 0x8ULL
#define MEMFD_NOEXEC_SYSCTL "/proc/sys/vm/memfd_noexec"

static bool
memfd_sysctl (const struct hv_run_ctx *ctx)
{
  return !ctx->rootless && access (MEMFD_NOEXEC_SYSCTL, F_OK) == 0;
}

static void
gen_no_exec_memfds (yajl_gen g, const struct hv_run_ctx *ctx)
{
  deny_masked (g, ctx, "memfd_create", 1, MFD_EXEC_FLAG, MFD_EXEC_FLAG);
  if (!memfd_sysctl (ctx))
    deny_masked (g, ctx, "memfd_create", 1, MFD_NOEXEC_SEAL_FLAG, 0);
}

static void
masked_arg (yajl_gen g, unsigned index, unsigned long long mask, unsigned long long bits)
{
  yajl_gen_map_open (g);
  jg_str (g, "index");
  yajl_gen_integer (g, index);
  jg_str (g, "value");
  yajl_gen_integer (g, (long long) mask);
  jg_str (g, "valueTwo");
  yajl_gen_integer (g, (long long) bits);
  jg_kv (g, "op", "SCMP_CMP_MASKED_EQ");
  yajl_gen_map_close (g);
}

/* Under an allowlist, no packet socket: it sends frames past nf_tables'
 * output hook, so the egress table would not see them (shown in a
 * prototype).  Needs CAP_NET_RAW, which an
 * allowlist also takes away: this is the second wall.  socket(AF_PACKET,
 * ...) and the old socket(AF_INET, SOCK_PACKET, ...), which the kernel
 * turns into a packet socket.  The kernel reads family and type as ints:
 * low 32 bits; the type's low 4 bits (SOCK_TYPE_MASK) without its
 * SOCK_NONBLOCK and SOCK_CLOEXEC flags. */
#define AF_PACKET_NR 17
#define AF_INET_NR 2
#define SOCK_PACKET_NR 10
#define SOCK_TYPE_MASK_NR 0xf
static void
gen_no_packet_sockets (yajl_gen g, const struct hv_run_ctx *ctx)
{
  deny_masked (g, ctx, "socket", 0, 0xffffffffULL, AF_PACKET_NR);
  yajl_gen_map_open (g);
  char *names[] = { (char *) "socket" };
  strv (g, "names", names, 1);
  deny_action (g, ctx);
  jg_str (g, "args");
  yajl_gen_array_open (g);
  masked_arg (g, 0, 0xffffffffULL, AF_INET_NR);
  masked_arg (g, 1, SOCK_TYPE_MASK_NR, SOCK_PACKET_NR);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}

static int
gen_seccomp (yajl_gen g, const hv_policy *p, const struct hv_run_ctx *ctx, hv_error **err)
{
  bool agent_profile = !p->syscall_profile || strcmp (p->syscall_profile, "none") != 0;
  /* Only the native architecture: a 32-bit or x32 system call (a classic
   * way around syscall filters) then kills the caller outright, and the
   * filter is a third of the size to build at every start.  One the
   * runtime cannot name fails here: an empty list would filter nothing. */
  const char *native = hv_seccomp_arch_native (err);
  if (native == NULL)
    return -1;
  jg_str (g, "seccomp");
  yajl_gen_map_open (g);
  jg_kv (g, "defaultAction", "SCMP_ACT_ALLOW");
  char *archs[] = { (char *) native };
  strv (g, "architectures", archs, 1);
  if (ctx->audit_socket)
    {
      jg_kv (g, "listenerPath", ctx->audit_socket);
      jg_kv (g, "listenerMetadata", p->name);
    }
  jg_str (g, "syscalls");
  yajl_gen_array_open (g);
  /* Plain denials (minus the policy's extra allows, plus its denies). */
  yajl_gen_map_open (g);
  jg_str (g, "names");
  hv_policy_gen_denied_names (g, p);
  deny_action (g, ctx);
  yajl_gen_map_close (g);
  /* Even under profile "none": setuid files outlive the sandbox. */
  gen_no_setid_files (g, ctx);
  if (exec_rules (p))
    gen_no_exec_memfds (g, ctx);
  /* Even under profile "none": the allowlist depends on it. */
  if (p->net_mode == HV_NET_ALLOWLIST)
    gen_no_packet_sockets (g, ctx);
  if (agent_profile)
    {
      /* ioctl(fd, TIOCSTI / TIOCLINUX): typing into the user's terminal.
       * The kernel reads the request as an unsigned int: low 32 bits. */
      deny_masked (g, ctx, "ioctl", 1, 0xffffffffULL, TIOCSTI_NR);
      deny_masked (g, ctx, "ioctl", 1, 0xffffffffULL, TIOCLINUX_NR);
      /* New user namespaces: clone(CLONE_NEWUSER) refused (one bit, so
       * the width the kernel reads does not matter); clone3 (whose flags
       * seccomp cannot see) answers ENOSYS so libc falls back to clone. */
      deny_masked (g, ctx, "clone", 0, CLONE_NEWUSER_FLAG, CLONE_NEWUSER_FLAG);
      not_implemented (g, "clone3");
    }
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  return 0;
}

int
hv_policy_seccomp_json (const hv_policy *p, char **json, hv_error **err)
{
  /* Engine configs have no audit listener: plain EPERM rules. */
  static const struct hv_run_ctx no_audit = { 0 };
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  if (gen_seccomp (g, p, &no_audit, err) < 0)
    {
      yajl_gen_free (g);
      return -1;
    }
  yajl_gen_map_close (g);
  *json = jg_finish (g);
  return 0;
}

char *
hv_policy_landlock_json (const oci_strv *writable, const oci_strv *exec, bool best_effort)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  static char *all[] = { (char *) "/" };
  strv (g, "read", all, 1);
  strv (g, "write", writable->v, writable->n);
  strv (g, "exec", exec->v, exec->n);
  jg_str (g, "bestEffort");
  yajl_gen_bool (g, best_effort);
  yajl_gen_map_close (g);
  return jg_finish (g);
}

static bool
best_effort (const hv_policy *p, const char *feature)
{
  for (size_t i = 0; i < p->best_effort.n; i++)
    if (strcmp (p->best_effort.v[i], feature) == 0)
      return true;
  return false;
}

/* PATH as exec rules resolve names in it: without the entries in the
 * project or in a hidden home.  Under exec rules those are noexec or
 * absent in the sandbox, and a name found there (a pyenv shim in
 * ~/.pyenv/shims) is not the program the sandbox would run. */
static char *
exec_search_path (const hv_policy *p, const struct hv_run_ctx *ctx, const char *path_env)
{
  if (path_env == NULL)
    return NULL;
  cleanup_free char *copy = xstrdup (path_env);
  char *out = xstrdup ("");
  char *save = NULL;
  for (char *dir = strtok_r (copy, ":", &save); dir; dir = strtok_r (NULL, ":", &save))
    {
      if (dir[0] != '/' || below (dir, ctx->project) || (p->hide_home.value && below (dir, ctx->home)))
        continue;
      char *next = xasprintf ("%s%s%s", out, out[0] ? ":" : "", dir);
      free (out);
      out = next;
    }
  return out;
}

/* The runtime's own masks (OCI semantics: resolved in the container). */
static const char *const default_masked[] = { "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
                                              "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                                              "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
                                              "/sys/devices/virtual/powercap", NULL };

/* The filtered environment's PATH, or NULL. */
static const char *
env_path (char **env)
{
  const char *path_env = NULL;
  for (char **e = env; *e; e++)
    if (str_has_prefix (*e, "PATH="))
      path_env = *e + 5;
  return path_env;
}

static size_t
strv_len (char **v)
{
  size_t n = 0;
  while (v[n])
    n++;
  return n;
}

static void
gen_capabilities (yajl_gen g, const hv_policy *p)
{
  jg_str (g, "capabilities");
  yajl_gen_map_open (g);
  static const char *const sets[] = { "bounding", "effective", "permitted" };
  for (size_t i = 0; i < 3; i++)
    {
      jg_str (g, sets[i]);
      yajl_gen_array_open (g);
      for (size_t j = 0; j < p->capabilities.n; j++)
        if (!hv_policy_egress_strips_cap (p, p->capabilities.v[j]))
          jg_str (g, p->capabilities.v[j]);
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
}

static void
gen_rlimits (yajl_gen g, const hv_policy *p)
{
  jg_str (g, "rlimits");
  yajl_gen_array_open (g);
  if (p->nofile.set)
    {
      yajl_gen_map_open (g);
      jg_kv (g, "type", "RLIMIT_NOFILE");
      jg_str (g, "soft");
      yajl_gen_integer (g, (long long) p->nofile.value);
      jg_str (g, "hard");
      yajl_gen_integer (g, (long long) p->nofile.value);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

/* "process": the command as the caller, with the filtered environment. */
static void
gen_process (yajl_gen g, const hv_policy *p, const struct hv_run_ctx *ctx, char **env)
{
  jg_str (g, "process");
  yajl_gen_map_open (g);
  jg_str (g, "terminal");
  yajl_gen_bool (g, ctx->terminal);
  jg_str (g, "user");
  yajl_gen_map_open (g);
  jg_str (g, "uid");
  yajl_gen_integer (g, ctx->uid);
  jg_str (g, "gid");
  yajl_gen_integer (g, ctx->gid);
  yajl_gen_map_close (g);
  strv (g, "args", ctx->argv, strv_len (ctx->argv));
  strv (g, "env", env, strv_len (env));
  jg_kv (g, "cwd", ctx->cwd);
  gen_capabilities (g, p);
  gen_rlimits (g, p);
  jg_str (g, "noNewPrivileges");
  yajl_gen_bool (g, true);
  yajl_gen_map_close (g);
}

static void
gen_root (yajl_gen g, const struct hv_run_ctx *ctx)
{
  jg_str (g, "root");
  yajl_gen_map_open (g);
  jg_kv (g, "path", ctx->rootfs);
  jg_str (g, "readonly");
  yajl_gen_bool (g, true);
  yajl_gen_map_close (g);
}

/* Where the resolver's hold asks, and what it says of the run. */
static char *
ask_annotation (const hv_policy *p, const struct hv_run_ctx *ctx)
{
  if (!hv_policy_asks (p) || ctx->approvals_dir == NULL)
    return NULL;
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv (g, "dir", ctx->approvals_dir);
  if (ctx->run_id)
    jg_kv (g, "run", ctx->run_id);
  jg_kv_utf8 (g, "project", ctx->project ? ctx->project : "");
  jg_str (g, "command");
  yajl_gen_array_open (g);
  for (size_t i = 0; ctx->argv && ctx->argv[i]; i++)
    jg_utf8 (g, ctx->argv[i]);
  yajl_gen_array_close (g);
  jg_str (g, "haven_pid");
  yajl_gen_integer (g, getpid ());
  yajl_gen_map_close (g);
  return jg_finish (g);
}

/* What the runtime reads besides the spec: the policy's name, cgroups
 * only when limited, and the Landlock rules. */
static void
gen_annotations (yajl_gen g, const hv_policy *p, const struct hv_run_ctx *ctx, const oci_strv *writable,
                 const oci_strv *exec)
{
  jg_str (g, "annotations");
  yajl_gen_map_open (g);
  jg_kv (g, HV_COMPILED_ANNOTATION, p->name ? p->name : "");
  jg_kv (g, HV_CGROUP_ANNOTATION, HV_CGROUP_IF_LIMITED);
  cleanup_free char *ll = hv_policy_landlock_json (writable, exec, best_effort (p, "landlock"));
  jg_kv (g, HV_LANDLOCK_ANNOTATION, ll);
  /* With an audit log, Landlock's refusals go into it too. */
  cleanup_free char *ll_audit = hv_policy_landlock_audit_json (p);
  if (ll_audit)
    jg_kv (g, HV_LANDLOCK_AUDIT_ANNOTATION, ll_audit);
  /* ... and every denial says what refused it and what would allow it. */
  cleanup_free char *denials = hv_policy_denial_rules_json (p, ctx);
  if (denials)
    jg_kv (g, HV_DENIALS_ANNOTATION, denials);
  cleanup_free char *ssh_view = ssh_agent_view_annotation (ctx);
  if (ssh_view)
    jg_kv (g, HV_SSH_AGENT_VIEW_ANNOTATION, ssh_view);
  /* An allowlist: the runtime builds the egress table in the sandbox's
   * network namespace, then pasta gives it a way out. */
  cleanup_free char *egress = hv_policy_egress_annotation (p, HV_EGRESS_CONNECT_PASTA);
  if (egress)
    jg_kv (g, HV_EGRESS_ANNOTATION, egress);
  cleanup_free char *ask = ask_annotation (p, ctx);
  if (ask)
    jg_kv (g, HV_ASK_ANNOTATION, ask);
  /* credentials.api: the providers haven's gateway serves in this run
   * (never a key: the session hands those to create in memory). */
  cleanup_free char *gateway = hv_api_gateway_annotation (p, ctx->host_env);
  if (gateway)
    jg_kv (g, HV_GATEWAY_ANNOTATION, gateway);
  cleanup_free char *git = git_credentials_annotation (p, ctx);
  if (git)
    jg_kv (g, HV_GIT_CREDENTIALS_ANNOTATION, git);
  yajl_gen_map_close (g);
}

static void
gen_namespace (yajl_gen g, const char *type)
{
  yajl_gen_map_open (g);
  jg_kv (g, "type", type);
  yajl_gen_map_close (g);
}

static void
gen_namespaces (yajl_gen g, const hv_policy *p, const struct hv_run_ctx *ctx)
{
  jg_str (g, "namespaces");
  yajl_gen_array_open (g);
  static const char *const ns[] = { "pid", "ipc", "uts", "mount", "cgroup" };
  for (size_t i = 0; i < N_ELEMENTS (ns); i++)
    gen_namespace (g, ns[i]);
  /* none: loopback only; an allowlist: the egress table's namespace. */
  if (p->net_mode != HV_NET_OPEN)
    gen_namespace (g, "network");
  if (ctx->rootless)
    gen_namespace (g, "user");
  yajl_gen_array_close (g);
}

/* Rootless: the caller's uid and gid, mapped to themselves. */
static void
gen_id_mappings (yajl_gen g, const struct hv_run_ctx *ctx)
{
  static const char *const maps[] = { "uidMappings", "gidMappings" };
  for (size_t i = 0; i < 2; i++)
    {
      jg_str (g, maps[i]);
      yajl_gen_array_open (g);
      yajl_gen_map_open (g);
      jg_str (g, "containerID");
      yajl_gen_integer (g, i == 0 ? ctx->uid : ctx->gid);
      jg_str (g, "hostID");
      yajl_gen_integer (g, i == 0 ? ctx->uid : ctx->gid);
      jg_str (g, "size");
      yajl_gen_integer (g, 1);
      yajl_gen_map_close (g);
      yajl_gen_array_close (g);
    }
}

/* resources: memory (swap included), pids, cpus as a CFS quota. */
static void
gen_resources (yajl_gen g, const hv_policy *p)
{
  if (!p->memory.set && !p->pids.set && !p->cpus_milli.set)
    return;
  jg_str (g, "resources");
  yajl_gen_map_open (g);
  if (p->memory.set)
    {
      jg_str (g, "memory");
      yajl_gen_map_open (g);
      jg_str (g, "limit");
      yajl_gen_integer (g, (long long) p->memory.value);
      jg_str (g, "swap");
      yajl_gen_integer (g, (long long) p->memory.value);
      yajl_gen_map_close (g);
    }
  if (p->pids.set)
    {
      jg_str (g, "pids");
      yajl_gen_map_open (g);
      jg_str (g, "limit");
      yajl_gen_integer (g, (long long) p->pids.value);
      yajl_gen_map_close (g);
    }
  if (p->cpus_milli.set)
    {
      jg_str (g, "cpu");
      yajl_gen_map_open (g);
      jg_str (g, "period");
      yajl_gen_integer (g, 100000);
      jg_str (g, "quota");
      yajl_gen_integer (g, (long long) (p->cpus_milli.value * 100));
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
}

static void
gen_memfd_noexec (yajl_gen g, const hv_policy *p, const struct hv_run_ctx *ctx)
{
  if (!exec_rules (p) || !memfd_sysctl (ctx))
    return;
  /* Per pid namespace since Linux 6.3, and a child namespace cannot
   * lower it: every memfd is created non-executable (sealed), and
   * MFD_EXEC fails.  Written by the runtime through its private
   * procfs, before /proc/sys is made read-only. */
  jg_str (g, "sysctl");
  yajl_gen_map_open (g);
  jg_kv (g, "vm.memfd_noexec", "2");
  yajl_gen_map_close (g);
}

/* maskedPaths and readonlyPaths: the runtime's, block's kernel trees,
 * the host's sockets and, under block_shell, the shells. */
static int
gen_masked_paths (yajl_gen g, const hv_policy *p, const char *exec_path, const oci_strv *writable,
                  oci_strv *masked, hv_error **err)
{
  if (mask_host_sockets (p, masked, err) < 0)
    return -1;
  /* Under block_shell the shells are unreadable too: the dynamic loader
   * run directly (ld.so /bin/sh) needs only to read and map them. */
  if (hv_policy_shell_masks (p, exec_path, writable, masked, err) < 0)
    return -1;
  strv (g, "maskedPaths", masked->v, masked->n);
  static char *ro_paths[] = { (char *) "/proc/bus", (char *) "/proc/fs", (char *) "/proc/irq", (char *) "/proc/sys",
                              (char *) "/proc/sysrq-trigger" };
  strv (g, "readonlyPaths", ro_paths, N_ELEMENTS (ro_paths));
  return 0;
}

static int
gen_linux (yajl_gen g, const hv_policy *p, const struct hv_run_ctx *ctx, const char *exec_path,
           const oci_strv *writable, oci_strv *masked, hv_error **err)
{
  jg_str (g, "linux");
  yajl_gen_map_open (g);
  gen_namespaces (g, p, ctx);
  if (ctx->rootless)
    gen_id_mappings (g, ctx);
  gen_resources (g, p);
  if (gen_seccomp (g, p, ctx, err) < 0)
    return -1;
  gen_memfd_noexec (g, p, ctx);
  if (gen_masked_paths (g, p, exec_path, writable, masked, err) < 0)
    return -1;
  yajl_gen_map_close (g);
  return 0;
}

/* The trail is written by haven's side only: one under a path the
 * sandbox can write for real (the project, read_write, a direct home
 * entry, a data sub-path) could be rewritten by the agent it records,
 * chain and all (trail_chain.h: the chain proves nothing against a
 * writer of the whole file).  Refused, naming where audit.log was set. */
static int
check_audit_log (const hv_policy *p, const struct hv_run_ctx *ctx, hv_error **err)
{
  const char *log = p->audit_log;
  if (log == NULL || log[0] == '\0')
    return 0;
  cleanup_free char *path = NULL;
  if (log[0] == '~' && (log[1] == '/' || log[1] == '\0') && ctx->home)
    path = xasprintf ("%s%s", ctx->home, log + 1);
  else if (log[0] == '/')
    path = xstrdup (log);
  else
    return 0; /* not absolute: the run refuses it (session/run_steps.c) */
  cleanup_free char *real = hv_host_resolve (path);
  const char *why = hv_sandbox_writes (p, ctx, real);
  if (why)
    return hv_error_set (err, 0,
                         "%s: audit.log %s is in what the sandbox can write (%s): the agent could rewrite its own "
                         "trail; keep it outside (the shipped policies use ~/.local/state/haven/audit.log)",
                         p->audit_log_where ? p->audit_log_where : (p->file ? p->file : p->name), log, why);
  return 0;
}

int
hv_policy_compile (const hv_policy *p, const struct hv_run_ctx *ctx, char **json, hv_error **err)
{
  if (check_audit_log (p, ctx, err) < 0)
    return -1;
  /* The gateway listens on the sandbox's own loopback: with the host's
   * network that would be the host's (hv_policy_load refuses such a
   * policy; this holds for one built otherwise too). */
  if (p->n_api_creds && p->net_mode == HV_NET_OPEN)
    return hv_error_set (err, 0, "%s: credentials.api needs the sandbox's own network, but network.mode is open",
                         p->api_creds[0].key.where);
  if (hv_policy_asks (p) && (ctx->approvals_dir == NULL || ctx->approved_dir == NULL))
    return hv_error_set (err, 0, "%s: %s: this run has no approvals directory to ask through",
                         p->net_ask.n ? (p->net_ask.v[0].where ? p->net_ask.v[0].where : "?")
                                      : (p->net_ask_all_where ? p->net_ask_all_where : "?"),
                         p->net_ask.n ? "network.ask" : "network.mode: ask");
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_config (g, yajl_gen_beautify, 1);
  /* Paths Landlock lets the sandbox write, and execute, and what the
   * runtime masks. */
  oci_strv writable = { 0 }, exec = { 0 }, masked = { 0 };
  char **env = hv_offline_env (hv_git_identity_env (hv_policy_run_env (p, ctx), ctx), p);
  /* Placeholders of hidden tracked files only where git reads the filter
   * that makes them unchanged (session/git_hidden_tracked.h): elsewhere
   * git would commit their blank lines; /dev/null it refuses. */
  struct hv_run_ctx without_placeholders;
  if (ctx->git_shown && ctx->git_shown->n && !hv_git_identity_read (env))
    {
      without_placeholders = *ctx;
      without_placeholders.git_shown = NULL;
      ctx = &without_placeholders;
    }
  int r = -1;
  cleanup_free char *exec_path = exec_search_path (p, ctx, env_path (env));
  if (hv_policy_exec_paths (p, exec_path, &exec, err) < 0)
    goto out;
  /* `haven why` runs under allow_exec too. */
  if (exec.n > 0 && ctx->why_dir && ctx->haven_exe)
    oci_strv_push (&exec, HV_WHY_BIN);
  why_path (env, ctx);

  yajl_gen_map_open (g);
  jg_kv (g, "ociVersion", HAVEN_OCI_VERSION);
  gen_process (g, p, ctx, env);
  gen_root (g, ctx);
  jg_kv (g, "hostname", "haven");
  oci_strv_push (&writable, "/dev");
  oci_strv_push (&writable, "/proc");
  for (size_t i = 0; default_masked[i]; i++)
    oci_strv_push (&masked, default_masked[i]);
  if (gen_mounts (g, p, ctx, &writable, &masked, err) < 0)
    goto out;
  gen_annotations (g, p, ctx, &writable, &exec);
  if (gen_linux (g, p, ctx, exec_path, &writable, &masked, err) < 0)
    goto out;
  yajl_gen_map_close (g);

  *json = jg_text (g);
  r = 0;
out:
  yajl_gen_free (g);
  oci_strv_free (&writable);
  oci_strv_free (&exec);
  oci_strv_free (&masked);
  for (char **e = env; *e; e++)
    free (*e);
  free (env);
  return r;
}
