/* CVE-2019-5736: a container process that can open the runtime's
 * /proc/PID/exe could overwrite the host binary.  Commands that enter a
 * container first re-execute themselves from a sealed memfd copy: the
 * binary a container could ever reach is an immutable anonymous file. */
#ifndef HAVEN_SELF_EXE_H
#define HAVEN_SELF_EXE_H

#include "error.h"

/* Returns 0 when already running from a sealed copy; otherwise execs the
 * copy (and only returns on failure). */
int hv_ensure_sealed_self (char **argv, hv_error **err);
#endif
