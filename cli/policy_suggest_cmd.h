/* `haven policy suggest [--from TRAIL] [--run ID] [--base BASE] [-o FILE]`:
 * the records of one learn run read back from a trail and turned into a
 * policy (policy_suggest.h), which is loaded once more before it is
 * printed or written, so that what comes out always loads. */
#ifndef HAVEN_POLICY_SUGGEST_CMD_H
#define HAVEN_POLICY_SUGGEST_CMD_H

#include "error.h"

/* argv[0] is "suggest". */
int hv_policy_suggest_cmd (int argc, char **argv, hv_error **err);
#endif
