/* kill, delete, pause, resume: the runc verbs over the container library */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "signals.h"
#include "state.h"

int
cmd_kill (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  static const struct hv_opt opts[] = { { "all", 'a', false, 1 }, { NULL, 0, false, 0 } };
  struct hv_opt_iter it = { argc, argv, 1, "kill" };
  const char *arg;
  bool all = false;
  int id;
  cleanup_container hv_container *c = NULL;
  while ((id = hv_opt_next (&it, opts, &arg, err)) > 0)
    all = hv_opt_bool (arg);
  if (id < 0)
    return -1;
  int remaining = argc - it.index;
  if (remaining < 1 || remaining > 2)
    return hv_error_set (err, 0, "kill: usage: kill [--all] ID [SIGNAL]");
  int sig = remaining == 2 ? hv_parse_signal (argv[it.index + 1], err) : SIGTERM;
  if (sig < 0)
    return -1;
  if (hv_container_load (&g->rt, argv[it.index], &c, err) < 0)
    return -1;
  return hv_container_kill (&g->rt, c, sig, all, err);
}

int
cmd_delete (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  static const struct hv_opt opts[] = { { "force", 'f', false, 1 }, { NULL, 0, false, 0 } };
  struct hv_opt_iter it = { argc, argv, 1, "delete" };
  const char *arg, *cid;
  bool force = false;
  int id;
  cleanup_container hv_container *c = NULL;
  while ((id = hv_opt_next (&it, opts, &arg, err)) > 0)
    force = hv_opt_bool (arg);
  if (id < 0 || cli_require_id ("delete", &it, &cid, err) < 0)
    return -1;
  if (hv_container_load (&g->rt, cid, &c, err) < 0)
    {
      /* As runc: engines clean up with delete --force after a create that
       * failed (and left nothing), and print whatever we say. */
      if (force && strcmp ((*err)->msg, "container does not exist") == 0)
        {
          hv_error_free (err);
          return 0;
        }
      return -1;
    }
  return hv_container_delete (&g->rt, c, force, err);
}

static int
pause_resume (struct hv_global *g, const char *cmd, bool freeze, int argc, char **argv, hv_error **err)
{
  static const struct hv_opt opts[] = { { NULL, 0, false, 0 } };
  struct hv_opt_iter it = { argc, argv, 1, cmd };
  const char *arg, *id;
  cleanup_container hv_container *c = NULL;
  if (hv_opt_next (&it, opts, &arg, err) < 0 || cli_require_id (cmd, &it, &id, err) < 0)
    return -1;
  if (hv_container_load (&g->rt, id, &c, err) < 0)
    return -1;
  return hv_container_pause (&g->rt, c, freeze, err);
}

int
cmd_pause (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  return pause_resume (g, "pause", true, argc, argv, err);
}

int
cmd_resume (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  return pause_resume (g, "resume", false, argc, argv, err);
}
