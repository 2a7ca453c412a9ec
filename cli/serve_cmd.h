/* `haven serve`: parse its options, run the service. */
#ifndef HAVEN_SERVE_CMD_H
#define HAVEN_SERVE_CMD_H

#include "error.h"

int hv_cmd_serve (int argc, char **argv, const char *haven_argv0, hv_error **err);

#endif
