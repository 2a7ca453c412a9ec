/* Files in a project that the host's coding agents and editors run
 * commands from on their own, when the user later starts them in that
 * directory: Claude Code's .claude/settings.json and settings.local.json
 * (hooks, statusLine, apiKeyHelper, env...) and .mcp.json (MCP servers it
 * starts), Gemini CLI's .gemini/settings.json (mcpServers, hooks, tool
 * discovery commands), Codex's .codex/config.toml (notify, mcp_servers),
 * and VS Code's .vscode/tasks.json (tasks run on folder open).
 *
 * The project guard (project_guard.h) records them in every directory of
 * the project before a run and quarantines what the sandbox made them run
 * afterwards.  What counts as a command is decided here, conservatively:
 * every setting is one except the few named as data below (a new setting
 * an agent's next release adds is a command until listed here). */
#ifndef HAVEN_AGENT_CONFIG_H
#define HAVEN_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "oci_spec.h"

enum hv_agent_format
{
  HV_AGENT_JSON,       /* every top-level member a command unless data */
  HV_AGENT_TOML,       /* every line a command unless a top-level data key */
  HV_AGENT_VSCODE_TASKS, /* the tasks (and other members) naming folderOpen */
};

typedef struct
{
  const char *dir;  /* the directory holding it (".claude"), or NULL */
  const char *name; /* its name ("settings.json") */
  const char *who;  /* who runs it on the host ("Claude Code") */
  enum hv_agent_format format;
  const char *const *data; /* top-level keys that are data (NULL-ended) */
} hv_agent_config;

/* Every such file (ended by one with name NULL). */
extern const hv_agent_config hv_agent_configs[];

/* Directories of code those agents run (all of it): Claude Code's
 * .claude/hooks (where its documentation puts the scripts hooks run) and
 * Gemini CLI's .gemini/extensions (workspace extensions: their manifests
 * name MCP servers it starts, and the servers' code).  Ended by NULL. */
typedef struct
{
  const char *dir, *name, *who;
} hv_agent_code_dir;
extern const hv_agent_code_dir hv_agent_code_dirs[];

/* Who runs what is in the directory `name` inside one whose own name is
 * dir_base, or NULL when it is not one of those. */
const char *hv_agent_code_dir_who (const char *dir_base, const char *name);

/* Whether a directory entry's name is one of theirs (".claude", ".mcp.json"):
 * the guard looks further only where one is. */
bool hv_agent_config_entry (const char *name);

/* Whether `name` in a directory whose own name is dir_base is one of
 * them (".claude", "settings.json"; any directory for ".mcp.json"). */
bool hv_agent_config_file (const char *dir_base, const char *name);

/* Whether a top-level key of c's file is one of its data keys. */
bool hv_agent_config_is_data (const hv_agent_config *c, const char *key);

/* The command-capable settings of a file's text, as "key: value" strings
 * (values in canonical JSON, or the TOML line); a text haven cannot read
 * is an error (the host's laxer reader might). */
int hv_agent_config_exec_entries (const hv_agent_config *c, const char *text, size_t len, oci_strv *out,
                                  hv_error **err);
#endif
