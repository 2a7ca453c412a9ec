/* What the sandbox can write on the host (sandbox_writes.h). */
#include "config.h"
#include "sandbox_writes.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "home_allow.h"
#include "utils.h"

/* "/a/./b//../c" -> "/a/c" (path is absolute). */
static char *
normalize (const char *path)
{
  char *out = xmalloc0 (strlen (path) + 2);
  size_t n = 0;
  const char *s = path;
  while (*s)
    {
      while (*s == '/')
        s++;
      const char *e = strchrnul (s, '/');
      size_t len = (size_t) (e - s);
      if (len == 0 || (len == 1 && s[0] == '.'))
        ;
      else if (len == 2 && s[0] == '.' && s[1] == '.')
        {
          while (n > 0 && out[n - 1] != '/')
            n--;
          if (n > 0)
            n--;
        }
      else
        {
          out[n++] = '/';
          memcpy (out + n, s, len);
          n += len;
        }
      s = e;
    }
  if (n == 0)
    out[n++] = '/';
  out[n] = '\0';
  return out;
}

/* Where a path leads on the host, as the host's tool would open it: its
 * longest existing prefix resolved (links followed: the host follows
 * them), the rest appended. */
char *
hv_host_resolve (const char *path)
{
  cleanup_free char *norm = normalize (path);
  size_t n = strlen (norm);
  for (;;)
    {
      char buf[PATH_MAX];
      char saved = norm[n];
      norm[n] = '\0';
      char *r = realpath (norm, buf);
      norm[n] = saved;
      if (r)
        {
          if (n == strlen (norm))
            return xstrdup (buf);
          return xasprintf ("%s%s%s", strcmp (buf, "/") == 0 ? "" : buf, norm[n] == '/' ? "" : "/", norm + n);
        }
      while (n > 1 && norm[n - 1] != '/')
        n--;
      if (n <= 1)
        return xstrdup (norm);
      n--;
    }
}

static bool
under (const char *path, const char *dir)
{
  size_t l = strlen (dir);
  if (l == 1 && dir[0] == '/')
    return true;
  return strncmp (path, dir, l) == 0 && (path[l] == '/' || path[l] == '\0');
}

static bool
under_resolved (const char *path, const char *dir)
{
  cleanup_free char *r = hv_host_resolve (dir);
  return under (path, r) || under (path, dir);
}

static bool
has_glob (const char *s)
{
  return strpbrk (s, "*?[") != NULL;
}

/* A read_write pattern, ~ and {project} expanded, as the compiler does. */
static void
expand_pattern (const char *pat, const struct hv_run_ctx *ctx, oci_strv *out)
{
  static const char key[] = "{project}";
  if (strncmp (pat, key, strlen (key)) == 0 && ctx->project)
    {
      cleanup_free char *p = xasprintf ("%s%s", ctx->project, pat + strlen (key));
      oci_strv_push (out, p);
      return;
    }
  if (pat[0] != '/' && pat[0] != '~' && ctx->project)
    {
      cleanup_free char *p = xasprintf ("%s/%s", ctx->project, pat);
      oci_strv_push (out, p);
      return;
    }
  hv_home_allow_expand (pat, ctx, out);
}

const char *
hv_sandbox_writes (const hv_policy *p, const struct hv_run_ctx *ctx, const char *path)
{
  bool project_rw = !p->project_writable.set || p->project_writable.value;
  if (project_rw && ctx->project && under_resolved (path, ctx->project))
    return "the project";
  for (size_t i = 0; i < p->read_write.n; i++)
    {
      cleanup_strv oci_strv pats = { 0 };
      expand_pattern (p->read_write.v[i], ctx, &pats);
      for (size_t j = 0; j < pats.n; j++)
        {
          if (has_glob (pats.v[j]))
            {
              cleanup_free char *below = xasprintf ("%s/*", pats.v[j]);
              if (fnmatch (pats.v[j], path, 0) == 0 || fnmatch (below, path, 0) == 0)
                return "filesystem.read_write";
            }
          else if (under_resolved (path, pats.v[j]))
            return "filesystem.read_write";
        }
    }
  if (!p->hide_home.value)
    return NULL;
  for (size_t i = 0; i < p->home_allow.n; i++)
    {
      const hv_home_access *a = &p->home_access[i];
      if (a->write != HV_HOME_DIRECT && a->write != HV_HOME_DATA)
        continue;
      cleanup_strv oci_strv paths = { 0 };
      hv_home_allow_expand (p->home_allow.v[i], ctx, &paths);
      for (size_t j = 0; j < paths.n; j++)
        {
          if (a->write == HV_HOME_DIRECT)
            {
              if (!under_resolved (path, paths.v[j]))
                continue;
              bool protected = false;
              for (size_t k = 0; k < a->protect.n && !protected; k++)
                {
                  cleanup_free char *sub = xasprintf ("%s/%s", paths.v[j], a->protect.v[k]);
                  protected = under_resolved (path, sub);
                }
              if (!protected)
                return "a home_allow entry with write: direct";
              continue;
            }
          bool protected = false;
          for (size_t k = 0; k < a->protect.n && !protected; k++)
            {
              cleanup_free char *sub = hv_home_sub_expand (a->protect.v[k], ctx);
              cleanup_free char *full = xasprintf ("%s/%s", paths.v[j], sub);
              protected = under_resolved (path, full);
            }
          for (size_t k = 0; k < a->data.n && !protected; k++)
            {
              cleanup_free char *sub = hv_home_sub_expand (a->data.v[k], ctx);
              cleanup_free char *full = xasprintf ("%s/%s", paths.v[j], sub);
              if (under_resolved (path, full))
                return "a home_allow data sub-path";
            }
        }
    }
  return NULL;
}

