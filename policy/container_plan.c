/* What a policy means inside an engine's container: container_plan.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_git.h"
#include "container_plan.h"
#include "file_read.h"
#include "haven_annotations.h"
#include "policy_glob.h"
#include "process.h"
#include "safe_path.h"
#include "utils.h"

#define PASSWD_MAX (4u << 20) /* bytes of the image's /etc/passwd read */

bool
hv_mount_is_bind (const oci_mount *m)
{
  if (m->type && strcmp (m->type, "bind") == 0)
    return true;
  return oci_strv_contains (&m->options, "bind") || oci_strv_contains (&m->options, "rbind");
}

static bool
mount_is_readonly (const oci_mount *m)
{
  return oci_strv_contains (&m->options, "ro");
}

/* Is path the directory dir or below it (both normalized, absolute)? */
static bool
at_or_below (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  if (n == 1 && dir[0] == '/')
    return true;
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The engine's root filesystem: root.path, relative to the bundle. */
static char *
container_rootfs (const oci_spec *spec, const char *config_path)
{
  const char *root = spec->root.path ? spec->root.path : "rootfs";
  if (root[0] == '/')
    return xstrdup (root);
  cleanup_free char *copy = xstrdup (config_path);
  return xasprintf ("%s/%s", dirname (copy), root);
}

/* The image's /etc/passwd, opened inside the root filesystem (a link in
 * the image resolves in the image, never on the host) and only if it is
 * a regular file (a FIFO would hang us); NULL when there is none. */
static char *
image_passwd (int rootfd)
{
  cleanup_close int fd = hv_open_in_root (rootfd, "/etc/passwd", O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
  char *text = NULL;
  cleanup_error hv_error *ignored = NULL;
  if (fd < 0 || hv_read_regular_fd (fd, "/etc/passwd", PASSWD_MAX, &text, NULL, &ignored) < 0)
    return NULL;
  return text;
}

/* The home of uid in a copy of the passwd text. */
static char *
passwd_home_of (const char *passwd, uint32_t uid)
{
  if (passwd == NULL)
    return NULL;
  cleanup_free char *text = xstrdup (passwd);
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *home = hv_passwd_home (line, uid);
      if (home)
        return home;
    }
  return NULL;
}

static const char *
env_value (const oci_strv *env, const char *name)
{
  size_t n = strlen (name);
  const char *found = NULL;
  for (size_t i = 0; i < env->n; i++)
    if (strncmp (env->v[i], name, n) == 0 && env->v[i][n] == '=')
      found = env->v[i] + n + 1; /* the last one wins, as in execve's environment */
  return found;
}

static bool
has_dot_component (const char *path)
{
  size_t n = strlen (path);
  return strstr (path, "/./") || strstr (path, "/../") || (n >= 2 && strcmp (path + n - 2, "/.") == 0)
         || (n >= 3 && strcmp (path + n - 3, "/..") == 0);
}

/* A home that can be hidden behind a tmpfs: absolute, normalized, and not
 * the root or a system tree (HOME=/ for users the image does not know). */
static bool
hideable_home (const char *home)
{
  static const char *const system[] = { "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc",
                                        "/run", "/sbin", "/sys", "/tmp", "/usr", "/var", NULL };
  if (home == NULL || home[0] != '/' || strcmp (home, "/") == 0 || strstr (home, "//") || has_dot_component (home)
      || home[strlen (home) - 1] == '/')
    return false;
  for (size_t i = 0; system[i]; i++)
    if (strcmp (home, system[i]) == 0)
      return false;
  return true;
}

/* The homes of the image's other users that are hidden too: /root and
 * /home/NAME, where people's homes are; system accounts' homes
 * (/var/lib/..., /nonexistent) are left to the read-only root. */
static bool
user_home_path (const char *home)
{
  if (strcmp (home, "/root") == 0)
    return true;
  if (strncmp (home, "/home/", 6) != 0)
    return false;
  const char *name = home + 6;
  return name[0] && strchr (name, '/') == NULL && strcmp (name, ".") != 0 && strcmp (name, "..") != 0;
}

static bool
id_mapped (const oci_id_mappings *m, uint32_t id)
{
  if (m->n == 0)
    return true;
  for (size_t i = 0; i < m->n; i++)
    if (id >= m->v[i].container_id && id - m->v[i].container_id < m->v[i].size)
      return true;
  return false;
}

static void
home_add (struct hv_container_plan *plan, const char *path, uint32_t uid, uint32_t gid)
{
  for (size_t i = 0; i < plan->n_homes; i++)
    if (strcmp (plan->homes[i].path, path) == 0)
      return;
  plan->homes = xrealloc (plan->homes, (plan->n_homes + 1) * sizeof (*plan->homes));
  plan->homes[plan->n_homes++] = (struct hv_container_home) { xstrdup (path), uid, gid, SIZE_MAX };
}

/* ~ for the process's user: its HOME, else its passwd entry. */
static void
find_process_home (const oci_spec *spec, const char *passwd, struct hv_container_plan *plan)
{
  const char *env_home = env_value (&spec->process.env, "HOME");
  uint32_t uid = spec->process.user.uid;
  cleanup_free char *home = env_home ? xstrdup (env_home) : passwd_home_of (passwd, uid);
  if (home == NULL)
    home = xstrdup (uid == 0 ? "/root" : "/");
  if (hideable_home (home))
    home_add (plan, home, uid, spec->process.user.gid);
  else
    oci_strv_push (&plan->notes, "the container's home is not hidden: its HOME is / or a system directory");
}

#define MAX_HOMES 256

/* ~ for everyone else the engine can exec as (a devcontainer's
 * remoteUser is usually not init's user): each person's home in the
 * image's passwd is hidden behind a tmpfs that person owns. */
static int
find_user_homes (const oci_spec *spec, char *passwd, struct hv_container_plan *plan, hv_error **err)
{
  char *save = NULL;
  for (char *line = passwd ? strtok_r (passwd, "\n", &save) : NULL; line; line = strtok_r (NULL, "\n", &save))
    {
      struct hv_passwd_entry e;
      if (!hv_passwd_parse (line, &e) || !user_home_path (e.home))
        continue;
      if (!id_mapped (&spec->linux_cfg.uid_mappings, e.uid) || !id_mapped (&spec->linux_cfg.gid_mappings, e.gid))
        {
          cleanup_free char *note = xasprintf ("the home of %s (%s) is not hidden: its owner is not mapped in the "
                                               "container's user namespace",
                                               e.name, e.home);
          oci_strv_push (&plan->notes, note);
          continue;
        }
      if (plan->n_homes >= MAX_HOMES)
        return hv_error_set (err, 0, "filesystem.hide_home: the image's /etc/passwd names more than %d homes "
                                     "under /home; haven hides each of them and refuses to guess",
                             MAX_HOMES);
      home_add (plan, e.home, e.uid, e.gid);
    }
  return 0;
}

static int
find_homes (const oci_spec *spec, struct hv_container_plan *plan, hv_error **err)
{
  cleanup_close int rootfd = open (plan->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_free char *passwd = rootfd >= 0 ? image_passwd (rootfd) : NULL;
  find_process_home (spec, passwd, plan);
  return find_user_homes (spec, passwd, plan, err);
}

/* The hidden home dest is in (the deepest, if homes nest). */
static struct hv_container_home *
home_of (const struct hv_container_plan *plan, const char *dest)
{
  struct hv_container_home *best = NULL;
  for (size_t i = 0; i < plan->n_homes; i++)
    if (at_or_below (dest, plan->homes[i].path) && (best == NULL || strlen (plan->homes[i].path) > strlen (best->path)))
      best = &plan->homes[i];
  return best;
}

/* Trees of the kernel and of the engine itself, never projects. */
static bool
engine_tree (const char *dest)
{
  static const char *const trees[] = { "/proc", "/sys", "/dev", "/etc", "/run", "/var/run", NULL };
  for (size_t i = 0; trees[i]; i++)
    if (at_or_below (dest, trees[i]))
      return true;
  return false;
}

static bool
home_allowed (const hv_policy *p, const char *home, const char *dest)
{
  for (size_t i = 0; i < p->home_allow.n; i++)
    {
      const char *e = p->home_allow.v[i];
      if (strncmp (e, "~/", 2) != 0)
        continue;
      cleanup_free char *allowed = xasprintf ("%s/%s", home, e + 2);
      if (at_or_below (dest, allowed))
        return true;
    }
  return false;
}

/* Engine mounts: which are projects, which hide under the hidden home,
 * and where the home's tmpfs goes (after the mounts it must cover, before
 * those below it, which then show on top of it). */
static void
classify_mounts (const hv_policy *p, const oci_spec *spec, struct hv_container_plan *plan)
{
  bool hide = p->hide_home.value;
  for (size_t h = 0; h < plan->n_homes; h++)
    plan->homes[h].tmpfs_at = hide ? spec->n_mounts : SIZE_MAX;
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const oci_mount *m = &spec->mounts[i];
      if (m->destination == NULL || m->destination[0] != '/')
        continue;
      struct hv_container_home *home = home_of (plan, m->destination);
      if (hide && home && strcmp (m->destination, home->path) != 0)
        {
          if (home->tmpfs_at == spec->n_mounts)
            home->tmpfs_at = i;
          /* Something the engine mounts into a hidden home stays only if
           * home_allow names it: the home is hidden whoever filled it. */
          if (!home_allowed (p, home->path, m->destination))
            oci_strv_push_unique (&plan->masked, m->destination);
          continue;
        }
      struct stat st;
      /* An earlier policy's pin (x-haven.pin) is no project: its source
       * is a container path. */
      if (home || engine_tree (m->destination) || !hv_mount_is_bind (m) || m->source == NULL
          || m->source[0] != '/' || oci_strv_contains (&m->options, HV_MOUNT_OPT_PIN) || stat (m->source, &st) < 0
          || !S_ISDIR (st.st_mode))
        continue;
      oci_strv_push (&plan->projects, m->destination);
      oci_strv_push (&plan->project_sources, m->source);
      bool readonly = mount_is_readonly (m);
      if (p->project_writable.set && !p->project_writable.value && !readonly)
        {
          oci_strv_push_unique (&plan->readonly, m->destination);
          readonly = true;
        }
      /* What the container can write, git on the host must not execute
       * unchecked (container_git.h). */
      if (!readonly)
        {
          oci_strv_push (&plan->guarded, m->destination);
          oci_strv_push (&plan->guarded_sources, m->source);
        }
    }
}

/* Sockets through which a process commands a container engine. */
static const char *const engine_sockets[] = { "docker.sock", "podman.sock", "containerd.sock", "buildkitd.sock",
                                              "crio.sock", NULL };

static bool
engine_socket_name (const char *name)
{
  for (size_t i = 0; engine_sockets[i]; i++)
    if (strcmp (name, engine_sockets[i]) == 0)
      return true;
  return false;
}

/* An engine's socket bound into a policed container hands it the host:
 * whoever can talk to dockerd starts a privileged container.  Refused
 * are bind mounts of a Unix socket that root owns or that has an
 * engine socket's name, and of a directory that holds one by that name
 * (-v /var/run:/host-run). */
static int
refuse_engine_sockets (const oci_spec *spec, hv_error **err)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const oci_mount *m = &spec->mounts[i];
      struct stat st;
      if (!hv_mount_is_bind (m) || m->source == NULL || m->source[0] != '/' || stat (m->source, &st) < 0)
        continue;
      cleanup_free char *copy = xstrdup (m->source);
      const char *name = basename (copy);
      if (S_ISSOCK (st.st_mode) && (st.st_uid == 0 || engine_socket_name (name)))
        return hv_error_set (err, 0,
                             "mounts[%zu]: %s binds the socket %s into a policed container; a process that "
                             "talks to a root service (a container engine's socket) commands the host, so haven "
                             "refuses it",
                             i, m->destination ? m->destination : "?", m->source);
      if (!S_ISDIR (st.st_mode))
        continue;
      cleanup_close int dir = open (m->source, O_PATH | O_DIRECTORY | O_CLOEXEC);
      for (size_t k = 0; dir >= 0 && engine_sockets[k]; k++)
        {
          struct stat in;
          if (fstatat (dir, engine_sockets[k], &in, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK (in.st_mode))
            return hv_error_set (err, 0,
                                 "mounts[%zu]: %s binds %s, which holds the engine socket %s, into a policed "
                                 "container; a process that talks to a container engine commands the host, so "
                                 "haven refuses it",
                                 i, m->destination ? m->destination : "?", m->source, engine_sockets[k]);
        }
    }
  return 0;
}

