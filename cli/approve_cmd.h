/* `haven approve [--json] [ID once|run|always|deny]` (approve_cmd.c):
 * the requests the resolver holds for names a policy marks `ask`
 * (session/approvals.h), listed, asked about on a terminal, or answered. */
#ifndef HAVEN_APPROVE_CMD_H
#define HAVEN_APPROVE_CMD_H

#include "error.h"

/* argv[0] is "approve". */
int hv_cmd_approve (int argc, char **argv, hv_error **err);
#endif
