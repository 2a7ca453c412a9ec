/* Names approved "always" (session/approvals.h: the approved file
 * ~/.config/haven/approved/POLICY.yaml, written by an answerer outside
 * the sandbox) merged into a policy as one more layer of network.allow.
 * The file may hold nothing else: `network: {allow: [...]}` with names
 * (an address, a mode, any other key is an error naming file:line:column,
 * so a file someone edited by hand cannot widen more than names). */
#ifndef HAVEN_POLICY_APPROVED_H
#define HAVEN_POLICY_APPROVED_H

#include <stddef.h>

#include "error.h"
#include "policy.h"

/* text (len bytes) read from file: its names appended to p->net_allow
 * (each rule's `where` naming file:line:column), p->approved_file set.
 * Under a policy that is not an allowlist nothing is merged (0). */
int hv_policy_merge_approved (hv_policy *p, const char *text, size_t len, const char *file, hv_error **err);
#endif