/* One pattern of a block list in host terms: where its matches are
 * found (host_base) and what that directory is in the container. */
struct pattern
{
  char *host;
  char *host_base, *container_base;
  bool negative;
};

struct patterns
{
  size_t n;
  struct pattern *v;
};

static void
patterns_clear (struct patterns *ps)
{
  for (size_t i = 0; i < ps->n; i++)
    {
      free (ps->v[i].host);
      free (ps->v[i].host_base);
      free (ps->v[i].container_base);
    }
  free (ps->v);
}

static void
pattern_add (struct patterns *ps, const char *host_base, const char *container_base, const char *rest, bool neg)
{
  ps->v = xrealloc (ps->v, (ps->n + 1) * sizeof (*ps->v));
  ps->v[ps->n].host = xasprintf ("%s%s", strcmp (host_base, "/") == 0 ? "" : host_base, rest);
  ps->v[ps->n].host_base = xstrdup (host_base);
  ps->v[ps->n].container_base = xstrdup (container_base);
  ps->v[ps->n].negative = neg;
  ps->n++;
}

/* The literal directory part of a pattern: up to its first component
 * with a glob character. */
static char *
literal_prefix (const char *pattern)
{
  const char *glob = strpbrk (pattern, "*?[");
  size_t n = glob ? (size_t) (glob - pattern) : strlen (pattern);
  while (n > 1 && pattern[n - 1] != '/')
    n--;
  return strndup (pattern, n > 1 ? n - 1 : 1);
}

