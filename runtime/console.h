/* Terminal for process.terminal: a pty from the container's own devpts,
 * with the master handed to the caller over --console-socket. */
#ifndef HAVEN_CONSOLE_H
#define HAVEN_CONSOLE_H

#include <stdbool.h>

#include "error.h"
#include "oci_spec.h"

/* In the container (after the root switch): open a pty pair from
 * /dev/pts/ptmx (checked to be devpts, CVE-2025-52565), size it, bind the
 * slave over /dev/console when mount_console, make it the controlling
 * terminal and stdio.  Returns the master fd. */
int hv_console_setup (const oci_process *p, bool mount_console, hv_error **err);
/* For a process without a terminal: a new session, so that it has no
 * controlling terminal, even when its stdio is the user's terminal. */
int hv_console_detach (hv_error **err);
/* Runtime side: connect to the console socket and send the master. */
int hv_console_send (const char *socket_path, int master, hv_error **err);
#endif
