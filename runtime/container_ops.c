/* start and destroy: the lifecycle steps after create. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_systemd.h"
#include "container.h"
#include "container_monitor.h"
#include "egress_netns_record.h"
#include "fault_point.h"
#include "hooks.h"
#include "log.h"
#include "utils.h"

int
hv_container_load_config (const hv_container *c, oci_spec **out, hv_error **err)
{
  cleanup_free char *path = xasprintf ("%s/config.json", c->dir);
  return oci_spec_load (path, path, out, err);
}

int
hv_container_start (const struct hv_runtime *rt, hv_container *c, hv_error **err)
{
  (void) rt;
  enum hv_status st = hv_container_status (c);
  if (st != HV_STATUS_CREATED)
    {
      if (st == HV_STATUS_STOPPED)
        return hv_error_set (err, 0, "container not running");
      return hv_error_set (err, 0, "cannot start a container that is %s", hv_status_name (st));
    }
  cleanup_spec oci_spec *spec = NULL;
  if ((!c->hooks_known || c->has_poststart) && hv_container_load_config (c, &spec, err) < 0)
    return -1;
  hv_fault_point ("start.config-loaded");
  cleanup_free char *fifo_path = xasprintf ("%s/exec.fifo", c->dir);
  /* Init holds the fifo open read-write, close-on-exec, and blocks reading
   * it.  A reader opened here before our writer sees POLLHUP once every
   * writer is gone: ours after the release byte, init's at its execve.  So
   * start returns (and poststart runs) only when the user process runs. */
  cleanup_close int reader = open (fifo_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (reader < 0)
    {
      if (errno == ENOENT)
        return hv_error_set (err, 0, "container not running");
      return hv_error_set (err, errno, "open %s", fifo_path);
    }
  {
    cleanup_close int writer = open (fifo_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer < 0)
      return hv_error_set (err, errno, "open %s", fifo_path);
    if (write (writer, "0", 1) != 1)
      return hv_error_set (err, errno, "release container init");
    hv_fault_point ("start.init-released");
  }
  unlink (fifo_path);
  hv_fault_point ("start.fifo-removed");
  struct pollfd pfd = { .fd = reader, .events = 0 };
  while (poll (&pfd, 1, -1) < 0 && errno == EINTR)
    ;
  hv_fault_point ("start.process-running");
  if (spec == NULL)
    return 0; /* no poststart hooks (hooks_known) */
  cleanup_free char *json = hv_container_state_json (c, HV_STATUS_RUNNING, false);
  if (hv_hooks_run (&spec->hooks.poststart, "poststart", json, err) < 0)
    {
      /* Spec: a failing poststart hook is logged; the container runs on. */
      hv_log (HV_LOG_WARNING, "%s", (*err)->msg);
      hv_error_free (err);
    }
  return 0;
}

int
hv_container_destroy (const struct hv_runtime *rt, hv_container *c, hv_error **err)
{
  (void) rt;
  cleanup_spec oci_spec *spec = NULL;
  cleanup_error hv_error *cfg_err = NULL;
  if (c->bundle && (!c->hooks_known || c->has_poststop))
    hv_container_load_config (c, &spec, &cfg_err);
  /* The driver recorded at create decides, whatever this delete's flags:
   * Docker and Podman do not always repeat --systemd-cgroup. */
  if (c->cgroup_path && c->cgroup_path[0]
      && (c->systemd_cgroup ? hv_systemd_destroy (c->cgroup_path, err) : hv_cgroup_destroy (c->cgroup_path, err)) < 0)
    return hv_error_wrap (err, "delete %s", c->id);
  hv_fault_point ("delete.cgroup-removed");
  /* The container's processes are gone: its egress table may go too,
   * where its network namespace outlives it.  A table left there is
   * stricter, never looser: a warning, and delete goes on. */
  cleanup_error hv_error *egress_err = NULL;
  if (hv_egress_netns_cleanup (c->dir, &egress_err) < 0)
    hv_log (HV_LOG_WARNING, "delete %s: %s", c->id, egress_err->msg);
  if (spec && spec->hooks.poststop.n)
    {
      cleanup_free char *json = hv_container_state_json (c, HV_STATUS_STOPPED, false);
      cleanup_error hv_error *hook_err = NULL;
      /* Spec: poststop failures are logged and delete goes on. */
      if (hv_hooks_run (&spec->hooks.poststop, "poststop", json, &hook_err) < 0)
        hv_log (HV_LOG_WARNING, "%s", hook_err->msg);
    }
  /* The audit monitor writes its exit record and goes; its trail stays. */
  if (hv_monitor_stop (c->dir, err) < 0)
    return hv_error_wrap (err, "delete %s", c->id);
  hv_fault_point ("delete.monitor-stopped");
  return hv_state_remove (c->dir, err);
}
