/* create: the runtime's side.  Clones the init process, maps its ids,
 * places it in its cgroup, runs the runtime-namespace hooks, and saves the
 * state once init reports it is ready and blocked on the exec fifo.  Any
 * failure kills init and removes everything created so far. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h> /* struct clone_args, CLONE_INTO_CGROUP */
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capabilities.h"
#include "cgroup.h"
#include "cgroup_resources.h"
#include "cgroup_systemd.h"
#include "console.h"
#include "container.h"
#include "container_monitor.h"
#include "create_record.h"
#include "egress_netns_record.h"
#include "egress_sandbox.h"
#include "fault_point.h"
#include "file_read.h"
#include "gateway_sandbox.h"
#include "haven_annotations.h"
#include "hooks.h"
#include "netns_check.h"
#include "pod_network.h"
#include "log.h"
#include "namespaces.h"
#include "sync.h"
#include "utils.h"

/* Fork-like clone (no new stack): the child continues here with a copy
 * of our memory.  CLONE_PIDFD gives a race-free handle on it.  With a
 * cgroup_fd, clone3 starts the child in that cgroup (CLONE_INTO_CGROUP,
 * Linux 5.7, as crun does); *into_cgroup says whether it did.  Any
 * refusal (no clone3: ENOSYS, also under a seccomp profile that answers
 * it so; a kernel without the flag: E2BIG or EINVAL; a cgroup it cannot
 * join) falls back to clone(2): the caller then writes cgroup.procs,
 * which fails with the real reason if the cgroup cannot be joined at
 * all, so the container never runs outside its cgroup. */
static pid_t
clone_init (int flags, int cgroup_fd, int *pidfd, bool *into_cgroup)
{
  *into_cgroup = false;
  if (cgroup_fd >= 0)
    {
      struct clone_args args = {
        .flags = (uint64_t) (unsigned) flags | CLONE_PIDFD | CLONE_INTO_CGROUP,
        .pidfd = (uint64_t) (uintptr_t) pidfd,
        .exit_signal = SIGCHLD,
        .cgroup = (__u64) cgroup_fd, /* >= 0, checked above */
      };
      pid_t pid = (pid_t) syscall (SYS_clone3, &args, sizeof (args));
      if (pid > 0)
        hv_log (HV_LOG_DEBUG, "init %d started in its cgroup (clone3 CLONE_INTO_CGROUP)", pid);
      if (pid >= 0)
        {
          *into_cgroup = true;
          return pid;
        }
      hv_log (HV_LOG_DEBUG, "clone3 into the cgroup refused (%s): clone, then cgroup.procs", strerror (errno));
    }
  return (pid_t) syscall (SYS_clone, (unsigned long) flags | CLONE_PIDFD | SIGCHLD, NULL, pidfd, NULL, 0);
}

static char *
resolve_rootfs (const oci_spec *spec, const char *bundle, hv_error **err)
{
  if (spec->root.path == NULL)
    {
      hv_error_set (err, 0, "config.json: .root.path: required field is missing");
      return NULL;
    }
  cleanup_free char *joined = spec->root.path[0] == '/' ? xstrdup (spec->root.path)
                                                        : xasprintf ("%s/%s", bundle, spec->root.path);
  char *real = realpath (joined, NULL);
  if (real == NULL)
    {
      hv_error_set (err, errno, "rootfs %s", joined);
      return NULL;
    }
  struct stat st;
  if (stat (real, &st) < 0 || !S_ISDIR (st.st_mode))
    {
      hv_error_set (err, ENOTDIR, "rootfs %s", real);
      free (real);
      return NULL;
    }
  return real;
}

struct create_run
{
  hv_container *c;
  oci_spec *spec;
  char *config_text;
  struct hv_ns_plan ns;
  pid_t pid;        /* init (host pid) */
  pid_t stage1;     /* our direct child when double forking */
  int pidfd;
  int fifo;
  int sock[2];
  int lock; /* hv_state_lock_create() */
  bool cgroup_made;
  bool cloned_into_cgroup; /* clone3 started init in the unified hierarchy's cgroup */
  bool rootless;
  bool hooks_started;
  bool egress_installed; /* the table is in init's network namespace */
  bool egress_up;        /* egress_ready returned */
  bool net_none;         /* run.haven.network: none (netns_check.h) */
  struct hv_monitor monitor; /* the audit monitor, when the config asks for one */
  struct hv_egress_sandbox egress; /* run.haven.egress: the table, the resolver's sockets */
  struct hv_pod_network pod;       /* a pod's one network policy (pod_network.h) */
  struct hv_gateway_sandbox gateway; /* run.haven.gateway: the keys until the monitor has them, the listeners */
  bool gateway_installed;            /* the listeners are the monitor's */
};

