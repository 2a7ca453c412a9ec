/* Benchmark (not a test): load and compile the default policy N times in
 * one process and print the mean time of each step.
 *   tests/bench/bench_policy [POLICY] [N]     (built by make check) */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"
#include "policy_load.h"
#include "policy_compile.h"

extern char **environ;

static double
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

int
main (int argc, char **argv)
{
  const char *name = argc > 1 ? argv[1] : "policies/default.yaml";
  int n = argc > 2 ? atoi (argv[2]) : 200;
  char cwd[4096];
  if (getcwd (cwd, sizeof (cwd)) == NULL)
    return 1;
  char *cmd[] = { (char *) "true", NULL };
  struct hv_run_ctx ctx = { .project = cwd, .home = getenv ("HOME"), .cwd = cwd, .rootfs = "rootfs",
                            .uid = getuid (), .gid = getgid (), .argv = cmd, .host_env = environ };
  double load = 0, compile = 0;
  for (int i = 0; i < n; i++)
    {
      hv_policy *p = NULL;
      hv_error *err = NULL;
      char *json = NULL;
      double t0 = now_us ();
      if (hv_policy_load (name, &p, &err) < 0)
        {
          fprintf (stderr, "%s\n", err->msg);
          return 1;
        }
      double t1 = now_us ();
      if (hv_policy_compile (p, &ctx, &json, &err) < 0)
        {
          fprintf (stderr, "%s\n", err->msg);
          return 1;
        }
      double t2 = now_us ();
      load += t1 - t0;
      compile += t2 - t1;
      free (json);
      hv_policy_free (p);
    }
  printf ("%s, %d rounds: load+parse %.0f us, compile %.0f us, total %.3f ms per policy\n", name, n, load / n,
          compile / n, (load + compile) / n / 1000.0);
  return 0;
}
