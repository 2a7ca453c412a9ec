/* The maker: the child of hv_sandbox_make_start that makes a sandbox with
 * `haven run`'s steps (run_steps.h), creates and starts its container in
 * keeper mode, and hands the caller what it needs to hold it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "container.h"
#include "exit_status.h"
#include "policy_env.h"
#include "run_hint.h"
#include "run_steps.h"
#include "runtime.h"
#include "safe_path.h"
#include "sandbox_priv.h"
#include "signals.h"
#include "utils.h"

/* Names in the config's environment that the policy or haven set (env.set,
 * set_from_*, what credentials and the gateway give): a command's request
 * never replaces them.  Every name there that the host rules would not
 * pass, or whose value is not the host's, was set so. */
static void
fixed_names (const hv_policy *p, const oci_strv *env, oci_strv *out)
{
  for (size_t i = 0; i < p->env_set.n; i++)
    oci_strv_push_unique (out, p->env_set.v[i].key);
  for (size_t i = 0; i < p->n_env_from; i++)
    oci_strv_push_unique (out, p->env_from[i].name);
  for (size_t i = 0; i < env->n; i++)
    {
      size_t klen = strcspn (env->v[i], "=");
      cleanup_free char *name = strndup (env->v[i], klen);
      if (name == NULL)
        continue;
      const char *host = getenv (name);
      const char *value = env->v[i][klen] == '=' ? env->v[i] + klen + 1 : "";
      if (!hv_env_passes (p, name) || host == NULL || strcmp (host, value) != 0)
        oci_strv_push_unique (out, name);
    }
}

static void
copy_strv (oci_strv *to, const oci_strv *from)
{
  for (size_t i = 0; i < from->n; i++)
    oci_strv_push (to, from->v[i]);
}

/* Whether `sh` may run in the sandbox (what a client that runs shell
 * lines needs to know): not under process.block_shell, and under an
 * allow_exec list only when it names sh. */
static bool
shell_allowed (const hv_policy *p)
{
  if (p->block_shell.value)
    return false;
  if (p->allow_exec.n == 0)
    return true;
  for (size_t i = 0; i < p->allow_exec.n; i++)
    {
      const char *slash = strrchr (p->allow_exec.v[i], '/');
      if (strcmp (slash ? slash + 1 : p->allow_exec.v[i], "sh") == 0)
        return true;
    }
  return false;
}

/* create + start in keeper mode; the container is the caller's once the
 * maker exits: it does not die with the maker. */
static int open_workspace (const struct hv_sandbox_making *mk, struct hv_sandbox_record *r, hv_error **err);

static int
make_container (struct hv_run_steps *st, const struct hv_sandbox_making *mk, int record_fd,
                struct hv_sandbox_record *r, hv_error **err)
{
  const char *label = mk->label;
  if (hv_run_steps_state_root (st, err) < 0)
    return -1;
  struct hv_runtime rt = { .root = st->state_root };
  int kp[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, kp) < 0)
    return hv_error_set (err, errno, "socketpair for the keeper");
  r->fds[HV_SBR_KEEPER] = kp[0];
  cleanup_close int sandbox_end = kp[1];
  struct hv_create_opts co = { .die_with_runtime = false, .keep_child_reapable = false, .keeper_fd = sandbox_end };
  hv_run_steps_create_opts (st, label, &co);
  /* Init is our copy and, until it serves, holds all we hold: with our
   * end of the record's socket, a maker killed before init serves would
   * leave the caller waiting for a hang-up that never comes. */
  co.caller_only_fd = record_fd;
  cleanup_container hv_container *c = NULL;
  int pidfd = -1;
  if (hv_container_create (&rt, &co, &c, &pidfd, err) < 0)
    {
      hv_run_hint_namespaces ("the service's sandboxes need them (haven run falls back to Landlock and seccomp)",
                              err);
      return -1;
    }
  r->fds[HV_SBR_PIDFD] = pidfd;
  r->init_pid = c->pid;
  /* The workspace is opened between create and start: the sandbox's
   * mounts are all made, nothing of it has run yet, and its init is not
   * yet the keeper, which makes itself non-dumpable (then a rootless
   * service may no longer open its root). */
  bool failed = pidfd < 0;
  if (failed)
    hv_error_set (err, errno, "pidfd of the sandbox's init");
  else
    failed = open_workspace (mk, r, err) < 0 || hv_container_start (&rt, c, err) < 0;
  if (failed)
    {
      cleanup_error hv_error *ignored = NULL;
      kill (c->pid, SIGKILL);
      hv_wait_exit (c->pid, 5000);
      hv_container_destroy (&rt, c, &ignored);
      return -1;
    }
  return 0;
}

