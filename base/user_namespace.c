/* Which user namespace this process is in: what decides where state
 * goes and whether the host's cgroups are ours to write. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "file_read.h"
#include "user_namespace.h"
#include "utils.h"

/* The initial user namespace maps every uid to itself: "0 0 4294967295"
 * (runc's RunningInUserNS reads the same file).  Anything else, or a map
 * we cannot read, is a user namespace. */
bool
hv_in_user_namespace (void)
{
  cleanup_free char *text = NULL;
  cleanup_error hv_error *ignored = NULL;
  if (hv_read_file ("/proc/self/uid_map", &text, NULL, &ignored) < 0)
    return true;
  unsigned long inside, outside, count;
  return !(sscanf (text, "%lu %lu %lu", &inside, &outside, &count) == 3 && inside == 0 && outside == 0
           && count == 4294967295UL);
}

/* Root in a user namespace is what a rootless engine makes of its user:
 * Podman runs the runtime inside its namespace as uid 0, with the user's
 * XDG_RUNTIME_DIR and without --root.  /run there is the host's, which
 * that "root" cannot write, so the state goes where it would for the user
 * (as runc decides: a USER of root means a real root's environment in a
 * nested namespace, which keeps /run/haven). */
bool
hv_root_of_user_namespace (void)
{
  if (geteuid () != 0 || !hv_in_user_namespace ())
    return false;
  const char *user = getenv ("USER");
  return user == NULL || strcmp (user, "root") != 0;
}
