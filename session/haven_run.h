/* `haven run`: one sandboxed command on the workstation.  The policy is
 * compiled into a bundle (the host's root read-only, the project
 * writable) that the runtime library runs in this same process; around
 * it, the project guard, the audit monitor and the run guard. */
#ifndef HAVEN_HAVEN_RUN_H
#define HAVEN_HAVEN_RUN_H

#include <stdbool.h>

#include "direct_run.h"
#include "error.h"

struct hv_session_opts
{
  const char *policy;      /* name or file */
  const char *project;     /* NULL: the current directory */
  bool keep_bundle;        /* leave the bundle for inspection */
  char **cmd;              /* the command, NULL-terminated, not empty */
  const char *haven_argv0; /* how haven was invoked (run_trust.h checks it too) */
  enum hv_isolation isolation; /* --isolation (direct_run.h) */
  bool learn;                  /* --learn (run_learn.h) */
};

/* Returns -1 with *err when the sandbox could not run or the project
 * guard could not quarantine something; otherwise 0 with *exit_status the
 * command's status as a shell reports it. */
int hv_session_run (const struct hv_session_opts *o, int *exit_status, hv_error **err);
#endif
