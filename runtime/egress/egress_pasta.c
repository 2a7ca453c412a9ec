#include "config.h"
#include "egress_pasta.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/sched.h> /* struct clone_args, CLONE_PIDFD */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "egress_pasta_route.h"
#include "exit_status.h"
#include "utils.h"

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif

/* pasta's descriptors, as its command line names them. */
enum
{
  PASTA_NETNS_FD = 3,
  PASTA_USERNS_FD = 4,
  PASTA_READY_FD = 5,
  PASTA_FIRST_FREE = 6,
};

static const char *const pasta_paths[] = { "/usr/bin/pasta", "/usr/local/bin/pasta" };

/* What we read of pasta's log for an error message. */
#define PASTA_LOG_MAX 2048

/* passt's packages ship a build for AVX2 next to the plain one
 * (/usr/bin/passt.avx2 by /usr/bin/passt), and the plain one, started on
 * a processor with AVX2, first thing re-executes itself as that build
 * (arch_avx2_exec: readlink /proc/self/exe, append ".avx2").  We do that
 * step ourselves: the same file the plain one would run, minus one exec
 * and its dynamic linking (some 2 ms of haven run's start).  No AVX2, or
 * no such file: the binary as found, which then decides for itself. */
static const char *
avx2_build (const char *binary, char out[PATH_MAX + 8])
{
  __builtin_cpu_init ();
  if (!__builtin_cpu_supports ("avx2"))
    return binary;
  char real[PATH_MAX];
  if (realpath (binary, real) == NULL)
    return binary;
  size_t len = strlen (real);
  if (len >= 5 && strcmp (real + len - 5, ".avx2") == 0)
    return binary;
  snprintf (out, PATH_MAX + 8, "%s.avx2", real);
  return access (out, X_OK) == 0 ? out : binary;
}

static const char *
find_binary (const struct hv_pasta_opts *o, hv_error **err)
{
  if (o->binary)
    {
      if (access (o->binary, X_OK) < 0)
        {
          hv_error_set (err, errno, "pasta %s", o->binary);
          return NULL;
        }
      return o->binary;
    }
  for (size_t i = 0; i < N_ELEMENTS (pasta_paths); i++)
    if (access (pasta_paths[i], X_OK) == 0)
      return pasta_paths[i];
  hv_error_set (err, 0, "pasta not found in /usr/bin or /usr/local/bin (Debian package passt): "
                        "a sandbox with an allowlist policy needs it for its network");
  return NULL;
}