/* The workspace as the sandbox sees it, opened through its init's root:
 * the files API (sandbox_files.h) crosses no mount, so every mount the
 * policy put over part of the workspace (protected paths read-only, hidden
 * secrets masked) is a refusal there, where the host's path would give the
 * files beneath them (a hook written into the host's .git/hooks, the
 * secrets read), and a write never renames onto a path the sandbox has
 * mounted over (which would detach that mount in the sandbox).  The path
 * is resolved in the sandbox's root before any command of it has run. */
static int
open_workspace_in_sandbox (const struct hv_sandbox_record *r, const char *workspace, hv_error **err)
{
  char proc[64];
  snprintf (proc, sizeof proc, "/proc/%d/root", (int) r->init_pid);
  cleanup_close int root = open (proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return hv_error_set (err, errno, "open the sandbox's root %s", proc);
  /* /proc answered for the pid: the pidfd says it was still the init's. */
  if (syscall (SYS_pidfd_send_signal, r->fds[HV_SBR_PIDFD], 0, NULL, 0) < 0)
    return hv_error_set (err, errno, "the sandbox's init (pid %d)", (int) r->init_pid);
  int ws = hv_openat2 (root, workspace, O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                       RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (ws < 0)
    return hv_error_set (err, errno, "open the workspace %s in the sandbox", workspace);
  return ws;
}

/* The workspace's fd for the files API: the sandbox's own view.  Where
 * that cannot be opened (a kernel or a setup that refuses /proc/INIT/root
 * to the service), a scratch workspace may use the host's path (nothing
 * is mounted over a part of it, nothing in it is the host's), a
 * project's may not: the host's copy holds what the policy hides and
 * protects, so the sandbox is not made (fail closed). */
static int
open_workspace (const struct hv_sandbox_making *mk, struct hv_sandbox_record *r, hv_error **err)
{
  int ws = open_workspace_in_sandbox (r, mk->workspace, err);
  if (ws < 0 && mk->scratch_dir && ((*err)->errno_code == EACCES || (*err)->errno_code == EPERM))
    {
      hv_error_free (err);
      ws = hv_open_host_nofollow (mk->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (ws < 0)
        return hv_error_set (err, errno, "open the workspace %s", mk->workspace);
    }
  if (ws < 0)
    return -1;
  r->fds[HV_SBR_WORKSPACE] = ws;
  return 0;
}

static int
fill_record (struct hv_run_steps *st, const struct hv_sandbox_making *mk, struct hv_sandbox_record *r,
             hv_error **err)
{
  oci_spec *spec = NULL;
  if (oci_spec_parse (st->config_json, strlen (st->config_json), "the sandbox's config", &spec, err) < 0)
    return -1;
  /* The audit listener is this process's child until it has the filter's
   * connection, which init made while it was created (a pipe's worth of
   * microseconds behind): the sandbox outlives this process, and so must
   * it (audit_monitor.h). */
  if (spec->linux_cfg.seccomp.listener_path)
    hv_audit_wait_connected (&st->audit, 2000);
  r->id = xstrdup (mk->label);
  r->state_root = xstrdup (st->state_root);
  r->bundle = xstrdup (st->bundle);
  r->workspace = xstrdup (mk->workspace);
  r->policy_name = xstrdup (st->policy->name);
  r->config = xstrdup (st->config_json);
  r->audit_socket = xstrdup (st->audit.socket_path ? st->audit.socket_path : "");
  r->home_state = xstrdup (st->home_state ? st->home_state : "");
  r->scratch = mk->scratch_dir != NULL;
  r->refuse_project_links = st->policy->refuse_project_links.value;
  r->audit_log = xstrdup (st->audit.log_path ? st->audit.log_path : "");
  r->run = xstrdup (st->run_id);
  r->syscall_profile = xstrdup (st->policy->syscall_profile ? st->policy->syscall_profile : "agent");
  copy_strv (&r->syscall_deny, &st->policy->syscall_deny);
  r->shell = shell_allowed (st->policy);
  /* The parser bounds timeouts to 30 days: the cast cannot truncate. */
  r->timeout_s = st->policy->timeout_s.set ? (uint32_t) st->policy->timeout_s.value : 0;
  copy_strv (&r->env, &spec->process.env);
  copy_strv (&r->env_pass, &st->policy->env_pass);
  copy_strv (&r->env_deny, &st->policy->env_deny);
  fixed_names (st->policy, &spec->process.env, &r->env_fixed);
  r->audit_listener = st->audit.listener;
  r->audit_start = st->audit.start;
  r->fds[HV_SBR_AUDIT_LOG] = st->audit.log_fd;
  st->audit.log_fd = -1;
  r->fds[HV_SBR_HOME_LOCK] = st->home_state_lock;
  st->home_state_lock = -1;
  r->pasta_pid = st->pasta.pid;
  r->fds[HV_SBR_PASTA] = st->pasta.pidfd;
  st->pasta.pidfd = -1;
  oci_spec_free (spec);
  return 0;
}

/* The maker runs in a copy of the caller: its signal dispositions and
 * mask (a service's signalfd) are not the create's, and every
 * descriptor of the caller's (its clients, other sandboxes' keeper
 * sockets) must not reach the monitor, pasta or the audit listener,
 * which outlive the maker: a keeper socket held there would keep that
 * sandbox alive after the caller is gone. */
int
hv_sandbox_maker_fd3 (int sock)
{
  sigset_t all;
  sigemptyset (&all);
  sigprocmask (SIG_SETMASK, &all, NULL);
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      signal (sig, SIG_DFL);
  if (sock != 3 && dup3 (sock, 3, 0) < 0)
    return -1;
  /* Kept across an exec of the maker (exec_maker), closed on the
   * maker's own execs (hooks, pasta). */
  if (sock == 3 && fcntl (3, F_SETFD, 0) < 0)
    return -1;
  return close_range (4, ~0U, 0) < 0 ? -1 : 3;
}

static int
reset_process (int sock)
{
  sock = hv_sandbox_maker_fd3 (sock);
  if (sock >= 0 && fcntl (sock, F_SETFD, FD_CLOEXEC) < 0)
    return -1;
  return sock;
}

int
hv_sandbox_maker_run (const struct hv_sandbox_opts *o, const struct hv_sandbox_making *mk, int sock)
{
  sock = reset_process (sock);
  if (sock < 0)
    return HV_EXIT_HAVEN_FAILED;
  static char keeper_arg[] = "haven-keeper";
  static char *keeper_argv[] = { keeper_arg, NULL };
  struct hv_run_steps_opts so = { .policy = o->policy, .project = mk->workspace, .cmd = keeper_argv,
                                  .haven_argv0 = o->haven_argv0, .label = mk->label };
  struct hv_run_steps st = HV_RUN_STEPS_INIT (&so);
  struct hv_sandbox_record r;
  hv_sandbox_record_init (&r);
  hv_error *err = NULL;
  int ret = hv_run_steps_make (&st, &err);
  if (ret == 0)
    ret = make_container (&st, mk, sock, &r, &err);
  if (ret == 0)
    ret = fill_record (&st, mk, &r, &err);
  if (ret < 0)
    {
      /* As `haven run` ends a trail whose sandbox did not run. */
      int status = err->exit_status ? err->exit_status : HV_EXIT_HAVEN_FAILED;
      if (r.init_pid > 0)
        {
          cleanup_error hv_error *ignored = NULL;
          struct hv_runtime rt = { .root = st.state_root };
          cleanup_container hv_container *c = NULL;
          if (hv_container_load (&rt, mk->label, &c, &ignored) == 0)
            hv_container_delete (&rt, c, true, &ignored);
        }
      hv_pasta_stop (&st.pasta);
      hv_audit_end (&st.audit, status);
      hv_run_steps_release (&st);
      hv_sandbox_record_release (&r);
      hv_sandbox_record_init (&r);
      r.ok = false;
      r.error = xstrdup (err->msg);
      r.errno_code = err->errno_code;
      r.exit_status = status;
      hv_error_free (&err);
      hv_sandbox_record_send (sock, &r, &err);
      return status;
    }
  r.ok = true;
  if (hv_sandbox_record_send (sock, &r, &err) < 0)
    return HV_EXIT_HAVEN_FAILED; /* the caller cleans what it cannot hold */
  /* The sandbox is the caller's now: nothing of it is released here (the
   * bundle, the layers' lock and the trail live on in the caller). */
  return 0;
}
