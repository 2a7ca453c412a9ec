/* Container lifecycle: create (parent side in container_create.c, the
 * init process's side in container_init.c), start, exec. */
#ifndef HAVEN_CONTAINER_H
#define HAVEN_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "runtime.h"
#include "error.h"
#include "namespaces.h"
#include "oci_spec.h"
#include "run_guard.h"
#include "state.h"

/* Secrets a monitor service needs (haven run: read by the session, given to the
 * monitor by fork, never written to the config, an annotation or a file). */
struct hv_service_secret
{
  const char *service;  /* "api:anthropic", "api:openai", "api:gemini", "git:HOST" */
  const char *username; /* git only, or NULL */
  const char *secret;
};

struct hv_create_opts
{
  const char *id;
  const char *bundle;
  const char *pid_file;
  const char *console_socket;
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;
  bool keep_child_reapable; /* run in the foreground: we wait for init */
  int *console_master;      /* run without --console-socket: keep the pty master here */
  bool die_with_runtime;    /* haven run: init keeps PR_SET_PDEATHSIG after ready */
  /* Egress with "connect": "pasta" (haven run): gives the sandbox's
   * network namespace (netns_fd, init's) its way out.  egress_connect
   * starts it, called once the egress table is in place; egress_ready
   * (same data) returns once the way out works, called before any hook
   * runs when the config has hooks, otherwise once init is ready: before
   * create returns, so before start can let the process run, and after
   * init's own set-up, which the way out's start-up overlaps.  Either
   * failing fails create.  NULL: no way out (loopback only). */
  int (*egress_connect) (void *data, pid_t init_pid, int netns_fd, hv_error **err);
  int (*egress_ready) (void *data, hv_error **err);
  void *egress_connect_data;
  /* Egress with "connect": "pasta", the way out being haven's forwarder
   * instead (egress_way.h, egress_forward.h): the namespace gets routes
   * on lo and the forwarder's listeners, the monitor serves them;
   * egress_connect is then not called. */
  bool egress_forward;
  /* haven run with an audit trail: its log's fd (above 2; 0: none).  The
   * monitor writes the egress records (dns-refused, net-denied) there,
   * and no start or exit record of its own (the session writes those). */
  int egress_trail_fd;
  /* ... and a service's sandbox: its id, which those records name
   * ("sandbox", audit_trail.h), or NULL. */
  const char *trail_sandbox;
  /* ... and the run id (audit_trail.h) those records name ("run"), as
   * the session's own records do, or NULL. */
  const char *trail_run;
  /* haven run: where the monitor says, once, the first name the egress
   * resolver refused (egress_notice.h); above 2, 0: nowhere (engine
   * containers: their trail's dns-refused records say it). */
  int notice_fd;
  /* The config itself, when the caller has it in memory (haven run):
   * then the bundle needs no config.json (writing it, reading it back and
   * removing it was a file on disk per run); its relative paths are
   * still the bundle's.  NULL: read <bundle>/config.json. */
  const char *config_text;
  /* Secrets a monitor service needs (the git credential broker's tokens,
   * service "git:HOST"), in memory only. */
  const struct hv_service_secret *service_secrets;
  size_t n_service_secrets;
  /* Keeper mode (keeper.h): the sandbox's end of a SOCK_SEQPACKET
   * socketpair (above 2; 0: none).  Init does everything it does for
   * the config's process, then, instead of executing process.args (not
   * even resolved), serves this socket once started.  Not with a
   * terminal or preserve_fds: a command gets exactly its three stdio fds.
   * Create makes it close-on-exec (no hook or helper may hold it: the
   * keeper is known to be gone only once every copy is closed). */
  int keeper_fd;
  /* A descriptor of the caller's that init, a copy of the caller that
   * may outlive it without ever executing (a keeper), must not hold:
   * closed first thing in init (above 2; 0: none).  A service's maker
   * names its record's socket, whose hang-up tells the service that
   * the maker is gone. */
  int caller_only_fd;
};