/* pasta's log, without the lines about a missing syslog, as one line. */
static void
read_log (int fd, char *out, size_t size)
{
  char buf[PASTA_LOG_MAX + 1];
  ssize_t n = pread (fd, buf, PASTA_LOG_MAX, 0);
  out[0] = '\0';
  if (n <= 0)
    return;
  buf[n] = '\0';
  size_t used = 0;
  char *save = NULL;
  for (char *l = strtok_r (buf, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      if (str_has_prefix (l, "Failed to send") || *l == '\0')
        continue;
      int w = snprintf (out + used, size - used, "%s%s", used ? "; " : "", l);
      if (w < 0 || (size_t) w >= size - used)
        break;
      used += (size_t) w;
    }
}

/* Move fd to at least `above`, close-on-exec cleared by the dup2 after. */
static int
lift (int fd, int above)
{
  return fd < 0 ? -1 : fcntl (fd, F_DUPFD_CLOEXEC, above);
}

static void __attribute__ ((noreturn))
child_fail (const char *what)
{
  char msg[160];
  int n = snprintf (msg, sizeof (msg), "haven: before exec of pasta: %s: %s\n", what, strerror (errno));
  if (n > 0)
    write_all (2, msg, (size_t) n);
  _exit (HV_EXIT_NOT_FOUND);
}

/* In the child: descriptors at pasta's numbers, nothing else open, caps
 * bounded, then exec with an empty environment. */
static void __attribute__ ((noreturn))
child_exec (pid_t parent, bool sibling, const char *binary, char **argv, int netns_fd, int userns_fd, int ready_fd,
            int log_fd)
{
  /* pasta dies with its parent: haven, or for a sibling haven's parent
   * (hv_pasta.sibling).  Nothing of the sandbox can reach pasta to undo
   * this, unlike init's own prctl.  It survives exec (pasta has no file
   * capabilities) and pasta's setuid/setgid to the ids it already has
   * (no change of credentials).  parent is who getppid must be: the
   * parent that died before the prctl would not kill us. */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    child_fail ("PR_SET_PDEATHSIG");
  if (getppid () != parent)
    _exit (HV_EXIT_NOT_FOUND);
  /* Its own session: a Ctrl-C at haven's terminal is the sandbox's, and
   * must not end its network.  A sibling stays in its maker's, which has
   * no terminal: that is how the maker's caller finds it should the maker
   * die before handing the sandbox over (sandbox.c). */
  if (!sibling)
    setsid ();
  hv_default_signals ();

  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  int hi_log = lift (log_fd, PASTA_FIRST_FREE + 8);
  if (hi_log < 0 || dup2 (hi_log, 2) < 0 || dup2 (hi_log, 1) < 0)
    _exit (HV_EXIT_NOT_FOUND);
  int hi_netns = lift (netns_fd, PASTA_FIRST_FREE + 8);
  int hi_userns = lift (userns_fd, PASTA_FIRST_FREE + 8);
  int hi_ready = lift (ready_fd, PASTA_FIRST_FREE + 8);
  if (devnull < 0 || hi_netns < 0 || hi_ready < 0 || (userns_fd >= 0 && hi_userns < 0))
    child_fail ("descriptors");
  if (dup2 (devnull, 0) < 0 || dup2 (hi_netns, PASTA_NETNS_FD) < 0 || dup2 (hi_ready, PASTA_READY_FD) < 0)
    child_fail ("dup2");
  if (hi_userns >= 0)
    {
      if (dup2 (hi_userns, PASTA_USERNS_FD) < 0)
        child_fail ("dup2");
    }
  else
    close (PASTA_USERNS_FD);
  syscall (SYS_close_range, PASTA_FIRST_FREE, ~0U, 0);

  if (geteuid () == 0)
    {
      /* What pasta needs as root, no more: SYS_ADMIN for setns, NET_ADMIN
       * for the tap device and the interface's configuration,
       * NET_BIND_SERVICE which it keeps for itself.  The rest leaves the
       * bounding set, so exec does not grant it. */
      for (int cap = 0; cap <= 63; cap++)
        if (cap != CAP_SYS_ADMIN && cap != CAP_NET_ADMIN && cap != CAP_NET_BIND_SERVICE
            && prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
          child_fail ("drop capabilities from the bounding set");
    }
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    child_fail ("PR_SET_NO_NEW_PRIVS");
  char *envp[] = { NULL };
  execve (binary, argv, envp);
  child_fail (binary);
}

/* pasta as a child of our parent, its pidfd in *pidfd (taken with the
 * process: no pid to race with the parent's reaping).  A fork in effect
 * (nothing shared), without fork's handlers: the child runs only
 * child_exec, as after fork. */
static pid_t
clone_sibling (int *pidfd)
{
  struct clone_args args = {
    .flags = CLONE_PARENT | CLONE_PIDFD,
    .pidfd = (uint64_t) (uintptr_t) pidfd,
    /* None may be asked with CLONE_PARENT: the child's is ours (SIGCHLD,
     * we were forked), to the parent we share. */
    .exit_signal = 0,
  };
  return (pid_t) syscall (SYS_clone3, &args, sizeof (args));
}

static long
ms_since (const struct timespec *start)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (now.tv_sec - start->tv_sec) * 1000L + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* Wait for pasta's pid on the pipe: written once the interface is
 * configured.  1: ready, 0: pasta closed it (exited), -1: timeout. */
static int
wait_ready (int fd, int ready_ms)
{
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  char buf[32];
  size_t used = 0;
  for (;;)
    {
      long left = ready_ms - ms_since (&start);
      if (left <= 0)
        return -1;
      struct pollfd p = { .fd = fd, .events = POLLIN };
      int r = poll (&p, 1, (int) left);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return -1;
      ssize_t n = read (fd, buf + used, sizeof (buf) - 1 - used);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return 0;
      used += (size_t) n;
      if (memchr (buf, '\n', used))
        return 1;
      if (used == sizeof (buf) - 1)
        return 0;
    }
}

static void
fail_cleanup (struct hv_pasta *p, char *log, size_t size)
{
  if (p->log_fd >= 0)
    read_log (p->log_fd, log, size);
  hv_pasta_stop (p);
}

int
hv_pasta_spawn (const struct hv_pasta_opts *o, struct hv_pasta *p, hv_error **err)
{
  p->pid = 0;
  p->pidfd = -1;
  p->log_fd = -1;
  p->ready_fd = -1;
  const char *binary = find_binary (o, err);
  if (binary == NULL)
    return -1;
  char avx2[PATH_MAX + 8];
  const char *exec_path = avx2_build (binary, avx2);
  struct hv_pasta_route route;
  if (hv_pasta_route (&route, err) < 0)
    return -1;
  if (route.ifname[0] == '\0')
    return hv_error_set (err, 0, "pasta: the host has no route (IPv4 or IPv6, on any interface but lo): no network "
                                 "to give the sandbox");

  /* argv[0] must name pasta: the binary is passt's, and picks its mode by
   * the name it was run as. */
  const char *argv[40];
  size_t n = 0;
  argv[n++] = "pasta";
  static const char *const fixed[] = { "--foreground", "--quiet", "--config-net", "-T", "none", "-U", "none",
                                       "-t", "none", "-u", "none", "--no-map-gw", "--no-udp", "--no-dhcp",
                                       "--no-dhcpv6", "--no-ra", "--no-netns-quit", "--pid", "/proc/self/fd/5" };
  for (size_t i = 0; i < N_ELEMENTS (fixed); i++)
    argv[n++] = fixed[i];
  /* The template and the gateways, never --outbound-if4/6: those bind
   * pasta's sockets to one interface, and an allowed host that the host
   * reaches by another (a second network, a VPN) would be sent to the
   * wrong one.  The host's own addresses are denied by the table
   * instead (egress_host_addrs.h). */
  if (!route.pasta_picks)
    {
      argv[n++] = "--interface";
      argv[n++] = route.ifname;
      if (route.v4)
        {
          argv[n++] = "--gateway";
          argv[n++] = route.gw4;
        }
      else
        argv[n++] = "--ipv6-only";
      if (route.v6)
        {
          argv[n++] = "--gateway";
          argv[n++] = route.gw6;
        }
      else
        argv[n++] = "--ipv4-only";
    }
  if (geteuid () == 0)
    {
      argv[n++] = "--runas";
      argv[n++] = "0:0";
    }
  if (o->userns_fd >= 0)
    {
      argv[n++] = "--userns";
      argv[n++] = "/proc/self/fd/4";
    }
  argv[n++] = "--netns";
  argv[n++] = "/proc/self/fd/3";
  argv[n] = NULL;

  cleanup_close int log_fd = memfd_create ("haven-pasta-log", MFD_CLOEXEC);
  if (log_fd < 0)
    return hv_error_set (err, errno, "pasta: memfd for its log");
  int ready[2];
  if (pipe2 (ready, O_CLOEXEC) < 0)
    return hv_error_set (err, errno, "pasta: readiness pipe");
  cleanup_close int ready_r = ready[0];
  pid_t parent = p->sibling ? getppid () : getpid ();
  int pidfd = -1;
  pid_t pid = p->sibling ? clone_sibling (&pidfd) : fork ();
  if (pid < 0)
    {
      int e = errno;
      close (ready[1]);
      return hv_error_set (err, e, p->sibling ? "pasta: clone3 (CLONE_PARENT)" : "pasta: fork");
    }
  if (pid == 0)
    child_exec (parent, p->sibling, exec_path, (char **) argv, o->netns_fd, o->userns_fd, ready[1], log_fd);
  close (ready[1]);
  p->pid = pid;
  p->log_fd = steal_fd (&log_fd);
  /* Our child, not reaped before we wait: the pid is its.  A sibling's
   * came with it. */
  p->pidfd = p->sibling ? pidfd : (int) syscall (SYS_pidfd_open, pid, 0);
  if (p->pidfd < 0)
    {
      int e = errno;
      kill (pid, SIGKILL);
      hv_pasta_stop (p);
      return hv_error_set (err, e, "pasta: pidfd_open");
    }
  p->ready_fd = steal_fd (&ready_r);
  p->ready_ms = o->ready_ms > 0 ? o->ready_ms : HV_PASTA_READY_MS;
  return 0;
}

int
hv_pasta_wait_ready (struct hv_pasta *p, hv_error **err)
{
  /* Nothing started (an offline host), or waited for already. */
  if (p->ready_fd < 0)
    return 0;
  int r = wait_ready (p->ready_fd, p->ready_ms);
  close (p->ready_fd);
  p->ready_fd = -1;
  if (r == 1)
    return 0;
  char log[PASTA_LOG_MAX];
  if (r == 0)
    {
      /* Exited: reap it first, so its whole log is there.  A sibling is
       * its parent's to reap: its exit shows on the pidfd, its status
       * is not ours to know. */
      int status = 0;
      if (p->sibling)
        {
          struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };
          while (poll (&pfd, 1, 2000) < 0 && errno == EINTR)
            ;
        }
      else
        {
          while (waitpid (p->pid, &status, 0) < 0 && errno == EINTR)
            ;
          p->pid = 0;
        }
      bool sibling = p->sibling;
      read_log (p->log_fd, log, sizeof (log));
      hv_pasta_stop (p);
      if (sibling)
        return hv_error_set (err, 0, "pasta exited before the sandbox's network was up: %s",
                             *log ? log : "(no message)");
      if (WIFEXITED (status))
        return hv_error_set (err, 0, "pasta exited with status %d before the sandbox's network was up: %s",
                             WEXITSTATUS (status), *log ? log : "(no message)");
      return hv_error_set (err, 0, "pasta was killed by signal %d before the sandbox's network was up: %s",
                           WTERMSIG (status), *log ? log : "(no message)");
    }
  fail_cleanup (p, log, sizeof (log));
  return hv_error_set (err, 0, "pasta did not bring the sandbox's network up within %d ms (killed): %s",
                       p->ready_ms, *log ? log : "(no message)");
}

int
hv_pasta_start (const struct hv_pasta_opts *o, struct hv_pasta *p, hv_error **err)
{
  if (hv_pasta_spawn (o, p, err) < 0)
    return -1;
  return hv_pasta_wait_ready (p, err);
}

bool
hv_pasta_alive (const struct hv_pasta *p)
{
  if (p->pidfd < 0)
    return false;
  struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };
  return poll (&pfd, 1, 0) == 0;
}

