#include "config.h"
#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "haven_annotations.h"
#include "safe_path.h"
#include "utils.h"

struct flag_opt
{
  const char *name;
  uint64_t set, clr;
  bool recursive;
};

/* mount(8) flag words and their mount_setattr equivalents.  The "r"
 * prefixed forms are runtime-spec's recursive variants. */
static const struct flag_opt flag_opts[] = {
  { "ro", MOUNT_ATTR_RDONLY, 0, false },
  { "rw", 0, MOUNT_ATTR_RDONLY, false },
  { "nosuid", MOUNT_ATTR_NOSUID, 0, false },
  { "suid", 0, MOUNT_ATTR_NOSUID, false },
  { "nodev", MOUNT_ATTR_NODEV, 0, false },
  { "dev", 0, MOUNT_ATTR_NODEV, false },
  { "noexec", MOUNT_ATTR_NOEXEC, 0, false },
  { "exec", 0, MOUNT_ATTR_NOEXEC, false },
  { "noatime", MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME, false },
  { "relatime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME, false },
  { "strictatime", MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME, false },
  { "atime", 0, MOUNT_ATTR_NOATIME, false },
  { "norelatime", 0, MOUNT_ATTR_RELATIME, false },
  { "nostrictatime", 0, MOUNT_ATTR_STRICTATIME, false },
  { "nodiratime", MOUNT_ATTR_NODIRATIME, 0, false },
  { "diratime", 0, MOUNT_ATTR_NODIRATIME, false },
  { "nosymfollow", MOUNT_ATTR_NOSYMFOLLOW, 0, false },
  { "symfollow", 0, MOUNT_ATTR_NOSYMFOLLOW, false },
  { "rro", MOUNT_ATTR_RDONLY, 0, true },
  { "rrw", 0, MOUNT_ATTR_RDONLY, true },
  { "rnosuid", MOUNT_ATTR_NOSUID, 0, true },
  { "rsuid", 0, MOUNT_ATTR_NOSUID, true },
  { "rnodev", MOUNT_ATTR_NODEV, 0, true },
  { "rdev", 0, MOUNT_ATTR_NODEV, true },
  { "rnoexec", MOUNT_ATTR_NOEXEC, 0, true },
  { "rexec", 0, MOUNT_ATTR_NOEXEC, true },
  { "rnoatime", MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME, true },
  { "rrelatime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME, true },
  { "rstrictatime", MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME, true },
  { "ratime", 0, MOUNT_ATTR_NOATIME, true },
  { "rnorelatime", 0, MOUNT_ATTR_RELATIME, true },
  { "rnostrictatime", 0, MOUNT_ATTR_STRICTATIME, true },
  { "rnodiratime", MOUNT_ATTR_NODIRATIME, 0, true },
  { "rdiratime", 0, MOUNT_ATTR_NODIRATIME, true },
  { "rnosymfollow", MOUNT_ATTR_NOSYMFOLLOW, 0, true },
  { "rsymfollow", 0, MOUNT_ATTR_NOSYMFOLLOW, true },
};

static const struct
{
  const char *name;
  uint64_t propagation;
  bool recursive;
} propagation_opts[] = {
  { "private", MS_PRIVATE, false },   { "rprivate", MS_PRIVATE, true },   { "shared", MS_SHARED, false },
  { "rshared", MS_SHARED, true },     { "slave", MS_SLAVE, false },       { "rslave", MS_SLAVE, true },
  { "unbindable", MS_UNBINDABLE, false }, { "runbindable", MS_UNBINDABLE, true },
};

/* Options with no meaning for a fresh mount that mount(8) accepts. */
static const char *const ignored_opts[] = { "defaults", "async", "auto", "noauto", "nouser", "user",
                                            "loud", "_netdev", "remount", "sync", "dirsync", "mand",
                                            "nomand", "silent", "tmpcopyup", "copy-symlink" };

int
hv_mount_opts_parse (const oci_strv *options, struct hv_mount_opts *out, hv_error **err)
{
  memset (out, 0, sizeof (*out));
  for (size_t i = 0; i < options->n; i++)
    {
      const char *o = options->v[i];
      bool done = false;
      if (strcmp (o, "bind") == 0 || strcmp (o, "rbind") == 0)
        {
          out->bind = true;
          out->recursive = o[0] == 'r';
          continue;
        }
      if (strcmp (o, "idmap") == 0 || strcmp (o, "ridmap") == 0)
        {
          out->idmap = true;
          out->ridmap = o[0] == 'r';
          continue;
        }
      for (size_t j = 0; j < N_ELEMENTS (flag_opts) && !done; j++)
        if (strcmp (o, flag_opts[j].name) == 0)
          {
            uint64_t *set = flag_opts[j].recursive ? &out->rattr_set : &out->attr_set;
            uint64_t *clr = flag_opts[j].recursive ? &out->rattr_clr : &out->attr_clr;
            /* Later options override earlier ones, as with mount(8). */
            *set &= ~flag_opts[j].clr;
            *set |= flag_opts[j].set;
            *clr |= flag_opts[j].clr;
            if (flag_opts[j].set == 0)
              *set &= ~flag_opts[j].clr;
            done = true;
          }
      for (size_t j = 0; j < N_ELEMENTS (propagation_opts) && !done; j++)
        if (strcmp (o, propagation_opts[j].name) == 0)
          {
            out->propagation = propagation_opts[j].propagation;
            out->propagation_recursive = propagation_opts[j].recursive;
            done = true;
          }
      for (size_t j = 0; j < N_ELEMENTS (ignored_opts) && !done; j++)
        if (strcmp (o, ignored_opts[j]) == 0)
          done = true;
      if (done)
        continue;
      if (str_has_prefix (o, HV_MOUNT_OPT_PREFIX))
        {
          if (strcmp (o, HV_MOUNT_OPT_NOFOLLOW) == 0)
            out->nofollow = true;
          else if (strcmp (o, HV_MOUNT_OPT_MKDIR) == 0)
            out->mkdir = true;
          else if (strcmp (o, HV_MOUNT_OPT_OPTIONAL) == 0)
            out->optional = true;
          else if (strcmp (o, HV_MOUNT_OPT_PIN) == 0)
            out->pin = true;
          else if (str_has_prefix (o, HV_MOUNT_OPT_SUBDIR))
            {
              const char *sub = o + strlen (HV_MOUNT_OPT_SUBDIR);
              if (sub[0] == '\0' || sub[0] == '/' || out->subdir)
                {
                  hv_mount_opts_free (out);
                  return hv_error_set (err, 0, "mount option \"%s\": one relative path", o);
                }
              out->subdir = xstrdup (sub);
            }
          else if (str_has_prefix (o, HV_MOUNT_OPT_FILE))
            {
              const char *arg = o + strlen (HV_MOUNT_OPT_FILE), *colon = strchr (arg, ':');
              size_t n = colon ? (size_t) (colon - arg) : 0;
              if (out->file_name || n == 0 || n > 255 || memchr (arg, '/', n) || (n == 1 && arg[0] == '.')
                  || (n == 2 && arg[0] == '.' && arg[1] == '.') || strlen (colon + 1) > HV_MOUNT_FILE_MAX)
                {
                  hv_mount_opts_free (out);
                  return hv_error_set (err, 0, "mount option x-haven.file: one NAME:TEXT per mount, NAME one path "
                                               "component, TEXT at most %d bytes",
                                       HV_MOUNT_FILE_MAX);
                }
              out->file_name = xasprintf ("%.*s", (int) n, arg);
              out->file_text = xstrdup (colon + 1);
            }
          else
            {
              /* A misspelt safety option must not be dropped silently. */
              hv_mount_opts_free (out);
              return hv_error_set (err, 0, "unknown mount option \"%s\"", o);
            }
          continue;
        }
      /* "x-..." options are for user space (mount(8)): never the kernel's. */
      if (str_has_prefix (o, "x-"))
        continue;
      /* Anything else is a filesystem option passed to fsconfig. */
      char *data = out->data ? xasprintf ("%s,%s", out->data, o) : xstrdup (o);
      free (out->data);
      out->data = data;
    }
  return 0;
}

void
hv_mount_opts_free (struct hv_mount_opts *o)
{
  free (o->data);
  o->data = NULL;
  free (o->subdir);
  o->subdir = NULL;
  free (o->file_name);
  free (o->file_text);
  o->file_name = o->file_text = NULL;
}

/* x-haven.file: the file in the new filesystem's root (mfd, not yet
 * attached: nothing else can see it or race it). */
static int
make_file (int mfd, const struct hv_mount_opts *o, hv_error **err)
{
  struct stat root;
  if (fstat (mfd, &root) < 0)
    return hv_error_set (err, errno, "x-haven.file: stat the new filesystem");
  cleanup_close int fd = openat (mfd, o->file_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 || write_all (fd, o->file_text, strlen (o->file_text)) < 0
      || fchown (fd, root.st_uid, root.st_gid) < 0 || fchmod (fd, 0644) < 0)
    return hv_error_set (err, errno, "x-haven.file: make %s", o->file_name);
  return 0;
}

int
hv_mount_tree_onto (int treefd, int targetfd, hv_error **err)
{
  if (move_mount (treefd, "", targetfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return hv_error_set (err, errno, "move_mount");
  return 0;
}

int
hv_mount_setattr (int fd, uint64_t set, uint64_t clr, uint64_t propagation, bool recursive, hv_error **err)
{
  struct mount_attr attr = { .attr_set = set, .attr_clr = clr, .propagation = propagation };
  if (set == 0 && clr == 0 && propagation == 0)
    return 0;
  /* Clearing an atime mode needs the whole atime field cleared. */
  if (set & MOUNT_ATTR__ATIME)
    attr.attr_clr |= MOUNT_ATTR__ATIME;
  if (mount_setattr (fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr, sizeof (attr)) < 0)
    return hv_error_set (err, errno, "mount_setattr");
  return 0;
}

/* The kernel explains fsconfig failures in the fs context's log. */
static int
fs_error (int fsfd, int e, const char *what, const char *type, hv_error **err)
{
  char buf[512];
  ssize_t n = read (fsfd, buf, sizeof (buf) - 1);
  if (n > 2)
    {
      buf[n] = '\0';
      if (buf[n - 1] == '\n')
        buf[n - 1] = '\0';
      return hv_error_set (err, e, "%s %s (%s)", what, type, buf + 2);
    }
  return hv_error_set (err, e, "%s %s", what, type);
}

int
hv_fs_new_mount (const char *type, const char *source, const char *data, uint64_t attrs, hv_error **err)
{
  cleanup_close int fsfd = fsopen (type, FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return hv_error_set (err, errno, "fsopen %s", type);
  if (source && fsconfig (fsfd, FSCONFIG_SET_STRING, "source", source, 0) < 0)
    return fs_error (fsfd, errno, "set source for", type, err);
  if (data)
    {
      cleanup_free char *copy = xstrdup (data);
      char *save = NULL;
      for (char *opt = strtok_r (copy, ",", &save); opt; opt = strtok_r (NULL, ",", &save))
        {
          char *eq = strchr (opt, '=');
          int r;
          if (eq)
            {
              *eq = '\0';
              r = fsconfig (fsfd, FSCONFIG_SET_STRING, opt, eq + 1, 0);
            }
          else
            r = fsconfig (fsfd, FSCONFIG_SET_FLAG, opt, NULL, 0);
          if (r < 0)
            {
              cleanup_free char *what = xasprintf ("option \"%s\" for", opt);
              return fs_error (fsfd, errno, what, type, err);
            }
        }
    }
  if (fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return fs_error (fsfd, errno, "create", type, err);
  int mfd = fsmount (fsfd, FSMOUNT_CLOEXEC, (unsigned) attrs);
  if (mfd < 0)
    return fs_error (fsfd, errno, "fsmount", type, err);
  return mfd;
}

static int
write_id_map (int procfd, pid_t pid, const char *file, const oci_id_mappings *m, hv_error **err)
{
  cleanup_free char *text = xstrdup ("");
  for (size_t i = 0; i < m->n; i++)
    {
      /* An idmapped mount reads the on-disk id as the namespace's "inside"
       * id: on-disk hostID shows as containerID with "hostID containerID". */
      char *next = xasprintf ("%s%u %u %u\n", text, m->v[i].host_id, m->v[i].container_id, m->v[i].size);
      free (text);
      text = next;
    }
  cleanup_free char *path = xasprintf ("%d/%s", pid, file);
  return write_file_at (procfd, path, text, strlen (text), 0, err);
}

/* A user namespace carrying an idmapped mount's mappings: a helper process
 * enters a new one, we write its maps and keep an fd of it. */
static int
idmap_userns (const oci_id_mappings *uids, const oci_id_mappings *gids, hv_error **err)
{
  int ready[2];
  if (pipe2 (ready, O_CLOEXEC) < 0)
    return hv_error_set (err, errno, "pipe");
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (ready[0]);
      close (ready[1]);
      return hv_error_set (err, errno, "fork");
    }
  if (pid == 0)
    {
      char c = unshare (CLONE_NEWUSER) == 0 ? '1' : '0';
      if (write (ready[1], &c, 1) != 1)
        _exit (1);
      pause (); /* until killed below */
      _exit (0);
    }
  close (ready[1]);
  char c = '0';
  int fd = -1;
  /* The helper's pid is one of our pid namespace, which the /proc we can
   * see (the host's, before the root switch) does not show: use a procfs
   * instance of our own. */
  cleanup_close int procfd = hv_fs_new_mount ("proc", "proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
  if (procfd < 0)
    ;
  else if (read (ready[0], &c, 1) != 1 || c != '1')
    hv_error_set (err, 0, "idmapped mount: cannot create a user namespace");
  else if (write_id_map (procfd, pid, "uid_map", uids, err) == 0 && write_id_map (procfd, pid, "gid_map", gids, err) == 0)
    {
      cleanup_free char *ns = xasprintf ("%d/ns/user", pid);
      fd = openat (procfd, ns, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        hv_error_set (err, errno, "open %s", ns);
    }
  close (ready[0]);
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
  return fd;
}

/* The bind source for x-haven.nofollow: opened from "/" with no symbolic
 * link anywhere on the way, the last component included. */
static int
open_source_nofollow (const char *src, struct stat *st, hv_error **err)
{
  if (src[0] != '/')
    return hv_error_set (err, 0, "bind source %s: x-haven.nofollow needs an absolute path", src);
  int fd = hv_open_host_nofollow (src, O_PATH);
  if (fd < 0 && errno == ELOOP)
    return hv_error_set (err, errno, "bind source %s is or crosses a symbolic link", src);
  if (fd < 0)
    return hv_error_set (err, errno, "bind source %s", src);
  if (fstat (fd, st) < 0)
    {
      int e = errno;
      close (fd);
      return hv_error_set (err, e, "stat bind source %s", src);
    }
  return fd;
}

/* The mount point for an x-haven.nofollow mount, never through a link. */
static int
open_target_nofollow (struct hv_mount_ctx *ctx, const char *dest, bool is_dir, const struct hv_mount_opts *o,
                      hv_error **err)
{
  if (o->mkdir)
    return hv_create_in_root_nofollow (ctx->rootfd, dest, is_dir, 0755, err);
  /* A directory goes onto a directory; a non-directory may go onto a link
   * (O_NOFOLLOW: the link itself), which masks it. */
  int fd = hv_open_in_root_nofollow (ctx->rootfd, dest, O_PATH | (is_dir ? O_DIRECTORY : 0));
  if (fd < 0 && errno == ELOOP)
    return hv_error_set (err, errno, "destination %s crosses a symbolic link", dest);
  if (fd < 0 && errno == ENOENT)
    return hv_error_set (err, errno, "destination %s does not exist", dest);
  if (fd < 0)
    return hv_error_set (err, errno, "destination %s", dest);
  return fd;
}

/* x-haven.optional: a missing path skips the mount (returns 1). */
static int
skip_if_optional (const struct hv_mount_opts *o, hv_error **err)
{
  if (o->optional && *err && (*err)->errno_code == ENOENT)
    {
      hv_error_free (err);
      return 1;
    }
  return -1;
}

/* Bind mount a host path: relative sources are relative to the bundle.
 * Returns 1 when an optional mount was skipped. */
static int
do_bind (struct hv_mount_ctx *ctx, const oci_mount *m, struct hv_mount_opts *o, hv_error **err)
{
  if (m->source == NULL)
    return hv_error_set (err, 0, "bind mount needs a source");
  cleanup_free char *src = m->source[0] == '/' ? xstrdup (m->source) : xasprintf ("%s/%s", ctx->bundle, m->source);
  struct stat st;
  cleanup_close int tree = -1;
  unsigned tree_flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (o->recursive ? AT_RECURSIVE : 0);
  if (o->nofollow)
    {
      cleanup_close int srcfd = open_source_nofollow (m->source, &st, err);
      if (srcfd < 0)
        return skip_if_optional (o, err);
      tree = open_tree (srcfd, "", tree_flags | AT_EMPTY_PATH);
    }
  else
    {
      if (stat (src, &st) < 0)
        return hv_error_set (err, errno, "bind source %s", src);
      tree = open_tree (AT_FDCWD, src, tree_flags);
    }
  if (tree < 0)
    return hv_error_set (err, errno, "open_tree %s", src);
  if (hv_mount_setattr (tree, o->attr_set, o->attr_clr, 0, false, err) < 0
      || hv_mount_setattr (tree, o->rattr_set, o->rattr_clr, 0, true, err) < 0)
    return -1;
  if (o->idmap)
    {
      if (m->uid_mappings.n == 0 || m->gid_mappings.n == 0)
        return hv_error_set (err, 0, "idmap needs uidMappings and gidMappings on the mount");
      cleanup_close int userns = idmap_userns (&m->uid_mappings, &m->gid_mappings, err);
      if (userns < 0)
        return -1;
      /* The fd is >= 0 (checked above), widened from unsigned: the field is
       * uint64_t or __u64 by the C library, and GCC sees a cast to the one
       * stored in the other as the int's sign change. */
      struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (unsigned) userns };
      if (mount_setattr (tree, "", AT_EMPTY_PATH | (o->ridmap ? AT_RECURSIVE : 0), &attr, sizeof (attr)) < 0)
        return hv_error_set (err, errno, "idmap %s", src);
    }
  cleanup_close int target
      = o->nofollow ? open_target_nofollow (ctx, m->destination, S_ISDIR (st.st_mode), o, err)
                    : hv_create_in_root (ctx->rootfd, m->destination, S_ISDIR (st.st_mode), 0755, err);
  if (target < 0)
    return o->nofollow ? skip_if_optional (o, err) : -1;
  if (hv_mount_tree_onto (tree, target, err) < 0)
    return -1;
  return 0;
}

/* cgroup mounts on v1/hybrid hosts: a tmpfs holding a bind of the
 * container's own cgroup in each hierarchy, as runc lays it out. */
static int
do_cgroup_v1 (struct hv_mount_ctx *ctx, const oci_mount *m, struct hv_mount_opts *o, int target, hv_error **err)
{
  cleanup_close int tmpfs
      = hv_fs_new_mount ("tmpfs", "tmpfs", "mode=755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
  if (tmpfs < 0 || hv_mount_tree_onto (tmpfs, target, err) < 0)
    return -1;
  static const char *const subsystems[][2] = {
    { "cpu", "cpu" },         { "cpuacct", "cpuacct" }, { "cpuset", "cpuset" }, { "memory", "memory" },
    { "devices", "devices" }, { "freezer", "freezer" }, { "blkio", "blkio" },   { "pids", "pids" },
    { "hugetlb", "hugetlb" }, { "net_cls", "net_cls" }, { "perf_event", "perf_event" },
    { "name=systemd", "systemd" },
  };
  for (size_t i = 0; i < N_ELEMENTS (subsystems) + 1; i++)
    {
      bool unified = i == N_ELEMENTS (subsystems);
      cleanup_free char *dir = hv_cgroup_dir (ctx->cgroup_path ? ctx->cgroup_path : "", unified ? NULL : subsystems[i][0]);
      if (dir == NULL || access (dir, F_OK) < 0)
        continue;
      cleanup_free char *dest = xasprintf ("%s/%s", m->destination, unified ? "unified" : subsystems[i][1]);
      cleanup_close int tree = open_tree (AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
      if (tree < 0)
        return hv_error_set (err, errno, "open_tree %s", dir);
      if (hv_mount_setattr (tree, o->attr_set | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, o->attr_clr,
                            0, false, err)
          < 0)
        return -1;
      cleanup_close int t = hv_create_in_root (ctx->rootfd, dest, true, 0755, err);
      if (t < 0 || hv_mount_tree_onto (tree, t, err) < 0)
        return -1;
    }
  /* Make the tmpfs itself read-only last, as asked. */
  if (o->attr_set & MOUNT_ATTR_RDONLY)
    {
      cleanup_close int again = hv_open_in_root (ctx->rootfd, m->destination, O_PATH | O_DIRECTORY, 0);
      if (again < 0)
        return hv_error_set (err, errno, "reopen %s", m->destination);
      return hv_mount_setattr (again, MOUNT_ATTR_RDONLY, 0, 0, false, err);
    }
  return 0;
}

void
hv_mount_ctx_release_shared (struct hv_mount_ctx *ctx)
{
  for (size_t i = 0; i < ctx->n_shared; i++)
    {
      for (size_t j = 0; j < ctx->shared[i].n_clones; j++)
        if (ctx->shared[i].clones[j].fd >= 0)
          close (ctx->shared[i].clones[j].fd);
      free (ctx->shared[i].clones);
      free (ctx->shared[i].key);
    }
  free (ctx->shared);
  ctx->shared = NULL;
  ctx->n_shared = 0;
}

static char *
shared_key (const char *type, const char *source, const char *data)
{
  return xasprintf ("%s\n%s\n%s", type, source ? source : "", data ? data : "");
}

/* Whether mount n of the config is an x-haven.subdir mount of the
 * instance named key; its sub-directory in *subdir (to free). */
static bool
same_instance (const oci_mount *n, const char *key, char **subdir)
{
  struct hv_mount_opts o;
  hv_error *ignored = NULL;
  if (hv_mount_opts_parse (&n->options, &o, &ignored) < 0)
    {
      hv_error_free (&ignored);
      return false;
    }
  bool same = false;
  if (o.subdir && !o.bind && n->type)
    {
      cleanup_free char *k = shared_key (n->type, n->source, o.data);
      same = strcmp (k, key) == 0;
    }
  if (same)
    *subdir = steal_pointer (&o.subdir);
  hv_mount_opts_free (&o);
  return same;
}

/* One sub-directory of the attached instance fs, as a detached clone.
 * Resolved beneath the instance's root, through no symbolic link and no
 * other mount: what a sandbox left in the upper layer (a link named
 * .cache pointing at /) can only make the mount fail, never show more
 * of the home.  ".." at the clone's root stays there, so nothing above
 * the sub-directory can be reached through it. */
static int
clone_subdir (int fs, const char *type, const char *subdir, hv_error **err)
{
  cleanup_close int dir = hv_openat2 (fs, subdir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0,
                                      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
                                          | RESOLVE_NO_XDEV);
  if (dir < 0)
    return hv_error_set (err, errno, "%s in the %s", subdir, type);
  int tree = open_tree (dir, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree < 0)
    return hv_error_set (err, errno, "open_tree %s in the %s", subdir, type);
  return tree;
}

/* The instance out->key names, for the first of its mounts, m on
 * target: made, attached on target for a moment (older kernels, 6.1
 * among them, clone only from a mount of the caller's namespace, never
 * from a detached one), every sub-directory that m and the config's
 * later mounts of it show cloned, and detached again: from then on
 * nothing holds its root but the clones' superblock reference, and no
 * path leads to it. */
static int
make_shared (struct hv_mount_ctx *ctx, const char *type, const oci_mount *m, const char *data, int target,
             struct hv_shared_fs *out, hv_error **err)
{
  /* No flags on the instance's root: each sub-directory mount gets its
   * own (one may be noexec, the next not). */
  cleanup_close int fs = hv_fs_new_mount (type, m->source, data, 0, err);
  if (fs < 0)
    return -1;
  if (hv_mount_tree_onto (fs, target, err) < 0)
    return -1;
  int r = 0;
  for (size_t i = (size_t) (m - ctx->spec->mounts); i < ctx->spec->n_mounts && r == 0; i++)
    {
      cleanup_free char *subdir = NULL;
      if (!same_instance (&ctx->spec->mounts[i], out->key, &subdir))
        continue;
      int tree = clone_subdir (fs, type, subdir, err);
      if (tree < 0)
        r = &ctx->spec->mounts[i] == m ? -1 : hv_error_wrap (err, "for %s", ctx->spec->mounts[i].destination);
      else
        {
          out->clones = xrealloc (out->clones, (out->n_clones + 1) * sizeof (*out->clones));
          out->clones[out->n_clones++] = (struct hv_shared_clone) { .mount = &ctx->spec->mounts[i], .fd = tree };
        }
    }
  /* The instance's root leaves target, error or not; if it cannot, the
   * start stops (nothing ran yet to see it).  umount2 takes a path: "."
   * after fchdir into the root (no /proc needed), the working directory
   * put back after. */
  cleanup_close int cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int e = 0;
  if (cwd < 0 || fchdir (fs) < 0)
    e = errno;
  else
    {
      if (umount2 (".", MNT_DETACH) < 0)
        e = errno;
      if (fchdir (cwd) < 0 && e == 0)
        e = errno;
    }
  if (e)
    {
      hv_error_free (err);
      return hv_error_set (err, e, "detach the %s from %s", type, m->destination);
    }
  return r;
}

/* x-haven.subdir: the clone of this mount's sub-directory of the shared
 * instance, onto target. */
static int
mount_subdir (struct hv_mount_ctx *ctx, const char *type, const oci_mount *m, const struct hv_mount_opts *o,
              int target, hv_error **err)
{
  if (ctx->spec == NULL || m < ctx->spec->mounts || m >= ctx->spec->mounts + ctx->spec->n_mounts)
    return hv_error_set (err, 0, "x-haven.subdir: a mount outside the config");
  cleanup_free char *key = shared_key (type, m->source, o->data);
  struct hv_shared_fs *fs = NULL;
  for (size_t i = 0; i < ctx->n_shared && fs == NULL; i++)
    if (strcmp (ctx->shared[i].key, key) == 0)
      fs = &ctx->shared[i];
  if (fs == NULL)
    {
      ctx->shared = xrealloc (ctx->shared, (ctx->n_shared + 1) * sizeof (*ctx->shared));
      fs = &ctx->shared[ctx->n_shared++];
      *fs = (struct hv_shared_fs) { .key = steal_pointer (&key) };
      if (make_shared (ctx, type, m, o->data, target, fs, err) < 0)
        return -1;
    }
  int *tree = NULL;
  for (size_t i = 0; i < fs->n_clones && tree == NULL; i++)
    if (fs->clones[i].mount == m && fs->clones[i].fd >= 0)
      tree = &fs->clones[i].fd;
  if (tree == NULL)
    /* Every later mount of the instance was cloned with the first. */
    return hv_error_set (err, 0, "x-haven.subdir %s: no clone of it was made", o->subdir);
  if (hv_mount_setattr (*tree, o->attr_set, 0, 0, false, err) < 0)
    return -1;
  int r = hv_mount_tree_onto (*tree, target, err);
  close (*tree);
  *tree = -1;
  return r;
}

/* A pin's own flags: only those that take rights away (a read-only pin
 * of what git executes), and only in their recursive forms, since the
 * clone carries every mount below the destination with it. */
#define PIN_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)

/* x-haven.pin: the directory or regular file at the destination, cloned
 * with everything the container already shows below it (AT_RECURSIVE:
 * earlier binds and masks stay, and so does every flag, since a clone
 * keeps its mount's), the pin's own rro/rnosuid/rnodev/rnoexec added to
 * the whole clone, moved onto itself.  The clone of the tree being built
 * needs no host path: nothing is looked up outside the container's
 * root. */
static int
pin_in_place (struct hv_mount_ctx *ctx, const oci_mount *m, const struct hv_mount_opts *o, hv_error **err)
{
  if (m->source == NULL || strcmp (m->source, m->destination) != 0)
    return hv_error_set (err, 0, "x-haven.pin needs the destination as its source");
  if (o->optional || o->mkdir || o->recursive || o->attr_set || o->attr_clr || o->rattr_clr
      || (o->rattr_set & ~(uint64_t) PIN_ATTRS) || o->propagation || o->idmap || o->data)
    return hv_error_set (err, 0, "x-haven.pin takes no other option than bind, x-haven.nofollow and rro, rnosuid, "
                                 "rnodev, rnoexec: it keeps the directory's own flags and may only take rights away");
  cleanup_close int target = hv_open_in_root_nofollow (ctx->rootfd, m->destination, O_PATH);
  struct stat st;
  if (target >= 0 && fstat (target, &st) < 0)
    return hv_error_set (err, errno, "stat %s", m->destination);
  if (target >= 0 && S_ISLNK (st.st_mode))
    {
      /* A link swapped in at the end is said as such. */
      close (target);
      target = -1;
      errno = ELOOP;
    }
  if (target < 0 && errno == ELOOP)
    return hv_error_set (err, errno, "destination %s crosses a symbolic link", m->destination);
  if (target < 0 && errno == ENOENT)
    return hv_error_set (err, errno, "destination %s does not exist (moved or removed since the policy was compiled)",
                         m->destination);
  if (target < 0)
    return hv_error_set (err, errno, "destination %s", m->destination);
  if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode))
    return hv_error_set (err, 0, "destination %s is not a directory or a regular file", m->destination);
  cleanup_close int tree = open_tree (target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
  if (tree < 0)
    return hv_error_set (err, errno, "clone %s", m->destination);
  if (o->rattr_set && hv_mount_setattr (tree, o->rattr_set, 0, 0, true, err) < 0)
    return hv_error_wrap (err, "pin %s", m->destination);
  return hv_mount_tree_onto (tree, target, err);
}

int
hv_mount_one (struct hv_mount_ctx *ctx, const oci_mount *m, hv_error **err)
{
  struct hv_mount_opts o;
  int r = -1;
  if (hv_mount_opts_parse (&m->options, &o, err) < 0)
    return -1;
  const char *type = m->type ? m->type : "";
  if (strcmp (type, "bind") == 0)
    o.bind = true;
  if (o.idmap && !o.bind)
    {
      hv_error_set (err, 0, "idmap is only supported on bind mounts");
      goto out;
    }
  if (o.file_name && (o.bind || o.subdir || strcmp (type, "tmpfs") != 0))
    {
      hv_error_set (err, 0, "x-haven.file is only supported on a new tmpfs");
      goto out;
    }
  if (o.subdir && (o.bind || strcmp (type, "cgroup") == 0))
    {
      hv_error_set (err, 0, "x-haven.subdir is only supported on new filesystems, not on %s mounts", o.bind ? "bind" : type);
      goto out;
    }
  if (o.pin && !o.bind)
    r = hv_error_set (err, 0, "x-haven.pin is only supported on bind mounts");
  else if (o.pin)
    r = pin_in_place (ctx, m, &o, err);
  else if (o.bind)
    r = do_bind (ctx, m, &o, err);
  else if (type[0] == '\0')
    r = hv_error_set (err, 0, "no mount type given");
  else
    {
      cleanup_close int target = o.nofollow ? open_target_nofollow (ctx, m->destination, true, &o, err)
                                            : hv_create_in_root (ctx->rootfd, m->destination, true, 0755, err);
      if (target < 0)
        {
          r = o.nofollow ? skip_if_optional (&o, err) : -1;
          goto out;
        }
      bool v1_cgroup = strcmp (type, "cgroup") == 0 && hv_cgroup_mode () != HV_CGROUP_V2;
      if (strcmp (type, "cgroup") == 0 && !v1_cgroup)
        type = "cgroup2";
      if (v1_cgroup)
        r = do_cgroup_v1 (ctx, m, &o, target, err);
      else if (o.subdir)
        r = mount_subdir (ctx, type, m, &o, target, err);
      else
        {
          cleanup_close int mfd = hv_fs_new_mount (type, m->source, o.data, o.attr_set, err);
          if (mfd < 0 && strcmp (type, "sysfs") == 0 && (*err)->errno_code == EPERM)
            {
              /* sysfs belongs to the network namespace: without our own
               * we may only bind the host's, read-only. */
              hv_error_free (err);
              mfd = open_tree (AT_FDCWD, "/sys", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
              if (mfd < 0)
                hv_error_set (err, errno, "open_tree /sys");
              else if (hv_mount_setattr (mfd, o.attr_set | MOUNT_ATTR_RDONLY, 0, 0, true, err) < 0)
                goto out;
            }
          if (mfd < 0)
            goto out;
          if (o.file_name && make_file (mfd, &o, err) < 0)
            goto out;
          r = hv_mount_tree_onto (mfd, target, err);
          /* The mount point was removed after it was opened: an optional
           * mount is skipped then too (nothing is left there to cover). */
          if (r < 0 && o.nofollow)
            r = skip_if_optional (&o, err);
        }
    }
  if (r == 0 && o.propagation)
    {
      cleanup_close int again = hv_open_in_root (ctx->rootfd, m->destination, O_PATH, 0);
      if (again < 0)
        r = hv_error_set (err, errno, "reopen %s", m->destination);
      else
        r = hv_mount_setattr (again, 0, 0, o.propagation, o.propagation_recursive, err);
    }
out:
  if (r < 0)
    hv_error_wrap (err, "mount %s on %s", m->source ? m->source : type, m->destination);
  hv_mount_opts_free (&o);
  return r < 0 ? -1 : 0;
}
