#include "config.h"
#include "policy_glob.h"

#include <errno.h>
#include <fnmatch.h>
#include <fts.h>
#include <glob.h>
#include <string.h>

#include "utils.h"

static void
append_glob (const char *pattern, oci_strv *out)
{
  glob_t gl;
  if (glob (pattern, GLOB_NOSORT, NULL, &gl) == 0)
    for (size_t i = 0; i < gl.gl_pathc; i++)
      oci_strv_push (out, gl.gl_pathv[i]);
  globfree (&gl);
}

static size_t
count_components (const char *s)
{
  size_t n = 1;
  for (; *s; s++)
    if (*s == '/')
      n++;
  return n;
}

/* The last n components of path ("a/b/c", 2 -> "b/c"), or NULL when it
 * has fewer. */
static const char *
last_components (const char *path, size_t n)
{
  const char *p = path + strlen (path);
  size_t seen = 0;
  while (p > path)
    {
      p--;
      if (*p == '/' && ++seen == n)
        return p + 1;
    }
  return seen + 1 == n ? path : NULL;
}

/* Every path under dir whose last components match rest.  Symbolic links
 * are not followed (FTS_PHYSICAL): a link in the project must not turn
 * the walk into one of the whole host. */
static int
walk_matching (const char *dir, const char *rest, size_t max_entries, size_t *visited, oci_strv *out,
               hv_error **err)
{
  size_t k = count_components (rest);
  char *roots[] = { (char *) dir, NULL };
  FTS *fts = fts_open (roots, FTS_PHYSICAL | FTS_NOCHDIR | FTS_NOSTAT, NULL);
  if (fts == NULL)
    return errno == ENOENT ? 0 : hv_error_set (err, errno, "scan %s", dir);
  size_t dirlen = strlen (dir);
  FTSENT *e;
  int r = 0;
  while ((e = fts_read (fts)) != NULL)
    {
      if (e->fts_info == FTS_DP)
        continue;
      if (++*visited > max_entries)
        {
          r = hv_error_set (err, 0, "more than %zu entries under %s while looking for \"**/%s\"; narrow the pattern",
                            max_entries, dir, rest);
          break;
        }
      if (e->fts_level == 0 || strlen (e->fts_path) <= dirlen)
        continue;
      const char *rel = e->fts_path + dirlen + (dir[dirlen - 1] == '/' ? 0 : 1);
      const char *tail = last_components (rel, k);
      if (tail && fnmatch (rest, tail, FNM_PATHNAME) == 0)
        oci_strv_push (out, e->fts_path);
    }
  fts_close (fts);
  return r;
}

int
hv_glob_expand (const char *pattern, size_t max_entries, oci_strv *out, hv_error **err)
{
  if (max_entries == 0)
    max_entries = HV_GLOB_MAX_ENTRIES;
  const char *dstar = strstr (pattern, "**");
  if (dstar == NULL)
    {
      append_glob (pattern, out);
      return 0;
    }
  /* Only a whole "**" component, once: "DIR/ ** /REST". */
  if ((dstar != pattern && dstar[-1] != '/') || dstar[2] != '/' || dstar[3] == '\0' || strstr (dstar + 2, "**"))
    return hv_error_set (err, 0, "pattern \"%s\": \"**\" must be a whole path component and appear once", pattern);
  cleanup_free char *prefix = xasprintf ("%.*s", (int) (dstar - pattern), pattern);
  const char *rest = dstar + 3;
  /* The prefix may itself be a pattern (/home/ * /projects/ ** /.env). */
  oci_strv dirs = { 0 };
  if (prefix[0] == '\0')
    oci_strv_push (&dirs, ".");
  else
    append_glob (prefix, &dirs);
  size_t visited = 0;
  int r = 0;
  for (size_t i = 0; i < dirs.n && r == 0; i++)
    r = walk_matching (dirs.v[i], rest, max_entries, &visited, out, err);
  oci_strv_free (&dirs);
  return r;
}