/* The descriptors, the pid kept. */
static void
close_fds (struct hv_pasta *p)
{
  if (p->pidfd >= 0)
    {
      close (p->pidfd);
      p->pidfd = -1;
    }
  if (p->log_fd >= 0)
    {
      close (p->log_fd);
      p->log_fd = -1;
    }
  if (p->ready_fd >= 0)
    {
      close (p->ready_fd);
      p->ready_fd = -1;
    }
}

static void
send_kill (struct hv_pasta *p)
{
  /* Through the pidfd: the pid may not be reused before we reap. */
  if (p->pidfd >= 0)
    syscall (SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
  else
    kill (p->pid, SIGKILL);
}

void
hv_pasta_stop (struct hv_pasta *p)
{
  if (p->pid > 0)
    {
      send_kill (p);
      /* A sibling is not ours to reap (hv_pasta.sibling). */
      while (!p->sibling && waitpid (p->pid, NULL, 0) < 0 && errno == EINTR)
        ;
      p->pid = 0;
    }
  close_fds (p);
}

void
hv_pasta_kill (struct hv_pasta *p)
{
  /* SIGKILL is fatal to the whole process at once: from here pasta never
   * runs its own code again, whatever it was doing.  What is left is the
   * kernel's work in its exit, mostly closing the tap device, whose
   * unregistering waits for RCU (rcu_barrier: 10-20 ms measured, as long
   * as pasta's whole start).  Reaping would make haven wait for that;
   * haven is about to exit, and then whoever inherits the child reaps
   * it. */
  if (p->pid > 0)
    {
      send_kill (p);
      p->pid = 0;
    }
  close_fds (p);
}

int
hv_pasta_connect (void *data, pid_t init_pid, int netns_fd, hv_error **err)
{
  struct hv_pasta *p = data;
  char path[64];
  snprintf (path, sizeof (path), "/proc/%d/ns/user", (int) init_pid);
  /* init waits for us (it is our child, not reaped): the pid is its. */
  cleanup_close int init_userns = open (path, O_RDONLY | O_CLOEXEC);
  if (init_userns < 0)
    return hv_error_set (err, errno, "pasta: %s", path);
  struct stat ours, theirs;
  if (stat ("/proc/self/ns/user", &ours) < 0 || fstat (init_userns, &theirs) < 0)
    return hv_error_set (err, errno, "pasta: user namespaces");
  bool same = ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
  /* An offline host (no route at all, e.g. a laptop on a plane) has no
   * network to give: the sandbox runs with its loopback only, the table
   * still in place.  Nothing is opened, so this is not failing open. */
  struct hv_pasta_route route;
  if (hv_pasta_route (&route, err) < 0)
    return -1;
  p->no_route = route.ifname[0] == '\0';
  if (p->no_route)
    return 0;
  struct hv_pasta_opts o = { .netns_fd = netns_fd, .userns_fd = same ? -1 : init_userns };
  return hv_pasta_spawn (&o, p, err);
}

int
hv_pasta_connected (void *data, hv_error **err)
{
  return hv_pasta_wait_ready (data, err);
}
