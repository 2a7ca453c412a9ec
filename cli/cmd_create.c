/* create, start, run: the runc verbs over the container library */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "process_opts.h"
#include "utils.h"

enum
{
  OPT_BUNDLE = 1,
  OPT_NO_PIVOT,
  OPT_NO_NEW_KEYRING,
  OPT_NO_SUBREAPER,
  OPT_KEEP,
};

static const struct hv_opt create_opts[] = {
  HV_PROCESS_OPTIONS,
  { "bundle", 'b', true, OPT_BUNDLE },
  { "no-pivot", 0, false, OPT_NO_PIVOT },
  { "no-new-keyring", 0, false, OPT_NO_NEW_KEYRING },
  { "no-subreaper", 0, false, OPT_NO_SUBREAPER },
  { "keep", 0, false, OPT_KEEP },
  { NULL, 0, false, 0 },
};

static int
parse_create (const char *cmd, int argc, char **argv, struct hv_create_opts *o, bool *detach, bool *keep,
              hv_error **err)
{
  struct hv_opt_iter it = { argc, argv, 1, cmd };
  const char *arg;
  int id;
  struct hv_process_opts p = { 0 };
  memset (o, 0, sizeof (*o));
  while ((id = hv_opt_next (&it, create_opts, &arg, err)) > 0)
    switch (id)
      {
      case OPT_BUNDLE:
        o->bundle = arg;
        break;
      case OPT_NO_PIVOT:
        o->no_pivot = hv_opt_bool (arg);
        break;
      case OPT_NO_NEW_KEYRING:
        o->no_new_keyring = hv_opt_bool (arg);
        break;
      case OPT_KEEP:
        if (keep)
          *keep = hv_opt_bool (arg);
        break;
      case HV_PROC_OPT_DETACH:
        if (detach == NULL)
          return hv_error_set (err, 0, "%s: unknown option --detach", cmd);
        /* fall through */
      default:
        if (hv_process_opt (cmd, id, arg, &p, err) < 0)
          return -1;
        break;
      }
  if (id < 0)
    return -1;
  o->pid_file = p.pid_file;
  o->console_socket = p.console_socket;
  o->preserve_fds = p.preserve_fds;
  if (detach)
    *detach = p.detach;
  if (cli_require_id (cmd, &it, &o->id, err) < 0)
    return -1;
  return 0;
}

int
cmd_create (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  struct hv_create_opts o;
  cleanup_container hv_container *c = NULL;
  if (parse_create ("create", argc, argv, &o, NULL, NULL, err) < 0)
    return -1;
  return hv_container_create (&g->rt, &o, &c, NULL, err);
}

int
cmd_start (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  static const struct hv_opt opts[] = { { NULL, 0, false, 0 } };
  struct hv_opt_iter it = { argc, argv, 1, "start" };
  const char *arg, *id;
  cleanup_container hv_container *c = NULL;
  if (hv_opt_next (&it, opts, &arg, err) < 0 || cli_require_id ("start", &it, &id, err) < 0)
    return -1;
  if (hv_container_load (&g->rt, id, &c, err) < 0)
    return -1;
  return hv_container_start (&g->rt, c, err);
}

int
cmd_run (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  struct hv_run_opts o = { .after_runtime_died = { NULL, NULL, -1 } };
  struct hv_guard guard;
  if (parse_create ("run", argc, argv, &o.create, &o.detach, &o.keep, err) < 0)
    return -1;
  return hv_container_run (&g->rt, &o, &guard, &g->exit_status, err);
}
