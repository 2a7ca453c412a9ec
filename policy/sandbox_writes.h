/* What the sandbox can write for real on the host: the project (when
 * writable), filesystem.read_write, a home_allow entry with write: direct
 * (but its protect sub-paths), a data sub-path.  Copy-on-write entries
 * and tmpfs are not: the sandbox writes its own layer or its own memory
 * there, never the host's file.  Used to refuse what haven's side (or the
 * host's tools) would trust there: commands the host's agent runs
 * (session/home_commands.h) and the audit trail (policy_compile.c). */
#ifndef HAVEN_SANDBOX_WRITES_H
#define HAVEN_SANDBOX_WRITES_H

#include "policy.h"
#include "run_ctx.h"

/* Where a path leads on the host, as the host would open it: its
 * longest existing prefix resolved (links followed), the rest appended
 * (path absolute; a new string). */
char *hv_host_resolve (const char *path);
/* Why the sandbox can write real (a path from hv_host_resolve) for real,
 * in words ("the project", "filesystem.read_write", ...), or NULL. */
const char *hv_sandbox_writes (const hv_policy *p, const struct hv_run_ctx *ctx, const char *real);
#endif
