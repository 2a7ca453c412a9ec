/* Command-line plumbing shared by the subcommands (one file per command,
 * cli/cmd_*.c). */
#ifndef HAVEN_CLI_H
#define HAVEN_CLI_H

#include <stdbool.h>

#include "error.h"
#include "gateway_route.h"
#include "runtime.h"

/* haven-runc's global options.  rt is what the runtime library gets
 * (runtime/include/runtime.h); its config filter applies the policies below
 * (config_policy.h). */
struct hv_global
{
  struct hv_runtime rt;
  const char *log;
  bool log_json;
  bool debug;
  const char *policy;   /* --policy: a haven policy applied to every config */
  bool policy_lock;     /* --policy-lock: refuse run.haven.policy annotations */
  /* --api-key PROVIDER=FILE, by hv_gw_provider (NULL: none): the file
   * holding the provider's key, for the model API gateway of containers
   * whose policy has credentials.api for it (engine_api_key.h). */
  const char *api_keys[HV_GW_N_PROVIDERS];
  /* Exit status requested by a command that ran a process (run, exec):
   * commands set it and return 0. */
  int exit_status;
};

struct hv_opt
{
  const char *name; /* long name without dashes */
  char short_name;  /* 0 if none */
  bool has_arg;
  int id;
};

struct hv_opt_iter
{
  int argc;
  char **argv;
  int index; /* next argv element to look at */
  const char *cmd;
};

/* Returns the option id, 0 when options end (it->index then points at the
 * first positional argument), -1 on an unknown option or missing value.
 * Accepts --name value, --name=value, -name value and -x value; "--" ends
 * options; parsing stops at the first positional argument so that
 * "exec ID cmd --flag" passes --flag to cmd. */
int hv_opt_next (struct hv_opt_iter *it, const struct hv_opt *opts, const char **arg, hv_error **err);
/* "true"/"false" style optional boolean values after --flag=. */
bool hv_opt_bool (const char *arg);

typedef int (*hv_command_fn) (struct hv_global *g, int argc, char **argv, hv_error **err);

int cmd_create (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_start (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_run (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_state (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_kill (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_delete (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_list (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_ps (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_exec (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_spec (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_features (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_pause (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_resume (struct hv_global *g, int argc, char **argv, hv_error **err);
int cmd_update (struct hv_global *g, int argc, char **argv, hv_error **err);

/* The `haven` front end (same binary, invoked as "haven"). */
int haven_main (int argc, char **argv);

/* Exactly one positional argument (the container id) is expected. */
int cli_require_id (const char *cmd, struct hv_opt_iter *it, const char **id, hv_error **err);
#endif
