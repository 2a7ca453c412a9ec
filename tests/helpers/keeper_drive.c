/* Drives a container in keeper mode (runtime/include/keeper.h) for
 * tests/integration/test_keeper.sh:
 *
 *   keeper_drive STATE_ROOT BUNDLE ID OUTDIR STEP [, STEP]...
 *
 * creates container ID from BUNDLE with a keeper socket, starts it, runs
 * the steps, and prints one line per step.  Steps:
 *
 *   run [cwd=DIR] [env=NAME=VALUE]... [in=TEXT] [sig=N] CMD ARG...
 *       spawn CMD (environment: the env= entries, else PATH=/bin), TEXT
 *       on its stdin, stdout and stderr into OUTDIR/N.out and N.err; with
 *       sig=N, send signal N once its first line of output came; wait for
 *       its end.  Prints "run N: pid P status S".
 *   spawn CMD ARG...
 *       spawn CMD with /dev/null for stdio and PATH=/bin, wait for
 *       STARTED only (it runs on).  Prints "spawn N: pid P".
 *   bench COUNT
 *       COUNT spawns of "echo x" one after the other; prints the medians
 *       (microseconds) from the request to STARTED, to the first byte of
 *       output (the program runs) and to EXITED.
 *   garbage
 *       sends a message that is no request; prints "keeper ended" once
 *       init is gone and the socket says so.
 *   pid
 *       prints "init P" (the keeper's pid on the host).
 *   pause SECONDS
 *       sleeps (the keeper idles meanwhile).
 *   close
 *       closes the socket; prints "keeper ended" once init is gone and
 *       "left N" with the number of processes left in the container.
 *
 * Exits 1 on any failure (with the reason on stderr). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "container.h"
#include "keeper.h"
#include "runtime.h"
#include "self_exe.h"
#include "state.h"
#include "utils.h"

static int keeper = -1;
static int init_pidfd = -1;
static pid_t init_pid;
static const char *outdir;
static uint32_t next_run = 1;

static void __attribute__ ((noreturn, format (printf, 1, 2)))
die (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fputs ("keeper_drive: ", stderr);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (1);
}

static void
die_err (hv_error *err)
{
  die ("%s", err ? err->msg : "failed");
}

static long long
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* The next event, waiting for it (5 s at most). */
static void
next_event (struct hv_keeper_event *ev)
{
  hv_error *err = NULL;
  struct pollfd p = { .fd = keeper, .events = POLLIN };
  if (poll (&p, 1, 5000) != 1)
    die ("no event from the keeper within 5 s");
  if (hv_keeper_event_read (keeper, ev, &err) != 1)
    die_err (err);
}

static void
save_output (const char *name, const char *data, size_t len)
{
  cleanup_free char *path = xasprintf ("%s/%s", outdir, name);
  FILE *f = fopen (path, "w");
  if (f == NULL || fwrite (data, 1, len, f) != len || fclose (f) != 0)
    die ("write %s", path);
}

struct buf
{
  char *data;
  size_t len;
  int fd;
};

static bool
drain (struct buf *b)
{
  char chunk[4096];
  ssize_t n = read (b->fd, chunk, sizeof (chunk));
  if (n <= 0)
    return false;
  b->data = xrealloc (b->data, b->len + (size_t) n + 1);
  memcpy (b->data + b->len, chunk, (size_t) n);
  b->len += (size_t) n;
  b->data[b->len] = '\0';
  return true;
}