static void
create_cleanup (const struct hv_runtime *rt, struct create_run *r)
{
  /* The table first: an engine's namespace outlives init. */
  hv_egress_sandbox_abort (&r->egress);
  if (r->pid > 0)
    {
      kill (r->pid, SIGKILL);
      if (r->stage1 <= 0)
        waitpid (r->pid, NULL, 0);
    }
  if (r->stage1 > 0)
    {
      kill (r->stage1, SIGKILL);
      waitpid (r->stage1, NULL, 0);
    }
  if (r->cgroup_made && r->c->systemd_cgroup)
    {
      cleanup_error hv_error *ignored = NULL;
      hv_systemd_destroy (r->c->cgroup_path, &ignored);
    }
  else if (r->cgroup_made)
    hv_cgroup_destroy (r->c->cgroup_path, NULL);
  if (r->hooks_started && r->spec->hooks.poststop.n)
    {
      cleanup_free char *json = hv_container_state_json (r->c, HV_STATUS_STOPPED, false);
      cleanup_error hv_error *ignored = NULL;
      hv_hooks_run (&r->spec->hooks.poststop, "poststop", json, &ignored);
    }
  hv_monitor_release (&r->monitor, true);
  hv_state_remove (r->c->dir, NULL);
  (void) rt;
}

/* Read and parse config.json (or the caller's text), then let the caller
 * rewrite it (haven-runc applies its policies there: struct hv_runtime). */
static int
read_config (const struct hv_runtime *rt, const char *bundle, const char *given, const char *dir, char **text,
             oci_spec **spec, hv_error **err)
{
  cleanup_free char *path = xasprintf ("%s/config.json", bundle);
  size_t len;
  if (given)
    {
      *text = xstrdup (given);
      len = strlen (given);
    }
  else if (hv_read_file (path, text, &len, err) < 0)
    return -1;
  if (oci_spec_parse (*text, len, path, spec, err) < 0)
    return -1;
  if (rt->config_filter && rt->config_filter (rt->config_filter_data, path, text, spec, err) < 0)
    return -1;
  /* The filtered config's: a policy may ask for the audit monitor. */
  return hv_monitor_prepare_config (dir, path, text, spec, err);
}

static int
set_oom_score_adj (const struct create_run *r, hv_error **err)
{
  if (!r->spec->process.oom_score_adj.set)
    return 0;
  char path[64], val[32];
  snprintf (path, sizeof (path), "/proc/%d/oom_score_adj", r->pid);
  int n = snprintf (val, sizeof (val), "%lld", (long long) r->spec->process.oom_score_adj.value);
  if (write_file_at (AT_FDCWD, path, val, (size_t) n, 0, err) < 0)
    return hv_error_wrap (err, "set oomScoreAdj");
  return 0;
}

/* haven run asks for no cgroup when it sets no limits: the pid
 * namespace already contains every process, and creating a directory in
 * each of a hybrid host's hierarchies is most of a short run's cost. */
static bool
wants_no_cgroup (const oci_spec *spec)
{
  const char *cg = oci_kv_get (&spec->annotations, HV_CGROUP_ANNOTATION);
  return cg && strcmp (cg, HV_CGROUP_IF_LIMITED) == 0 && !spec->linux_cfg.resources.present
         && oci_spec_find_namespace (spec, CLONE_NEWPID);
}

static int
enter_systemd_cgroup (struct create_run *r, hv_error **err)
{
  /* systemd puts init in the scope; hv_cgroup_enter then only adds the
   * v1 hierarchies systemd does not manage on a hybrid host (as runc
   * joins them) and rewrites the same pid on v2.  No rootless
   * fallback: hv_systemd_check refused rootless already. */
  if (hv_systemd_start (r->c->cgroup_path, r->pid, &r->spec->linux_cfg, err) < 0)
    return hv_error_wrap (err, "cgroup");
  r->cgroup_made = true;
  if (hv_cgroup_enter (r->c->cgroup_path, r->pid, err) < 0
      || hv_cgroup_apply_resources (r->c->cgroup_path, &r->spec->linux_cfg, HV_CG_DEVICES, err) < 0)
    return hv_error_wrap (err, "cgroup");
  return 0;
}

