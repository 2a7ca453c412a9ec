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
#include "oci_tables.h"
#include "process.h"
#include "safe_path.h"
#include "signals.h"
#include "sync.h"
#include "utils.h"

enum
{
  OPT_PROCESS = 1,
  OPT_DETACH,
  OPT_PID_FILE,
  OPT_CONSOLE_SOCKET,
  OPT_TTY,
  OPT_CWD,
  OPT_ENV,
  OPT_USER,
  OPT_ADDITIONAL_GIDS,
  OPT_CAP,
  OPT_NO_NEW_PRIVS,
  OPT_APPARMOR,
  OPT_PROCESS_LABEL,
  OPT_PRESERVE_FDS,
  OPT_IGNORE_PAUSED,
  OPT_CGROUP,
};

static const struct hv_opt exec_opts[] = {
  { "process", 'p', true, OPT_PROCESS },
  { "detach", 'd', false, OPT_DETACH },
  { "pid-file", 0, true, OPT_PID_FILE },
  { "console-socket", 0, true, OPT_CONSOLE_SOCKET },
  { "tty", 't', false, OPT_TTY },
  { "cwd", 0, true, OPT_CWD },
  { "env", 'e', true, OPT_ENV },
  { "user", 'u', true, OPT_USER },
  { "additional-gids", 'g', true, OPT_ADDITIONAL_GIDS },
  { "cap", 'c', true, OPT_CAP },
  { "no-new-privs", 0, false, OPT_NO_NEW_PRIVS },
  { "apparmor", 0, true, OPT_APPARMOR },
  { "process-label", 0, true, OPT_PROCESS_LABEL },
  { "preserve-fds", 0, true, OPT_PRESERVE_FDS },
  { "ignore-paused", 0, false, OPT_IGNORE_PAUSED },
  { "cgroup", 0, true, OPT_CGROUP },
  { NULL, 0, false, 0 },
};

struct exec_opts
{
  const char *process_file, *pid_file, *console_socket, *cwd, *user, *apparmor;
  bool detach, tty, tty_set, no_new_privs, ignore_paused;
  int preserve_fds;
  oci_strv env, caps, gids;
};

static void
strv_replace (oci_strv *dst, int argc, char **argv)
{
  oci_strv fresh = { 0 };
  for (int i = 0; i < argc; i++)
    oci_strv_push (&fresh, argv[i]);
  for (size_t i = 0; i < dst->n; i++)
    free (dst->v[i]);
  free (dst->v);
  *dst = fresh;
}

/* Apply command-line overrides on top of the container's process. */
static int
apply_overrides (oci_process *p, struct exec_opts *o, hv_error **err)
{
  if (o->tty_set)
    p->terminal = o->tty;
  if (o->cwd)
    {
      free (p->cwd);
      p->cwd = xstrdup (o->cwd);
    }
  for (size_t i = 0; i < o->env.n; i++)
    {
      const char *eq = strchr (o->env.v[i], '=');
      if (eq == NULL)
        return hv_error_set (err, 0, "exec: --env \"%s\" is not KEY=value", o->env.v[i]);
      /* Replace an existing variable of the same name. */
      size_t klen = (size_t) (eq - o->env.v[i]) + 1;
      bool replaced = false;
      for (size_t j = 0; j < p->env.n && !replaced; j++)
        if (strncmp (p->env.v[j], o->env.v[i], klen) == 0)
          {
            free (p->env.v[j]);
            p->env.v[j] = xstrdup (o->env.v[i]);
            replaced = true;
          }
      if (!replaced)
        oci_strv_push (&p->env, o->env.v[i]);
    }
  if (o->user)
    {
      char *end;
      unsigned long uid = strtoul (o->user, &end, 10);
      if (end == o->user || (*end != '\0' && *end != ':'))
        return hv_error_set (err, 0, "exec: --user \"%s\" must be UID[:GID]", o->user);
      p->user.uid = (uint32_t) uid;
      if (*end == ':')
        {
          char *gend;
          p->user.gid = (uint32_t) strtoul (end + 1, &gend, 10);
          if (*gend != '\0' || gend == end + 1)
            return hv_error_set (err, 0, "exec: --user \"%s\" must be UID[:GID]", o->user);
        }
    }
  if (o->gids.n)
    {
      free (p->user.additional_gids);
      p->user.additional_gids = xmalloc0 (o->gids.n * sizeof (uint32_t));
      p->user.n_additional_gids = o->gids.n;
      for (size_t i = 0; i < o->gids.n; i++)
        p->user.additional_gids[i] = (uint32_t) strtoul (o->gids.v[i], NULL, 10);
    }
  for (size_t i = 0; i < o->caps.n; i++)
    {
      if (oci_capability_from_name (o->caps.v[i]) < 0)
        return hv_error_set (err, 0, "exec: unknown capability \"%s\"", o->caps.v[i]);
      p->capabilities.present = true;
      oci_strv_push (&p->capabilities.bounding, o->caps.v[i]);
      oci_strv_push (&p->capabilities.effective, o->caps.v[i]);
      oci_strv_push (&p->capabilities.permitted, o->caps.v[i]);
    }
  if (o->no_new_privs)
    p->no_new_privileges = true;
  if (o->apparmor)
    {
      free (p->apparmor_profile);
      p->apparmor_profile = xstrdup (o->apparmor);
    }
  return 0;
}

