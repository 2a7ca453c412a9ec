/* kill, delete, pause, resume */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "cli.h"
#include "container.h"
#include "signals.h"
#include "state.h"

static int
signal_container (hv_container *c, int sig, bool all, hv_error **err)
{
  if (all && c->cgroup_path[0])
    {
      cleanup_free pid_t *pids = NULL;
      size_t n = 0;
      if (hv_cgroup_pids (c->cgroup_path, &pids, &n, err) < 0)
        return -1;
      for (size_t i = 0; i < n; i++)
        kill (pids[i], sig);
      return 0;
    }
  /* A pidfd pins the process: no signal reaches a recycled pid. */
  int fd = (int) syscall (SYS_pidfd_open, c->pid, 0);
  if (fd < 0)
    return hv_error_set (err, 0, "container not running");
  if (!hv_container_alive (c))
    {
      close (fd);
      return hv_error_set (err, 0, "container not running");
    }
  int r = (int) syscall (SYS_pidfd_send_signal, fd, sig, NULL, 0);
  int e = errno;
  close (fd);
  if (r < 0)
    return hv_error_set (err, e, "kill container %s", c->id);
  return 0;
}

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
  enum hv_status st = hv_container_status (c);
  if (st == HV_STATUS_STOPPED || st == HV_STATUS_CREATING)
    {
      if (all && c->cgroup_path[0])
        return signal_container (c, sig, true, err);
      return hv_error_set (err, 0, "container not running");
    }
  return signal_container (c, sig, all, err);
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
  enum hv_status st = hv_container_status (c);
  if (st == HV_STATUS_CREATING)
    {
      /* No state.json: a create still running, or one that died halfway
       * (then the directory is all that is left of it). */
      if (hv_state_being_created (c->dir))
        return hv_error_set (err, 0, "container %s is being created", cid);
      return hv_state_remove (c->dir, err);
    }
  /* runtime-spec: deleting anything but a stopped container is an error
   * (runc lets "created" through; the spec and crun do not). */
  if (st != HV_STATUS_STOPPED && !force)
    return hv_error_set (err, 0, "cannot delete container %s that is not stopped: %s", cid, hv_status_name (st));
  if (st != HV_STATUS_STOPPED && c->pid > 0 && hv_container_alive (c))
    {
      cleanup_error hv_error *ignored = NULL;
      signal_container (c, SIGKILL, c->cgroup_path[0] != '\0', &ignored);
      if (st == HV_STATUS_PAUSED)
        hv_cgroup_freeze (c->cgroup_path, false, NULL);
      if (hv_wait_exit (c->pid, 10000) < 0)
        return hv_error_set (err, 0, "delete %s: init did not exit after SIGKILL", cid);
    }
  return hv_container_destroy (&g->rt, c, err);
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
  enum hv_status st = hv_container_status (c);
  if (freeze && st != HV_STATUS_RUNNING && st != HV_STATUS_CREATED)
    return hv_error_set (err, 0, "container not running");
  if (!freeze && st != HV_STATUS_PAUSED)
    return hv_error_set (err, 0, "container not paused");
  if (c->cgroup_path[0] == '\0')
    return hv_error_set (err, 0, "%s: container has no cgroup", cmd);
  return hv_cgroup_freeze (c->cgroup_path, freeze, err);
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
