#include "config.h"
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "file_read.h"
#include "log.h"
#include "utils.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

/* One mounted hierarchy: mount point and its v1 controllers ("" for v2). */
struct hierarchy
{
  char *mount;
  char *controllers;
  bool unified;
};

static struct hierarchy *hierarchies;
static size_t n_hierarchies;
static bool scanned;

/* Read the mount table once: each cgroup/cgroup2 mount is a hierarchy. */
static void
scan_hierarchies (void)
{
  if (scanned)
    return;
  scanned = true;
  FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (f == NULL)
    return;
  char *line = NULL;
  size_t cap = 0;
  while (getline (&line, &cap, f) > 0)
    {
      char *sep = strstr (line, " - ");
      if (sep == NULL)
        continue;
      char fstype[64], source[256], opts[1024], mnt[4096];
      if (sscanf (sep + 3, "%63s %255s %1023s", fstype, source, opts) != 3)
        continue;
      bool v2 = strcmp (fstype, "cgroup2") == 0;
      if (!v2 && strcmp (fstype, "cgroup") != 0)
        continue;
      /* Field 5 is the mount point. */
      if (sscanf (line, "%*s %*s %*s %*s %4095s", mnt) != 1)
        continue;
      hierarchies = xrealloc (hierarchies, (n_hierarchies + 1) * sizeof (*hierarchies));
      struct hierarchy *h = &hierarchies[n_hierarchies++];
      h->mount = xstrdup (mnt);
      h->unified = v2;
      h->controllers = xstrdup ("");
      if (!v2)
        {
          /* Super options: "rw,cpu,cpuacct" or "rw,name=systemd". */
          free (h->controllers);
          h->controllers = xstrdup (opts);
        }
    }
  free (line);
  fclose (f);
}

