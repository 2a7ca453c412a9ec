/* Sockets made in a container's network namespace: netns_sockets.h. */
#include "config.h"
#include "netns_sockets.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sync.h"
#include "utils.h"

/* linux/pidfd.h since 6.11; Debian 12's headers are older. */
#ifndef PIDFD_GET_NET_NAMESPACE
#define PIDFD_GET_NET_NAMESPACE _IO (0xFF, 4)
#endif

/* init's network namespace, through a pidfd: the namespace of that
 * process, never of another that got its pid.  Kernels before 6.11 have
 * no PIDFD_GET_NET_NAMESPACE: /proc then, and the pidfd tells whether
 * the process was still alive after the open (a pid is not reused while
 * its process lives, and init waits for us). */
int
hv_netns_open_of_pid (pid_t pid, hv_error **err)
{
  cleanup_close int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0)
    return hv_error_set (err, errno, "pidfd of container init %d", pid);
  int ns = ioctl (pidfd, PIDFD_GET_NET_NAMESPACE, 0);
  if (ns >= 0)
    {
      fcntl (ns, F_SETFD, FD_CLOEXEC);
      return ns;
    }
  char path[64];
  snprintf (path, sizeof (path), "/proc/%d/ns/net", pid);
  ns = open (path, O_RDONLY | O_CLOEXEC);
  if (ns < 0)
    return hv_error_set (err, errno, "open %s", path);
  if (syscall (SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
    {
      close (ns);
      return hv_error_set (err, 0, "container init exited during create");
    }
  return ns;
}

/* How long the helper that makes the sockets may take (it only enters
 * two namespaces and makes a few sockets). */
#define HELPER_TIMEOUT_MS 10000

/* The helper's messages: each name with its fd (or none), in order, then
 * HV_SYNC_READY. */

/* Enter the sandbox's network namespace, and first the user namespace
 * that owns it when that is not ours: setns(CLONE_NEWNET) wants
 * CAP_SYS_ADMIN over the namespace's owner *and* in our own user
 * namespace, which a rootless runtime lacks, though as the owner of the
 * container's user namespace it has every capability inside it.  From a
 * forked, single-threaded helper only (joining a user namespace is for
 * good). */
/* Still EPERM: the namespace's owner is not ours to act for (a runtime
 * inside another's user namespace); the caller says what to do. */

static int
helper_enter (int netns, hv_error **err)
{
  /* NS_GET_USERNS answers EPERM when the owner is not ours or below
   * ours: then setns tells whether we may enter anyway. */
  cleanup_close int owner = ioctl (netns, NS_GET_USERNS);
  if (owner >= 0)
    {
      struct stat theirs, ours;
      if (fstat (owner, &theirs) < 0 || stat ("/proc/self/ns/user", &ours) < 0)
        return hv_error_set (err, errno, "compare user namespaces");
      if ((theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino) && setns (owner, CLONE_NEWUSER) < 0)
        return hv_error_set (err, errno, "enter the user namespace that owns the container's network namespace");
    }
  if (setns (netns, CLONE_NEWNET) < 0)
    return hv_error_set (err, errno, "enter the container's network namespace");
  return 0;
}

/* The helper: make everything, send it, exit.  Never returns. */
static void __attribute__ ((noreturn))
helper_run (int sock, int netns, const char *const *names, unsigned n, hv_netns_make_fn make, void *data)
{
  hv_error *err = NULL;
  /* Once in the container's user namespace, its root could otherwise
   * ptrace us or open our fds through /proc (CVE-2016-9962 in runc):
   * not dumpable, only a process privileged over our own user namespace
   * may. */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    hv_error_set (&err, errno, "prctl PR_SET_DUMPABLE");
  /* Not closed: the helper exits once they are sent. */
  int *made = xmalloc0 (n * sizeof (*made));
  for (unsigned i = 0; i < n; i++)
    made[i] = -1;
  if (err == NULL && helper_enter (netns, &err) == 0)
    make (data, made, &err);
  if (err == NULL)
    {
      for (unsigned i = 0; i < n && err == NULL; i++)
        hv_sync_send (sock, HV_SYNC_EGRESS, names[i], strlen (names[i]), made[i], &err);
      if (err == NULL && hv_sync_send (sock, HV_SYNC_READY, "", 0, -1, &err) == 0)
        _exit (0);
    }
  hv_sync_send_error (sock, err);
  _exit (1);
}

/* One message from the helper, waiting at most until deadline. */
static int
helper_recv (int sock, const struct timespec *deadline, enum hv_sync_type want, const char *what, int *fd,
             hv_error **err)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  long ms = (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
  struct pollfd p = { .fd = sock, .events = POLLIN };
  int r = ms > 0 ? poll (&p, 1, (int) ms) : 0;
  if (r < 0)
    return hv_error_set (err, errno, "wait for the sockets of the container's network namespace");
  if (r == 0)
    return hv_error_set (err, ETIMEDOUT, "no sockets from the container's network namespace after %d ms",
                         HELPER_TIMEOUT_MS);
  cleanup_free char *payload = NULL;
  if (hv_sync_expect (sock, want, &payload, fd, err) < 0)
    return -1;
  if (strcmp (payload, what) != 0)
    {
      if (*fd >= 0)
        close (*fd);
      *fd = -1;
      return hv_error_set (err, 0, "expected socket %s from the helper, got \"%s\"", what, payload);
    }
  return 0;
}

/* The sockets are made in the sandbox's namespace (a socket stays in the
 * namespace it was made in) by a short-lived child: entering that
 * namespace may mean entering the container's user namespace, for good
 * (rootless), and the runtime must stay where it is. */
int
hv_netns_sockets (int netns, const char *const *names, unsigned n, hv_netns_make_fn make, void *data, int *fds,
                  hv_error **err)
{
  for (unsigned i = 0; i < n; i++)
    fds[i] = -1;
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return hv_error_set (err, errno, "socketpair");
  cleanup_close int ours = sv[0];
  cleanup_close int theirs = sv[1];
  pid_t pid = fork ();
  if (pid < 0)
    return hv_error_set (err, errno, "fork");
  if (pid == 0)
    {
      close (ours);
      helper_run (theirs, netns, names, n, make, data);
    }
  close (theirs);
  theirs = -1;
  struct timespec deadline;
  clock_gettime (CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += HELPER_TIMEOUT_MS / 1000;
  int r = 0;
  for (unsigned i = 0; i < n && r == 0; i++)
    r = helper_recv (ours, &deadline, HV_SYNC_EGRESS, names[i], &fds[i], err);
  int none = -1;
  if (r == 0)
    r = helper_recv (ours, &deadline, HV_SYNC_READY, "", &none, err);
  if (none >= 0)
    close (none);
  /* Done or not, it has nothing more to do: the wait is bounded. */
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
  if (r < 0)
    for (unsigned i = 0; i < n; i++)
      if (fds[i] >= 0)
        {
          close (fds[i]);
          fds[i] = -1;
        }
  return r;
}
