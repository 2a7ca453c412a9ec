/* runtime/egress/egress_pasta.c from the shell, for tests/integration/
 * test_egress_pasta.sh: a new network namespace (the "sandbox"), the
 * egress table in it, pasta into it, then a command inside.
 *
 *   egress_pasta_tool [OPTIONS] -- CMD [ARG...]
 *       --allow CIDR PORTS   allowed TCP (repeatable; PORTS: any, 443, 1-2)
 *       --dns4 ADDR PORT     --dns6 ADDR PORT   DNS redirect targets
 *       --early CMD          run `sh -c CMD` in the namespace before
 *                            pasta starts (in the background, killed at
 *                            the end), then wait --early-ms (default 300)
 *       --no-table           no egress table (for comparisons)
 *       --table-after MS     the wrong order, on purpose: pasta first,
 *                            the table MS ms later (shows that the
 *                            early check can fail)
 *       --pasta PATH         the pasta binary
 *   The table denies the host's own addresses, as haven run's does
 *   (egress_host_addrs.h).
 *   Prints "pasta PID" and "netns net:[INODE]" on stderr once pasta is
 *   up; exits with CMD's status (128+N for a signal). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "egress_host_addrs.h"
#include "egress_pasta.h"
#include "egress_table.h"
#include "utils.h"

static int
usage (void)
{
  fprintf (stderr, "usage: egress_pasta_tool [--allow CIDR PORTS]... [--dns4|--dns6 ADDR PORT] [--early CMD] "
                   "[--early-ms MS] [--no-table] [--table-after MS] [--pasta PATH] -- CMD...\n");
  return 2;
}

static int
report (hv_error **err)
{
  fprintf (stderr, "egress_pasta_tool: %s\n", (*err)->msg);
  hv_error_free (err);
  return 1;
}

/* A child in the sandbox's namespace that dies with the tool. */
static pid_t
spawn_in (int netns_fd, char **argv, bool own_group)
{
  pid_t parent = getpid ();
  pid_t pid = fork ();
  if (pid != 0)
    {
      if (pid > 0 && own_group)
        setpgid (pid, pid);
      return pid;
    }
  /* The early command's group is killed whole at the end. */
  if (own_group)
    setpgid (0, 0);
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid () != parent)
    _exit (127);
  if (setns (netns_fd, CLONE_NEWNET) < 0)
    {
      perror ("egress_pasta_tool: setns");
      _exit (127);
    }
  execvp (argv[0], argv);
  perror ("egress_pasta_tool: exec");
  _exit (127);
}

static int
make_table (int netns_fd, const hv_egress_spec *spec)
{
  hv_error *err = NULL;
  hv_egress_table *t = NULL;
  char fp[HV_EGRESS_FINGERPRINT_LEN];
  if (hv_egress_table_open ("haven", netns_fd, &t, &err) < 0 || hv_egress_table_create (t, spec, fp, &err) < 0)
    {
      hv_egress_table_close (t);
      return report (&err);
    }
  hv_egress_table_close (t);
  return 0;
}

static void
sleep_ms (long ms)
{
  struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

int
main (int argc, char **argv)
{
  hv_error *err = NULL;
  hv_egress_spec spec = { .nflog_group = 0 };
  hv_egress_cidr allow[64];
  const char *early = NULL, *pasta = NULL;
  long early_ms = 300, table_after = -1;
  bool table = true;
  int i = 1;
  for (; i < argc && strcmp (argv[i], "--") != 0; i++)
    {
      const char *o = argv[i];
      if (strcmp (o, "--allow") == 0 && i + 2 < argc && spec.n_allow < 64)
        {
          hv_egress_cidr *c = &allow[spec.n_allow++];
          if (hv_egress_cidr_parse (argv[i + 1], c, &err) < 0
              || hv_egress_ports_parse (argv[i + 2], &c->port_min, &c->port_max, &err) < 0)
            return report (&err);
          i += 2;
        }
      else if ((strcmp (o, "--dns4") == 0 || strcmp (o, "--dns6") == 0) && i + 2 < argc)
        {
          hv_egress_dns_target *d = o[5] == '4' ? &spec.dns4 : &spec.dns6;
          if (inet_pton (o[5] == '4' ? AF_INET : AF_INET6, argv[i + 1], d->addr) != 1)
            return usage ();
          d->set = true;
          d->port = (uint16_t) strtoul (argv[i + 2], NULL, 10);
          i += 2;
        }
      else if (strcmp (o, "--early") == 0 && i + 1 < argc)
        early = argv[++i];
      else if (strcmp (o, "--early-ms") == 0 && i + 1 < argc)
        early_ms = atol (argv[++i]);
      else if (strcmp (o, "--no-table") == 0)
        table = false;
      else if (strcmp (o, "--table-after") == 0 && i + 1 < argc)
        table_after = atol (argv[++i]);
      else if (strcmp (o, "--pasta") == 0 && i + 1 < argc)
        pasta = argv[++i];
      else
        return usage ();
    }
  if (i + 1 >= argc)
    return usage ();
  char **cmd = argv + i + 1;
  spec.allow = allow;
  /* As haven run's table has them (egress_host_addrs.h): pasta's sockets
   * follow the host's routes, and the host's own addresses are denied. */
  cleanup_free hv_egress_cidr *host_addrs = NULL;
  if (hv_egress_host_addrs (&host_addrs, &spec.n_deny, &err) < 0)
    return report (&err);
  spec.deny = host_addrs;

  /* The sandbox's namespace, made the way init makes it: unshare, then
   * back to ours (pasta runs in the caller's). */
  int host_fd = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (host_fd < 0 || unshare (CLONE_NEWNET) < 0)
    {
      perror ("egress_pasta_tool: new netns");
      return 1;
    }
  int sb_fd = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (sb_fd < 0 || fstat (sb_fd, &st) < 0 || setns (host_fd, CLONE_NEWNET) < 0)
    {
      perror ("egress_pasta_tool: back to the host's netns");
      return 1;
    }
  close (host_fd);

  if (table && table_after < 0 && make_table (sb_fd, &spec) != 0)
    return 1;
  pid_t early_pid = 0;
  if (early)
    {
      char *sh[] = { "/bin/sh", "-c", (char *) early, NULL };
      early_pid = spawn_in (sb_fd, sh, true);
      sleep_ms (early_ms);
    }
  struct hv_pasta p = HV_PASTA_INIT;
  struct hv_pasta_opts po = { .netns_fd = sb_fd, .userns_fd = -1, .binary = pasta };
  if (hv_pasta_start (&po, &p, &err) < 0)
    {
      if (early_pid > 0)
        kill (-early_pid, SIGKILL);
      return report (&err);
    }
  fprintf (stderr, "pasta %d\nnetns net:[%lu]\n", (int) p.pid, (unsigned long) st.st_ino);
  if (table && table_after >= 0)
    {
      sleep_ms (table_after);
      if (make_table (sb_fd, &spec) != 0)
        {
          hv_pasta_stop (&p);
          return 1;
        }
    }
  pid_t child = spawn_in (sb_fd, cmd, false);
  int status = 0;
  while (waitpid (child, &status, 0) < 0 && errno == EINTR)
    ;
  if (early_pid > 0)
    {
      kill (-early_pid, SIGKILL);
      waitpid (early_pid, NULL, 0);
    }
  bool alive = hv_pasta_alive (&p);
  hv_pasta_stop (&p);
  if (!alive)
    {
      fprintf (stderr, "egress_pasta_tool: pasta died while the command ran\n");
      return 1;
    }
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}
