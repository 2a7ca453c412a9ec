/* Benchmark (not a test): the cost of one file-system operation, timed
 * inside whatever sandbox runs this program.
 *
 *   op_loop [open|stat|ioctl|getpid] [PATH] [ITERATIONS] [ROUNDS]
 *
 * "open" opens PATH read-only and closes it, "stat" stats PATH; "ioctl"
 * asks a pipe how many bytes it holds (FIONREAD): a call that touches no
 * path but that a seccomp filter with rules on ioctl's arguments must run
 * its program for (seccomp's share alone); "getpid" is a call that the
 * kernel's seccomp cache lets through without running the filter.  Each
 * round times ITERATIONS operations with CLOCK_MONOTONIC; the program prints
 * the median round's cost per operation in nanoseconds (one number), so a
 * round slowed by the machine's other work does not move it.
 * Defaults: open /etc/passwd 200000 15. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum op
{
  OP_OPEN,
  OP_STAT,
  OP_IOCTL,
  OP_GETPID
};

static double
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static int
one_round (enum op op, const char *path, long n, int pipe_fd, double *per_op)
{
  struct stat st;
  int avail;
  double start = now_ns ();
  for (long i = 0; i < n; i++)
    {
      switch (op)
        {
        case OP_OPEN:
          {
            int fd = open (path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
              return -1;
            close (fd);
            break;
          }
        case OP_STAT:
          if (stat (path, &st) < 0)
            return -1;
          break;
        case OP_IOCTL:
          if (ioctl (pipe_fd, FIONREAD, &avail) < 0)
            return -1;
          break;
        case OP_GETPID:
          syscall (SYS_getpid);
          break;
        }
    }
  *per_op = (now_ns () - start) / (double) n;
  return 0;
}

int
main (int argc, char **argv)
{
  const char *name = argc > 1 ? argv[1] : "open";
  const char *path = argc > 2 ? argv[2] : "/etc/passwd";
  long n = argc > 3 ? atol (argv[3]) : 200000;
  int rounds = argc > 4 ? atoi (argv[4]) : 15;
  enum op op;
  if (strcmp (name, "open") == 0)
    op = OP_OPEN;
  else if (strcmp (name, "stat") == 0)
    op = OP_STAT;
  else if (strcmp (name, "ioctl") == 0)
    op = OP_IOCTL;
  else if (strcmp (name, "getpid") == 0)
    op = OP_GETPID;
  else
    {
      fprintf (stderr, "usage: op_loop [open|stat|ioctl|getpid] [PATH] [ITERATIONS] [ROUNDS]\n");
      return 2;
    }
  if (n < 1 || rounds < 1 || rounds > 1000)
    {
      fprintf (stderr, "op_loop: bad ITERATIONS or ROUNDS\n");
      return 2;
    }
  int pipe_fds[2];
  if (pipe (pipe_fds) < 0)
    {
      perror ("pipe");
      return 1;
    }
  double *cost = calloc ((size_t) rounds, sizeof (double));
  if (cost == NULL)
    return 1;
  for (int r = 0; r < rounds; r++)
    if (one_round (op, path, n, pipe_fds[0], &cost[r]) < 0)
      {
        perror (path);
        free (cost);
        return 1;
      }
  qsort (cost, (size_t) rounds, sizeof (double), cmp_double);
  printf ("%.1f\n", cost[rounds / 2]);
  free (cost);
  return 0;
}