/* What the init process needs; built by the parent before clone (the child
 * gets its own copy of the address space). */
struct hv_init_ctx
{
  const oci_spec *spec;
  const struct hv_create_opts *opts;
  struct hv_ns_plan *ns;
  const char *bundle;
  const char *rootfs;
  const char *state_dir;
  const char *cgroup_path;
  int sync_fd;        /* child's end */
  int fifo_fd;        /* exec fifo, read end (blocks until start) */
  int parent_sync_fd; /* closed by the child */
  bool terminal;      /* process.terminal and a console socket */
};

/* The init process: never returns. */
__attribute__ ((noreturn)) void hv_container_init (struct hv_init_ctx *ctx);

/* create + start, and in the foreground wait for the container's end. */
struct hv_run_opts
{
  struct hv_create_opts create;
  bool detach; /* return once started */
  bool keep;   /* leave the stopped container for delete */
  unsigned timeout_s; /* kill it after this many seconds (0: no limit) */
  /* With create.die_with_runtime: what the guard does once the sandbox is
   * gone when this process died before the run ended (run_guard.h).  When
   * fn is set, the guard is left running in *guard and the caller ends it
   * (hv_guard_stop) once it has done that work itself. */
  struct hv_guard_after after_runtime_died;
};
/* Returns -1 with *err, or 0 with *exit_status the container process's
 * status as a shell reports it (128+N for signal N; 124 past timeout_s). */
int hv_container_run (const struct hv_runtime *rt, const struct hv_run_opts *o, struct hv_guard *guard, int *exit_status,
                      hv_error **err);

/* Create the container; on success *out is its saved state and *pidfd
 * (if non-NULL) a pidfd of init.  On failure nothing is left behind. */
int hv_container_create (const struct hv_runtime *rt, const struct hv_create_opts *opts, hv_container **out, int *pidfd,
                         hv_error **err);
/* Release a created container (start). */
int hv_container_start (const struct hv_runtime *rt, hv_container *c, hv_error **err);
/* Remove a stopped container: poststop hooks, cgroup, state. */
int hv_container_destroy (const struct hv_runtime *rt, hv_container *c, hv_error **err);
/* exec: another process in a created or running container. */
struct hv_exec_opts
{
  const char *pid_file;
  const char *console_socket; /* required when the process has a terminal */
  bool detach;                /* return once it runs */
  bool ignore_paused;         /* exec into a paused (frozen) container */
  int preserve_fds;           /* fds 3..3+N-1 are passed on */
};
/* Run spec->process (the container's config with the caller's process)
 * in container c.  Returns -1 with *err, or 0 with *exit_status the
 * process's status as a shell reports it (0 with detach). */
int hv_container_exec (const struct hv_runtime *rt, const hv_container *c, oci_spec *spec,
                       const struct hv_exec_opts *o, int *exit_status, hv_error **err);
/* Signal init, or with all every process of its cgroup (also once init
 * is gone, to reach what is left). */
int hv_container_kill (const struct hv_runtime *rt, const hv_container *c, int sig, bool all, hv_error **err);
/* Delete: a stopped container, or with force any (killed first). */
int hv_container_delete (const struct hv_runtime *rt, hv_container *c, bool force, hv_error **err);
/* Freeze (pause) or thaw (resume) every process of the container. */
int hv_container_pause (const struct hv_runtime *rt, const hv_container *c, bool freeze, hv_error **err);
/* update: merge patch (a linux.resources object; patch_name names it in
 * errors) into the running container's config, apply it to its cgroup
 * (device rules only when devices), then save the config. */
int hv_container_update (const struct hv_runtime *rt, const hv_container *c, const char *patch,
                         const char *patch_name, bool devices, hv_error **err);
/* The processes of the container's cgroup. */
int hv_container_pids (const hv_container *c, pid_t **pids, size_t *n, hv_error **err);
/* Load the config saved at create time. */
int hv_container_load_config (const hv_container *c, oci_spec **out, hv_error **err);
#endif
