/* `haven run` without namespaces (direct_run.h): haven forks a reaper,
 * which forks the command, which restricts itself (direct_run_child.c)
 * and executes.  haven forwards the user's signals to the command,
 * holds the time limit and, for process.terminal on a terminal, proxies
 * the command's own pty.  The reaper is the command's subreaper: a process
 * that leaves its parent (a daemon, `setsid sleep &`) becomes the
 * reaper's child, not init's; when the command has ended, or haven has
 * (killed: the reaper then kills the command), the reaper kills every
 * process left and says so.  It is in its own process group, so a kill
 * of haven's group leaves it to do that; haven is a subreaper too, for
 * what a dead reaper would leave. */
#include "config.h"
#include "direct_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit_trail.h"
#include "direct_run_priv.h"
#include "exit_status.h"
#include "json_gen.h"
#include "run_steps.h"
#include "signals.h"
#include "tty_proxy.h"
#include "utils.h"

/* A pty for process.terminal when haven's stdin is a terminal: the
 * master (close-on-exec) for haven's proxy, *slave for the command. */
static int
open_pty (int *slave, hv_error **err)
{
  *slave = -1;
  cleanup_close int master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt (master) < 0 || unlockpt (master) < 0)
    return hv_error_set (err, errno, "open a pty");
  char name[64];
  if (ptsname_r (master, name, sizeof (name)) != 0)
    return hv_error_set (err, errno, "name of the pty");
  *slave = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (*slave < 0)
    return hv_error_set (err, errno, "open %s", name);
  struct winsize ws;
  if (ioctl (0, TIOCGWINSZ, &ws) == 0)
    ioctl (master, TIOCSWINSZ, &ws);
  return steal_fd (&master);
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

static void
trail_left (const struct hv_audit *a, size_t killed)
{
  if (a == NULL || a->log_fd < 0 || killed == 0)
    return;
  struct hv_audit_trail trail;
  hv_audit_trail_init (&trail, a->log_fd, a->policy_name, NULL);
  trail.run = a->run;
  yajl_gen g = hv_audit_trail_record (&trail, "processes-killed");
  jg_str (g, "count");
  yajl_gen_integer (g, (long long) killed);
  hv_audit_trail_emit (&trail, g);
}

int
hv_direct_run (const oci_spec *spec, const hv_direct_plan *plan, unsigned timeout_s, const struct hv_audit *trail,
               int *exit_status,
               hv_error **err)
{
  return hv_direct_run_guarded (spec, plan, timeout_s, trail, NULL, exit_status, err);
}

int
hv_direct_run_guarded (const oci_spec *spec, const hv_direct_plan *plan, unsigned timeout_s, const struct hv_audit *trail,
                       const struct hv_guard_after *after_haven_died, int *exit_status, hv_error **err)
{
  *exit_status = 0;
  if (plan->n_refused > 0)
    return hv_error_set (err, 0, "the plan refuses %zu rule(s): not started", plan->n_refused);
  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
    return hv_error_set (err, errno, "become the subreaper of the command's processes");
  struct pids before = { 0 };
  if (hv_direct_list_children (NULL, &before, err) < 0)
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
  int tty = -1;
  cleanup_close int master = -1;
  if (pipe2 (rep, O_CLOEXEC) < 0 || pipe2 (res, O_CLOEXEC) < 0 || pipe2 (alive, O_CLOEXEC) < 0)
    {
      hv_error_set (err, errno, "pipe");
      goto close_out;
    }
  if (spec->process.terminal && isatty (0) && (master = open_pty (&tty, err)) < 0)
    goto close_out;
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
      struct hv_direct_child c
          = { .spec = spec, .plan = plan, .write = &write, .envp = envp, .report_fd = rep[1], .tty = tty,
              .scratch = scratch };
      hv_direct_reaper (&c, alive[0], res[1], after_haven_died);
    }
  close (rep[1]);
  close (res[1]);
  close (alive[0]);
  rep[1] = res[1] = alive[0] = -1;
  if (tty >= 0)
    close (tty);
  tty = -1;
  pid_t pid = 0;
  struct hv_direct_reaper_result result = { 0 };
  bool reaped = hv_direct_read_full (res[0], &pid, sizeof (pid)) == 0;
  if (reaped)
    hv_forward_signals_to (pid);
  if (reaped && timeout_s)
    hv_kill_after (timeout_s);
  char report[1024];
  /* What the child wrote before it exited: "STATUS MESSAGE", or nothing
   * once execve succeeded (the pipe is close-on-exec). */
  size_t report_len = read_upto (rep[0], report, sizeof (report));
  /* Started: the terminal until the command and all it left are gone. */
  if (report_len == 0 && master >= 0)
    {
      cleanup_error hv_error *proxy_err = NULL;
      hv_tty_proxy (master, &proxy_err);
    }
  reaped = reaped && hv_direct_read_full (res[0], &result, sizeof (result)) == 0;
  alarm (0);
  hv_forward_signals_to (0);
  while (waitpid (reaper_pid, NULL, 0) < 0 && errno == EINTR)
    ;
  int status = result.status;
  /* What a reaper that died before its end left came to haven. */
  size_t killed = 0;
  cleanup_error hv_error *kill_err = NULL;
  int kr = hv_direct_kill_left (&before, &killed, &kill_err);
  trail_left (trail, killed + result.killed);
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
  if (tty >= 0)
    close (tty);
  if (scratch)
    hv_direct_remove_scratch (scratch);
  oci_strv_free (&write);
  free (before.v);
  return ret;
}

int
hv_isolation_parse (const char *name, enum hv_isolation *out)
{
  static const struct
  {
    const char *name;
    enum hv_isolation value;
  } names[] = { { "auto", HV_ISOLATION_AUTO },
                { "namespaces", HV_ISOLATION_NAMESPACES },
                { "landlock", HV_ISOLATION_LANDLOCK } };
  for (size_t i = 0; i < N_ELEMENTS (names); i++)
    if (strcmp (name, names[i].name) == 0)
      {
        *out = names[i].value;
        return 0;
      }
  return -1;
}