static int
enter_cgroup (struct create_run *r, hv_error **err)
{
  /* After clone3 (CLONE_INTO_CGROUP) init is in the unified hierarchy's
   * cgroup already; a v1 hierarchy still needs its cgroup.procs. */
  if ((r->cloned_into_cgroup ? hv_cgroup_enter_v1 (r->c->cgroup_path, r->pid, err)
                             : hv_cgroup_enter (r->c->cgroup_path, r->pid, err))
      < 0)
    {
      /* Rootless: an unprivileged user usually cannot create cgroups (never
       * on a v1 or hybrid host; on v2 only in a subtree systemd delegated).
       * With no limits to enforce the container can do without one (as
       * with runc and crun); with limits it must not start unlimited. */
      int e = (*err)->errno_code;
      bool denied = e == EACCES || e == EPERM || e == EROFS;
      if (!r->rootless || !denied)
        return hv_error_wrap (err, "cgroup");
      const char *limit = hv_cgroup_first_limit (&r->spec->linux_cfg.resources);
      if (limit)
        return hv_error_wrap (err,
                              "%s/config.json: .linux.resources.%s: a rootless container cannot have this limit "
                              "here: it needs a cgroup, and this user may not create one (%s); run it without the "
                              "limit, or as root",
                              r->c->bundle, limit,
                              hv_cgroup_mode () == HV_CGROUP_V2
                                  ? "haven-runc does not create cgroups through the systemd user manager yet"
                                  : "a cgroup v1 or hybrid host never delegates cgroups to users");
      hv_log (HV_LOG_DEBUG, "rootless: running without a cgroup (%s)", (*err)->msg);
      hv_error_free (err);
      hv_cgroup_destroy (r->c->cgroup_path, NULL);
      free (r->c->cgroup_path);
      r->c->cgroup_path = xstrdup ("");
      return 0;
    }
  r->cgroup_made = true;
  if (hv_cgroup_apply_resources (r->c->cgroup_path, &r->spec->linux_cfg, HV_CG_DEVICES, err) < 0)
    return hv_error_wrap (err, "cgroup");
  return 0;
}

/* Init's cgroup and limits, set while init still waits for HV_SYNC_GO. */
static int
place_in_cgroup (struct create_run *r, hv_error **err)
{
  if (wants_no_cgroup (r->spec))
    {
      free (r->c->cgroup_path);
      r->c->cgroup_path = xstrdup ("");
      return 0;
    }
  if (r->c->systemd_cgroup)
    return enter_systemd_cgroup (r, err);
  return enter_cgroup (r, err);
}

/* After a double fork, init is the grandchild: follow it and reap the
 * first child, which exits once it has reported it. */
static void
follow_grandchild (struct create_run *r, const char *payload)
{
  r->stage1 = r->pid;
  r->pid = (pid_t) atoi (payload);
  waitpid (r->stage1, NULL, 0);
  r->stage1 = 0;
}

static bool
connects_egress (const struct create_run *r, const struct hv_create_opts *opts)
{
  return r->egress.config && r->egress.config->connect == HV_EGRESS_CONNECT_PASTA && opts->egress_connect
         && !opts->egress_forward;
}

/* The way out works (egress_ready), or create fails. */
static int
await_egress (struct create_run *r, const struct hv_create_opts *opts, hv_error **err)
{
  if (!connects_egress (r, opts) || opts->egress_ready == NULL || r->egress_up)
    return 0;
  if (opts->egress_ready (opts->egress_connect_data, err) < 0)
    return hv_error_wrap (err, "egress: connect the sandbox");
  r->egress_up = true;
  hv_fault_point ("create.egress-up");
  return 0;
}

/* Hooks that run before the process and may expect the network. */
static bool
has_early_hooks (const oci_spec *spec)
{
  const oci_hooks *h = &spec->hooks;
  return h->prestart.n || h->create_runtime.n || h->create_container.n || h->start_container.n;
}

/* A pod's sandbox container with network none: the table that lets
 * only loopback through (the pod's namespace has CNI's interface), its
 * namespace recorded for delete, the pod's record written. */
static int
install_pod_none (struct create_run *r, hv_error **err)
{
  if (hv_egress_netns_record (r->c->dir, r->spec, err) < 0
      || hv_pod_network_install_none (r->pid, &r->egress.table, r->egress.fingerprint, err) < 0)
    return -1;
  r->egress_installed = true;
  hv_fault_point ("create.egress-table");
  return hv_pod_network_record (&r->pod, r->c->dir, r->pid, r->egress.fingerprint, err);
}

/* Network none held: only loopback in init's namespace, or in a pod the
 * table that lets only loopback through, still the one made or recorded
 * (what: when, for the message). */
static int
check_net_none (struct create_run *r, const char *what, hv_error **err)
{
  if (!r->net_none)
    return 0;
  switch (r->pod.role)
    {
    case HV_POD_SANDBOX:
      if (r->egress.table == NULL)
        return hv_error_set (err, 0, "network none: the pod's table is not in place %s", what);
      if (hv_egress_table_verify (r->egress.table, r->egress.fingerprint, err) < 0)
        return hv_error_wrap (err, "network none in the pod's network namespace, %s", what);
      return 0;
    case HV_POD_CONTAINER:
      return hv_pod_network_check (&r->pod, r->pid, what, err);
    default:
      return hv_netns_check_loopback_only (r->pid, what, err);
    }
}

