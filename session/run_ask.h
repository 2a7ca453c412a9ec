/* `haven run`'s own askers of approvals (approvals.h says what a request
 * and an answer are; `haven approve` is the third asker, in another
 * terminal):
 *
 * - the terminal where the run started: when a request of this run
 *   appears, the run's terminal proxy (tty_proxy.h) pauses: the user's
 *   keys are no longer passed to the sandbox and its output is no longer
 *   drawn (the pty buffers it) while the question is on the terminal; one
 *   key answers it ([o]nce [r]un [a]lways [d]eny), pressed alone a second
 *   after it appeared (other keys are held and passed on after it); an
 *   answer from elsewhere, the deadline, or the end of the run withdraws
 *   it; then the proxy goes on.
 * - HAVEN_ASK_COMMAND from haven's own environment, the user's: run by
 *   haven outside the sandbox for each request of the run (run_ask_command.c).
 *   Never a policy key: a policy may come from a project the agent wrote,
 *   and a command haven runs outside the sandbox would be its way out.
 *
 * Both answer through hv_approval_answer: the first answer wins.  Every
 * event comes through one fd (an epoll of the approvals directory's
 * inotify, a deadline timer and the commands' pipes and pidfds) that the
 * proxy, or without a terminal the run's wait, polls (hv_run_hook). */
#ifndef HAVEN_RUN_ASK_H
#define HAVEN_RUN_ASK_H

#include <stdbool.h>

#include "error.h"
#include "tty_proxy.h"

struct hv_run_ask;

/* Watch the approvals directory (made when missing) for requests of run
 * (its id); terminal: ask on fd 0/1 when the proxy hands the terminal
 * over; command: HAVEN_ASK_COMMAND's text (NULL or "": none). */
int hv_run_ask_start (const char *run, bool terminal, const char *command, struct hv_run_ask **out, hv_error **err);
/* The hook the run polls (container.h: hv_run_opts.hook). */
void hv_run_ask_hook (struct hv_run_ask *a, struct hv_run_hook *hook);
/* Kill the commands still running, let go of everything; a may be NULL. */
void hv_run_ask_stop (struct hv_run_ask *a);
#endif
