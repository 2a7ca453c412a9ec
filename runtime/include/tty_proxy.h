/* Foreground `run` of a container with process.terminal and no console
 * socket (and `haven run` without namespaces, direct_run.h): the runtime
 * holds the pty master and connects it to its own stdin/stdout, with the
 * local terminal in raw mode and window size changes passed on. */
#ifndef HAVEN_TTY_PROXY_H
#define HAVEN_TTY_PROXY_H

#include <sys/types.h>

#include "error.h"

/* Copy until the container's side of the terminal is closed; returns when
 * the master reports EOF/EIO.  The caller reaps the process afterwards. */
int hv_tty_proxy (int master, hv_error **err);
#endif
