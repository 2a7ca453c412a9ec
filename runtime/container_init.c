/* The container's init process, from clone() to execve().
 *
 * Runs as root in its new namespaces with the host's filesystem still
 * visible until the root switch.  Every failure is sent to the parent as an
 * HV_SYNC_ERROR message (the parent reports it and cleans up) and the
 * process exits; nothing here prints. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "container.h"
#include "console.h"
#include "devices.h"
#include "exit_status.h"
#include "haven_annotations.h"
#include "hooks.h"
#include "keeper_serve.h"
#include "mounts.h"
#include "network.h"
#include "process.h"
#include "rootfs.h"
#include "safe_path.h"
#include "seccomp_filter.h"
#include "sync.h"
#include "utils.h"

#define KEYCTL_JOIN_SESSION_KEYRING 1

static int
apply_sysctls (const oci_spec *spec, int procfd, hv_error **err)
{
  const oci_kv_list *s = &spec->linux_cfg.sysctl;
  for (size_t i = 0; i < s->n; i++)
    {
      cleanup_free char *path = xasprintf ("sys/%s", s->v[i].key);
      for (char *p = path + 4; *p; p++)
        if (*p == '.')
          *p = '/';
      if (strstr (path, "..") || strchr (s->v[i].key, '/'))
        return hv_error_set (err, 0, "invalid sysctl name \"%s\"", s->v[i].key);
      /* Through our private procfs, refusing symlinks and mount crossings:
       * the write cannot be redirected (CVE-2025-52881). */
      cleanup_close int fd = hv_open_in_proc (procfd, path, O_WRONLY);
      if (fd < 0)
        return hv_error_set (err, errno, "sysctl %s", s->v[i].key);
      if (write_all (fd, s->v[i].value, strlen (s->v[i].value)) < 0)
        return hv_error_set (err, errno, "sysctl %s=%s", s->v[i].key, s->v[i].value);
    }
  return 0;
}

static int
apply_personality (const oci_spec *spec, hv_error **err)
{
  if (!spec->linux_cfg.personality.present)
    return 0;
  unsigned long p = strcmp (spec->linux_cfg.personality.domain, "LINUX32") == 0 ? PER_LINUX32 : PER_LINUX;
  if (personality (p) < 0)
    return hv_error_set (err, errno, "personality %s", spec->linux_cfg.personality.domain);
  return 0;
}

static int
set_names (const oci_spec *spec, hv_error **err)
{
  if (spec->hostname && sethostname (spec->hostname, strlen (spec->hostname)) < 0)
    return hv_error_set (err, errno, "sethostname \"%s\"", spec->hostname);
  if (spec->domainname && setdomainname (spec->domainname, strlen (spec->domainname)) < 0)
    return hv_error_set (err, errno, "setdomainname \"%s\"", spec->domainname);
  return 0;
}

/* Connect to the seccomp listener while its path is still reachable. */
static int
connect_seccomp_listener (const oci_spec *spec, hv_error **err)
{
  const oci_seccomp *sc = &spec->linux_cfg.seccomp;
  if (!sc->present || sc->listener_path == NULL || sc->listener_path[0] == '\0')
    return -1;
  return hv_seccomp_connect_listener (sc->listener_path, err);
}

/* Join the existing namespaces the plan leaves to init, then (double
 * fork) enter a new pid namespace. */
static int
join_namespaces (struct hv_init_ctx *ctx, int sync, hv_error **err)
{
  if (hv_ns_child_join (ctx->ns, err) < 0)
    return -1;
  if (ctx->ns->double_fork)
    {
      /* The new pid namespace must belong to the user namespace we just
       * joined, so it is created here and entered by a second fork. */
      if (unshare (CLONE_NEWPID) < 0)
        return hv_error_set (err, errno, "create pid namespace");
      if (hv_sync_fork_reported (sync, "fork into pid namespace", err) < 0)
        return -1;
    }
  return 0;
}

