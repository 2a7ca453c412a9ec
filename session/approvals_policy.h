/* A run's side of approvals (approvals.h): the directories a policy that
 * asks needs before its config is compiled, and the approved file merged
 * into the policy (policy_approved.h). */
#ifndef HAVEN_APPROVALS_POLICY_H
#define HAVEN_APPROVALS_POLICY_H

#include "error.h"
#include "policy.h"

/* Merge ${XDG_CONFIG_HOME:-~/.config}/haven/approved/NAME.yaml (NAME:
 * p->name) into p, read strictly (a regular file of ours, no link
 * followed, in a directory of ours alone); none there, or a name that
 * is not plain: nothing. */
int hv_approved_merge (hv_policy *p, hv_error **err);

/* Under a policy that asks: the approvals directory and the approved
 * files' directory, made 0700 (new strings in *approvals, *approved);
 * otherwise both NULL. */
int hv_approvals_prepare (const hv_policy *p, char **approvals, char **approved, hv_error **err);

/* A run id: 16 lower-case hex digits of 8 random bytes, NUL-terminated. */
int hv_run_id_make (char out[17], hv_error **err);
#endif