static void
step_run (char **a, int n)
{
  const char *cwd = NULL, *in = "";
  int sig = 0;
  char *env[64] = { 0 };
  int nenv = 0, i = 0;
  for (; i < n; i++)
    {
      if (strncmp (a[i], "cwd=", 4) == 0)
        cwd = a[i] + 4;
      else if (strncmp (a[i], "env=", 4) == 0 && nenv < 63)
        env[nenv++] = a[i] + 4;
      else if (strncmp (a[i], "in=", 3) == 0)
        in = a[i] + 3;
      else if (strncmp (a[i], "sig=", 4) == 0)
        sig = atoi (a[i] + 4);
      else
        break;
    }
  if (nenv == 0)
    env[nenv++] = (char *) "PATH=/bin";
  if (i == n)
    die ("run without a command");
  cleanup_free char **argv = xmalloc0 ((size_t) (n - i + 1) * sizeof (char *));
  for (int j = i; j < n; j++)
    argv[j - i] = a[j];
  int pin[2], pout[2], perr[2];
  if (pipe2 (pin, O_CLOEXEC) < 0 || pipe2 (pout, O_CLOEXEC) < 0 || pipe2 (perr, O_CLOEXEC) < 0)
    die ("pipe: %s", strerror (errno));
  uint32_t id = next_run++;
  struct hv_keeper_spawn req = { .run_id = id, .argv = argv, .envp = env, .cwd = cwd,
                                 .stdio = { pin[0], pout[1], perr[1] } };
  hv_error *err = NULL;
  if (hv_keeper_spawn (keeper, &req, &err) < 0)
    die_err (err);
  close (pin[0]);
  close (pout[1]);
  close (perr[1]);
  if (write_all (pin[1], in, strlen (in)) < 0)
    die ("write stdin: %s", strerror (errno));
  close (pin[1]);
  struct buf out = { .fd = pout[0] }, errb = { .fd = perr[0] };
  struct hv_keeper_event ev;
  pid_t pid = 0;
  int status = -1;
  bool out_open = true, err_open = true, signalled = false;
  /* Until EXITED and both pipes closed. */
  while (status < 0 || out_open || err_open)
    {
      struct pollfd p[3] = { { .fd = status < 0 ? keeper : -1, .events = POLLIN },
                             { .fd = out_open ? out.fd : -1, .events = POLLIN },
                             { .fd = err_open ? errb.fd : -1, .events = POLLIN } };
      if (poll (p, 3, 10000) <= 0)
        die ("run %u: nothing for 10 s", id);
      if (p[0].revents)
        {
          if (hv_keeper_event_read (keeper, &ev, &err) != 1)
            die_err (err);
          if (ev.run_id != id)
            die ("event for run %u, not %u", ev.run_id, id);
          if (ev.kind == HV_KEEPER_STARTED)
            pid = ev.pid;
          else
            status = ev.status;
        }
      if (p[1].revents)
        out_open = drain (&out);
      if (p[2].revents)
        err_open = drain (&errb);
      if (sig && !signalled && out.len && memchr (out.data, '\n', out.len))
        {
          if (hv_keeper_signal (keeper, id, sig, &err) < 0)
            die_err (err);
          signalled = true;
        }
    }
  close (out.fd);
  close (errb.fd);
  cleanup_free char *on = xasprintf ("%u.out", id);
  cleanup_free char *en = xasprintf ("%u.err", id);
  save_output (on, out.data ? out.data : "", out.len);
  save_output (en, errb.data ? errb.data : "", errb.len);
  free (out.data);
  free (errb.data);
  printf ("run %u: pid %d status %d\n", id, pid, status);
  fflush (stdout);
}

static void
step_spawn (char **a, int n)
{
  if (n == 0)
    die ("spawn without a command");
  cleanup_free char **argv = xmalloc0 ((size_t) (n + 1) * sizeof (char *));
  memcpy (argv, a, (size_t) n * sizeof (char *));
  char *env[] = { (char *) "PATH=/bin", NULL };
  cleanup_close int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  uint32_t id = next_run++;
  struct hv_keeper_spawn req = { .run_id = id, .argv = argv, .envp = env, .stdio = { devnull, devnull, devnull } };
  hv_error *err = NULL;
  if (devnull < 0 || hv_keeper_spawn (keeper, &req, &err) < 0)
    die_err (err);
  struct hv_keeper_event ev;
  next_event (&ev);
  if (ev.kind != HV_KEEPER_STARTED || ev.run_id != id)
    die ("spawn: expected STARTED of %u", id);
  printf ("spawn %u: pid %d\n", id, ev.pid);
  fflush (stdout);
}

static void
step_garbage (void)
{
  if (send (keeper, "bad", 3, MSG_NOSIGNAL) != 3)
    die ("send: %s", strerror (errno));
  struct pollfd p = { .fd = init_pidfd, .events = POLLIN };
  if (poll (&p, 1, 5000) != 1)
    die ("init still runs 5 s after a malformed request");
  struct hv_keeper_event ev;
  hv_error *err = NULL;
  if (hv_keeper_event_read (keeper, &ev, &err) != -1)
    die ("an event after a malformed request");
  printf ("%s\n", err->msg);
  fflush (stdout);
  hv_error_free (&err);
}

static int
cmp_ll (const void *a, const void *b)
{
  long long x = *(const long long *) a, y = *(const long long *) b;
  return x < y ? -1 : x > y;
}

