/* CVE-2019-5736: a container process that can open the runtime's
 * /proc/PID/exe could overwrite the host binary.  Commands that enter a
 * container first make sure the binary they run from cannot be written
 * through that link, re-executing themselves if needed. */
#ifndef HAVEN_SELF_EXE_H
#define HAVEN_SELF_EXE_H

#include "error.h"

/* Returns 0 when the running image is already unwritable (a sealed memfd,
 * a read-only mount, or a binary the caller's uid may not write);
 * otherwise re-executes from a read-only view of it and only returns on
 * failure. */
int hv_ensure_sealed_self (char **argv, hv_error **err);

/* The path this binary was run from, a new string: after the re-exec
 * above /proc/self/exe names the memfd copy ("/memfd:...") or the root
 * of the detached read-only bind ("/"), and the original path saved
 * before it is returned instead; otherwise (or when none was saved) the
 * link's target as it is.  NULL when the link cannot be read. */
char *hv_self_exe_path (void);
#endif