/* Egress (HV_SYNC_NETNS): init has made or joined its network namespace
 * and goes on with its mounts while the table goes in, before anything
 * else can run there (hooks, connectivity, the process); then the way
 * out starts, then the resolver's sockets go to the monitor.  The way out
 * comes up while init finishes its set-up (mounts, pivot, terminal,
 * seccomp's and Landlock's preparation): it is waited for when init
 * reports ready (answer_init), or before the hooks when there are any.
 * In a pod the sandbox container does this for the pod, and a container
 * of the pod only checks that the pod's table is in its namespace. */
static int
install_egress (struct create_run *r, const struct hv_create_opts *opts, hv_error **err)
{
  if (r->egress_installed)
    return 0;
  if (r->pod.role == HV_POD_CONTAINER)
    {
      if (hv_pod_network_check (&r->pod, r->pid, "when its init made its namespaces", err) < 0)
        return -1;
      r->egress_installed = true;
      return 0;
    }
  if (r->pod.role == HV_POD_SANDBOX && r->egress.config == NULL)
    return install_pod_none (r, err);
  if (r->egress.config == NULL)
    return 0;
  /* A namespace that outlives the container keeps the table: delete
   * removes it (egress_netns_record.h).  A pod's namespace holds the
   * pod's processes only: all of its DNS goes to the resolver (no
   * cgroup tells the sandbox's sockets from an engine's there). */
  const char *own_cgroup = r->cgroup_made && r->pod.role == HV_POD_NONE ? r->c->cgroup_path : NULL;
  /* The forwarder, like pasta, connects from the caller's namespace. */
  r->egress.forward = opts->egress_forward && r->egress.config->connect == HV_EGRESS_CONNECT_PASTA;
  r->egress.deny_host_addrs = connects_egress (r, opts) || r->egress.forward;
  if (hv_egress_netns_record (r->c->dir, r->spec, err) < 0
      || hv_egress_sandbox_install (&r->egress, r->pid, own_cgroup, err) < 0)
    return -1;
  r->egress_installed = true;
  hv_fault_point ("create.egress-table");
  if (hv_pod_network_record (&r->pod, r->c->dir, r->pid, r->egress.fingerprint, err) < 0)
    return -1;
  if (connects_egress (r, opts)
      && opts->egress_connect (opts->egress_connect_data, r->pid, r->egress.fds.netns, err) < 0)
    return hv_error_wrap (err, "egress: connect the sandbox");
  hv_fault_point ("create.pasta-started");
  if (hv_monitor_pass_egress (&r->monitor, &r->egress, err) < 0)
    return -1;
  hv_fault_point ("create.resolver-started");
  return 0;
}

/* The gateway's listeners (HV_SYNC_NETNS, after the egress table): made
 * in init's network namespace, served by the monitor. */
static int
install_gateway (struct create_run *r, hv_error **err)
{
  if (r->gateway.config == NULL || r->gateway_installed)
    return 0;
  if (hv_gateway_sandbox_listen (&r->gateway, r->pid, &r->monitor, err) < 0)
    return -1;
  r->gateway_installed = true;
  hv_fault_point ("create.gateway-listening");
  return 0;
}

static int
run_runtime_hooks (struct create_run *r, const struct hv_create_opts *opts, hv_error **err)
{
  /* Fail closed: no hook and no process without the table. */
  if ((r->egress.config || r->pod.role != HV_POD_NONE) && !r->egress_installed)
    return hv_error_set (err, 0, "egress: init asked for its hooks before reporting its network namespace");
  if (r->gateway.config && !r->gateway_installed)
    return hv_error_set (err, 0, "model API gateway: init asked for its hooks before reporting its network namespace");
  if (has_early_hooks (r->spec) && await_egress (r, opts, err) < 0)
    return -1;
  r->c->pid = r->pid;
  r->hooks_started = true;
  /* The environment exists: hooks see the container as created
   * (what the runtime-tools validation suite checks). */
  cleanup_free char *created = hv_container_state_json (r->c, HV_STATUS_CREATED, false);
  if (hv_hooks_run (&r->spec->hooks.prestart, "prestart", created, err) < 0
      || hv_hooks_run (&r->spec->hooks.create_runtime, "createRuntime", created, err) < 0)
    return -1;
  hv_fault_point ("create.hooks-run");
  if (check_net_none (r, "after the prestart and createRuntime hooks", err) < 0)
    return -1;
  return hv_sync_send (r->sock[0], HV_SYNC_HOOKS_DONE, created, strlen (created), -1, err);
}

