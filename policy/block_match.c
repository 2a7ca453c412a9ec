/* One path against the block list (block_match.h). */
#include "config.h"

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

bool
hv_policy_block_hides (const hv_policy *p, const struct hv_run_ctx *ctx, const char *path)
{
  for (size_t i = p->block.n; i-- > 0;)
    {
      bool neg = p->block.v[i][0] == '!';
      cleanup_strv oci_strv pats = { 0 };
      expand_pattern (p->block.v[i] + neg, ctx, &pats);
      for (size_t j = 0; j < pats.n; j++)
        if (hv_glob_match (pats.v[j], path))
          return !neg;
    }
  return false;
}
