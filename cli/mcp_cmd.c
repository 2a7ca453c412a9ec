/* `haven mcp`: the MCP server's options (docs/mcp.md).  Bad options are
 * said on stderr with the usage and exit 2: stdout belongs to the
 * protocol, even when the client started haven wrongly. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "haven_help.h"
#include "mcp_cmd.h"
#include "mcp_server.h"

/* A whole number in [min, max], the whole argument. */
static int
number (const char *opt, const char *arg, unsigned long long min, unsigned long long max, unsigned long long *out)
{
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull (arg, &end, 10);
  if (arg[0] < '0' || arg[0] > '9' || errno || end == arg || *end || v < min || v > max)
    {
      fprintf (stderr, "haven mcp: --%s: \"%s\" is not a number from %llu to %llu\n", opt, arg, min, max);
      return -1;
    }
  *out = v;
  return 0;
}

int
hv_cmd_mcp (int argc, char **argv, const char *haven_argv0)
{
  static const struct hv_opt opts[] = { { "policy", 'p', true, 1 },     { "project", 0, true, 2 },
                                        { "socket", 0, true, 3 },       { "max-output", 0, true, 4 },
                                        { "timeout", 0, true, 5 },      { "verbose", 'v', false, 6 },
                                        { "help", 'h', false, 7 },      { NULL, 0, false, 0 } };
  struct hv_mcp_opts o = { .haven_exe = haven_argv0,
                           .policy = HV_MCP_DEFAULT_POLICY,
                           .max_output = HV_MCP_DEFAULT_MAX_OUTPUT,
                           .timeout_s = HV_MCP_DEFAULT_TIMEOUT_S };
  struct hv_opt_iter it = { argc, argv, 1, "haven mcp" };
  cleanup_error hv_error *err = NULL;
  const char *arg;
  unsigned long long v;
  int id;
  while ((id = hv_opt_next (&it, opts, &arg, &err)) > 0)
    switch (id)
      {
      case 1:
        o.policy = arg;
        break;
      case 2:
        o.project = arg;
        break;
      case 3:
        o.socket = arg;
        break;
      case 4:
        if (number ("max-output", arg, 1, HV_MCP_MAX_OUTPUT_MAX, &v) < 0)
          goto usage;
        o.max_output = v;
        break;
      case 5:
        if (number ("timeout", arg, 1, HV_MCP_TIMEOUT_MAX_S, &v) < 0)
          goto usage;
        o.timeout_s = (unsigned) v;
        break;
      case 6:
        o.verbose = true;
        break;
      case 7:
        hv_haven_usage (stdout, "mcp");
        return 0;
      }
  if (id < 0)
    {
      fprintf (stderr, "%s\n", err ? err->msg : "haven mcp: bad option");
      goto usage;
    }
  if (it.index < argc)
    {
      fprintf (stderr, "haven mcp: unexpected argument \"%s\"\n", argv[it.index]);
      goto usage;
    }
  if (o.policy[0] == '\0')
    {
      fprintf (stderr, "haven mcp: --policy: empty\n");
      goto usage;
    }
  return hv_mcp_main (&o);

usage:
  hv_haven_usage (stderr, "mcp");
  return HV_MCP_EXIT_USAGE;
}
