/* `haven audit [--since TIME] [--event EVENT] [--container ID] [--json]
 * [FILE...]` (haven_audit.c). */
#ifndef HAVEN_AUDIT_H
#define HAVEN_AUDIT_H

#include "error.h"

/* argv[0] is "audit". */
int hv_cmd_audit (int argc, char **argv, hv_error **err);
#endif