/* The terminal's master side, to our caller (haven run) or to the
 * --console-socket. */
static int
pass_console (const struct hv_create_opts *opts, int fd, hv_error **err)
{
  if (opts->console_master)
    {
      *opts->console_master = fd;
      return 0;
    }
  int r2 = hv_console_send (opts->console_socket, fd, err);
  close (fd);
  return r2 < 0 ? -1 : 0;
}

/* Answer init's requests until it reports ready or fails. */
static int
answer_init (struct create_run *r, const struct hv_create_opts *opts, hv_error **err)
{
  for (;;)
    {
      enum hv_sync_type type;
      cleanup_free char *payload = NULL;
      int fd = -1;
      if (hv_sync_recv (r->sock[0], &type, &payload, &fd, err) < 0)
        return -1;
      switch (type)
        {
        case HV_SYNC_GRANDCHILD:
          follow_grandchild (r, payload);
          break;
        case HV_SYNC_NETNS:
          if (install_egress (r, opts, err) < 0 || install_gateway (r, err) < 0)
            return -1;
          break;
        case HV_SYNC_RUN_HOOKS:
          if (run_runtime_hooks (r, opts, err) < 0)
            return -1;
          break;
        case HV_SYNC_CONSOLE:
          if (pass_console (opts, fd, err) < 0)
            return -1;
          break;
        case HV_SYNC_READY:
          /* Before create returns: nothing can start the process yet. */
          hv_fault_point ("create.init-ready");
          if (check_net_none (r, "at the end of create", err) < 0)
            return -1;
          return await_egress (r, opts, err);
        case HV_SYNC_ERROR:
          return hv_sync_error (payload, err);
        default:
          if (fd >= 0)
            close (fd);
          return hv_error_set (err, 0, "sync: unexpected message %d", type);
        }
    }
}

/* Parent half of the sync protocol: answer the init until it is ready. */
static int
drive_init (struct create_run *r, const struct hv_create_opts *opts, hv_error **err)
{
  if (r->ns.new_user && hv_ns_write_id_maps (r->pid, r->spec, err) < 0)
    return -1;
  hv_fault_point ("create.id-maps-written");
  if (set_oom_score_adj (r, err) < 0 || place_in_cgroup (r, err) < 0)
    return -1;
  hv_fault_point ("create.cgroup-joined");
  if (hv_sync_send (r->sock[0], HV_SYNC_GO, NULL, 0, -1, err) < 0)
    return -1;
  hv_fault_point ("create.init-released");
  return answer_init (r, opts, err);
}

/* What create needs of config.json beyond what the parser checks. */
/* Keeper mode (keeper.h): a SOCK_SEQPACKET socket above stdio, and a
 * command gets its three stdio fds and nothing else (no terminal of
 * init's, no preserved fds). */
