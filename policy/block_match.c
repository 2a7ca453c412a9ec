/* One path against the block list (block_match.h). */
#include "config.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "block_match.h"
#include "home_allow.h"
#include "policy_glob.h"
#include "utils.h"

/* A block pattern in host terms, as the compiler expands it: "~/" in
 * each home, "{project}" and "/project" the project, relative paths in
 * the project. */
static void
expand_pattern (const char *pattern, const struct hv_run_ctx *ctx, oci_strv *out)
{
  if (pattern[0] == '~')
    {
      hv_home_allow_expand (pattern, ctx, out);
      return;
    }
  cleanup_free char *path = NULL;
  if (str_has_prefix (pattern, "{project}"))
    path = xasprintf ("%s%s", ctx->project, pattern + 9);
  else if (str_has_prefix (pattern, "/project") && (pattern[8] == '/' || pattern[8] == '\0'))
    path = xasprintf ("%s%s", ctx->project, pattern + 8);
  else if (pattern[0] != '/')
    path = xasprintf ("%s/%s", ctx->project, pattern);
  else
    path = xstrdup (pattern);
  oci_strv_push (out, path);
}

struct hv_block_matcher
{
  oci_strv patterns; /* expanded, in the block list's order */
  oci_strv last;     /* each one's last component, "" when that is "**" */
  bool *negative;
};

struct hv_block_matcher *
hv_block_matcher_new (const hv_policy *p, const struct hv_run_ctx *ctx)
{
  struct hv_block_matcher *m = xmalloc0 (sizeof (*m));
  for (size_t i = 0; i < p->block.n; i++)
    {
      bool neg = p->block.v[i][0] == '!';
      size_t before = m->patterns.n;
      expand_pattern (p->block.v[i] + neg, ctx, &m->patterns);
      m->negative = xrealloc (m->negative, (m->patterns.n + 1) * sizeof (bool));
      for (size_t j = before; j < m->patterns.n; j++)
        {
          m->negative[j] = neg;
          const char *slash = strrchr (m->patterns.v[j], '/');
          const char *last = slash ? slash + 1 : m->patterns.v[j];
          oci_strv_push (&m->last, strstr (last, "**") ? "" : last);
        }
    }
  return m;
}

bool
hv_block_matcher_hides (const struct hv_block_matcher *m, const char *path)
{
  const char *slash = strrchr (path, '/');
  const char *base = slash ? slash + 1 : path;
  for (size_t i = m->patterns.n; i-- > 0;)
    {
      /* A path matches only if its last component matches the pattern's:
       * a cheap test first, the whole pattern only then. */
      if (m->last.v[i][0] && fnmatch (m->last.v[i], base, FNM_PERIOD) != 0)
        continue;
      if (hv_glob_match (m->patterns.v[i], path))
        return !m->negative[i];
    }
  return false;
}

void
hv_block_matcher_free (struct hv_block_matcher *m)
{
  if (m == NULL)
    return;
  oci_strv_free (&m->patterns);
  oci_strv_free (&m->last);
  free (m->negative);
  free (m);
}