/* A container path pattern in host terms: below the last bind mount
 * that covers its literal part, else in the root filesystem.  Under
 * another mount (tmpfs, proc) there is nothing on the host to find. */
static void
map_pattern (const oci_spec *spec, const struct hv_container_plan *plan, const char *cpat, bool neg,
             struct patterns *ps)
{
  cleanup_free char *lit = literal_prefix (cpat);
  const oci_mount *cover = NULL;
  for (size_t i = 0; i < spec->n_mounts; i++)
    if (spec->mounts[i].destination && at_or_below (lit, spec->mounts[i].destination))
      cover = &spec->mounts[i];
  if (cover && !hv_mount_is_bind (cover))
    return;
  const struct hv_container_home *home = home_of (plan, lit);
  if (home && home->tmpfs_at != SIZE_MAX && (cover == NULL || !at_or_below (cover->destination, home->path)))
    return; /* in a hidden home, outside anything mounted into it: empty */
  if (cover && cover->source && cover->source[0] == '/')
    pattern_add (ps, cover->source, cover->destination, cpat + strlen (cover->destination), neg);
  else if (cover == NULL)
    pattern_add (ps, plan->rootfs, "/", cpat, neg);
}

static bool
has_glob (const char *s)
{
  return strpbrk (s, "*?[") != NULL;
}

