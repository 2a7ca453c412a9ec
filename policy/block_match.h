/* Whether the policy's block list hides one path, by the rule the
 * compiler applies to what its walks find (policy_compile.c,
 * expand_block): the last entry matching it decides, "!" entries
 * un-hide.  For callers that start from a path (a file git tracks)
 * rather than from the patterns. */
#ifndef HAVEN_BLOCK_MATCH_H
#define HAVEN_BLOCK_MATCH_H

#include <stdbool.h>

#include "policy.h"
#include "run_ctx.h"

/* The block list expanded once, for many paths (all of a git index). */
struct hv_block_matcher;
struct hv_block_matcher *hv_block_matcher_new (const hv_policy *p, const struct hv_run_ctx *ctx);
bool hv_block_matcher_hides (const struct hv_block_matcher *m, const char *path);
void hv_block_matcher_free (struct hv_block_matcher *m);
#endif
