/* `haven audit --verify [--json] [FILE...]` (audit_verify.c): each trail's
 * chain walked (trail_chain.h); the verdict per file on stdout. */
#ifndef HAVEN_AUDIT_VERIFY_H
#define HAVEN_AUDIT_VERIFY_H

#include <stdbool.h>

/* files[0..n): the trails (n 0: haven run's default trail,
 * ~/.local/state/haven/audit.log).  Returns the exit status: 0 every
 * chain holds, 1 a problem in one, 2 a file could not be read (said on
 * stderr). */
int hv_audit_verify_files (char *const *files, int n, bool json);
#endif
