/* The per-container monitor: an audit trail for containers that the
 * runtime creates for an engine (Docker, Podman), where the runtime
 * exits after each verb and nothing else would be left to listen.
 *
 * What a config asks for (the runtime knows nothing of policies; haven-
 * runc's policy filter asks for it for every policed container):
 *   annotations["run.haven.audit"]   "default": the trail is
 *       /var/log/haven/containers/<id>.jsonl (root) or
 *       $XDG_STATE_HOME/haven/containers/<id>.jsonl (~/.local/state
 *       without XDG_STATE_HOME) for anyone else, root of a rootless
 *       engine's user namespace included (hv_root_of_user_namespace:
 *       the user, who cannot write /var/log); or an absolute path, no
 *       symbolic link on the way.  Missing directories are made 0700, the
 *       trail 0600; it is appended to and survives delete.  The
 *       annotation is as trusted as the rest of the config (whoever
 *       writes a config can already bind the host's / into a container).
 *   linux.seccomp.listenerPath      absent: create points it at the
 *       monitor, <state dir>/monitor.sock (what exec then reads from the
 *       saved config).  Another listener is refused.
 *   linux.seccomp.listenerMetadata  the records' "policy" (may be absent).
 * The profile's SCMP_ACT_NOTIFY rules are the calls that are recorded;
 * the monitor answers each one EPERM.
 *
 * Lifetime: create starts it before init (a double fork: its own session,
 * the runtime's cgroup and namespaces, not the container's, no fd of the
 * runtime but its own three, not dumpable) and hands it a pidfd of init
 * once init is ready.  It records {"event":"start"}, one record per
 * denied call of init or of any `exec` process (every exec loads the
 * container's filter again and sends its listener fd here), and
 * {"event":"exit","reason":"init exited" | "deleted"} when init dies or
 * delete (--force too) stops it; then it removes its socket and exits.
 * delete waits for it and kills it if it does not end.  The records and
 * their limits are audit_monitor.h's, plus "container" (the id),
 * "process" ("init": init or its descendants; "exec": a process exec
 * started, or its descendants) and, for a Kubernetes pod's containers,
 * "pod" (audit_trail.h's struct hv_audit_pod, from oci/pod_identity.h).
 *
 * Fail closed: if the monitor is gone, the kernel answers every notifying
 * call ENOSYS (never runs it), and exec refuses to start (it cannot
 * connect).
 *
 * The monitor is an epoll loop over sources (monitor_loop.c); the seccomp
 * listener is one; with egress, the resolver and the denial listener
 * are others (monitor_egress.h).  With run.haven.git-credentials the
 * monitor also serves the git credential broker (git_broker.h), in
 * threads of its own; it is started for it whether or not the config
 * asks for a trail. */
#ifndef HAVEN_CONTAINER_MONITOR_H
#define HAVEN_CONTAINER_MONITOR_H

#include <sys/types.h>

#include "egress_sandbox.h"
#include "error.h"
#include "oci_spec.h"

/* The annotations' names are oci/haven_annotations.h's.
 * annotations["run.haven.timeout"]  whole seconds (1 to a year): the
 *     monitor kills init with SIGKILL that long after create handed it
 *     over (in the container's own pid namespace that ends every
 *     process), recording {"event":"timeout"} first.  Needs the monitor
 *     (run.haven.audit); create fails otherwise.
 * annotations["run.haven.git-guard"]  absolute host directories, one a
 *     line (the projects an engine binds in): create records what git
 *     would execute in each (project_guard.h) before init exists, and the
 *     monitor, once every process of the container is gone, quarantines
 *     what the container created or changed there, reporting each item in
 *     the trail ({"event":"git_guard","message":...}).  delete waits for
 *     that check (at most HV_MONITOR_CHECK_WAIT_S seconds).  While the
 *     container runs, the monitor checks a project at once when a name
 *     git reads appears where it watches (monitor_git.h).  Needs the
 *     monitor (run.haven.audit); create fails otherwise. */
#define HV_MONITOR_CHECK_WAIT_S 120
#define HV_MONITOR_SOCKET "monitor.sock"
#define HV_MONITOR_PID_FILE "monitor.pid"

