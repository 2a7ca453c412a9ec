/* The runtime library's context: where state goes, and whether this is
 * a rootless runtime. */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "utils.h"

char *
hv_default_state_root (void)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  if (geteuid () == 0 && !(hv_root_of_user_namespace () && xdg && xdg[0]))
    return xstrdup ("/run/haven");
  if (xdg && xdg[0])
    return xasprintf ("%s/haven", xdg);
  return xasprintf ("/tmp/haven-%u", (unsigned) geteuid ());
}

bool
hv_runtime_rootless (const struct hv_runtime *rt)
{
  if (rt->rootless && strcmp (rt->rootless, "true") == 0)
    return true;
  if (rt->rootless && strcmp (rt->rootless, "false") == 0)
    return false;
  /* auto: not root, or root only in a user namespace that is not
   * root-owned from the outside (rootless Podman): either way the host's
   * cgroup hierarchies are not ours to write unless they were delegated. */
  return geteuid () != 0 || hv_root_of_user_namespace ();
}