static int
become_root (const oci_spec *spec, const struct hv_ns_plan *ns, bool userns, hv_error **err)
{
  /* Become root of the user namespace when root is mapped.  Otherwise
   * (haven run maps the caller to itself) the capabilities a new user
   * namespace gives its first process are enough for the setup. */
  bool root_mapped = ns->join_user;
  for (size_t i = 0; i < spec->linux_cfg.uid_mappings.n; i++)
    if (spec->linux_cfg.uid_mappings.v[i].container_id == 0)
      root_mapped = true;
  if (userns && root_mapped && (setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0))
    return hv_error_set (err, errno, "become root in the user namespace (is container uid/gid 0 mapped?)");
  return 0;
}

static int
create_namespaces (const oci_spec *spec, const struct hv_ns_plan *ns, hv_error **err)
{
  if (ns->unshare_flags && unshare (ns->unshare_flags) < 0)
    return hv_error_set (err, errno, "create namespaces");
  if ((ns->unshare_flags & CLONE_NEWTIME) && hv_ns_enter_new_time_ns (spec, err) < 0)
    return -1;
  if ((ns->unshare_flags & CLONE_NEWNET) && hv_net_loopback_up (err) < 0)
    return -1;
  return 0;
}

static void
join_private_keyring (const struct hv_init_ctx *ctx)
{
  if (!ctx->opts->no_new_keyring)
    {
      /* A private session keyring: the host's keys stay out of reach.
       * Kernels or user namespaces without keyrings just go without. */
      syscall (SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, ctx->opts->id);
    }
}

static void
note_host_pid (struct hv_process_ctx *pctx)
{
  /* Our pid in the runtime's namespace, while its /proc is still ours to
   * read: the seccomp listener is told this one. */
  char self[32] = "";
  if (readlink ("/proc/self", self, sizeof (self) - 1) > 0)
    pctx->host_pid = (pid_t) atoi (self);
}

/* The runtime runs the prestart and createRuntime hooks, and answers
 * with the container's state: what our own hooks are given. */
static int
ask_for_runtime_hooks (int sync, char **state_json, hv_error **err)
{
  if (hv_sync_send (sync, HV_SYNC_RUN_HOOKS, NULL, 0, -1, err) < 0
      || hv_sync_expect (sync, HV_SYNC_HOOKS_DONE, state_json, NULL, err) < 0)
    return -1;
  return 0;
}

static int
enter_rootfs (const struct hv_init_ctx *ctx, bool new_mntns, int rootfd, hv_error **err)
{
  if (new_mntns)
    {
      if (hv_rootfs_switch (rootfd, ctx->opts->no_pivot, err) < 0)
        return -1;
      close (rootfd);
      if (hv_rootfs_finalize (ctx->spec, err) < 0)
        return -1;
    }
  else if (chroot (ctx->rootfs) < 0 || chdir ("/") < 0)
    return hv_error_set (err, errno, "chroot %s", ctx->rootfs);
  return 0;
}

/* A terminal, whose master side goes to the runtime; or none, and a
 * session of our own. */
static int
set_up_terminal (const struct hv_init_ctx *ctx, int sync, hv_error **err)
{
  if (ctx->terminal)
    {
      cleanup_close int master = hv_console_setup (&ctx->spec->process, true, err);
      if (master < 0 || hv_sync_send (sync, HV_SYNC_CONSOLE, NULL, 0, master, err) < 0)
        return -1;
      return 0;
    }
  return hv_console_detach (err);
}