/* create's handle on the monitor it started. */
struct hv_monitor
{
  int pidfd;   /* of the monitor, -1: none started */
  int control; /* create's end of the control socket, -1 once init is handed over */
  int trail_dir;    /* a trail this create made: its directory, or -1 */
  char *trail_name; /* ... and its name there */
};
#define HV_MONITOR_INIT { -1, -1, -1, NULL }

/* Does the config ask for a monitor? */
const char *hv_monitor_trail_request (const oci_spec *spec);

/* Step 1 of create, before anything is made: with the annotation, point
 * linux.seccomp.listenerPath at the monitor's socket in state_dir,
 * rewriting *text and *spec (name names the config in errors). */
int hv_monitor_prepare_config (const char *state_dir, const char *name, char **text, oci_spec **spec,
                               hv_error **err);
/* Step 2, once the state directory exists and before init is cloned:
 * open the trail, listen, start the monitor and write <dir>/monitor.pid.
 * Does nothing without the annotation.  egress_trail_fd (above 2, or 0):
 * with egress and no trail of the config's, the monitor's egress records
 * go there (hv_create_opts.egress_trail_fd).  notice_fd (above 2, or
 * 0): with egress, a copy goes to the monitor for the first refused
 * name's line (hv_create_opts.notice_fd). */
/* The container a monitor watches, as create knows it by then. */
struct hv_monitor_target
{
  const char *id;
  const char *dir;    /* its state directory: the monitor's socket and pid file go there */
  const char *bundle;
  /* A service's sandbox (hv_create_opts.trail_sandbox): the borrowed
   * trail's records name it, or NULL. */
  const char *sandbox;
  /* haven run's or a service sandbox's run id (hv_create_opts.trail_run):
   * the borrowed trail's records name it ("run"), or NULL.  An engine
   * container's monitor makes its own, at create. */
  const char *run;
  /* Secrets the monitor's services need (hv_create_opts.service_secrets):
   * the monitor gets its copy by fork. */
  const struct hv_service_secret *service_secrets;
  size_t n_service_secrets;
  /* run.haven.gateway's parsed annotation and the key of each of its
   * apis, in its order (the monitor gets them by fork), or NULL. */
  const struct hv_gw_config *gateway;
  const char *const *gateway_keys;
};
int hv_monitor_start (const struct hv_monitor_target *c, const oci_spec *spec, int egress_trail_fd, int notice_fd,
                      struct hv_monitor *m, hv_error **err);
/* Step 2b, egress (run.haven.egress; the monitor is started for it
 * whether or not the config asks for a trail): hand the monitor the
 * annotation, init's network namespace and the resolver's listening
 * sockets, which are the monitor's from then on (closed here). */
int hv_monitor_pass_egress (struct hv_monitor *m, struct hv_egress_sandbox *s, hv_error **err);
/* Step 2c, the gateway (run.haven.gateway; the monitor is started for it
 * whether or not the config asks for a trail): hand the monitor the
 * listener of api NAME, made in the sandbox's network namespace
 * (gateway_sandbox.h); *fd is the monitor's from then on (closed here). */
int hv_monitor_pass_gateway (struct hv_monitor *m, const char *name, int *fd, hv_error **err);
/* Step 3, init ready: hand the monitor a pidfd of init (pid, started at
 * start_time), which it records and watches. */
int hv_monitor_attach_init (struct hv_monitor *m, pid_t pid, unsigned long long start_time, hv_error **err);
/* create failed or is done: close create's handle.  With abort, end the
 * monitor (it writes nothing: there was no container) and remove the
 * trail if this create made it. */
void hv_monitor_release (struct hv_monitor *m, bool abort);

/* delete: stop the monitor of the container whose state is in dir, if
 * one runs (it writes its exit record), and wait until it is gone. */
int hv_monitor_stop (const char *dir, hv_error **err);

/* The trail's default place for container id (a new string), or NULL
 * with *err. */
char *hv_monitor_default_trail (const char *id, hv_error **err);
#endif
