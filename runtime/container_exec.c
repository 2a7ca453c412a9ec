/* exec: run another process in a created or running container.
 *
 * A first child joins the container's cgroup (from the host side), marks
 * itself non-dumpable so container processes cannot reach the runtime
 * through /proc (CVE-2019-5736), enters the container's namespaces through
 * a pidfd of its init, and forks the process that becomes the exec'd
 * program inside the pid namespace. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
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
#include "console.h"
#include "container.h"
#include "exit_status.h"
#include "fault_point.h"
#include "haven_annotations.h"
#include "process.h"
#include "seccomp_filter.h"
#include "safe_path.h"
#include "signals.h"
#include "sync.h"
#include "utils.h"

/* Namespaces of init that differ from ours (setns refuses re-entering
 * some of our own, e.g. the user namespace). */
static int
namespaces_to_join (pid_t pid)
{
  static const struct
  {
    const char *name;
    int flag;
  } ns[] = { { "user", CLONE_NEWUSER }, { "mnt", CLONE_NEWNS },    { "pid", CLONE_NEWPID },
             { "net", CLONE_NEWNET },   { "ipc", CLONE_NEWIPC },   { "uts", CLONE_NEWUTS },
             { "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME } };
  int flags = 0;
  for (size_t i = 0; i < N_ELEMENTS (ns); i++)
    {
      char theirs[64], mine[64];
      struct stat a, b;
      snprintf (theirs, sizeof (theirs), "/proc/%d/ns/%s", pid, ns[i].name);
      snprintf (mine, sizeof (mine), "/proc/self/ns/%s", ns[i].name);
      if (stat (theirs, &a) == 0 && stat (mine, &b) == 0 && (a.st_ino != b.st_ino || a.st_dev != b.st_dev))
        flags |= ns[i].flag;
    }
  return flags;
}

struct exec_child
{
  const hv_container *c;
  oci_spec *spec;
  const struct hv_exec_opts *o;
  int pidfd;
  int sync;
  int listener;     /* connected to the seccomp listener, or -1 */
  char *state_json; /* the container's state, for the listener */
};

/* The process inside the container: never returns. */
static void __attribute__ ((noreturn))
exec_inner (struct exec_child *x, bool userns)
{
  hv_error *err = NULL;
  struct hv_process_ctx pctx = { .process = &x->spec->process, .seccomp = &x->spec->linux_cfg.seccomp,
                                 .procfd = -1, .preserve_fds = x->o->preserve_fds, .seccomp_listener = x->listener,
                                 .state_json = x->state_json, .userns = userns,
                                 .landlock = oci_kv_get (&x->spec->annotations, HV_LANDLOCK_ANNOTATION),
                                 .seccomp_extra = oci_kv_get (&x->spec->annotations, HV_SECCOMP_ANNOTATION) };
  /* No PDEATHSIG here: our parent (the outer process) exits right away. */
  if (userns && (setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0))
    {
      hv_error_set (&err, errno, "become root in the container's user namespace");
      goto fail;
    }
  {
    cleanup_error hv_error *ignored = NULL;
    pctx.procfd = hv_open_private_procfs (&ignored);
  }
  if (x->spec->process.terminal)
    {
      cleanup_close int master = hv_console_setup (&x->spec->process, false, &err);
      if (master < 0 || hv_sync_send (x->sync, HV_SYNC_CONSOLE, NULL, 0, master, &err) < 0)
        goto fail;
    }
  else if (hv_console_detach (&err) < 0)
    goto fail;
  pctx.setgroups_denied = userns && hv_setgroups_denied (pctx.procfd);
  if (hv_process_prepare (&pctx, &err) < 0)
    goto fail;
  if (hv_sync_send (x->sync, HV_SYNC_READY, NULL, 0, -1, &err) < 0)
    goto fail;
  close (x->sync);
  x->sync = -1;
  hv_process_exec (&pctx, &err);
fail:
  if (x->sync >= 0)
    hv_sync_send_error (x->sync, err);
  else if (err)
    {
      cleanup_free char *line = xasprintf ("haven-runc: %s\n", err->msg);
      write_all (2, line, strlen (line));
    }
  _exit (err && err->errno_code == ENOENT ? HV_EXIT_NOT_FOUND : HV_EXIT_CANNOT_EXECUTE);
}

static void __attribute__ ((noreturn))
exec_outer (struct exec_child *x)
{
  hv_error *err = NULL;
  /* Not dumpable: a container process cannot open our /proc entries
   * (exe, fds, mem) while we are inside its namespaces. */
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (x->c->cgroup_path[0] && hv_cgroup_join (x->c->cgroup_path, getpid (), &err) < 0)
    goto fail;
  int flags = namespaces_to_join (x->c->pid);
  if (flags && setns (x->pidfd, flags) < 0)
    {
      hv_error_set (&err, errno, "join the namespaces of container %s", x->c->id);
      goto fail;
    }
  close (x->pidfd);
  /* Returns only in the child, inside the pid namespace. */
  if (hv_sync_fork_reported (x->sync, "fork", &err) < 0)
    goto fail;
  exec_inner (x, (flags & CLONE_NEWUSER) != 0);
fail:
  hv_sync_send_error (x->sync, err);
  _exit (1);
}

/* Refuse what exec cannot do before anything is started. */
static int
check_exec (const hv_container *c, const oci_spec *spec, const struct hv_exec_opts *o, hv_error **err)
{
  enum hv_status st = hv_container_status (c);
  if (st == HV_STATUS_STOPPED || st == HV_STATUS_CREATING)
    return hv_error_set (err, 0, "container not running");
  if (st == HV_STATUS_PAUSED && !o->ignore_paused)
    return hv_error_set (err, 0, "container %s is paused, unpause it first", c->id);
  if (spec->process.terminal && o->console_socket == NULL)
    return hv_error_set (err, 0, "exec: a terminal needs --console-socket");
  return 0;
}

/* Answer the exec'd side until its process is ready: its pid (*pid), its
 * terminal (sent to the console socket), or its error. */
static int
drive_exec (int sock, pid_t *outer, const struct hv_exec_opts *o, pid_t *pid, hv_error **err)
{
  for (;;)
    {
      enum hv_sync_type type;
      cleanup_free char *payload = NULL;
      int fd = -1;
      if (hv_sync_recv (sock, &type, &payload, &fd, err) < 0)
        return -1;
      if (type == HV_SYNC_GRANDCHILD)
        {
          *pid = atoi (payload);
          waitpid (*outer, NULL, 0);
          *outer = -1;
        }
      else if (type == HV_SYNC_CONSOLE)
        {
          int r = hv_console_send (o->console_socket, fd, err);
          close (fd);
          if (r < 0)
            return -1;
        }
      else if (type == HV_SYNC_READY)
        return *pid > 0 ? 0 : hv_error_set (err, 0, "exec: the process's pid was never reported");
      else
        {
          if (fd >= 0)
            close (fd);
          if (type == HV_SYNC_ERROR)
            return hv_sync_error (payload, err);
          return hv_error_set (err, 0, "exec: unexpected sync message");
        }
    }
}

/* The container's seccomp listener (its audit monitor), connected here
 * while its host path is reachable: the process loads the container's
 * filter again, and the listener must get its notify fd too.  A listener
 * that is gone refuses the exec (its denials could not be answered). */
static int
connect_listener (const oci_spec *spec, hv_error **err)
{
  const oci_seccomp *sc = &spec->linux_cfg.seccomp;
  if (!sc->present || sc->listener_path == NULL || sc->listener_path[0] == '\0')
    return -1;
  return hv_seccomp_connect_listener (sc->listener_path, err);
}

/* Start the process: returns its pid once it is ready to exec, or -1
 * with nothing left running. */
static pid_t
spawn_exec (const hv_container *c, oci_spec *spec, const struct hv_exec_opts *o, hv_error **err)
{
  int pidfd = (int) syscall (SYS_pidfd_open, c->pid, 0);
  if (pidfd < 0 || !hv_container_alive (c))
    {
      if (pidfd >= 0)
        close (pidfd);
      return hv_error_set (err, 0, "container not running");
    }
  cleanup_close int listener = connect_listener (spec, err);
  if (listener < 0 && *err)
    {
      close (pidfd);
      return -1;
    }
  hv_fault_point ("exec.listener-connected");
  cleanup_free char *state_json = hv_container_state_json (c, hv_container_status (c), false);
  int sock[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) < 0)
    {
      close (pidfd);
      return hv_error_set (err, errno, "socketpair");
    }
  if (!o->detach)
    prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  struct exec_child x = { .c = c, .spec = spec, .o = o, .pidfd = pidfd, .sync = sock[1], .listener = listener,
                          .state_json = state_json };
  pid_t outer = fork ();
  if (outer == 0)
    {
      close (sock[0]);
      exec_outer (&x);
    }
  close (sock[1]);
  close (pidfd);
  hv_fault_point ("exec.forked");
  pid_t pid = -1;
  int ret = outer < 0 ? hv_error_set (err, errno, "fork") : drive_exec (sock[0], &outer, o, &pid, err);
  close (sock[0]);
  if (outer > 0)
    waitpid (outer, NULL, 0);
  if (ret < 0 && pid > 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
    }
  return ret < 0 ? -1 : pid;
}

int
hv_container_exec (const struct hv_runtime *rt, const hv_container *c, oci_spec *spec, const struct hv_exec_opts *o,
                   int *exit_status, hv_error **err)
{
  (void) rt;
  *exit_status = 0;
  if (check_exec (c, spec, o, err) < 0)
    return -1;
  hv_caps_warn_unavailable (&spec->process.capabilities);
  pid_t pid = spawn_exec (c, spec, o, err);
  if (pid < 0)
    return -1;
  hv_fault_point ("exec.process-ready");
  if (o->pid_file && write_pid_file (o->pid_file, pid, err) < 0)
    return -1;
  if (o->detach)
    return 0;
  hv_forward_signals_to (pid);
  int status = 0;
  for (;;)
    {
      pid_t w = waitpid (pid, &status, 0);
      if (w == pid)
        break;
      if (w < 0 && errno != EINTR)
        break;
    }
  hv_fault_point ("exec.process-exited");
  *exit_status = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
  return 0;
}
