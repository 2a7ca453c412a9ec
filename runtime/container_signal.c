/* kill, delete, pause and resume: signals and the freezer for a container
 * that exists. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "container.h"
#include "container_monitor.h"
#include "create_record.h"
#include "egress_netns_record.h"
#include "log.h"
#include "fault_point.h"
#include "signals.h"
#include "utils.h"

static int
signal_container (const hv_container *c, int sig, bool all, hv_error **err)
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
hv_container_kill (const struct hv_runtime *rt, const hv_container *c, int sig, bool all, hv_error **err)
{
  (void) rt;
  enum hv_status st = hv_container_status (c);
  if (st == HV_STATUS_STOPPED || st == HV_STATUS_CREATING)
    {
      if (all && c->cgroup_path[0])
        return signal_container (c, sig, true, err);
      return hv_error_set (err, 0, "container not running");
    }
  return signal_container (c, sig, all, err);
}

static bool
exited_within (int pidfd, int ms)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  int r;
  do
    r = poll (&p, 1, ms);
  while (r < 0 && errno == EINTR);
  return r > 0;
}

/* init is exiting (hv_container_exiting) and has exited within 10 s. */
static bool
init_exits (const hv_container *c)
{
  if (c->pid <= 0)
    return false;
  /* The pidfd first: the exiting check then speaks of the process it
   * pins (start time checked), never of a reused pid. */
  cleanup_close int fd = (int) syscall (SYS_pidfd_open, c->pid, 0);
  if (fd < 0)
    return errno == ESRCH;
  /* The kernel takes SIGKILL off the pending set a moment before it sets
   * PF_EXITING: one short wait, and a second look, cover that. */
  if (!hv_container_exiting (c) && !exited_within (fd, 20) && !hv_container_exiting (c))
    return false;
  return exited_within (fd, 10000);
}

int
hv_container_delete (const struct hv_runtime *rt, hv_container *c, bool force, hv_error **err)
{
  const char *cid = c->id;
  enum hv_status st = hv_container_status (c);
  if (st == HV_STATUS_CREATING)
    {
      /* No state.json: a create still running, or one that died halfway
       * (then the directory is all that is left of it). */
      if (hv_state_being_created (c->dir))
        return hv_error_set (err, 0, "container %s is being created", cid);
      /* Its monitor, if it got one, ends by itself without create; make
       * sure.  Its init and cgroup, if it got that far, are recorded. */
      if (hv_monitor_stop (c->dir, err) < 0 || hv_create_record_undo (c->dir, err) < 0)
        return hv_error_wrap (err, "delete %s", cid);
      cleanup_error hv_error *egress_err = NULL;
      if (hv_egress_netns_cleanup (c->dir, &egress_err) < 0)
        hv_log (HV_LOG_WARNING, "delete %s: %s", cid, egress_err->msg);
      return hv_state_remove (c->dir, err);
    }
  /* runtime-spec: deleting anything but a stopped container is an error
   * (runc lets "created" through; the spec and crun do not). */
  if (st != HV_STATUS_STOPPED && !force)
    {
      /* A `kill` returns once the signal is sent, not once init is gone:
       * a fatal signal leaves it exiting for a while (its namespace's
       * other processes reaped, its memory freed; milliseconds, more
       * under load), and a fast `kill; delete` met that as "running"
       * (2 of 30 on 2 CPUs).  Such an init never runs its own code again:
       * it is stopped in all but the kernel's bookkeeping, so delete waits
       * for that, bounded.  A live init (one that caught the signal) is
       * still an error, as runtime-spec says. */
      if (!init_exits (c))
        return hv_error_set (err, 0, "cannot delete container %s that is not stopped: %s", cid, hv_status_name (st));
      st = HV_STATUS_STOPPED;
    }
  if (st != HV_STATUS_STOPPED && c->pid > 0 && hv_container_alive (c))
    {
      cleanup_error hv_error *ignored = NULL;
      /* The audit monitor first, so that its trail says the container was
       * deleted, not only that init died.  Until init is gone its calls
       * get ENOSYS from the kernel: still never allowed. */
      if (hv_monitor_stop (c->dir, err) < 0)
        return hv_error_wrap (err, "delete %s", cid);
      hv_fault_point ("delete.running-monitor-stopped");
      signal_container (c, SIGKILL, c->cgroup_path[0] != '\0', &ignored);
      hv_fault_point ("delete.killed");
      if (st == HV_STATUS_PAUSED)
        hv_cgroup_freeze (c->cgroup_path, false, NULL);
      if (hv_wait_exit (c->pid, 10000) < 0)
        return hv_error_set (err, 0, "delete %s: init did not exit after SIGKILL", cid);
    }
  return hv_container_destroy (rt, c, err);
}

int
hv_container_pause (const struct hv_runtime *rt, const hv_container *c, bool freeze, hv_error **err)
{
  (void) rt;
  const char *cmd = freeze ? "pause" : "resume";
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
hv_container_pids (const hv_container *c, pid_t **pids, size_t *n, hv_error **err)
{
  return hv_cgroup_pids (c->cgroup_path, pids, n, err);
}
