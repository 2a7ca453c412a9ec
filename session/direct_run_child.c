/* The command's process under a direct plan (direct_run.h): from fork()
 * to execve(), as the caller, in the caller's namespaces. */
#include "config.h"

#include <errno.h>
#include <linux/keyctl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capabilities.h"
#include "direct_run_priv.h"
#include "exit_status.h"
#include "landlock_rules.h"
#include "process.h"
#include "seccomp_filter.h"
#include "utils.h"

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT (1 << 0)
#define SECBIT_NOROOT_LOCKED (1 << 1)
#define SECBIT_NO_SETUID_FIXUP (1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED (1 << 3)
#endif

/* The reason, for the parent to say, and the status a shell would give. */
static _Noreturn void
fail (const struct hv_direct_child *c, int status, const char *fmt, ...)
{
  char buf[1024];
  int n = snprintf (buf, sizeof (buf), "%d ", status);
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (buf + n, sizeof (buf) - (size_t) n, fmt, ap);
  va_end (ap);
  if (write_all (c->report_fd, buf, strlen (buf)) < 0)
    _exit (status);
  _exit (status);
}

static _Noreturn void
fail_err (const struct hv_direct_child *c, hv_error *err)
{
  fail (c, err->exit_status ? err->exit_status : HV_EXIT_HAVEN_FAILED, "%s", err->msg);
}

#ifdef __GLIBC__
#define rlimit_resource(r) ((__rlimit_resource_t) (r))
#else
#define rlimit_resource(r) (r)
#endif

static void
set_rlimits (const struct hv_direct_child *c)
{
  const oci_process *p = &c->spec->process;
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      struct rlimit rl = { .rlim_cur = p->rlimits[i].soft, .rlim_max = p->rlimits[i].hard };
      struct rlimit now;
      if (setrlimit (rlimit_resource (p->rlimits[i].resource), &rl) == 0)
        continue;
      int e = errno;
      /* A policy's limit is a ceiling.  Where the caller's hard limit is
       * already below it (a container started with --ulimit), the rule
       * holds with the caller's own, which no process here may raise. */
      if (e == EPERM && getrlimit (rlimit_resource (p->rlimits[i].resource), &now) == 0 && now.rlim_max < rl.rlim_max)
        {
          rl.rlim_max = now.rlim_max;
          if (rl.rlim_cur > rl.rlim_max)
            rl.rlim_cur = rl.rlim_max;
          if (setrlimit (rlimit_resource (p->rlimits[i].resource), &rl) == 0)
            continue;
          e = errno;
        }
      fail (c, HV_EXIT_HAVEN_FAILED, "setrlimit %s (soft %llu, hard %llu): %s", p->rlimits[i].type,
            (unsigned long long) rl.rlim_cur, (unsigned long long) rl.rlim_max, strerror (e));
    }
}

/* Every capability gone.  Root (in a container, root of its user
 * namespace) first locks the rules that would give a uid-0 program
 * capabilities at execve back, and empties the bounding set; then
 * effective, permitted, inheritable and ambient are cleared.  An
 * ordinary user holds none and cannot change the bounding set: with
 * no_new_privs no execve can give it any. */
static void
drop_capabilities (const struct hv_direct_child *c)
{
  static const oci_capabilities none = { 0 };
  hv_error *err = NULL;
  if (geteuid () == 0)
    {
      int bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED;
      if (prctl (PR_SET_SECUREBITS, bits, 0, 0, 0) < 0 && errno != EPERM)
        fail (c, HV_EXIT_HAVEN_FAILED, "set securebits: %s", strerror (errno));
    }
  oci_capabilities bounding = none;
  bounding.present = true;
  if (hv_caps_drop_bounding (&bounding, &err) < 0)
    {
      /* Without CAP_SETPCAP (an ordinary user) the bounding set stays:
       * harmless under no_new_privs with nothing permitted. */
      if (err->errno_code != EPERM)
        fail_err (c, err);
      hv_error_free (&err);
    }
  if (hv_caps_apply (&none, &err) < 0)
    fail_err (c, err);
}

