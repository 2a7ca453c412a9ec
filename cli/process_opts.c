#include "config.h"
#include "process_opts.h"

#include <errno.h>
#include <stdlib.h>

static int
parse_preserve_fds (const char *cmd, const char *arg, int *out, hv_error **err)
{
  /* Checked, not atoi: the count sets where the close-on-exec sweep
   * starts (3 + N), and a negative or huge value must never move it past
   * the runtime's own descriptors (CVE-2024-21626). */
  char *end;
  errno = 0;
  long n = strtol (arg, &end, 10);
  if (end == arg || *end || errno || n < 0 || n > 65536)
    return hv_error_set (err, 0, "%s: invalid --preserve-fds \"%s\" (a number from 0 to 65536)", cmd, arg);
  *out = (int) n;
  return 0;
}

int
hv_process_opt (const char *cmd, int id, const char *arg, struct hv_process_opts *o, hv_error **err)
{
  switch (id)
    {
    case HV_PROC_OPT_PID_FILE:
      o->pid_file = arg;
      return 1;
    case HV_PROC_OPT_CONSOLE_SOCKET:
      o->console_socket = arg;
      return 1;
    case HV_PROC_OPT_PRESERVE_FDS:
      return parse_preserve_fds (cmd, arg, &o->preserve_fds, err) < 0 ? -1 : 1;
    case HV_PROC_OPT_DETACH:
      o->detach = hv_opt_bool (arg);
      return 1;
    default:
      return 0;
    }
}
