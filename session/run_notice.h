/* Where the per-container monitor says, once, the first name haven's
 * resolver refused under an allowlist (without it, `npm install x`
 * failed with a lookup error and nothing said haven had refused the name,
 * nor which key allows it; runtime/egress/egress_notice.h writes the line).
 *
 * The monitor runs outside the sandbox, in its own session, and must
 * never block on a full pipe or a terminal held by ^S (its loop also
 * answers the sandbox's DNS), nor change haven's own stderr: it gets a
 * file description of its own, non-blocking, opened again through
 * /proc/self/fd/2 for a terminal, pipe or FIFO (O_NOCTTY); a copy of
 * fd 2 for a regular file (no blocking; the offset stays shared, so the
 * line lands where haven's would) and for a socket (written with
 * MSG_DONTWAIT).  Nothing else: no line.  The monitor ends before haven
 * does (delete waits for it), so a reader of haven's stderr still sees
 * its end when haven exits. */
#ifndef HAVEN_RUN_NOTICE_H
#define HAVEN_RUN_NOTICE_H

#include "policy.h"

/* Under an allowlist, that fd (above 2); otherwise, or when none can be
 * had, -1. */
int hv_run_notice_open (const hv_policy *p);
#endif