static int
check_keeper_fd (const oci_spec *spec, const struct hv_create_opts *opts, hv_error **err)
{
  if (opts->keeper_fd == 0)
    return 0;
  if (opts->keeper_fd < 3)
    return hv_error_set (err, 0, "keeper: fd %d is not above stdio", opts->keeper_fd);
  int type = 0;
  socklen_t len = sizeof (type);
  if (getsockopt (opts->keeper_fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET)
    return hv_error_set (err, 0, "keeper: fd %d is not a SOCK_SEQPACKET socket", opts->keeper_fd);
  if (spec->process.terminal)
    return hv_error_set (err, 0, "keeper: process.terminal is not supported (commands get their own stdio)");
  if (opts->preserve_fds)
    return hv_error_set (err, 0, "keeper: --preserve-fds is not supported (commands get their own stdio)");
  /* No hook or helper this process starts (pasta, a createRuntime hook)
   * may hold the sandbox's end: its caller learns that the keeper ended
   * only once every copy is closed. */
  if (fcntl (opts->keeper_fd, F_SETFD, FD_CLOEXEC) < 0)
    return hv_error_set (err, errno, "keeper: fd %d", opts->keeper_fd);
  return 0;
}

static int
check_config (const oci_spec *spec, const struct hv_create_opts *opts, const char *bundle, hv_error **err)
{
  if (!spec->has_process)
    return hv_error_set (err, 0, "%s/config.json: .process: required to create a container", bundle);
  if (check_keeper_fd (spec, opts, err) < 0)
    return -1;
  if (spec->process.terminal && opts->console_socket == NULL && opts->console_master == NULL)
    return hv_error_set (err, 0, "process.terminal is true but no --console-socket was given");
  if (!spec->process.terminal && opts->console_socket)
    return hv_error_set (err, 0, "--console-socket given but process.terminal is false");
  /* Fields this runtime reads but cannot enforce: refuse rather than run
   * a container with less isolation or fewer devices than it asked for. */
  if (spec->linux_cfg.intel_rdt.present)
    return hv_error_set (err, 0, "%s/config.json: .linux.intelRdt: Intel RDT is not supported", bundle);
  if (spec->linux_cfg.net_devices.n)
    return hv_error_set (err, 0, "%s/config.json: .linux.netDevices: moving network devices is not supported",
                         bundle);
  return 0;
}

static int
make_state_dir (const struct hv_runtime *rt, const char *id, const char *dir, hv_error **err)
{
  if (mkdir_p (rt->root, 0700, err) < 0)
    return -1;
  if (mkdir (dir, 0700) < 0)
    {
      if (errno == EEXIST)
        return hv_error_set (err, 0, "container with id \"%s\" already exists", id);
      return hv_error_set (err, errno, "create state directory %s", dir);
    }
  return 0;
}

/* The container's record (what state.json will say), and the lock on its
 * state directory. */
static int
new_container_record (const struct hv_runtime *rt, const struct hv_create_opts *opts, struct create_run *r, char **dir,
                      const char *bundle, const char *rootfs, hv_error **err)
{
  r->c = xmalloc0 (sizeof (*r->c));
  r->c->id = xstrdup (opts->id);
  r->c->dir = steal_pointer (dir);
  /* Until state.json exists, `delete` (an engine's cleanup, a concurrent
   * `delete --force` sweep) must not take the directory from under us. */
  r->lock = hv_state_lock_create (r->c->dir, err);
  if (r->lock < 0)
    return -1;
  r->c->bundle = xstrdup (bundle);
  r->c->rootfs = xstrdup (rootfs);
  r->c->created = now_rfc3339 ();
  r->c->owner = geteuid ();
  r->c->systemd_cgroup = rt->systemd_cgroup;
  r->rootless = hv_runtime_rootless (rt);
  if (rt->systemd_cgroup && hv_systemd_check (r->spec->linux_cfg.cgroups_path, r->rootless, err) < 0)
    return -1;
  r->c->cgroup_path = hv_cgroup_resolve_path (r->spec->linux_cfg.cgroups_path, opts->id, rt->systemd_cgroup);
  if (hv_cgroup_check_path (r->c->cgroup_path, err) < 0)
    return hv_error_wrap (err, "%s/config.json: .linux.cgroupsPath", bundle);
  for (size_t i = 0; i < r->spec->annotations.n; i++)
    {
      r->c->annotations.v = xrealloc (r->c->annotations.v, (i + 1) * sizeof (oci_kv));
      r->c->annotations.v[i].key = xstrdup (r->spec->annotations.v[i].key);
      r->c->annotations.v[i].value = xstrdup (r->spec->annotations.v[i].value);
      r->c->annotations.n++;
    }
  return 0;
}

static int
open_exec_fifo (struct create_run *r, hv_error **err)
{
  cleanup_free char *fifo = xasprintf ("%s/exec.fifo", r->c->dir);
  if (mkfifo (fifo, 0600) < 0)
    return hv_error_set (err, errno, "mkfifo %s", fifo);
  /* Opened here and inherited: init may run as a host uid (user
   * namespace) that cannot even traverse the state directory.  O_RDWR
   * never blocks on open, and init's read blocks until start writes. */
  r->fifo = open (fifo, O_RDWR | O_CLOEXEC);
  if (r->fifo < 0)
    return hv_error_set (err, errno, "open %s", fifo);
  return 0;
}

static int
open_sync_socket (struct create_run *r, hv_error **err)
{
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, r->sock) < 0)
    return hv_error_set (err, errno, "socketpair");
  return 0;
}

/* The unified hierarchy's cgroup for clone3, when init gets a cgroup that
 * haven-runc makes itself (not systemd's scope, which systemd fills): -1
 * otherwise, or when it cannot be made or opened (place_in_cgroup then
 * takes the cgroup.procs way and reports what is wrong). */
static int
open_cgroup_for_clone (struct create_run *r)
{
  if (wants_no_cgroup (r->spec) || r->c->systemd_cgroup || r->c->cgroup_path[0] == '\0')
    return -1;
  /* The cgroup is made here, before init exists: named in the creating
   * record first (no init yet), so that a delete after we die removes it.
   * Without the record, no clone3: the cgroup.procs way writes it after
   * the clone, before the cgroup is made. */
  cleanup_error hv_error *record_err = NULL;
  if (hv_create_record_write (r->c->dir, 0, false, r->c->cgroup_path, &record_err) < 0)
    {
      hv_log (HV_LOG_DEBUG, "cgroup for clone3: %s", record_err->msg);
      return -1;
    }
  int fd = hv_cgroup_open_unified (r->c->cgroup_path);
  if (fd < 0)
    {
      hv_log (HV_LOG_DEBUG, "cgroup for clone3: %s", strerror (errno));
      return -1;
    }
  return fd;
}