enum hv_cgroup_mode
hv_cgroup_mode (void)
{
  struct statfs sfs;
  if (statfs (CGROUP_ROOT, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
    return HV_CGROUP_V2;
  scan_hierarchies ();
  for (size_t i = 0; i < n_hierarchies; i++)
    if (hierarchies[i].unified)
      return HV_CGROUP_HYBRID;
  return HV_CGROUP_V1;
}

static bool
has_controller (const struct hierarchy *h, const char *controller)
{
  size_t l = strlen (controller);
  for (const char *p = h->controllers; (p = strstr (p, controller)) != NULL; p += l)
    if ((p == h->controllers || p[-1] == ',') && (p[l] == ',' || p[l] == '\0'))
      return true;
  return false;
}

char *
hv_cgroup_dir (const char *path, const char *controller)
{
  scan_hierarchies ();
  for (size_t i = 0; i < n_hierarchies; i++)
    {
      const struct hierarchy *h = &hierarchies[i];
      if (controller == NULL ? h->unified : (!h->unified && has_controller (h, controller)))
        return xasprintf ("%s%s", h->mount, path);
    }
  if (controller && hv_cgroup_mode () == HV_CGROUP_V2)
    return hv_cgroup_dir (path, NULL);
  return NULL;
}

/* "a-b.slice" -> "/a.slice/a-b.slice" as systemd lays slices out. */
static char *
expand_slice (const char *slice)
{
  if (slice[0] == '\0' || strcmp (slice, "-.slice") == 0)
    return xstrdup ("");
  char *out = xstrdup ("");
  const char *end = strstr (slice, ".slice");
  size_t base_len = end ? (size_t) (end - slice) : strlen (slice);
  for (size_t i = 0; i <= base_len; i++)
    if (i == base_len || slice[i] == '-')
      {
        char *n = xasprintf ("%s/%.*s.slice", out, (int) i, slice);
        free (out);
        out = n;
      }
  return out;
}

char *
hv_cgroup_resolve_path (const char *cgroups_path, const char *id, bool systemd)
{
  /* runc's default under its systemd driver is "system.slice:runc:<id>". */
  if (systemd && (cgroups_path == NULL || cgroups_path[0] == '\0'))
    cgroups_path = "system.slice:haven:";
  if (cgroups_path == NULL || cgroups_path[0] == '\0')
    return xasprintf ("/haven/%s", id);
  if (systemd && strchr (cgroups_path, ':'))
    {
      /* slice:prefix:name, laid out where systemd puts the unit: the
       * slice's ancestors, the slice, then the scope (or a slice named by
       * `name`).  cgroup_systemd.c derives the unit names back from it. */
      cleanup_free char *copy = xstrdup (cgroups_path);
      char *slice = copy, *prefix = strchr (copy, ':'), *name;
      *prefix++ = '\0';
      name = strchr (prefix, ':');
      if (name)
        *name++ = '\0';
      if (name == NULL || name[0] == '\0')
        name = (char *) id;
      cleanup_free char *s = expand_slice (slice[0] ? slice : "system.slice");
      if (str_has_prefix (name, "/") || strstr (name, ".slice"))
        return xasprintf ("%s/%s", s, name);
      return xasprintf ("%s/%s%s%s.scope", s, prefix, prefix[0] ? "-" : "", name);
    }
  if (cgroups_path[0] != '/')
    return xasprintf ("/%s", cgroups_path);
  return xstrdup (cgroups_path);
}

/* A new v1 cpuset cgroup starts with empty cpus/mems, and attaching a
 * process to it fails; inherit them from the parent level by level. */
static int
init_cpuset_level (const char *dir)
{
  static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
  for (size_t i = 0; i < N_ELEMENTS (files); i++)
    {
      cleanup_free char *cur = NULL;
      cleanup_free char *parent_val = NULL;
      cleanup_free char *parent = xstrdup (dir);
      char *slash = strrchr (parent, '/');
      if (slash == NULL)
        return 0;
      *slash = '\0';
      cleanup_free char *own = xasprintf ("%s/%s", dir, files[i]);
      if (read_file_at (AT_FDCWD, own, &cur, NULL) == 0 && cur[0] != '\n' && cur[0] != '\0')
        continue;
      cleanup_free char *ppath = xasprintf ("%s/%s", parent, files[i]);
      if (read_file_at (AT_FDCWD, ppath, &parent_val, NULL) < 0)
        continue;
      cleanup_free char *dst = xasprintf ("%s/%s", dir, files[i]);
      write_file_at (AT_FDCWD, dst, parent_val, strlen (parent_val), 0, NULL);
    }
  return 0;
}

static int
mkdir_cgroup (const struct hierarchy *h, const char *path, hv_error **err)
{
  cleanup_free char *full = xasprintf ("%s%s", h->mount, path);
  bool cpuset = !h->unified && has_controller (h, "cpuset");
  /* Walk down creating each level so cpuset levels can be initialised. */
  for (char *p = full + strlen (h->mount) + 1;; p++)
    {
      if (*p == '/' || *p == '\0')
        {
          char saved = *p;
          *p = '\0';
          if (mkdir (full, 0755) < 0 && errno != EEXIST)
            return hv_error_set (err, errno, "create cgroup %s", full);
          if (cpuset)
            init_cpuset_level (full);
          *p = saved;
          if (saved == '\0')
            break;
        }
    }
  return 0;
}

static int
attach (const char *dir, pid_t pid, hv_error **err)
{
  char buf[32];
  int n = snprintf (buf, sizeof (buf), "%d", pid);
  cleanup_free char *procs = xasprintf ("%s/cgroup.procs", dir);
  return write_file_at (AT_FDCWD, procs, buf, (size_t) n, 0, err);
}

int
hv_cgroup_check_path (const char *path, hv_error **err)
{
  /* The path is joined to every hierarchy's mount point, and `delete`
   * kills whatever the cgroup holds: it must name a cgroup strictly below
   * the roots. */
  if (path[0] != '/' || path[strspn (path, "/")] == '\0')
    return hv_error_set (err, 0, "cgroup path \"%s\" must name a cgroup below the root", path);
  for (const char *p = path; *p;)
    {
      while (*p == '/')
        p++;
      size_t l = strcspn (p, "/");
      if ((l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.'))
        return hv_error_set (err, 0, "cgroup path \"%s\" may not contain \".\" or \"..\"", path);
      p += l;
    }
  return 0;
}

/* Mount point of the unified hierarchy, NULL on a v1-only host. */
static const char *
unified_mount (void)
{
  if (hv_cgroup_mode () == HV_CGROUP_V2)
    return CGROUP_ROOT;
  for (size_t i = 0; i < n_hierarchies; i++)
    if (hierarchies[i].unified)
      return hierarchies[i].mount;
  return NULL;
}

static bool
word_in (const char *text, const char *word)
{
  size_t l = strlen (word);
  for (const char *p = text; (p = strstr (p, word)) != NULL; p += l)
    if ((p == text || p[-1] == ' ') && (p[l] == ' ' || p[l] == '\n' || p[l] == '\0'))
      return true;
  return false;
}

/* Enable in dir's cgroup.subtree_control those of `wanted` that dir has
 * and has not enabled yet. */
static void
enable_level (const char *dir, const char *const *wanted)
{
  cleanup_free char *avail_path = xasprintf ("%s/cgroup.controllers", dir);
  cleanup_free char *ctl_path = xasprintf ("%s/cgroup.subtree_control", dir);
  cleanup_free char *avail = NULL;
  cleanup_free char *enabled = NULL;
  cleanup_free char *req = xstrdup ("");
  if (read_file_at (AT_FDCWD, avail_path, &avail, NULL) < 0)
    return;
  bool any = false;
  for (size_t i = 0; wanted[i]; i++)
    any = any || word_in (avail, wanted[i]);
  if (!any || read_file_at (AT_FDCWD, ctl_path, &enabled, NULL) < 0)
    return;
  for (size_t i = 0; wanted[i]; i++)
    if (word_in (avail, wanted[i]) && !word_in (enabled, wanted[i]))
      {
        char *n = xasprintf ("%s%s+%s", req, req[0] ? " " : "", wanted[i]);
        free (req);
        req = n;
      }
  if (req[0] == '\0' || write_file_at (AT_FDCWD, ctl_path, req, strlen (req), 0, NULL) == 0)
    return;
  /* One refused controller fails the whole write: enable the others one
   * by one.  A setting that needs a refused one fails later, naming it. */
  cleanup_free char *copy = xstrdup (req);
  char *save = NULL;
  for (char *tok = strtok_r (copy, " ", &save); tok; tok = strtok_r (NULL, " ", &save))
    {
      cleanup_error hv_error *e = NULL;
      if (write_file_at (AT_FDCWD, ctl_path, tok, strlen (tok), 0, &e) < 0)
        hv_log (HV_LOG_DEBUG, "enable %s in %s: %s", tok, ctl_path, e->msg);
    }
}

int
hv_cgroup_enable_controllers (const char *path, const char *const *wanted, hv_error **err)
{
  (void) err;
  scan_hierarchies ();
  const char *mount = unified_mount ();
  if (mount == NULL || wanted == NULL || wanted[0] == NULL)
    return 0;
  /* Every level from the hierarchy's root down to the container cgroup's
   * parent: a controller reaches a cgroup only if each ancestor enables it
   * for its children.  (The container's own cgroup holds processes, and
   * the no-internal-process rule keeps its subtree_control empty.) */
  cleanup_free char *cur = xasprintf ("%s%s", mount, path);
  char *p = cur + strlen (mount);
  while (p && *p)
    {
      char saved = *p;
      *p = '\0';
      enable_level (cur, wanted);
      *p = saved;
      p = strchr (p + 1, '/');
    }
  return 0;
}

int
hv_cgroup_enter (const char *path, pid_t pid, hv_error **err)
{
  scan_hierarchies ();
  if (hv_cgroup_mode () == HV_CGROUP_V2)
    {
      struct hierarchy root = { .mount = (char *) CGROUP_ROOT, .controllers = (char *) "", .unified = true };
      cleanup_free char *dir = xasprintf ("%s%s", CGROUP_ROOT, path);
      if (mkdir_cgroup (&root, path, err) < 0)
        return -1;
      return attach (dir, pid, err);
    }
  for (size_t i = 0; i < n_hierarchies; i++)
    {
      cleanup_free char *dir = xasprintf ("%s%s", hierarchies[i].mount, path);
      if (mkdir_cgroup (&hierarchies[i], path, err) < 0 || attach (dir, pid, err) < 0)
        return -1;
    }
  return 0;
}

int
hv_cgroup_open_unified (const char *path)
{
  scan_hierarchies ();
  const char *mnt = unified_mount ();
  if (mnt == NULL)
    {
      errno = ENOENT;
      return -1;
    }
  struct hierarchy unified = { .mount = (char *) mnt, .controllers = (char *) "", .unified = true };
  cleanup_error hv_error *ignored = NULL;
  if (mkdir_cgroup (&unified, path, &ignored) < 0)
    {
      errno = ignored->errno_code;
      return -1;
    }
  /* Not O_PATH: clone3 reads the cgroup from the file, which an O_PATH
   * descriptor does not carry. */
  cleanup_free char *dir = xasprintf ("%s%s", mnt, path);
  return open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int
hv_cgroup_enter_v1 (const char *path, pid_t pid, hv_error **err)
{
  scan_hierarchies ();
  if (hv_cgroup_mode () == HV_CGROUP_V2)
    return 0;
  for (size_t i = 0; i < n_hierarchies; i++)
    {
      if (hierarchies[i].unified)
        continue;
      cleanup_free char *dir = xasprintf ("%s%s", hierarchies[i].mount, path);
      if (mkdir_cgroup (&hierarchies[i], path, err) < 0 || attach (dir, pid, err) < 0)
        return -1;
    }
  return 0;
}

int
hv_cgroup_join (const char *path, pid_t pid, hv_error **err)
{
  scan_hierarchies ();
  if (hv_cgroup_mode () == HV_CGROUP_V2)
    {
      cleanup_free char *dir = xasprintf ("%s%s", CGROUP_ROOT, path);
      return attach (dir, pid, err);
    }
  for (size_t i = 0; i < n_hierarchies; i++)
    {
      cleanup_free char *dir = xasprintf ("%s%s", hierarchies[i].mount, path);
      if (access (dir, F_OK) == 0 && attach (dir, pid, err) < 0)
        return -1;
    }
  return 0;
}

int
hv_cgroup_pids (const char *path, pid_t **pids, size_t *n, hv_error **err)
{
  cleanup_free char *dir = hv_cgroup_dir (path, "pids");
  if (dir == NULL)
    dir = hv_cgroup_dir (path, "memory");
  if (dir == NULL)
    dir = hv_cgroup_dir (path, NULL);
  *pids = NULL;
  *n = 0;
  if (dir == NULL)
    return hv_error_set (err, 0, "no cgroup hierarchy found for %s", path);
  cleanup_free char *procs_path = xasprintf ("%s/cgroup.procs", dir);
  cleanup_free char *text = NULL;
  if (read_file_at (AT_FDCWD, procs_path, &text, err) < 0)
    return -1;
  for (char *p = text; *p;)
    {
      char *end;
      long v = strtol (p, &end, 10);
      if (end == p)
        break;
      *pids = xrealloc (*pids, (*n + 1) * sizeof (pid_t));
      (*pids)[(*n)++] = (pid_t) v;
      p = end;
      while (*p == '\n')
        p++;
    }
  return 0;
}

static void
sleep_ms (long ms)
{
  struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };
  nanosleep (&ts, NULL);
}

void
hv_cgroup_kill (const char *path)
{
  scan_hierarchies ();
  /* cgroup.kill (Linux 5.14) kills the whole cgroup at once, frozen or
   * not, and no fork can slip past it; on hybrid hosts the unified
   * hierarchy holds every process of the container too. */
  cleanup_free char *unified = hv_cgroup_dir (path, NULL);
  if (unified)
    {
      cleanup_free char *kill_file = xasprintf ("%s/cgroup.kill", unified);
      write_file_at (AT_FDCWD, kill_file, "1", 1, 0, NULL);
    }
  /* Otherwise (and as a backstop) signal what is listed until nothing is;
   * a frozen v1 cgroup must be thawed for SIGKILL to be delivered. */
  for (int round = 0; round < 100; round++)
    {
      pid_t *pids = NULL;
      size_t n = 0;
      if (hv_cgroup_pids (path, &pids, &n, NULL) < 0 || n == 0)
        {
          free (pids);
          break;
        }
      for (size_t i = 0; i < n; i++)
        kill (pids[i], SIGKILL);
      free (pids);
      if (round == 0 && hv_cgroup_is_frozen (path))
        hv_cgroup_freeze (path, false, NULL);
      sleep_ms (2);
    }
}

int
hv_cgroup_destroy (const char *path, hv_error **err)
{
  scan_hierarchies ();
  if (hv_cgroup_check_path (path, err) < 0)
    return -1;
  hv_cgroup_kill (path);
  bool v2 = hv_cgroup_mode () == HV_CGROUP_V2;
  size_t count = v2 ? 1 : n_hierarchies;
  for (size_t i = 0; i < count; i++)
    {
      cleanup_free char *dir = v2 ? xasprintf ("%s%s", CGROUP_ROOT, path) : xasprintf ("%s%s", hierarchies[i].mount, path);
      /* Killed processes take a moment to leave the cgroup: bounded retry. */
      for (int attempt = 0; attempt < 500; attempt++)
        {
          if (rmdir (dir) == 0 || errno == ENOENT)
            break;
          if (errno != EBUSY)
            return hv_error_set (err, errno, "remove cgroup %s", dir);
          if (attempt == 499)
            return hv_error_set (err, EBUSY, "remove cgroup %s", dir);
          sleep_ms (2);
        }
    }
  return 0;
}

int
hv_cgroup_freeze (const char *path, bool freeze, hv_error **err)
{
  cleanup_free char *v1 = hv_cgroup_mode () == HV_CGROUP_V2 ? NULL : hv_cgroup_dir (path, "freezer");
  if (v1)
    {
      cleanup_free char *state = xasprintf ("%s/freezer.state", v1);
      const char *want = freeze ? "FROZEN" : "THAWED";
      for (int attempt = 0; attempt < 1000; attempt++)
        {
          cleanup_free char *cur = NULL;
          if (write_file_at (AT_FDCWD, state, want, strlen (want), 0, err) < 0)
            return -1;
          if (read_file_at (AT_FDCWD, state, &cur, err) < 0)
            return -1;
          if (str_has_prefix (cur, want))
            return 0;
          sleep_ms (1);
        }
      return hv_error_set (err, 0, "cgroup %s did not reach %s", v1, want);
    }
  cleanup_free char *v2 = hv_cgroup_dir (path, NULL);
  if (v2 == NULL)
    return hv_error_set (err, 0, "no freezer available for cgroup %s", path);
  cleanup_free char *file = xasprintf ("%s/cgroup.freeze", v2);
  if (write_file_at (AT_FDCWD, file, freeze ? "1" : "0", 1, 0, err) < 0)
    return -1;
  for (int attempt = 0; attempt < 1000; attempt++)
    {
      if (hv_cgroup_is_frozen (path) == freeze)
        return 0;
      sleep_ms (1);
    }
  return hv_error_set (err, 0, "cgroup %s did not %s", v2, freeze ? "freeze" : "thaw");
}

bool
hv_cgroup_is_frozen (const char *path)
{
  cleanup_free char *v1 = hv_cgroup_mode () == HV_CGROUP_V2 ? NULL : hv_cgroup_dir (path, "freezer");
  cleanup_free char *text = NULL;
  if (v1)
    {
      cleanup_free char *state = xasprintf ("%s/freezer.state", v1);
      if (read_file_at (AT_FDCWD, state, &text, NULL) < 0)
        return false;
      return str_has_prefix (text, "FROZEN");
    }
  cleanup_free char *v2 = hv_cgroup_dir (path, NULL);
  if (v2 == NULL)
    return false;
  cleanup_free char *events = xasprintf ("%s/cgroup.events", v2);
  if (read_file_at (AT_FDCWD, events, &text, NULL) < 0)
    return false;
  return strstr (text, "frozen 1") != NULL;
}