static int
parse_exec (int argc, char **argv, struct exec_opts *o, const char **id, int *cmd_index, hv_error **err)
{
  struct hv_opt_iter it = { argc, argv, 1, "exec" };
  const char *arg;
  int opt;
  while ((opt = hv_opt_next (&it, exec_opts, &arg, err)) > 0)
    switch (opt)
      {
      case OPT_PROCESS:
        o->process_file = arg;
        break;
      case OPT_DETACH:
        o->detach = hv_opt_bool (arg);
        break;
      case OPT_PID_FILE:
        o->pid_file = arg;
        break;
      case OPT_CONSOLE_SOCKET:
        o->console_socket = arg;
        break;
      case OPT_TTY:
        o->tty = hv_opt_bool (arg);
        o->tty_set = true;
        break;
      case OPT_CWD:
        o->cwd = arg;
        break;
      case OPT_ENV:
        oci_strv_push (&o->env, arg);
        break;
      case OPT_USER:
        o->user = arg;
        break;
      case OPT_ADDITIONAL_GIDS:
        oci_strv_push (&o->gids, arg);
        break;
      case OPT_CAP:
        oci_strv_push (&o->caps, arg);
        break;
      case OPT_NO_NEW_PRIVS:
        o->no_new_privs = hv_opt_bool (arg);
        break;
      case OPT_APPARMOR:
        o->apparmor = arg;
        break;
      case OPT_PRESERVE_FDS:
        if (hv_opt_preserve_fds ("exec", arg, &o->preserve_fds, err) < 0)
          return -1;
        break;
      case OPT_IGNORE_PAUSED:
        o->ignore_paused = true;
        break;
      default:
        break;
      }
  if (opt < 0)
    return -1;
  if (it.index >= argc)
    return hv_error_set (err, 0, "exec: a container id is required");
  *id = argv[it.index];
  *cmd_index = it.index + 1;
  if (o->process_file == NULL && *cmd_index >= argc)
    return hv_error_set (err, 0, "exec: give a command or --process FILE");
  return 0;
}

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
  struct exec_opts *o;
  int pidfd;
  int sync;
};

