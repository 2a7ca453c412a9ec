/* `haven run --learn`: the policy exactly as given (nothing widened),
 * with a trail (the default one when the policy keeps none, said on
 * stderr), and, said on stderr at the start, the kinds of refusal this
 * run cannot record here and why, so that nothing is silently learnt
 * less (policies/README.md, "Learn mode and haven policy suggest"). */
#ifndef HAVEN_RUN_LEARN_H
#define HAVEN_RUN_LEARN_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "policy.h"

/* Where learn mode writes when the policy keeps no trail: the default
 * trail, which `haven audit` and `haven policy suggest` read. */
#define HV_LEARN_DEFAULT_TRAIL "~/.local/state/haven/audit.log"

/* Before the policy is compiled: give p a trail if it has none (a trail
 * only records: the listener answers every denied call EPERM as the
 * filter would).  direct: a run without namespaces, which records no
 * refusal at all: refused.  Says on out what it did and what the run
 * will not see (asking the kernel's audit whether Landlock's refusals
 * can reach the trail from here, when the policy has exec rules). */
int hv_run_learn_prepare (hv_policy *p, bool direct, FILE *out, hv_error **err);
#endif
