/* Refuse to run when haven's binary or a policy file it read lies inside
 * anything the sandbox can write (issue: the README once ran ./haven from
 * its build tree, which was the project; the agent replaced the binary
 * and the next run executed it as root, unsandboxed).
 *
 * The project counts as writable whatever the policy says: a project is
 * where agents write, and a later run under another policy (or another
 * tool) can write it.  A policy file inside the project is refused even
 * when `protect`ed: protection is a bind of that path for one run, and
 * renaming a parent directory and writing a new file at the old path
 * (the `.git` trick) gets around it. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci_spec.h"
#include "run_trust.h"
#include "self_exe.h"
#include "utils.h"

/* Lexically absolute and normal: "./a/../b" -> "<cwd>/b". */
static char *
absolute (const char *path)
{
  char cwd[PATH_MAX];
  cleanup_free char *joined = NULL;
  if (path[0] == '/')
    joined = xstrdup (path);
  else if (getcwd (cwd, sizeof (cwd)))
    joined = xasprintf ("%s/%s", cwd, path);
  else
    return NULL;
  char *out = xmalloc0 (strlen (joined) + 2);
  size_t n = 0;
  char *save = NULL;
  for (char *c = strtok_r (joined, "/", &save); c; c = strtok_r (NULL, "/", &save))
    {
      if (strcmp (c, ".") == 0)
        continue;
      if (strcmp (c, "..") == 0)
        {
          while (n > 0 && out[n - 1] != '/')
            n--;
          if (n > 0)
            n--;
          out[n] = '\0';
          continue;
        }
      n += (size_t) sprintf (out + n, "/%s", c);
    }
  if (n == 0)
    strcpy (out, "/");
  return out;
}

static bool
beneath (const char *path, const char *root)
{
  size_t n = strlen (root);
  if (strcmp (root, "/") == 0)
    return true;
  return strncmp (path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static const char *
writable_root_of (const char *path, const oci_strv *roots)
{
  for (size_t i = 0; i < roots->n; i++)
    if (beneath (path, roots->v[i]))
      return roots->v[i];
  return NULL;
}

/* Follow `path` one link at a time: the file and every link on the way to
 * it must be out of reach (a link in the project pointing at an installed
 * binary can be re-pointed). */
static const char *
reachable_at (const char *path, const oci_strv *roots, char **where)
{
  cleanup_free char *cur = absolute (path);
  for (int links = 0; cur && links < 40; links++)
    {
      const char *root = writable_root_of (cur, roots);
      if (root)
        {
          *where = xstrdup (cur);
          return root;
        }
      /* The first link among the path's prefixes, replaced by its target. */
      cleanup_free char *prefix = xstrdup (cur);
      char *next = NULL;
      for (char *slash = strchr (prefix + 1, '/');; slash = strchr (slash + 1, '/'))
        {
          if (slash)
            *slash = '\0';
          struct stat st;
          if (lstat (prefix, &st) == 0 && S_ISLNK (st.st_mode))
            {
              char target[PATH_MAX];
              ssize_t l = readlink (prefix, target, sizeof (target) - 1);
              if (l < 0)
                break;
              target[l] = '\0';
              const char *rest = slash ? cur + (slash - prefix) : "";
              char *dir = xstrdup (prefix);
              *strrchr (dir, '/') = '\0';
              next = target[0] == '/' ? xasprintf ("%s%s", target, rest)
                                      : xasprintf ("%s/%s%s", dir[0] ? dir : "", target, rest);
              free (dir);
              break;
            }
          if (slash == NULL)
            break;
          *slash = '/';
        }
      if (next == NULL)
        return NULL;
      free (cur);
      cur = absolute (next);
      free (next);
    }
  return NULL;
}

/* What the shell ran for argv[0]: the path itself, or its PATH match. */
static char *
invoked_path (const char *argv0)
{
  if (argv0 == NULL || argv0[0] == '\0')
    return NULL;
  if (strchr (argv0, '/'))
    return xstrdup (argv0);
  const char *path = getenv ("PATH");
  if (path == NULL)
    return NULL;
  cleanup_free char *copy = xstrdup (path);
  char *save = NULL;
  for (char *d = strtok_r (copy, ":", &save); d; d = strtok_r (NULL, ":", &save))
    {
      char *candidate = xasprintf ("%s/%s", d[0] ? d : ".", argv0);
      if (access (candidate, X_OK) == 0)
        return candidate;
      free (candidate);
    }
  return NULL;
}

/* The project and every writable bind of the compiled config. */
static int
writable_roots (const char *project, const char *config_json, oci_strv *roots, hv_error **err)
{
  oci_strv_push (roots, project);
  cleanup_spec oci_spec *spec = NULL;
  if (oci_spec_parse (config_json, strlen (config_json), "config.json", &spec, err) < 0)
    return -1;
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const oci_mount *m = &spec->mounts[i];
      bool is_bind = false, ro = false;
      for (size_t j = 0; j < m->options.n; j++)
        {
          is_bind |= strcmp (m->options.v[j], "bind") == 0 || strcmp (m->options.v[j], "rbind") == 0;
          ro |= strcmp (m->options.v[j], "ro") == 0;
        }
      if (!is_bind || ro || m->source == NULL)
        continue;
      cleanup_free char *real = realpath (m->source, NULL);
      oci_strv_push_unique (roots, real ? real : m->source);
    }
  return 0;
}

int
hv_check_run_trust (const hv_policy *p, const char *project, const char *config_json, const char *argv0,
                    hv_error **err)
{
  cleanup_strv oci_strv roots = { 0 };
  if (writable_roots (project, config_json, &roots, err) < 0)
    return hv_error_wrap (err, "check where haven's files are");
  cleanup_free char *exe = hv_self_exe_path ();
  cleanup_free char *invoked = invoked_path (argv0);
  const char *binaries[] = { exe, invoked };
  for (size_t i = 0; i < 2; i++)
    {
      cleanup_free char *where = NULL;
      const char *root = binaries[i] ? reachable_at (binaries[i], &roots, &where) : NULL;
      if (root)
        return hv_error_set (err, 0,
                             "refusing to run: the haven binary %s is inside %s, which the sandbox can write, so "
                             "a command in the sandbox could replace it and the next run would execute its code "
                             "unsandboxed; install haven (make install) or run it from outside the project",
                             where, root);
    }
  for (size_t i = 0; i < p->files.n; i++)
    {
      cleanup_free char *where = NULL;
      const char *root = reachable_at (p->files.v[i], &roots, &where);
      if (root)
        return hv_error_set (err, 0,
                             "refusing to run: the policy file %s is inside %s, which the sandbox can write, so "
                             "a command in the sandbox could rewrite the policy of the next run; move it out "
                             "(for example to ~/.config/haven/policies/) and pass that path or its name",
                             where, root);
    }
  return 0;
}

int
hv_check_secret_files (const oci_strv *files, const char *project, const char *config_json, hv_error **err)
{
  if (files->n == 0)
    return 0;
  cleanup_strv oci_strv roots = { 0 };
  if (writable_roots (project, config_json, &roots, err) < 0)
    return hv_error_wrap (err, "check where the token files are");
  for (size_t i = 0; i < files->n; i++)
    {
      cleanup_free char *where = NULL;
      const char *root = reachable_at (files->v[i], &roots, &where);
      if (root)
        return hv_error_set (err, 0,
                             "refusing to run: the token file %s is inside %s, which the sandbox can write, so a "
                             "command in the sandbox could replace it with a link to another secret for the next "
                             "run to read; move it out (for example to ~/.config/haven/)",
                             where, root);
    }
  return 0;
}