/* Closes *sync and sets it to -1: from then on errors go to stderr. */
static int
report_ready (const struct hv_init_ctx *ctx, int *sync, hv_error **err)
{
  /* Everything that can fail visibly is done: report ready, and from here
   * on outlive the create process, except under haven run, where the
   * sandbox must not outlive haven: until the guard (run_guard.h) watches
   * us, the parent-death signal does.  After a double fork this sets it
   * for the first time, and only now is it safe: the parent answered
   * HOOKS_DONE after reaping the first child, so we are reparented to it
   * and the reparenting cannot fire the signal. */
  prctl (PR_SET_PDEATHSIG, ctx->opts->die_with_runtime ? SIGKILL : 0, 0, 0, 0);
  if (hv_sync_send (*sync, HV_SYNC_READY, NULL, 0, -1, err) < 0)
    return -1;
  close (*sync);
  *sync = -1;
  return 0;
}

/* Block until `start` writes a byte to the exec fifo. */
static void
wait_for_start (int fifo)
{
  char byte;
  ssize_t n;
  do
    n = read (fifo, &byte, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1)
    _exit (1);
  /* fifo stays open (close-on-exec): `start` waits for it to close, which
   * tells it the user process is running. */
}

static void
report_failure (int sync, hv_error *err)
{
  if (sync >= 0)
    hv_sync_send_error (sync, err);
  else if (err)
    {
      /* After create returned, stderr is the only channel left. */
      cleanup_free char *line = xasprintf ("haven-runc: %s\n", err->msg);
      write_all (2, line, strlen (line));
    }
}

/* Overwrite every string of our environment, then drop it. */
static void
wipe_environment (void)
{
  for (char **e = environ; e && *e; e++)
    explicit_bzero (*e, strlen (*e));
  clearenv ();
}