static void
block_pattern (const oci_spec *spec, const struct hv_container_plan *plan, const char *cpat, bool neg,
               struct patterns *ps, oci_strv *literal)
{
  if (!neg && !has_glob (cpat))
    oci_strv_push (literal, cpat); /* masked wherever it is: the runtime skips what is missing */
  map_pattern (spec, plan, cpat, neg, ps);
}

static void
block_patterns (const hv_policy *p, const oci_spec *spec, struct hv_container_plan *plan, struct patterns *ps,
                oci_strv *literal)
{
  for (size_t i = 0; i < p->block.n; i++)
    {
      bool neg = p->block.v[i][0] == '!';
      const char *pat = p->block.v[i] + neg;
      if (strncmp (pat, "{project}", 9) == 0)
        {
          for (size_t j = 0; j < plan->projects.n; j++)
            pattern_add (ps, plan->project_sources.v[j], plan->projects.v[j], pat + 9, neg);
          continue;
        }
      if (strcmp (pat, "~") == 0 || strncmp (pat, "~/", 2) == 0)
        {
          for (size_t h = 0; h < plan->n_homes; h++)
            {
              cleanup_free char *cpat = xasprintf ("%s%s", plan->homes[h].path, pat + 1);
              block_pattern (spec, plan, cpat, neg, ps, literal);
            }
        }
      else if (pat[0] == '/')
        block_pattern (spec, plan, pat, neg, ps, literal);
    }
}

/* The pattern whose directory holds host most closely, or NULL. */
static const struct pattern *
pattern_of (const struct patterns *ps, const char *host)
{
  const struct pattern *best = NULL;
  for (size_t i = 0; i < ps->n; i++)
    if (at_or_below (host, ps->v[i].host_base) && (best == NULL || strlen (ps->v[i].host_base) > strlen (best->host_base)))
      best = &ps->v[i];
  return best;
}