/* Clone init; the child never returns from here (hv_container_init ends
 * in execve or _exit).  The parent keeps only its own ends. */
static int
start_init (struct create_run *r, const struct hv_create_opts *opts, const char *bundle, const char *rootfs,
            hv_error **err)
{
  struct hv_init_ctx ictx = {
    .spec = r->spec,
    .opts = opts,
    .ns = &r->ns,
    .bundle = bundle,
    .rootfs = rootfs,
    .state_dir = r->c->dir,
    .cgroup_path = r->c->cgroup_path,
    .sync_fd = r->sock[1],
    .fifo_fd = r->fifo,
    .parent_sync_fd = r->sock[0],
    .terminal = r->spec->process.terminal,
  };
  cleanup_close int cgroup_fd = open_cgroup_for_clone (r);
  r->pid = clone_init (r->ns.clone_flags, cgroup_fd, &r->pidfd, &r->cloned_into_cgroup);
  if (r->pid < 0)
    {
      int e = errno;
      /* The directory made for clone3, unless something is in it: rmdir
       * refuses a cgroup that holds processes or children (a cgroupsPath
       * shared with others stays as it was). */
      cleanup_free char *unified = cgroup_fd >= 0 ? hv_cgroup_dir (r->c->cgroup_path, NULL) : NULL;
      if (unified)
        rmdir (unified);
      return hv_error_set (err, e, "clone container init");
    }
  /* In its cgroup from the start: a failed create removes it (as after
   * place_in_cgroup on the other way). */
  if (r->pid > 0 && r->cloned_into_cgroup)
    r->cgroup_made = true;
  if (r->pid == 0)
    {
      if (cgroup_fd >= 0)
        close (cgroup_fd); /* init needs no handle on its cgroup */
      hv_container_init (&ictx);
    }
  close (r->sock[1]);
  r->sock[1] = -1;
  close (r->fifo);
  r->fifo = -1;
  hv_ns_plan_close (&r->ns);
  return 0;
}

/* Init is ready and blocks on the exec fifo: record it. */
static int
save_created (struct create_run *r, const struct hv_create_opts *opts, hv_error **err)
{
  r->c->pid = r->pid;
  if (proc_start_time (r->pid, &r->c->start_time, NULL) < 0 || r->c->start_time == 0)
    return hv_error_set (err, 0, "container init exited during create");
  hv_fault_point ("create.before-save");
  if (hv_container_save (r->c, err) < 0)
    return -1;
  hv_fault_point ("create.state-saved");
  if (opts->pid_file && write_pid_file (opts->pid_file, r->pid, err) < 0)
    return -1;
  return 0;
}

/* The clone's pidfd is init's only without a double fork (after one it
 * names the first child): otherwise open one for init. */
static int
pidfd_for_caller (struct create_run *r)
{
  if (r->stage1 == 0 && r->pidfd >= 0 && !r->ns.double_fork)
    return steal_fd (&r->pidfd);
  return (int) syscall (SYS_pidfd_open, r->pid, 0);
}

static void
release_create_run (struct create_run *r)
{
  if (r->sock[0] >= 0)
    close (r->sock[0]);
  if (r->sock[1] >= 0)
    close (r->sock[1]);
  if (r->pidfd >= 0)
    close (r->pidfd);
  if (r->fifo >= 0)
    close (r->fifo);
  if (r->lock >= 0)
    close (r->lock);
  hv_monitor_release (&r->monitor, false);
  hv_egress_sandbox_release (&r->egress);
  hv_pod_network_clear (&r->pod);
  hv_gateway_sandbox_release (&r->gateway);
  hv_container_free (r->c);
  oci_spec_free (r->spec);
  free (r->config_text);
}

