/* `haven install ENGINE ...` and `haven uninstall ENGINE ...`: which
 * registration the engine's name asks for.  Apart from the two kinds so
 * that neither knows the other: Docker's and Podman's (engine_install.h)
 * and the Kubernetes runtimes' (cri_install.h), which builds on the
 * former's file writing and policy check. */
#ifndef HAVEN_INSTALL_CMD_H
#define HAVEN_INSTALL_CMD_H

#include <stdbool.h>

#include "error.h"

/* argv[0] is the verb, argv[1] the engine. */
int hv_cmd_install (int argc, char **argv, bool uninstall, hv_error **err);

#endif