static void
restrict_landlock (const struct hv_direct_child *c)
{
  const hv_direct_plan *plan = c->plan;
  /* The plan's exec list is "execute (and read)": its directories are
   * listed too (a rule for a path already granted adds to its rights). */
  cleanup_strv oci_strv read = { 0 };
  for (size_t i = 0; i < plan->read.n; i++)
    oci_strv_push (&read, plan->read.v[i]);
  for (size_t i = 0; i < plan->exec.n; i++)
    oci_strv_push (&read, plan->exec.v[i]);
  struct hv_landlock_rules rules = { .list = &plan->list,
                                     .read = &read,
                                     .write = c->write,
                                     .exec = &plan->exec,
                                     .tcp_handled = plan->tcp_handled,
                                     .tcp_connect_ports = plan->tcp_connect_ports,
                                     .n_tcp_connect_ports = plan->n_tcp_connect_ports,
                                     .scope_abstract_unix = plan->scope_abstract_unix,
                                     .scope_signal = plan->scope_signal };
  hv_error *err = NULL;
  if (hv_landlock_restrict (&rules, false, &err) < 0)
    fail_err (c, err);
}

_Noreturn void
hv_direct_child_exec (const struct hv_direct_child *c)
{
  const oci_process *p = &c->spec->process;
  hv_error *err = NULL;
  /* haven's handlers and mask are not the command's. */
  sigset_t all;
  sigemptyset (&all);
  sigprocmask (SIG_SETMASK, &all, NULL);
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      signal (sig, SIG_DFL);
  /* Its own session: the user's terminal is not its controlling one, so
   * nothing in the sandbox can push input into the user's shell (TIOCSTI)
   * or signal its process group; haven forwards the user's signals. */
  if (setsid () < 0)
    fail (c, HV_EXIT_HAVEN_FAILED, "setsid: %s", strerror (errno));
  /* process.terminal: a terminal of its own, haven's pty (haven copies
   * between it and the user's, as for the namespaced sandbox). */
  if (c->tty >= 0)
    {
      if (ioctl (c->tty, TIOCSCTTY, 0) < 0)
        fail (c, HV_EXIT_HAVEN_FAILED, "make the pty the controlling terminal: %s", strerror (errno));
      for (int fd = 0; fd < 3; fd++)
        if (dup2 (c->tty, fd) < 0)
          fail (c, HV_EXIT_HAVEN_FAILED, "pty as fd %d: %s", fd, strerror (errno));
      if (c->tty > 2)
        close (c->tty);
    }
  /* Dies with haven: nothing runs on without its guard. */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    fail (c, HV_EXIT_HAVEN_FAILED, "PR_SET_PDEATHSIG: %s", strerror (errno));
  if (getppid () == 1)
    _exit (HV_EXIT_HAVEN_FAILED);
  set_rlimits (c);
  /* A session keyring of its own, as the namespaced sandbox's init
   * joins: the caller's session keys stay out of reach (a kernel
   * without keyrings goes without). */
  syscall (SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL);
  if (p->cwd && chdir (p->cwd) < 0)
    fail (c, HV_EXIT_HAVEN_FAILED, "chdir to %s: %s", p->cwd, strerror (errno));
  if (p->args.n == 0)
    fail (c, HV_EXIT_HAVEN_FAILED, "no command");
  /* As a shell resolves it, before the rules that could hide why. */
  cleanup_free char *exe = NULL, *refused = NULL;
  int e = hv_process_find_exe (p->args.v[0], c->envp, &exe, &refused);
  if (e == ENOENT)
    fail (c, HV_EXIT_NOT_FOUND, "exec: \"%s\": executable file not found", p->args.v[0]);
  if (e != 0)
    fail (c, HV_EXIT_CANNOT_EXECUTE, "exec: \"%s\": %s", p->args.v[0], strerror (e));
  drop_capabilities (c);
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    fail (c, HV_EXIT_HAVEN_FAILED, "set no_new_privs: %s", strerror (errno));
  /* The run's audit listener (audit.log): connected before Landlock,
   * which may leave its socket's directory out of reach. */
  const oci_seccomp *sc = &c->spec->linux_cfg.seccomp;
  int listener = -1;
  if (sc->present && sc->listener_path && sc->listener_path[0]
      && (listener = hv_seccomp_connect_listener (sc->listener_path, &err)) < 0)
    fail_err (c, err);
  restrict_landlock (c);
  if (hv_direct_seccomp_load (c->spec, c->plan, listener, &err) < 0)
    fail_err (c, err);
  if (listener >= 0)
    close (listener);
  umask (p->user.umask.set ? (mode_t) p->user.umask.value : 022);
  /* Nothing of haven's reaches the command but its stdio (the report
   * pipe is close-on-exec already). */
  cloexec_from (3);
  execve (exe, p->args.v, c->envp);
  e = errno;
  /* Refused by Landlock (allow_exec, block_shell), or not a program:
   * 126, as a shell says; a missing interpreter or loader: 127. */
  fail (c, e == ENOENT ? HV_EXIT_NOT_FOUND : HV_EXIT_CANNOT_EXECUTE, "exec %s: %s", exe, strerror (e));
}