static void
step_bench (int count)
{
  long long *t[3];
  for (int k = 0; k < 3; k++)
    t[k] = xmalloc0 ((size_t) count * sizeof (long long));
  char *argv[] = { (char *) "echo", (char *) "x", NULL };
  char *env[] = { (char *) "PATH=/bin", NULL };
  for (int i = 0; i < count; i++)
    {
      int pout[2], devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
      if (devnull < 0 || pipe2 (pout, O_CLOEXEC) < 0)
        die ("pipe: %s", strerror (errno));
      uint32_t id = next_run++;
      struct hv_keeper_spawn req = { .run_id = id, .argv = argv, .envp = env, .stdio = { devnull, pout[1], devnull } };
      hv_error *err = NULL;
      long long t0 = now_us ();
      if (hv_keeper_spawn (keeper, &req, &err) < 0)
        die_err (err);
      close (pout[1]);
      close (devnull);
      struct hv_keeper_event ev;
      next_event (&ev);
      if (ev.kind != HV_KEEPER_STARTED || ev.run_id != id)
        die ("bench: expected STARTED of %u", id);
      t[0][i] = now_us () - t0;
      char c;
      if (read (pout[0], &c, 1) != 1)
        die ("bench: no output");
      t[1][i] = now_us () - t0;
      close (pout[0]);
      next_event (&ev);
      if (ev.kind != HV_KEEPER_EXITED || ev.run_id != id || ev.status != 0)
        die ("bench: expected EXITED 0 of %u", id);
      t[2][i] = now_us () - t0;
    }
  for (int k = 0; k < 3; k++)
    qsort (t[k], (size_t) count, sizeof (long long), cmp_ll);
  printf ("bench %d: started %lld us, running %lld us, exited %lld us (medians)\n", count, t[0][count / 2],
          t[1][count / 2], t[2][count / 2]);
  fflush (stdout);
  for (int k = 0; k < 3; k++)
    free (t[k]);
}

static void
step_close (hv_container *c)
{
  close (keeper);
  keeper = -1;
  struct pollfd p = { .fd = init_pidfd, .events = POLLIN };
  if (poll (&p, 1, 5000) != 1)
    die ("init still runs 5 s after the socket closed");
  printf ("keeper ended\n");
  /* Its pid namespace's processes go with it: give the kernel a moment. */
  size_t n = 0;
  for (int i = 0; i < 50; i++)
    {
      cleanup_free pid_t *pids = NULL;
      hv_error *err = NULL;
      if (hv_container_pids (c, &pids, &n, &err) < 0)
        die_err (err);
      if (n == 0)
        break;
      usleep (20000);
    }
  printf ("left %zu\n", n);
  fflush (stdout);
}

int
main (int argc, char **argv)
{
  hv_error *err = NULL;
  /* The keeper is a copy of this process: this binary must not be
   * writable from the container through /proc/PID/exe (as haven-runc). */
  if (hv_ensure_sealed_self (argv, &err) < 0)
    die_err (err);
  if (argc < 6)
    die ("usage: keeper_drive STATE_ROOT BUNDLE ID OUTDIR STEP [, STEP]...");
  outdir = argv[4];
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    die ("socketpair: %s", strerror (errno));
  struct hv_runtime rt = { .root = argv[1] };
  struct hv_create_opts opts = { .id = argv[3], .bundle = argv[2], .keeper_fd = sv[1] };
  hv_container *c = NULL;
  if (hv_container_create (&rt, &opts, &c, &init_pidfd, &err) < 0)
    die_err (err);
  close (sv[1]);
  keeper = sv[0];
  init_pid = c->pid;
  if (hv_container_start (&rt, c, &err) < 0)
    die_err (err);
  for (int i = 5; i < argc;)
    {
      int j = i;
      while (j < argc && strcmp (argv[j], ",") != 0)
        j++;
      char **a = argv + i;
      int n = j - i;
      if (n >= 1 && strcmp (a[0], "run") == 0)
        step_run (a + 1, n - 1);
      else if (n >= 1 && strcmp (a[0], "spawn") == 0)
        step_spawn (a + 1, n - 1);
      else if (n == 1 && strcmp (a[0], "garbage") == 0)
        step_garbage ();
      else if (n == 2 && strcmp (a[0], "bench") == 0)
        step_bench (atoi (a[1]));
      else if (n == 1 && strcmp (a[0], "pid") == 0)
        {
          printf ("init %d\n", init_pid);
          fflush (stdout);
        }
      else if (n == 2 && strcmp (a[0], "pause") == 0)
        sleep ((unsigned) atoi (a[1]));
      else if (n == 1 && strcmp (a[0], "close") == 0)
        step_close (c);
      else
        die ("unknown step %s", a[0]);
      i = j + 1;
    }
  hv_container_free (c);
  return 0;
}
