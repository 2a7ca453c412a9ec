/* The options that create, run and exec share (the verbs that start a
 * process): one table and one parser, so the verbs cannot drift apart in
 * how they read them.  A verb puts HV_PROCESS_OPTIONS in its own option
 * table and hands every id it does not know to hv_process_opt. */
#ifndef HAVEN_PROCESS_OPTS_H
#define HAVEN_PROCESS_OPTS_H

#include <stdbool.h>

#include "cli.h"

enum
{
  /* Far above any verb's own ids. */
  HV_PROC_OPT_PID_FILE = 1000,
  HV_PROC_OPT_CONSOLE_SOCKET,
  HV_PROC_OPT_PRESERVE_FDS,
  HV_PROC_OPT_DETACH,
};

#define HV_PROCESS_OPTIONS                                                                                            \
  { "pid-file", 0, true, HV_PROC_OPT_PID_FILE }, { "console-socket", 0, true, HV_PROC_OPT_CONSOLE_SOCKET },           \
      { "preserve-fds", 0, true, HV_PROC_OPT_PRESERVE_FDS }, { "detach", 'd', false, HV_PROC_OPT_DETACH }

struct hv_process_opts
{
  const char *pid_file;
  const char *console_socket;
  int preserve_fds; /* 0 to 65536 */
  bool detach;
};

/* Returns 1 when id is one of HV_PROCESS_OPTIONS (its value stored in
 * *o), 0 when it is not, -1 with *err on a bad value. */
int hv_process_opt (const char *cmd, int id, const char *arg, struct hv_process_opts *o, hv_error **err);
#endif
