/* `haven run` without namespaces (direct_run.h): haven forks a reaper,
 * which forks the command, which restricts itself (direct_run_child.c)
 * and executes.  haven forwards the user's signals to the command and
 * holds the time limit.  The reaper is the command's subreaper: a process
 * that leaves its parent (a daemon, `setsid sleep &`) becomes the
 * reaper's child, not init's; when the command has ended, or haven has
 * (killed: the reaper then kills the command), the reaper kills every
 * process left and says so.  It is in its own process group, so a kill
 * of haven's group leaves it to do that; haven is a subreaper too, for
 * what a dead reaper would leave. */
#include "config.h"
#include "direct_run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit_trail.h"
#include "direct_run_priv.h"
#include "exit_status.h"
#include "json_gen.h"
#include "run_leftovers.h"
#include "run_steps.h"
#include "signals.h"
#include "utils.h"

/* How long the end of a run may take to kill what the command left (a
 * process that forks as fast as it is killed): past it, the run fails. */
#define KILL_LEFT_MS 5000

struct pids
{
  pid_t *v;
  size_t n, cap;
};

static bool
pids_has (const struct pids *p, pid_t pid)
{
  for (size_t i = 0; i < p->n; i++)
    if (p->v[i] == pid)
      return true;
  return false;
}

static void
pids_push (struct pids *p, pid_t pid)
{
  if (p->n == p->cap)
    {
      p->cap = p->cap ? 2 * p->cap : 16;
      p->v = xrealloc (p->v, p->cap * sizeof (*p->v));
    }
  p->v[p->n++] = pid;
}

/* The parent pid of /proc/PID/stat: after the name's last ')'. */
static pid_t
parent_of (int procfd, const char *pid)
{
  char path[64], buf[512];
  snprintf (path, sizeof (path), "%s/stat", pid);
  cleanup_close int fd = openat (procfd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read (fd, buf, sizeof (buf) - 1);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  char *end = strrchr (buf, ')');
  char state;
  int ppid;
  if (end == NULL || sscanf (end + 1, " %c %d", &state, &ppid) != 2)
    return -1;
  return ppid;
}

/* haven's children now, but those in skip. */
static int
list_children (const struct pids *skip, struct pids *out, hv_error **err)
{
  out->n = 0;
  DIR *d = opendir ("/proc");
  if (d == NULL)
    return hv_error_set (err, errno, "open /proc");
  pid_t self = getpid ();
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      char *end;
      long pid = strtol (e->d_name, &end, 10);
      if (*end != '\0' || pid <= 0)
        continue;
      if (parent_of (dirfd (d), e->d_name) == self && (skip == NULL || !pids_has (skip, (pid_t) pid)))
        pids_push (out, (pid_t) pid);
    }
  closedir (d);
  return 0;
}

static long
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Kill every child haven has that it did not have before the command
 * (its audit listener, pasta), reap each, and again, until none is
 * left: a killed process's own children become haven's in turn. */
static int
kill_left (const struct pids *before, size_t *killed, hv_error **err)
{
  struct pids left = { 0 };
  long deadline = now_ms () + KILL_LEFT_MS;
  int r = 0;
  *killed = 0;
  for (;;)
    {
      if (list_children (before, &left, err) < 0)
        {
          r = -1;
          break;
        }
      if (left.n == 0)
        break;
      if (now_ms () > deadline)
        {
          r = hv_error_set (err, 0, "processes the command left are still running after %d ms of killing them",
                            KILL_LEFT_MS);
          break;
        }
      for (size_t i = 0; i < left.n; i++)
        kill (left.v[i], SIGKILL);
      for (size_t i = 0; i < left.n; i++)
        while (waitpid (left.v[i], NULL, __WALL) < 0 && errno == EINTR)
          ;
      *killed += left.n;
    }
  free (left.v);
  return r;
}

/* What the reaper tells haven at the end. */
struct reaper_result
{
  int status; /* the command's, as waitpid gives it */
  size_t killed;
  int kill_failed;
};