/* The process inside the container: never returns. */
static void __attribute__ ((noreturn))
exec_inner (struct exec_child *x, bool userns)
{
  hv_error *err = NULL;
  struct hv_process_ctx pctx = { .process = &x->spec->process, .seccomp = &x->spec->linux_cfg.seccomp,
                                 .procfd = -1, .preserve_fds = x->o->preserve_fds, .seccomp_listener = -1,
                                 .userns = userns,
                                 .landlock = oci_kv_get (&x->spec->annotations, "run.haven.landlock") };
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
  _exit (err && err->errno_code == ENOENT ? 127 : 126);
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

int
cmd_exec (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  struct exec_opts o = { 0 };
  const char *id = NULL;
  int cmd_index = 0;
  cleanup_container hv_container *c = NULL;
  cleanup_spec oci_spec *spec = NULL;
  int ret = -1;
  (void) g;
  if (parse_exec (argc, argv, &o, &id, &cmd_index, err) < 0)
    goto out;
  if (hv_container_load (g, id, &c, err) < 0 || hv_container_load_config (c, &spec, err) < 0)
    goto out;
  enum hv_status st = hv_container_status (c);
  if (st == HV_STATUS_STOPPED || st == HV_STATUS_CREATING)
    {
      hv_error_set (err, 0, "container not running");
      goto out;
    }
  if (st == HV_STATUS_PAUSED && !o.ignore_paused)
    {
      hv_error_set (err, 0, "container %s is paused, unpause it first", id);
      goto out;
    }
  if (o.process_file)
    {
      cleanup_free char *text = NULL;
      size_t len;
      oci_process *p = NULL;
      if (oci_read_file (o.process_file, &text, &len, err) < 0
          || oci_process_parse (text, len, o.process_file, &p, err) < 0)
        goto out;
      /* The container's process is replaced wholesale by the file's. */
      oci_spec_free_process_fields (&spec->process);
      spec->process = *p;
      free (p);
    }
  else
    strv_replace (&spec->process.args, argc - cmd_index, argv + cmd_index);
  if (apply_overrides (&spec->process, &o, err) < 0)
    goto out;
  hv_caps_warn_unavailable (&spec->process.capabilities);
  if (spec->process.terminal && o.console_socket == NULL)
    {
      hv_error_set (err, 0, "exec: a terminal needs --console-socket");
      goto out;
    }

  int pidfd = (int) syscall (SYS_pidfd_open, c->pid, 0);
  if (pidfd < 0 || !hv_container_alive (c))
    {
      hv_error_set (err, 0, "container not running");
      goto out;
    }
  int sock[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) < 0)
    {
      close (pidfd);
      hv_error_set (err, errno, "socketpair");
      goto out;
    }
  if (!o.detach)
    prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  struct exec_child x = { .c = c, .spec = spec, .o = &o, .pidfd = pidfd, .sync = sock[1] };
  pid_t outer = fork ();
  if (outer == 0)
    {
      close (sock[0]);
      exec_outer (&x);
    }
  close (sock[1]);
  close (pidfd);
  pid_t pid = -1;
  for (;;)
    {
      enum hv_sync_type type;
      cleanup_free char *payload = NULL;
      int fd = -1;
      if (hv_sync_recv (sock[0], &type, &payload, &fd, err) < 0)
        break;
      if (type == HV_SYNC_GRANDCHILD)
        {
          pid = atoi (payload);
          waitpid (outer, NULL, 0);
          outer = -1;
        }
      else if (type == HV_SYNC_CONSOLE)
        {
          int r = hv_console_send (o.console_socket, fd, err);
          close (fd);
          if (r < 0)
            break;
        }
      else if (type == HV_SYNC_READY)
        {
          ret = 0;
          break;
        }
      else
        {
          if (fd >= 0)
            close (fd);
          hv_error_set (err, 0, "%s", type == HV_SYNC_ERROR ? payload : "exec: unexpected sync message");
          break;
        }
    }
  close (sock[0]);
  if (outer > 0)
    waitpid (outer, NULL, 0);
  if (ret == 0 && pid <= 0)
    ret = hv_error_set (err, 0, "exec: the process's pid was never reported");
  if (ret < 0)
    {
      if (pid > 0)
        {
          kill (pid, SIGKILL);
          waitpid (pid, NULL, 0);
        }
      goto out;
    }
  if (o.pid_file && write_pid_file (o.pid_file, pid, err) < 0)
    {
      ret = -1;
      goto out;
    }
  if (o.detach)
    goto out;
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
  hv_exit_status = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
out:
  oci_strv_free (&o.env);
  oci_strv_free (&o.caps);
  oci_strv_free (&o.gids);
  return ret;
}
