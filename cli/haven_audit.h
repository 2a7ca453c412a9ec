/* `haven audit [--since TIME] [--event EVENT] [--container ID] [--json]
 * [FILE...]` and `haven audit --verify [--json] [FILE...]` (haven_audit.c). */
#ifndef HAVEN_AUDIT_H
#define HAVEN_AUDIT_H

#include "error.h"

/* argv[0] is "audit".  *exit_status: the command's when it returns 0
 * (--verify: 1 when a chain is broken, 2 when a trail cannot be read). */
int hv_cmd_audit (int argc, char **argv, int *exit_status, hv_error **err);
#endif