static int
read_full (int fd, void *buf, size_t len)
{
  size_t got = 0;
  while (got < len)
    {
      ssize_t n = read (fd, (char *) buf + got, len - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      got += (size_t) n;
    }
  return 0;
}

/* The reaper: the command's parent and subreaper, until nothing of the
 * command is left.  alive_fd: EOF when haven is gone.  result_fd: the
 * command's pid, then a struct reaper_result. */
static _Noreturn void
reaper (const struct hv_direct_child *c, int alive_fd, int result_fd, const struct hv_guard_after *after)
{
  bool haven_gone = false;
  struct reaper_result res = { 0 };
  signal (SIGPIPE, SIG_IGN);
  setpgid (0, 0);
  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
    _exit (HV_EXIT_HAVEN_FAILED);
  pid_t pid = fork ();
  if (pid < 0)
    _exit (HV_EXIT_HAVEN_FAILED);
  if (pid == 0)
    hv_direct_child_exec (c);
  close (c->report_fd);
  if (write_all (result_fd, &pid, sizeof (pid)) < 0)
    kill (pid, SIGKILL);
  cleanup_close int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  for (;;)
    {
      struct pollfd fds[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = alive_fd, .events = POLLIN } };
      if (pidfd < 0 || poll (fds, 2, -1) < 0)
        {
          if (pidfd >= 0 && errno == EINTR)
            continue;
          break; /* no pidfd: wait for the command alone */
        }
      if (fds[1].revents)
        {
          /* haven is gone: nothing may run on unsupervised. */
          kill (pid, SIGKILL);
          haven_gone = true;
          break;
        }
      if (fds[0].revents)
        break;
    }
  while (waitpid (pid, &res.status, 0) < 0 && errno == EINTR)
    ;
  cleanup_error hv_error *err = NULL;
  res.kill_failed = kill_left (NULL, &res.killed, &err) < 0;
  /* What haven would have done after the run (the project's check, the
   * trail's end), now that nothing of the command is left. */
  if (haven_gone && after && after->fn)
    {
      signal (SIGINT, SIG_IGN);
      signal (SIGTERM, SIG_IGN);
      signal (SIGHUP, SIG_IGN);
      after->fn (after->data);
      _exit (0);
    }
  if (write_all (result_fd, &res, sizeof (res)) < 0)
    _exit (1);
  _exit (0);
}

/* A scratch TMPDIR (private_tmp): 0700, under the directory that holds
 * the run's bundle, removed after the run. */
static char *
make_scratch (hv_error **err)
{
  char *path = xasprintf ("%s/haven-tmp-XXXXXX", hv_run_bundle_parent ());
  if (mkdtemp (path) == NULL)
    {
      hv_error_set (err, errno, "create the scratch TMPDIR %s", path);
      free (path);
      return NULL;
    }
  return path;
}

static void
remove_scratch (const char *path)
{
  cleanup_free char *copy = xstrdup (path);
  char *slash = strrchr (copy, '/');
  *slash = '\0';
  cleanup_close int parent = open (copy[0] ? copy : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0 || hv_remove_tree_at (parent, slash + 1, 64) < 0)
    fprintf (stderr, "haven: could not remove the scratch TMPDIR %s\n", path);
}

/* The spec's environment; tmpdir ("TMPDIR=...") in place of its TMPDIR
 * when there is a scratch directory.  The strings are borrowed. */
static char **
build_env (const oci_spec *spec, char *tmpdir)
{
  const oci_strv *env = &spec->process.env;
  char **envp = xmalloc0 ((env->n + 2) * sizeof (char *));
  size_t n = 0;
  for (size_t i = 0; i < env->n; i++)
    if (tmpdir == NULL || strncmp (env->v[i], "TMPDIR=", 7) != 0)
      envp[n++] = env->v[i];
  if (tmpdir)
    envp[n++] = tmpdir;
  return envp;
}

/* What the child wrote before it exited: "STATUS MESSAGE", or nothing
 * once execve succeeded (the pipe is close-on-exec). */
