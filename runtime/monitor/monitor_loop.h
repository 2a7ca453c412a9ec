/* The per-container monitor process (container_monitor.h says what it
 * is for): an epoll loop over sources, each an fd and what to do when it
 * is ready.  Today's sources: the control socket from create, the
 * seccomp listener socket and the connections on it, one seccomp notify
 * fd per filter loaded (init's, each exec's), a pidfd of init, and a
 * signalfd (delete's SIGTERM), and with egress the resolver's
 * and the denial listener's epoll fds (monitor_egress.h). */
#ifndef HAVEN_MONITOR_LOOP_H
#define HAVEN_MONITOR_LOOP_H

#include "audit_trail.h"
#include "oci_spec.h"
#include "project_guard.h"

/* Control messages (hv_sync_send over a SOCK_SEQPACKET pair):
 *   monitor -> create  HV_SYNC_READY, payload its pid, fd a pidfd of itself
 *   create -> monitor  HV_SYNC_GO, payload init's pid, fd a pidfd of init
 * then create closes its end; a close before GO means create failed. */

struct hv_monitor_args
{
  const char *id;
  const char *policy;      /* the records' "policy" ("" when the config names none) */
  const struct hv_audit_pod *pod; /* the records' "pod" (audit_trail.h), or NULL */
  const char *bundle;      /* for the start record */
  const char *socket_path; /* the listener's, removed at the end */
  const oci_strv *command; /* init's, for the start record */
  int listen_fd;           /* the seccomp listener socket, or -1 */
  int control_fd;
  int trail_fd;
  unsigned timeout_s;      /* kill init this long after GO; 0: never */
  /* Egress: the host file the config binds on /etc/resolv.conf (the
   * engine's), or NULL; read for the resolver's upstreams. */
  const char *resolv_conf;
  /* Egress: the run.haven.ask annotation (egress_ask.h), or NULL. */
  const char *ask;
  /* haven run's stderr, for the first refused name's line
   * (egress_notice.h), or -1. */
  int notice_fd;
  /* The trail is another's (haven run's): no start or exit record. */
  bool borrowed_trail;
  /* A borrowed trail's: the service's sandbox id its records name, or NULL. */
  const char *sandbox;
  /* The records' "run": the run id (audit_trail.h), or NULL. */
  const char *run;
  /* The run.haven.landlock.audit annotation, or NULL: Landlock's refusals
   * of init's domain go into the trail (landlock_audit.h). */
  const char *landlock_audit;
  /* The run.haven.denials annotation, or NULL: the table that explains
   * denial records and the run's view of them (denial_explain.h,
   * denial_view.h). */
  const char *denials;
  /* run.haven.git-guard: the projects' snapshots, taken by create before
   * init existed; checked once every process of the container is gone
   * (init exited, or delete removed the cgroup and sent SIGTERM). */
  struct hv_project_guard **git_guards;
  size_t n_git_guards;
  /* The container has no pid namespace of its own: its processes can
   * outlive init, so the check waits for delete's SIGTERM. */
  bool check_after_delete;
  /* Their live watch (monitor_git.h), made by the monitor before it told
   * create it is ready, or NULL. */
  struct hv_monitor_git *git_watch;
  /* run.haven.git-credentials: the broker, its socket listening (git_broker.h), or NULL. */
  struct hv_git_broker *git_broker;
  /* run.haven.gateway (monitor_gateway.h): the parsed annotation and each
   * api's key (this process's copy, made by fork: never in a file), or
   * NULL; the gateway with its TLS context, made by the monitor before it
   * told create it is ready.  The listeners come over the control socket
   * ("gateway NAME") and are served from GO. */
  const struct hv_gw_config *gateway;
  const char *const *gateway_keys;
  struct hv_monitor_gateway *gateway_live;
  /* run.haven.ssh-agent-view: the view, its socket listening
   * (ssh_agent_service.h), or NULL. */
  struct hv_ssh_agent_service *ssh_view;
};

/* The monitor: never returns. */
__attribute__ ((noreturn)) void hv_monitor_main (const struct hv_monitor_args *a);
#endif