static char *
to_container (const struct patterns *ps, const char *host)
{
  const struct pattern *best = pattern_of (ps, host);
  if (best == NULL)
    return NULL;
  const char *rest = host + (strcmp (best->host_base, "/") == 0 ? 0 : strlen (best->host_base));
  if (strcmp (best->container_base, "/") == 0)
    return xstrdup (rest[0] ? rest : "/");
  return xasprintf ("%s%s", best->container_base, rest);
}

/* The directories between a project's container path and the hidden
 * path c in it, for plan->pins (haven run's gen_pins, policy_compile.c).
 * Only those the project's own mount shows: below another engine mount
 * (a volume over node_modules) the directory is that mount's, which may
 * not have it. */
static void
pin_parents (const oci_spec *spec, struct hv_container_plan *plan, const struct pattern *pat, const char *c)
{
  bool project = false;
  for (size_t j = 0; j < plan->projects.n && !project; j++)
    project = strcmp (plan->projects.v[j], pat->container_base) == 0
              && strcmp (plan->project_sources.v[j], pat->host_base) == 0;
  if (!project)
    return;
  size_t base = strlen (pat->container_base);
  if (strncmp (c, pat->container_base, base) != 0 || c[base] != '/')
    return;
  for (const char *slash = c + base + 1; (slash = strchr (slash, '/')) != NULL; slash++)
    {
      cleanup_free char *dir = xasprintf ("%.*s", (int) (slash - c), c);
      for (size_t i = 0; i < spec->n_mounts; i++)
        if (spec->mounts[i].destination && at_or_below (dir, spec->mounts[i].destination)
            && strlen (spec->mounts[i].destination) > base
            && !oci_strv_contains (&spec->mounts[i].options, HV_MOUNT_OPT_PIN))
          return;
      oci_strv_push_unique (&plan->pins, dir);
    }
}

