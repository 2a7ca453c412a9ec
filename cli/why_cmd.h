/* `haven why [-n N] [--json]` (why_cmd.c): inside a sandbox, the run's
 * last denials, what refused each one and the policy line that would
 * allow it. */
#ifndef HAVEN_WHY_CMD_H
#define HAVEN_WHY_CMD_H

/* argv[0] is "why".  Returns the exit status: 0 (denials or none), 1
 * outside a sandbox, 2 on bad options. */
int hv_cmd_why (int argc, char **argv);
#endif
