/* The homes and host sockets `haven run` hides (policy_hide.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy_hide.h"
#include "utils.h"

bool
hv_path_is_under (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  while (n > 1 && dir[n - 1] == '/')
    n--;
  if (n == 1 && dir[0] == '/')
    return path[0] == '/';
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool
listed (const oci_strv *v, const char *s)
{
  for (size_t i = 0; v && i < v->n; i++)
    if (strcmp (v->v[i], s) == 0)
      return true;
  return false;
}

/* The real path of an existing directory, or NULL. */
static char *
real_dir (const char *path)
{
  char *real = realpath (path, NULL);
  struct stat st;
  if (real && (stat (real, &st) < 0 || !S_ISDIR (st.st_mode)))
    {
      free (real);
      return NULL;
    }
  return real;
}

static void
push_home (oci_strv *out, const char *path)
{
  cleanup_free char *real = path && path[0] == '/' ? real_dir (path) : NULL;
  /* "/" is some system users' home: hiding it would hide the machine. */
  if (real && strcmp (real, "/") != 0)
    oci_strv_push_unique (out, real);
}

void
hv_own_homes (const char *home_env, uid_t uid, oci_strv *out)
{
  push_home (out, home_env);
  struct passwd *pw = getpwuid (uid);
  if (pw)
    push_home (out, pw->pw_dir);
}

/* Add a home of another user unless it is one of own (or holds one: a
 * $HOME below another user's home is the caller's business, and its tmpfs
 * goes on top anyway). */
static void
push_other (oci_strv *out, const oci_strv *own, const char *path)
{
  cleanup_free char *real = real_dir (path);
  if (real == NULL || strcmp (real, "/") == 0 || strcmp (real, "/home") == 0 || listed (own, real))
    return;
  oci_strv_push_unique (out, real);
}

void
hv_other_homes (const oci_strv *own, oci_strv *out)
{
  oci_strv found = { 0 };
  push_other (&found, own, "/root");
  /* The password database (files, and whatever NSS lists)... */
  setpwent ();
  struct passwd *pw;
  for (size_t n = 0; found.n <= HV_MAX_OTHER_HOMES && n < 16 * HV_MAX_OTHER_HOMES && (pw = getpwent ()) != NULL; n++)
    if (pw->pw_dir && str_has_prefix (pw->pw_dir, "/home/"))
      push_other (&found, own, pw->pw_dir);
  endpwent ();
  /* ...and every directory in /home, for users it does not enumerate
   * (LDAP and SSSD often do not). */
  DIR *d = opendir ("/home");
  struct dirent *de;
  while (d && found.n <= HV_MAX_OTHER_HOMES && (de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0
          || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
        continue;
      cleanup_free char *path = xasprintf ("/home/%s", de->d_name);
      struct stat st;
      if (lstat (path, &st) == 0 && S_ISDIR (st.st_mode))
        push_other (&found, own, path);
    }
  if (d)
    closedir (d);
  if (found.n > HV_MAX_OTHER_HOMES)
    {
      /* Too many to mount one by one: all of /home, and /root. */
      oci_strv_free (&found);
      push_other (&found, own, "/root");
      bool own_is_home = false;
      for (size_t i = 0; own && i < own->n; i++)
        own_is_home |= strcmp (own->v[i], "/home") == 0;
      cleanup_free char *home = real_dir ("/home");
      if (home && !own_is_home)
        oci_strv_push_unique (&found, home);
    }
  for (size_t i = 0; i < found.n; i++)
    oci_strv_push (out, found.v[i]);
  oci_strv_free (&found);
}

/* Where container engines keep other containers' filesystems, volumes,
 * images' layers and their runtime state: root reads them all, and a
 * sandbox run as root saw every other container's files read-only.
 * Rootless engines keep theirs under homes (hidden with
 * hide_home). */
static const char *const engine_roots[] = {
  "/var/lib/docker",     "/run/docker",       /* Docker */
  "/var/lib/containerd", "/run/containerd",   /* containerd (Docker's too, k8s) */
  "/var/lib/containers", "/run/containers",   /* Podman, Buildah, CRI-O's storage */
  "/run/crio",           "/var/lib/crio",     /* CRI-O */
  "/var/lib/kubelet",    "/var/lib/rancher",  /* pods' volumes and secrets; k3s */
  "/var/lib/lxc",        "/var/lib/lxd",      /* LXC, LXD */
  "/var/lib/incus",      "/var/lib/machines", /* Incus; systemd-nspawn */
  "/run/runc",                                /* runc's containers (state.json: their env) */
};

void
hv_engine_roots (const oci_strv *own, oci_strv *out)
{
  for (size_t i = 0; i < sizeof (engine_roots) / sizeof (engine_roots[0]); i++)
    {
      cleanup_free char *real = real_dir (engine_roots[i]);
      /* One of them as the caller's own home (a service account's
       * /var/lib/docker): that home is hidden as the caller's already. */
      if (real == NULL || strcmp (real, "/") == 0 || listed (own, real) || listed (out, real))
        continue;
      oci_strv_push (out, real);
    }
}

int
hv_check_project_homes (const char *project, const oci_strv *own, const oci_strv *others, hv_error **err)
{
  if (strcmp (project, "/") == 0)
    return hv_error_set (err, 0, "the project cannot be / (run haven in a project directory or pass --project)");
  for (size_t i = 0; own && i < own->n; i++)
    if (hv_path_is_under (own->v[i], project))
      return hv_error_set (err, 0,
                           "the project %s %s your home directory %s, which haven hides (~/.ssh, ~/.bashrc); "
                           "run haven in a project directory below it or pass --project",
                           project, strcmp (own->v[i], project) == 0 ? "is" : "contains", own->v[i]);
  for (size_t i = 0; others && i < others->n; i++)
    if (hv_path_is_under (others->v[i], project))
      return hv_error_set (err, 0,
                           "the project %s contains %s (another user's home or a container engine's data), "
                           "which haven hides; pass a --project that does not contain it",
                           project, others->v[i]);
  return 0;
}

int
hv_host_unix_sockets (const char *proc_net_unix, const oci_strv *skip, oci_strv *out, hv_error **err)
{
  FILE *f = fopen (proc_net_unix, "re");
  if (f == NULL)
    return hv_error_set (err, errno, "open %s (the host's Unix sockets to hide)", proc_net_unix);
  cleanup_free char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  size_t n = 0;
  int r = 0;
  /* "Num RefCount Protocol Flags Type St Inode Path": the path, when there
   * is one, is the rest of the line; abstract names start with '@'. */
  while ((len = getline (&line, &cap, f)) > 0)
    {
      if (line[len - 1] == '\n')
        line[--len] = '\0';
      int off = -1;
      if (sscanf (line, "%*s %*s %*s %*s %*s %*s %*s %n", &off) < 0 || off <= 0 || line[off] != '/')
        continue;
      const char *path = line + off;
      bool skipped = false;
      for (size_t i = 0; skip && i < skip->n && !skipped; i++)
        skipped = hv_path_is_under (path, skip->v[i]);
      if (skipped || listed (out, path))
        continue;
      if (++n > HV_MAX_HOST_SOCKETS)
        {
          r = hv_error_set (err, 0, "more than %d Unix sockets bound outside /run on the host (%s); haven would not "
                                    "hide them all",
                            HV_MAX_HOST_SOCKETS, proc_net_unix);
          break;
        }
      oci_strv_push (out, path);
    }
  fclose (f);
  return r;
}
