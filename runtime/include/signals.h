#ifndef HAVEN_SIGNALS_H
#define HAVEN_SIGNALS_H
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
/* "KILL", "SIGKILL", "kill" or "9" -> 9 */
int hv_parse_signal (const char *s, hv_error **err);
/* Wait up to timeout_ms for pid to exit (pidfd poll); 0 when it did. */
int hv_wait_exit (int pid, int timeout_ms);
/* Signals sent to us (INT, TERM, HUP, QUIT, USR1, USR2, WINCH) are meant
 * for the container process: pass them on. */
void hv_forward_signals_to (pid_t pid);
/* SIGKILL that process after `seconds` of wall clock. */
void hv_kill_after (unsigned seconds);
bool hv_time_limit_hit (void);
#endif
