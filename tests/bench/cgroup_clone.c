/* Benchmark (not a test): the kernel's cost of starting a process in a new
 * cgroup, clone3(CLONE_INTO_CGROUP) against fork + a write to cgroup.procs
 * (which takes the cgroup threadgroup lock and waits for an RCU grace
 * period).  Each iteration makes a cgroup under DIR, starts a child that
 * exits at once, waits for it and removes the cgroup, both ways in turn;
 * prints the medians in microseconds.
 *
 *   cgroup_clone DIR ITERATIONS     (DIR: a cgroup v2 directory, as root;
 *                                    ITERATIONS at most 1000) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double
now_us (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec * 1e6 + (double) t.tv_nsec / 1e3;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static int
by_clone3 (const char *dir, double *took)
{
  double start = now_us ();
  if (mkdir (dir, 0755) < 0)
    return -1;
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t) fd };
  pid_t pid = (pid_t) syscall (SYS_clone3, &args, sizeof (args));
  if (pid == 0)
    _exit (0);
  close (fd);
  if (pid < 0)
    return -1;
  waitpid (pid, NULL, 0);
  *took = now_us () - start;
  return rmdir (dir);
}

static int
by_cgroup_procs (const char *dir, double *took)
{
  char procs[4200], buf[32];
  int go[2];
  double start = now_us ();
  if (mkdir (dir, 0755) < 0 || pipe (go) < 0)
    return -1;
  pid_t pid = fork ();
  if (pid == 0)
    {
      char c;
      _exit (read (go[0], &c, 1) == 1 ? 0 : 1); /* placed before it exits */
    }
  if (pid < 0)
    return -1;
  snprintf (procs, sizeof (procs), "%s/cgroup.procs", dir);
  int fd = open (procs, O_WRONLY | O_CLOEXEC);
  int n = snprintf (buf, sizeof (buf), "%d", pid);
  int ok = fd >= 0 && write (fd, buf, (size_t) n) == n;
  if (fd >= 0)
    close (fd);
  if (write (go[1], "x", 1) != 1)
    ok = 0;
  close (go[0]);
  close (go[1]);
  waitpid (pid, NULL, 0);
  *took = now_us () - start;
  return ok && rmdir (dir) == 0 ? 0 : -1;
}

int
main (int argc, char **argv)
{
  static double a[1000], b[1000];
  if (argc != 3)
    {
      fprintf (stderr, "usage: cgroup_clone DIR ITERATIONS\n");
      return 2;
    }
  int n = atoi (argv[2]);
  if (n < 1 || n > 1000)
    return 2;
  char dir[4096];
  for (int i = 0; i < n; i++)
    {
      snprintf (dir, sizeof (dir), "%s/cgroup-clone-bench-%d", argv[1], (int) getpid ());
      if (by_clone3 (dir, &a[i]) < 0 || by_cgroup_procs (dir, &b[i]) < 0)
        {
          perror (dir);
          rmdir (dir);
          return 1;
        }
    }
  qsort (a, (size_t) n, sizeof (double), cmp_double);
  qsort (b, (size_t) n, sizeof (double), cmp_double);
  printf ("clone3 into the cgroup: median %.0f us | fork + cgroup.procs: median %.0f us (%d each)\n", a[n / 2],
          b[n / 2], n);
  return 0;
}
