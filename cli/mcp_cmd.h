/* `haven mcp`: parse its options, run the MCP server (session/mcp). */
#ifndef HAVEN_MCP_CMD_H
#define HAVEN_MCP_CMD_H

/* Returns the exit status: the server's, or 2 for bad options (usage on
 * stderr). */
int hv_cmd_mcp (int argc, char **argv, const char *haven_argv0);

#endif
