/* Which registration `haven install ENGINE` asks for (install_cmd.h). */
#include "config.h"
#include "install_cmd.h"

#include <string.h>

#include "cri_install.h"
#include "engine_install.h"

int
hv_cmd_install (int argc, char **argv, bool uninstall, hv_error **err)
{
  if (argc >= 2 && (strcmp (argv[1], "containerd") == 0 || strcmp (argv[1], "crio") == 0))
    return hv_cmd_install_cri (argc, argv, uninstall, err);
  /* Docker, Podman, and the message naming every engine for the rest. */
  return hv_cmd_install_engine (argc, argv, uninstall, err);
}
