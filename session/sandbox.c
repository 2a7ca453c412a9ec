/* Making a sandbox in a child (the maker) and holding it in the caller
 * (sandbox.h).  What must be in the caller's memory when the sandbox is
 * destroyed (the project guard's snapshot, the links' start time) is
 * taken here, before the fork. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exit_status.h"
#include "safe_path.h"
#include "sandbox_priv.h"
#include "utils.h"

/* The label names the container, the bundle and the scratch workspace:
 * one path component of a safe alphabet. */
static bool
label_ok (const char *l)
{
  if (l == NULL || l[0] == '\0' || l[0] == '.' || l[0] == '-' || strlen (l) > 64)
    return false;
  for (const char *c = l; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'
          || *c == '.'))
      return false;
  return true;
}

static void
making_free (struct hv_sandbox_making *mk)
{
  if (mk == NULL)
    return;
  hv_project_guard_free (mk->guard);
  free (mk->label);
  free (mk->workspace);
  free (mk->scratch_dir);
  free (mk);
}

/* <scratch_dir>/<label>, 0700, new: scratch_dir (made when missing) must
 * be a directory of ours reached through no link. */
static int
make_scratch (const char *scratch_dir, const char *label, hv_error **err)
{
  int dfd = hv_open_host_nofollow (scratch_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 && errno == ENOENT)
    {
      if (mkdir_p (scratch_dir, 0700, err) < 0 || (mkdir (scratch_dir, 0700) < 0 && errno != EEXIST))
        return -1;
      dfd = hv_open_host_nofollow (scratch_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
  if (dfd < 0)
    return hv_error_set (err, errno, "scratch directory %s (must be reached through no link)", scratch_dir);
  cleanup_close int fd = dfd;
  struct stat st;
  if (fstat (fd, &st) < 0 || st.st_uid != geteuid ())
    return hv_error_set (err, 0, "scratch directory %s is not a directory owned by uid %u", scratch_dir,
                         (unsigned) geteuid ());
  if (mkdirat (fd, label, 0700) < 0)
    return hv_error_set (err, errno, "create the scratch workspace %s/%s", scratch_dir, label);
  return 0;
}

/* The maker as a fresh process (hv_sandbox_opts.maker_exe): the socket
 * as fd 3, what it needs as arguments, the environment as it is (the
 * policy reads HOME, XDG_*, the variables of env.set_from_env and
 * credentials).  Only returns... never: exits 125 when exec fails. */
static __attribute__ ((noreturn)) void
exec_maker (const struct hv_sandbox_opts *o, const struct hv_sandbox_making *mk, int sock)
{
  if (hv_sandbox_maker_fd3 (sock) < 0)
    _exit (HV_EXIT_HAVEN_FAILED);
  char *argv[] = { (char *) "haven", (char *) "__sandbox-maker", (char *) o->policy, mk->workspace, mk->label,
                   (char *) (mk->scratch_dir ? mk->scratch_dir : ""), (char *) (o->haven_argv0 ? o->haven_argv0 : ""),
                   NULL };
  execv (o->maker_exe, argv);
  _exit (HV_EXIT_HAVEN_FAILED);
}

int
hv_sandbox_maker_main (int argc, char **argv)
{
  if (argc != 7 || strcmp (argv[1], "__sandbox-maker") != 0)
    return HV_EXIT_HAVEN_FAILED;
  struct hv_sandbox_opts o = { .policy = argv[2], .label = argv[4], .haven_argv0 = argv[6][0] ? argv[6] : NULL };
  struct hv_sandbox_making mk = { .workspace = argv[3], .label = argv[4], .scratch_dir = argv[5][0] ? argv[5] : NULL };
  o.scratch_dir = mk.scratch_dir;
  o.project = mk.scratch_dir ? NULL : mk.workspace;
  return hv_sandbox_maker_run (&o, &mk, 3);
}

int
hv_sandbox_make_start (const struct hv_sandbox_opts *o, struct hv_sandbox_maker *m, hv_error **err)
{
  *m = (struct hv_sandbox_maker) HV_SANDBOX_MAKER_INIT;
  if (o == NULL || o->policy == NULL || !label_ok (o->label))
    return hv_error_set (err, EINVAL, "sandbox: a policy and a label (letters, digits, - _ .) are needed");
  struct hv_sandbox_making *mk = xmalloc0 (sizeof (*mk));
  mk->label = xstrdup (o->label);
  if (o->project)
    {
      mk->workspace = realpath (o->project, NULL);
      if (mk->workspace == NULL)
        {
          hv_error_set (err, errno, "project directory %s", o->project);
          goto fail;
        }
      /* What git would execute in the project, recorded before the
       * sandbox exists, checked at destroy (as `haven run` does). */
      if (hv_project_guard_snapshot (mk->workspace, &mk->guard, err) < 0)
        goto fail;
      hv_project_links_start (&mk->links);
    }
  else
    {
      if (o->scratch_dir == NULL)
        {
          hv_error_set (err, EINVAL, "sandbox: neither a project nor a scratch directory");
          goto fail;
        }
      if (make_scratch (o->scratch_dir, o->label, err) < 0)
        goto fail;
      mk->scratch_dir = xstrdup (o->scratch_dir);
      mk->workspace = xasprintf ("%s/%s", o->scratch_dir, o->label);
    }
  int sp[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
    {
      hv_error_set (err, errno, "socketpair for the sandbox's maker");
      goto fail_made;
    }
  pid_t parent = getpid ();
  pid_t pid = fork ();
  if (pid < 0)
    {
      hv_error_set (err, errno, "fork the sandbox's maker");
      close (sp[0]);
      close (sp[1]);
      goto fail_made;
    }
  if (pid == 0)
    {
      close (sp[0]);
      /* A maker outliving its caller would make a sandbox nobody holds. */
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (getppid () != parent)
        _exit (HV_EXIT_HAVEN_FAILED);
      /* A session of its own: what the maker starts that becomes ours
       * without passing through the sandbox's record (its pasta, a
       * sibling of it; its audit listener, reparented) stays in it, and
       * is found by it if the maker dies first (kill_maker_session). */
      setsid ();
      if (o->maker_exe)
        exec_maker (o, mk, sp[1]);
      _exit (hv_sandbox_maker_run (o, mk, sp[1]));
    }
  close (sp[1]);
  m->pid = pid;
  m->fd = sp[0];
  /* Always close-on-exec.  Our child, not yet reaped: the pid is its. */
  m->pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  m->priv = mk;
  return 0;
fail_made:
  if (mk->scratch_dir)
    hv_sandbox_remove_workspace (mk->scratch_dir, mk->label);
fail:
  making_free (mk);
  return -1;
}

/* A maker that died before it handed its sandbox over (killed, crashed,
 * aborted) leaves us what it started outside the container: its pasta
 * (our child from the start: egress_pasta.h's sibling, which dies only
 * with us) and its audit listener (reparented).  They are the children
 * of ours in its session.  The maker is a zombie here, not reaped: its
 * pid, which names the session, is no one else's yet. */
static void
kill_maker_session (pid_t maker)
{
  siginfo_t si;
  while (waitid (P_PID, (id_t) maker, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
    ;
  char path[64];
  snprintf (path, sizeof (path), "/proc/self/task/%d/children", (int) gettid ());
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return;
  long pid;
  /* Our children, unreaped until we reap them: their pids are theirs. */
  while (fscanf (f, "%ld", &pid) == 1)
    if ((pid_t) pid != maker && getsid ((pid_t) pid) == maker)
      kill ((pid_t) pid, SIGKILL);
  fclose (f);
}

static char *
describe_status (int status)
{
  if (WIFEXITED (status))
    return xasprintf ("exited with %d", WEXITSTATUS (status));
  if (WIFSIGNALED (status))
    return xasprintf ("killed by signal %d", WTERMSIG (status));
  return xstrdup ("ended");
}

static void
steal_strv (oci_strv *to, oci_strv *from)
{
  *to = *from;
  *from = (oci_strv){ 0 };
}

static hv_sandbox *
hold (struct hv_sandbox_record *r, struct hv_sandbox_making *mk)
{
  hv_sandbox *sb = xmalloc0 (sizeof (*sb));
  sb->r = *r;
  hv_sandbox_record_init (r);
  sb->making = mk;
  /* The env rules the maker's policy had, and refuse_project_links: all
   * the caller needs of the policy. */
  sb->rules = xmalloc0 (sizeof (*sb->rules));
  sb->rules->name = xstrdup (sb->r.policy_name);
  steal_strv (&sb->rules->env_pass, &sb->r.env_pass);
  steal_strv (&sb->rules->env_deny, &sb->r.env_deny);
  sb->rules->refuse_project_links = (oci_opt_bool){ .set = true, .value = sb->r.refuse_project_links };
  sb->audit = (struct hv_audit){ .log_fd = steal_fd (&sb->r.fds[HV_SBR_AUDIT_LOG]) };
  if (sb->audit.log_fd >= 0)
    {
      sb->audit.listener = sb->r.audit_listener;
      sb->audit.socket_path = sb->r.audit_socket[0] ? xstrdup (sb->r.audit_socket) : NULL;
      sb->audit.policy_name = xstrdup (sb->r.policy_name);
      sb->audit.sandbox = xstrdup (sb->r.id);
      sb->audit.run = xstrdup (sb->r.run);
      sb->audit.start = sb->r.audit_start;
    }
  /* The caller's loop polls it (sandbox.h). */
  int kfd = sb->r.fds[HV_SBR_KEEPER];
  fcntl (kfd, F_SETFL, fcntl (kfd, F_GETFL) | O_NONBLOCK);
  sb->pasta = (struct hv_pasta) HV_PASTA_INIT;
  sb->pasta.pid = sb->r.pasta_pid;
  sb->pasta.pidfd = steal_fd (&sb->r.fds[HV_SBR_PASTA]);
  return sb;
}

/* Until the maker has sent something or exited; whether it has exited. */
static bool
wait_maker (const struct hv_sandbox_maker *m)
{
  struct pollfd p[2] = { { .fd = m->fd, .events = POLLIN }, { .fd = m->pidfd, .events = POLLIN } };
  while (poll (p, 2, -1) < 0 && errno == EINTR)
    ;
  siginfo_t si = { .si_pid = 0 };
  while (waitid (P_PID, (id_t) m->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == EINTR)
    ;
  return si.si_pid == m->pid;
}

int
hv_sandbox_make_finish (struct hv_sandbox_maker *m, hv_sandbox **out, hv_error **err)
{
  *out = NULL;
  struct hv_sandbox_making *mk = m->priv;
  m->priv = NULL;
  int fl = fcntl (m->fd, F_GETFL);
  bool exited = wait_maker (m);
  /* A maker that has exited sent all it ever will: a record cut short
   * is read as far as it goes (the copies of its end that outlive it
   * would keep a blocking read waiting for ever).  One that lives is
   * sending: a read waits, bounded in case it dies halfway. */
  if (fl >= 0)
    fcntl (m->fd, F_SETFL, exited ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
  struct timeval bound = { .tv_sec = 10 };
  setsockopt (m->fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof (bound));
  struct hv_sandbox_record r;
  cleanup_error hv_error *rerr = NULL;
  int rr = hv_sandbox_record_recv (m->fd, &r, &rerr);
  close (m->fd);
  m->fd = -1;
  if (m->pidfd >= 0)
    close (m->pidfd);
  m->pidfd = -1;
  int status = 0;
  if (rr < 0)
    {
      /* One still alive sent a record cut short, or none within the
       * bound: it is done all the same (unreaped, the pid is its). */
      kill (m->pid, SIGKILL);
      kill_maker_session (m->pid);
    }
  while (waitpid (m->pid, &status, 0) < 0 && errno == EINTR)
    ;
  m->pid = 0;
  if (rr < 0)
    {
      /* The maker died (killed, crashed): what it had made goes. */
      cleanup_free char *how = describe_status (status);
      hv_sandbox_remove_leftover (mk->label, mk->scratch_dir);
      making_free (mk);
      hv_error_set (err, 0, "sandbox: %s (the maker %s)", rerr->msg, how);
      /* Not the request's doing but ours (a service answers 500): a
       * system error, the record's when it had one. */
      (*err)->errno_code = rerr->errno_code ? rerr->errno_code : EPIPE;
      return -1;
    }
  if (!r.ok)
    {
      if (mk->scratch_dir)
        hv_sandbox_remove_workspace (mk->scratch_dir, mk->label);
      making_free (mk);
      hv_error_set (err, 0, "%s", r.error);
      (*err)->errno_code = r.errno_code;
      (*err)->exit_status = r.exit_status == HV_EXIT_HAVEN_FAILED ? 0 : r.exit_status;
      hv_sandbox_record_release (&r);
      return -1;
    }
  *out = hold (&r, mk);
  return 0;
}

void
hv_sandbox_make_abort (struct hv_sandbox_maker *m)
{
  struct hv_sandbox_making *mk = m->priv;
  if (m->pid > 0)
    {
      kill (m->pid, SIGKILL);
      kill_maker_session (m->pid);
      while (waitpid (m->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  if (m->fd >= 0)
    close (m->fd);
  if (m->pidfd >= 0)
    close (m->pidfd);
  if (mk)
    hv_sandbox_remove_leftover (mk->label, mk->scratch_dir);
  making_free (mk);
  *m = (struct hv_sandbox_maker) HV_SANDBOX_MAKER_INIT;
}

int
hv_sandbox_create (const struct hv_sandbox_opts *o, hv_sandbox **out, hv_error **err)
{
  struct hv_sandbox_maker m;
  *out = NULL;
  if (hv_sandbox_make_start (o, &m, err) < 0)
    return -1;
  return hv_sandbox_make_finish (&m, out, err);
}

int
hv_sandbox_keeper_fd (const hv_sandbox *sb)
{
  return sb->r.fds[HV_SBR_KEEPER];
}

int
hv_sandbox_pidfd (const hv_sandbox *sb)
{
  return sb->r.fds[HV_SBR_PIDFD];
}

const char *
hv_sandbox_policy_name (const hv_sandbox *sb)
{
  return sb->r.policy_name;
}

const char *
hv_sandbox_workspace (const hv_sandbox *sb)
{
  return sb->r.workspace;
}

int
hv_sandbox_workspace_fd (const hv_sandbox *sb)
{
  return sb->r.fds[HV_SBR_WORKSPACE];
}

bool
hv_sandbox_is_scratch (const hv_sandbox *sb)
{
  return sb->r.scratch;
}

const char *
hv_sandbox_config (const hv_sandbox *sb)
{
  return sb->r.config;
}

unsigned
hv_sandbox_timeout_s (const hv_sandbox *sb)
{
  return sb->r.timeout_s;
}
