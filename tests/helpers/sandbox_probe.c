/* A root test's driver of session/sandbox.h (tests/integration/test_sandbox.sh):
 *   sandbox_probe [--policy P] [--project DIR | --scratch DIR] [--label L]
 *                 [--env NAME=VALUE]... [--kill-self] [--time N] -- ARGV...
 *   sandbox_probe --clean PREFIX [--scratch DIR]
 * Creates a sandbox (as a child subreaper, as the service is), prints
 * "workspace: PATH", runs ARGV through the keeper with this process's
 * stdio, prints "status: N", destroys it and prints its notes; exits
 * with the command's status (125: a sandbox error, printed).  --kill-self:
 * SIGKILL itself once the sandbox is made (what clean_leftovers is for).
 * --time N: N creates and destroys, then the median and p90 of create. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "keeper.h"
#include "sandbox.h"
#include "utils.h"

static int
fail (hv_error *err)
{
  fprintf (stderr, "sandbox_probe: %s\n", err->msg);
  hv_error_free (&err);
  return 125;
}

/* Run argv in the sandbox and wait for its status. */
static int
run (hv_sandbox *sb, char **argv, char **env, int *status, hv_error **err)
{
  oci_strv envp = { 0 };
  if (hv_sandbox_command_env (sb, env, &envp, err) < 0)
    return -1;
  char **envv = xmalloc0 ((envp.n + 1) * sizeof (char *));
  for (size_t k = 0; k < envp.n; k++)
    envv[k] = envp.v[k];
  int kfd = hv_sandbox_keeper_fd (sb);
  struct hv_keeper_spawn req = { .run_id = 7, .argv = argv, .envp = envv, .cwd = NULL, .stdio = { 0, 1, 2 } };
  int r = hv_keeper_spawn (kfd, &req, err);
  free (envv);
  oci_strv_free (&envp);
  if (r < 0)
    return -1;
  for (;;)
    {
      struct pollfd p = { .fd = kfd, .events = POLLIN };
      if (poll (&p, 1, 60000) <= 0)
        return hv_error_set (err, 0, "no event from the keeper in 60 s");
      struct hv_keeper_event ev;
      int got;
      while ((got = hv_keeper_event_read (kfd, &ev, err)) == 1)
        if (ev.kind == HV_KEEPER_EXITED && ev.run_id == 7)
          {
            *status = ev.status;
            hv_sandbox_trail_command (sb, 7, argv, ev.status);
            return 0;
          }
      if (got < 0)
        return -1;
    }
}

static double
now_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec * 1e3 + (double) t.tv_nsec / 1e6;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static void
reap_all (void)
{
  while (waitpid (-1, NULL, WNOHANG) > 0)
    ;
}

int
main (int argc, char **argv)
{
  struct hv_sandbox_opts o = { .policy = "default", .label = "hv-sbprobe", .haven_argv0 = "haven" };
  cleanup_strv oci_strv env = { 0 };
  const char *clean = NULL;
  bool kill_self = false;
  int times = 0;
  int i = 1;
  for (; i < argc; i++)
    {
      const char *a = argv[i];
      const char *v = i + 1 < argc ? argv[i + 1] : NULL;
      if (strcmp (a, "--") == 0)
        {
          i++;
          break;
        }
      if (strcmp (a, "--kill-self") == 0)
        kill_self = true;
      else if (v == NULL)
        break;
      else if (strcmp (a, "--policy") == 0)
        o.policy = v, i++;
      else if (strcmp (a, "--project") == 0)
        o.project = v, i++;
      else if (strcmp (a, "--scratch") == 0)
        o.scratch_dir = v, i++;
      else if (strcmp (a, "--label") == 0)
        o.label = v, i++;
      else if (strcmp (a, "--env") == 0)
        oci_strv_push (&env, v), i++;
      else if (strcmp (a, "--clean") == 0)
        clean = v, i++;
      else if (strcmp (a, "--time") == 0)
        times = atoi (v), i++;
      else
        break;
    }
  if (clean)
    {
      hv_sandbox_clean_leftovers (clean, o.scratch_dir);
      return 0;
    }
  if (i >= argc && times == 0)
    {
      fprintf (stderr, "usage: sandbox_probe [options] -- ARGV...\n");
      return 2;
    }
  /* The service is a subreaper: the sandbox's processes become its
   * children once the maker exits. */
  prctl (PR_SET_CHILD_SUBREAPER, 1);
  cleanup_free char **envv = xmalloc0 ((env.n + 1) * sizeof (char *));
  for (size_t k = 0; k < env.n; k++)
    envv[k] = env.v[k];
  hv_error *err = NULL;
  if (times > 0)
    {
      double *ms = calloc ((size_t) times, sizeof (double)), *dms = calloc ((size_t) times, sizeof (double));
      for (int k = 0; k < times; k++)
        {
          hv_sandbox *sb = NULL;
          double t0 = now_ms ();
          if (hv_sandbox_create (&o, &sb, &err) < 0)
            return fail (err);
          ms[k] = now_ms () - t0;
          t0 = now_ms ();
          if (hv_sandbox_destroy (sb, NULL, &err) < 0)
            return fail (err);
          dms[k] = now_ms () - t0;
          reap_all ();
        }
      qsort (ms, (size_t) times, sizeof (double), cmp_double);
      qsort (dms, (size_t) times, sizeof (double), cmp_double);
      printf ("create: n=%d median %.2f ms p90 %.2f ms min %.2f ms\n", times, ms[times / 2], ms[times * 9 / 10], ms[0]);
      printf ("destroy: n=%d median %.2f ms p90 %.2f ms min %.2f ms\n", times, dms[times / 2], dms[times * 9 / 10],
              dms[0]);
      free (ms);
      free (dms);
      return 0;
    }
  hv_sandbox *sb = NULL;
  if (hv_sandbox_create (&o, &sb, &err) < 0)
    return fail (err);
  printf ("workspace: %s\n", hv_sandbox_workspace (sb));
  fflush (stdout);
  if (kill_self)
    raise (SIGKILL);
  int status = 0;
  int r = run (sb, argv + i, envv, &status, &err);
  fflush (stdout);
  if (r < 0)
    fprintf (stderr, "sandbox_probe: %s\n", err->msg), hv_error_free (&err);
  else
    printf ("status: %d\n", status);
  oci_strv notes = { 0 };
  if (hv_sandbox_destroy (sb, &notes, &err) < 0)
    {
      fprintf (stderr, "sandbox_probe: destroy: %s\n", err->msg);
      r = -1;
    }
  for (size_t k = 0; k < notes.n; k++)
    printf ("note: %s\n", notes.v[k]);
  oci_strv_free (&notes);
  reap_all ();
  return r < 0 ? 125 : status;
}
