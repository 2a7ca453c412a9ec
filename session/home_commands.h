/* Commands the host's agent runs that the sandbox could rewrite.
 * A home_allow entry's `settings` are files the agent on the host obeys
 * (~/.claude/settings.json, ~/.codex/config.toml, ~/.gemini/settings.json)
 * and its `commands` the keys there whose values it runs (a status line,
 * hooks, an API key helper, MCP servers, a notify program).  Such a value
 * that names a file the sandbox can write for real (the project, a
 * read_write path, a direct entry, a data sub-path) would let this run
 * plant code the host runs later as the user: the run is refused, naming
 * the file, the key and the path.  See policies/README.md, "Commands the
 * host's agent runs". */
#ifndef HAVEN_HOME_COMMANDS_H
#define HAVEN_HOME_COMMANDS_H

#include "error.h"
#include "policy.h"
#include "run_ctx.h"

/* 0: nothing such; -1: *err names the first one found. */
int hv_home_commands_check (const hv_policy *p, const struct hv_run_ctx *ctx, hv_error **err);

/* The same for one settings file's text (name is for the message; a
 * .toml name is read as TOML, anything else as JSON); exposed for the
 * unit tests. */
int hv_home_commands_check_text (const hv_policy *p, const struct hv_run_ctx *ctx, const char *name,
                                 const char *text, const oci_strv *keys, hv_error **err);
#endif