static int
init_main (struct hv_init_ctx *ctx, hv_error **err)
{
  const oci_spec *spec = ctx->spec;
  int sync = ctx->sync_fd;
  cleanup_free char *state_json = NULL;
  struct hv_process_ctx pctx = { .process = &spec->process, .seccomp = &spec->linux_cfg.seccomp,
                                 .procfd = -1, .preserve_fds = ctx->opts->preserve_fds, .seccomp_listener = -1,
                                 .landlock = oci_kv_get (&spec->annotations, HV_LANDLOCK_ANNOTATION),
                                 /* Only init's domain is the monitor's to record. */
                                 .landlock_log = oci_kv_get (&spec->annotations, HV_LANDLOCK_AUDIT_ANNOTATION) != NULL,
                                 .seccomp_extra = oci_kv_get (&spec->annotations, HV_SECCOMP_ANNOTATION),
                                 .keeper = ctx->opts->keeper_fd > 0 };
  int r = -1;
  cleanup_close int fifo = -1;

  if (hv_sync_expect (sync, HV_SYNC_GO, NULL, NULL, err) < 0)
    goto out;
  if (join_namespaces (ctx, sync, err) < 0)
    goto out;
  /* Before init becomes root of its user namespace: the socket is in the
   * runtime's 0700 state directory, which init's host uid after that (an
   * unprivileged one of the mapping) cannot reach.  Still the runtime's
   * uid here, and after the double fork of a new pid namespace, so the
   * monitor sees init itself as the peer. */
  pctx.seccomp_listener = connect_seccomp_listener (spec, err);
  if (pctx.seccomp_listener < 0 && *err)
    goto out;
  bool userns = ctx->ns->new_user || ctx->ns->join_user;
  if (become_root (spec, ctx->ns, userns, err) < 0 || create_namespaces (spec, ctx->ns, err) < 0)
    goto out;
  /* The network namespace is there: the runtime puts the egress table
   * in and starts the way out while we set up the mounts.  It answers
   * RUN_HOOKS only after that, so nothing runs here before the table. */
  if (hv_sync_send (sync, HV_SYNC_NETNS, NULL, 0, -1, err) < 0)
    goto out;
  join_private_keyring (ctx);
  if (set_names (spec, err) < 0)
    goto out;

  fifo = ctx->fifo_fd;
  note_host_pid (&pctx);

  /* A runtime that itself runs in a user namespace (rootless Podman runs
   * it as root of one) cannot mknod either: devices are bound then. */
  struct hv_mount_ctx mctx = { .rootfd = -1, .bundle = ctx->bundle, .cgroup_path = ctx->cgroup_path,
                               .userns = userns || hv_in_user_namespace (),
                               .new_netns = (ctx->ns->unshare_flags & CLONE_NEWNET) != 0 };
  bool new_mntns = (ctx->ns->unshare_flags & CLONE_NEWNS) != 0;
  if (new_mntns && hv_rootfs_prepare (spec, ctx->rootfs, &mctx, err) < 0)
    goto out;
  pctx.procfd = hv_open_private_procfs (err);
  if (pctx.procfd < 0)
    goto out;
  if (apply_sysctls (spec, pctx.procfd, err) < 0)
    goto out;

  if (ask_for_runtime_hooks (sync, &state_json, err) < 0)
    goto out;
  pctx.state_json = state_json;
  if (hv_hooks_run (&spec->hooks.create_container, "createContainer", state_json, err) < 0)
    goto out;

  if (enter_rootfs (ctx, new_mntns, mctx.rootfd, err) < 0)
    goto out;
  if (set_up_terminal (ctx, sync, err) < 0)
    goto out;
  if (apply_personality (spec, err) < 0)
    goto out;
  pctx.setgroups_denied = userns && hv_setgroups_denied (pctx.procfd);
  if (hv_process_prepare (&pctx, err) < 0)
    goto out;

  if (report_ready (ctx, &sync, err) < 0)
    goto out;
  wait_for_start (fifo);
  if (hv_hooks_run (&spec->hooks.start_container, "startContainer", state_json, err) < 0)
    goto out;
  if (pctx.keeper)
    {
      /* Everything the config's process would have, but its program:
       * the keeper serves requests from here (and never returns). */
      if (hv_process_finish (&pctx, err) < 0)
        goto out;
      /* The caller's environment (the service's: the user's tokens and
       * keys, whatever their shell exported) is on our stack; execve
       * would replace it, the keeper keeps it for its life: wiped. */
      wipe_environment ();
      /* The parsed config is the create's, of no use to the keeper but
       * its cwd: freed with the process context, so that an idle keeper
       * (a pooled sandbox waiting) holds as little of it as it can. */
      char *cwd = xstrdup (spec->process.cwd);
      int keeper_fd = ctx->opts->keeper_fd;
      hv_process_ctx_free (&pctx);
      oci_spec_free ((oci_spec *) ctx->spec);
      hv_keeper_serve (keeper_fd, cwd);
    }
  hv_process_exec (&pctx, err);
out:
  report_failure (sync, *err);
  hv_process_ctx_free (&pctx);
  return r;
}

void
hv_container_init (struct hv_init_ctx *ctx)
{
  hv_error *err = NULL;
  close (ctx->parent_sync_fd);
  if (ctx->opts->caller_only_fd > 2 && ctx->opts->caller_only_fd != ctx->opts->keeper_fd)
    close (ctx->opts->caller_only_fd);
  /* If the create process dies before we are ready, so do we. */
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  /* Our memory is a copy of the caller's, secrets for the monitor's
   * services included (the monitor has its own copy).  execve would
   * drop them, but a keeper never executes: it stays in the sandbox with
   * this memory for its whole life, so they are wiped here, first. */
  for (size_t i = 0; i < ctx->opts->n_service_secrets; i++)
    if (ctx->opts->service_secrets[i].secret)
      explicit_bzero ((char *) ctx->opts->service_secrets[i].secret, strlen (ctx->opts->service_secrets[i].secret));
  init_main (ctx, &err);
  /* After start the exit status is all the caller sees: a command that
   * could not be executed exits as in a shell (126/127). */
  if (err && err->exit_status)
    _exit (err->exit_status);
  _exit (err && err->errno_code == ENOENT ? HV_EXIT_NOT_FOUND : 1);
}