static int
compare_paths (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* block: like haven run's (policy_compile.c), in the container's terms;
 * the last entry that matches a path decides, "!" entries un-hide. */
static int
plan_block (const hv_policy *p, const oci_spec *spec, struct hv_container_plan *plan, hv_error **err)
{
  struct patterns ps = { 0 };
  cleanup_strv oci_strv literal = { 0 }, positive = { 0 }, found = { 0 };
  block_patterns (p, spec, plan, &ps, &literal);
  for (size_t i = 0; i < ps.n; i++)
    if (!ps.v[i].negative)
      oci_strv_push (&positive, ps.v[i].host);
  int r = hv_glob_expand_set (positive.v, positive.n, 0, &found, err);
  if (r < 0)
    {
      patterns_clear (&ps);
      return hv_error_wrap (err, "filesystem.block");
    }
  for (size_t f = 0; f < found.n; f++)
    {
      bool hidden = true;
      for (size_t j = ps.n; j-- > 0;)
        if (hv_glob_match (ps.v[j].host, found.v[f]))
          {
            hidden = !ps.v[j].negative;
            break;
          }
      cleanup_free char *c = hidden ? to_container (&ps, found.v[f]) : NULL;
      if (c)
        {
          oci_strv_push_unique (&plan->masked, c);
          pin_parents (spec, plan, pattern_of (&ps, found.v[f]), c);
        }
    }
  for (size_t i = 0; i < literal.n; i++)
    oci_strv_push_unique (&plan->masked, literal.v[i]);
  patterns_clear (&ps);
  return 0;
}

/* protect: read-only in every project.  The path is looked up below the
 * project's host directory refusing every link: one left there by an
 * earlier run (.git/hooks -> elsewhere) would make the runtime protect
 * its target and leave the link itself replaceable, so create fails and
 * says so instead. */
static int
plan_protect (const hv_policy *p, struct hv_container_plan *plan, hv_error **err)
{
  for (size_t j = 0; j < plan->projects.n; j++)
    {
      cleanup_close int base = open (plan->project_sources.v[j], O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (base < 0)
        return hv_error_set (err, errno, "filesystem.protect: open project %s", plan->project_sources.v[j]);
      for (size_t i = 0; i < p->protect.n; i++)
        {
          const char *rel = p->protect.v[i];
          cleanup_close int fd = hv_openat2 (base, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0,
                                             RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
          struct stat st;
          if (fd < 0 && errno == ENOENT)
            continue;
          if (fd < 0 && errno == ELOOP)
            return hv_error_set (err, 0,
                                 "filesystem.protect \"%s\": %s/%s is or passes through a symbolic link (left by an "
                                 "earlier run?); haven does not protect through links: remove it and start again",
                                 rel, plan->projects.v[j], rel);
          if (fd < 0)
            return hv_error_set (err, errno, "filesystem.protect \"%s\" in %s", rel, plan->projects.v[j]);
          if (fstat (fd, &st) == 0 && S_ISLNK (st.st_mode))
            return hv_error_set (err, 0, "filesystem.protect \"%s\": %s/%s is a symbolic link; remove it", rel,
                                 plan->projects.v[j], rel);
          cleanup_free char *c = xasprintf ("%s/%s", plan->projects.v[j], rel);
          oci_strv_push_unique (&plan->readonly, c);
        }
    }
  return 0;
}

/* read_only: container paths (~ is each hidden home). */
static void
plan_read_only (const hv_policy *p, struct hv_container_plan *plan)
{
  for (size_t i = 0; i < p->read_only.n; i++)
    {
      const char *e = p->read_only.v[i];
      bool applied = false;
      for (size_t h = 0; h < plan->n_homes && strncmp (e, "~/", 2) == 0; h++, applied = true)
        {
          cleanup_free char *c = xasprintf ("%s/%s", plan->homes[h].path, e + 2);
          oci_strv_push_unique (&plan->readonly, c);
        }
      if (e[0] == '/' && !has_glob (e))
        {
          oci_strv_push_unique (&plan->readonly, e);
          applied = true;
        }
      if (!applied)
        {
          cleanup_free char *note = xasprintf ("filesystem.read_only \"%s\" is not applied in containers "
                                               "(only plain container paths are); the root filesystem is "
                                               "read-only anyway",
                                               e);
          oci_strv_push (&plan->notes, note);
        }
    }
}

/* read_write: in a container only what is mounted writable is; say so
 * for entries outside the projects and the homes. */
static void
plan_read_write (const hv_policy *p, struct hv_container_plan *plan)
{
  bool homes_writable = plan->n_homes > 0 && plan->homes[0].tmpfs_at != SIZE_MAX;
  for (size_t i = 0; i < p->read_write.n; i++)
    {
      const char *e = p->read_write.v[i];
      if (strncmp (e, "{project}", 9) == 0 || (strncmp (e, "~/", 2) == 0 && homes_writable))
        continue;
      cleanup_free char *note = xasprintf ("filesystem.read_write \"%s\" stays read-only in a container (its root "
                                           "filesystem is read-only): mount a volume there to make it writable",
                                           e);
      oci_strv_push (&plan->notes, note);
    }
}

int
hv_container_plan_make (const hv_policy *p, const oci_spec *spec, const char *config_path,
                        struct hv_container_plan *plan, hv_error **err)
{
  memset (plan, 0, sizeof (*plan));
  plan->rootfs = container_rootfs (spec, config_path);
  if (refuse_engine_sockets (spec, err) < 0 || find_homes (spec, plan, err) < 0)
    {
      hv_container_plan_clear (plan);
      return -1;
    }
  classify_mounts (p, spec, plan);
  if (plan_block (p, spec, plan, err) < 0 || plan_protect (p, plan, err) < 0
      || hv_container_plan_git (spec, plan, err) < 0)
    {
      hv_container_plan_clear (plan);
      return -1;
    }
  /* A parent before what lies in it (the hidden files' pins and git's). */
  if (plan->pins.n > 1)
    qsort (plan->pins.v, plan->pins.n, sizeof (char *), compare_paths);
  plan_read_only (p, plan);
  plan_read_write (p, plan);
  return 0;
}

void
hv_container_plan_clear (struct hv_container_plan *plan)
{
  free (plan->rootfs);
  for (size_t h = 0; h < plan->n_homes; h++)
    free (plan->homes[h].path);
  free (plan->homes);
  oci_strv_free (&plan->projects);
  oci_strv_free (&plan->project_sources);
  oci_strv_free (&plan->masked);
  oci_strv_free (&plan->pins);
  oci_strv_free (&plan->readonly);
  oci_strv_free (&plan->pins_ro);
  oci_strv_free (&plan->guarded);
  oci_strv_free (&plan->guarded_sources);
  oci_strv_free (&plan->notes);
  memset (plan, 0, sizeof (*plan));
}