int
hv_container_create (const struct hv_runtime *rt, const struct hv_create_opts *opts, hv_container **out, int *pidfd_out,
                     hv_error **err)
{
  struct create_run r = { .pidfd = -1, .fifo = -1, .sock = { -1, -1 }, .lock = -1, .monitor = HV_MONITOR_INIT,
                          .egress = HV_EGRESS_SANDBOX_INIT, .pod = HV_POD_NETWORK_INIT,
                          .gateway = HV_GATEWAY_SANDBOX_INIT };
  cleanup_free char *bundle = realpath (opts->bundle ? opts->bundle : ".", NULL);
  cleanup_free char *rootfs = NULL;
  cleanup_free char *dir = NULL;
  int ret = -1;

  if (bundle == NULL)
    return hv_error_set (err, errno, "bundle %s", opts->bundle ? opts->bundle : ".");
  if (hv_state_dir (rt, opts->id, &dir, err) < 0)
    return -1;
  if (read_config (rt, bundle, opts->config_text, dir, &r.config_text, &r.spec, err) < 0)
    goto done; /* the text and the config, when read, are r's to free */
  if (check_config (r.spec, opts, bundle, err) < 0
      || hv_egress_sandbox_prepare (r.spec, "config.json", &r.egress, err) < 0
      || hv_gateway_sandbox_prepare (r.spec, opts, "config.json", &r.gateway, err) < 0
      || hv_netns_none_wanted (r.spec, "config.json", &r.net_none, err) < 0
      || hv_pod_network_prepare (r.spec, rt->root, r.egress.config, r.net_none, &r.pod, err) < 0)
    goto fail_early;
  rootfs = resolve_rootfs (r.spec, bundle, err);
  if (rootfs == NULL)
    goto fail_early;
  if (hv_ns_plan_build (r.spec, &r.ns, err) < 0)
    goto fail_early;
  hv_caps_warn_unavailable (&r.spec->process.capabilities);
  if (make_state_dir (rt, opts->id, dir, err) < 0)
    goto fail_early;
  hv_fault_point ("create.state-dir");

  /* From here on, failures clean up through create_cleanup(). */
  if (new_container_record (rt, opts, &r, &dir, bundle, rootfs, err) < 0)
    goto fail;
  hv_fault_point ("create.record-locked");
  if (write_file_atomic (r.c->dir, "config.json", r.config_text, strlen (r.config_text), err) < 0)
    goto fail;
  hv_fault_point ("create.config-written");
  /* Before init and before we join any namespace: the monitor stays in
   * ours, and init connects to it. */
  const struct hv_monitor_target target = { .id = r.c->id, .dir = r.c->dir, .bundle = r.c->bundle,
                                            .sandbox = opts->trail_sandbox,
                                            .run = opts->trail_run,
                                            .service_secrets = opts->service_secrets,
                                            .n_service_secrets = opts->n_service_secrets,
                                            .gateway = r.gateway.config,
                                            .gateway_keys = (const char *const *) r.gateway.keys };
  int monitor_started = hv_monitor_start (&target, r.spec, opts->egress_trail_fd, opts->notice_fd, &r.monitor, err);
  /* The monitor has its copy of the keys (fork): init, cloned below
   * from this memory, gets none. */
  hv_gateway_sandbox_wipe_keys (&r.gateway);
  if (monitor_started < 0)
    goto fail;
  hv_fault_point ("create.monitor-started");
  if (open_exec_fifo (&r, err) < 0 || open_sync_socket (&r, err) < 0)
    goto fail;
  hv_fault_point ("create.fifo-made");
  if (opts->keep_child_reapable && r.ns.double_fork)
    prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  if (hv_ns_parent_join (&r.ns, err) < 0)
    goto fail;
  /* Before the cgroup exists: a delete after we die removes it and init.
   * Not needed, and a file write saved on haven run's fast path, when
   * there is no cgroup and init dies with us: until READY its sync socket
   * fails, from READY on the parent-death signal kills it (report_ready).
   * (With clone3 it was written once already, before the clone:
   * open_cgroup_for_clone.) */
  if (start_init (&r, opts, bundle, rootfs, err) < 0)
    goto fail;
  hv_fault_point ("create.init-cloned");
  bool no_cgroup = wants_no_cgroup (r.spec);
  if (!(no_cgroup && opts->die_with_runtime)
      && hv_create_record_write (r.c->dir, r.pid, r.c->systemd_cgroup, no_cgroup ? "" : r.c->cgroup_path, err) < 0)
    goto fail;
  hv_fault_point ("create.record-written");
  if (drive_init (&r, opts, err) < 0)
    goto fail;
  close (r.sock[0]);
  r.sock[0] = -1;
  if (save_created (&r, opts, err) < 0
      || hv_monitor_attach_init (&r.monitor, r.c->pid, r.c->start_time, err) < 0)
    goto fail;
  hv_fault_point ("create.monitor-attached");
  if (pidfd_out)
    *pidfd_out = pidfd_for_caller (&r);
  /* r.spec is the config written to the state directory (the filters
   * change the text and the parsed config together). */
  r.c->hooks_known = true;
  r.c->has_poststart = r.spec->hooks.poststart.n > 0;
  r.c->has_poststop = r.spec->hooks.poststop.n > 0;
  *out = steal_pointer (&r.c);
  ret = 0;
  goto done;

fail:
  hv_error_wrap (err, "create container %s", opts->id);
  create_cleanup (rt, &r);
  goto done;
fail_early:
  hv_ns_plan_close (&r.ns);
done:
  release_create_run (&r);
  return ret;
}