static size_t
read_report (int fd, char *buf, size_t size)
{
  size_t len = 0;
  while (len < size - 1)
    {
      ssize_t n = read (fd, buf + len, size - 1 - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  buf[len] = '\0';
  return len;
}

static void
trail_left (int trail_fd, size_t killed)
{
  if (trail_fd < 0 || killed == 0)
    return;
  struct hv_audit_trail trail;
  hv_audit_trail_init (&trail, trail_fd, NULL, NULL);
  yajl_gen g = hv_audit_trail_record (&trail, "processes-killed");
  jg_str (g, "count");
  yajl_gen_integer (g, (long long) killed);
  hv_audit_trail_emit (&trail, g);
}

int
hv_direct_run (const oci_spec *spec, const hv_direct_plan *plan, unsigned timeout_s, int trail_fd, int *exit_status,
               hv_error **err)
{
  return hv_direct_run_guarded (spec, plan, timeout_s, trail_fd, NULL, exit_status, err);
}

int
hv_direct_run_guarded (const oci_spec *spec, const hv_direct_plan *plan, unsigned timeout_s, int trail_fd,
                       const struct hv_guard_after *after_haven_died, int *exit_status, hv_error **err)
{
  *exit_status = 0;
  if (plan->n_refused > 0)
    return hv_error_set (err, 0, "the plan refuses %zu rule(s): not started", plan->n_refused);
  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
    return hv_error_set (err, errno, "become the subreaper of the command's processes");
  struct pids before = { 0 };
  if (list_children (NULL, &before, err) < 0)
    return -1;
  cleanup_free char *scratch = NULL;
  if (plan->scratch_tmp && (scratch = make_scratch (err)) == NULL)
    {
      free (before.v);
      return -1;
    }
  oci_strv write = { 0 };
  for (size_t i = 0; i < plan->write.n; i++)
    oci_strv_push (&write, plan->write.v[i]);
  if (scratch)
    oci_strv_push (&write, scratch);
  cleanup_free char *tmpdir = scratch ? xasprintf ("TMPDIR=%s", scratch) : NULL;
  cleanup_free char **envp = build_env (spec, tmpdir);
  int ret = -1;
  int rep[2] = { -1, -1 }, res[2] = { -1, -1 }, alive[2] = { -1, -1 };
  if (pipe2 (rep, O_CLOEXEC) < 0 || pipe2 (res, O_CLOEXEC) < 0 || pipe2 (alive, O_CLOEXEC) < 0)
    {
      hv_error_set (err, errno, "pipe");
      goto close_out;
    }
  /* Nothing buffered may be written twice, by haven and by the child. */
  fflush (NULL);
  pid_t reaper_pid = fork ();
  if (reaper_pid < 0)
    {
      hv_error_set (err, errno, "fork the command's reaper");
      goto close_out;
    }
  if (reaper_pid == 0)
    {
      close (rep[0]);
      close (res[0]);
      close (alive[1]);
      struct hv_direct_child c = { .spec = spec, .plan = plan, .write = &write, .envp = envp, .report_fd = rep[1] };
      reaper (&c, alive[0], res[1], after_haven_died);
    }
  close (rep[1]);
  close (res[1]);
  close (alive[0]);
  rep[1] = res[1] = alive[0] = -1;
  pid_t pid = 0;
  struct reaper_result result = { 0 };
  bool reaped = read_full (res[0], &pid, sizeof (pid)) == 0;
  if (reaped)
    hv_forward_signals_to (pid);
  if (reaped && timeout_s)
    hv_kill_after (timeout_s);
  char report[1024];
  size_t report_len = read_report (rep[0], report, sizeof (report));
  reaped = reaped && read_full (res[0], &result, sizeof (result)) == 0;
  alarm (0);
  hv_forward_signals_to (0);
  while (waitpid (reaper_pid, NULL, 0) < 0 && errno == EINTR)
    ;
  int status = result.status;
  /* What a reaper that died before its end left came to haven. */
  size_t killed = 0;
  cleanup_error hv_error *kill_err = NULL;
  int kr = kill_left (&before, &killed, &kill_err);
  trail_left (trail_fd, killed + result.killed);
  if (kr == 0 && (!reaped || result.kill_failed))
    kr = hv_error_set (&kill_err, 0, "the command's reaper %s", reaped ? "could not kill every process the command left"
                                                                        : "ended before the command's end");
  if (report_len > 0)
    {
      char *msg = NULL;
      long st = strtol (report, &msg, 10);
      hv_error_set (err, 0, "%s", msg && *msg == ' ' ? msg + 1 : report);
      if (st == HV_EXIT_NOT_FOUND || st == HV_EXIT_CANNOT_EXECUTE)
        hv_error_set_exit_status (err, (int) st);
      goto close_out;
    }
  if (kr < 0)
    {
      *err = steal_pointer (&kill_err);
      goto close_out;
    }
  *exit_status = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
  if (hv_time_limit_hit ())
    {
      /* As timeout(1) reports it. */
      *exit_status = HV_EXIT_TIMEOUT;
      fprintf (stderr, "haven: the command ran past its time limit and was killed\n");
    }
  ret = 0;
close_out:
  for (int i = 0; i < 2; i++)
    {
      if (rep[i] >= 0)
        close (rep[i]);
      if (res[i] >= 0)
        close (res[i]);
      if (alive[i] >= 0)
        close (alive[i]);
    }
  if (scratch)
    remove_scratch (scratch);
  oci_strv_free (&write);
  free (before.v);
  return ret;
}
