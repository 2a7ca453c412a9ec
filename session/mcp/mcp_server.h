/* `haven mcp`: an MCP server on stdio whose tools run in ONE sandbox of
 * `haven serve` (docs/mcp.md).  The sandbox is made before the first
 * message is read, on a connection held for the whole session, so that
 * it ends with this process however it ends; the loop then answers the
 * client, each tool call being a request of its own to the service. */
#ifndef HAVEN_MCP_SERVER_H
#define HAVEN_MCP_SERVER_H

#include <stdbool.h>
#include <stdint.h>

/* Defaults of the options (haven mcp --help says them). */
#define HV_MCP_DEFAULT_POLICY "default"
#define HV_MCP_DEFAULT_MAX_OUTPUT 32768
#define HV_MCP_MAX_OUTPUT_MAX (16 * 1024 * 1024) /* the service's own bound on max_output */
#define HV_MCP_DEFAULT_TIMEOUT_S 120
#define HV_MCP_TIMEOUT_MAX_S 3600

/* Exit statuses of hv_mcp_main. */
#define HV_MCP_EXIT_OK 0
#define HV_MCP_EXIT_START 1 /* no sandbox: the policy, the project, the service */
#define HV_MCP_EXIT_USAGE 2 /* bad options (cli/mcp_cmd.c) */

struct hv_mcp_opts
{
  const char *haven_exe;  /* how to start a private `haven serve` (argv[0]) */
  const char *policy;     /* a name, or a file's path */
  const char *project;    /* a project directory, or NULL: a scratch workspace */
  const char *socket;     /* the service's socket, or NULL: the user's default */
  uint64_t max_output;    /* bytes of each output stream that reach the model */
  unsigned timeout_s;     /* a command's time limit when the call names none */
  bool verbose;           /* diagnostics on stderr */
};

/* Run the server until stdin ends or SIGTERM/SIGINT; returns the exit
 * status (fatal errors said on stderr). */
int hv_mcp_main (const struct hv_mcp_opts *o);

#endif
