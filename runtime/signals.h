#ifndef HAVEN_SIGNALS_H
#define HAVEN_SIGNALS_H
#include "error.h"
/* "KILL", "SIGKILL", "kill" or "9" -> 9 */
int hv_parse_signal (const char *s, hv_error **err);
/* Wait up to timeout_ms for pid to exit (pidfd poll); 0 when it did. */
int hv_wait_exit (int pid, int timeout_ms);
#endif
