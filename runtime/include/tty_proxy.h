/* Foreground `run` of a container with process.terminal and no console
 * socket (and `haven run` without namespaces, direct_run.h): the runtime
 * holds the pty master and connects it to its own stdin/stdout, with the
 * local terminal in raw mode and window size changes passed on. */
#ifndef HAVEN_TTY_PROXY_H
#define HAVEN_TTY_PROXY_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* What a hook is handed while the proxy is paused for it. */
struct hv_tty_pause
{
  int master;      /* the command's pty: polled for its hangup, never read */
  bool line_start; /* the terminal's cursor is at the start of a line: fn
                    * sets it when it leaves it so */
};

/* The caller's own events while a run is in the foreground (`haven run`'s
 * askers of approvals, session/run_ask.h): fd is polled beside the
 * terminal, and fn runs whenever it is readable.  With a terminal, the
 * proxy is paused while fn runs: nothing is read from the user's keys nor
 * from the command's output (the pty buffers it), so fn may use the
 * terminal itself (fd 0 in raw mode, fd 1); keys read before fn ran have
 * been passed on.  tty is NULL where there is no terminal.  The hook is
 * unset while fn is NULL (a zeroed struct: fd 0 is not polled). */
struct hv_run_hook
{
  int fd;
  void (*fn) (void *data, struct hv_tty_pause *tty);
  void *data;
};

/* Copy until the container's side of the terminal is closed; returns when
 * the master reports EOF/EIO.  The caller reaps the process afterwards.
 * hook may be NULL. */
int hv_tty_proxy (int master, const struct hv_run_hook *hook, hv_error **err);
#endif
