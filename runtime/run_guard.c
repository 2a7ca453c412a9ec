#include "config.h"
#include "run_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "utils.h"

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

enum
{
  GUARD_PIPE_FD = 3,
  GUARD_PIDFD = 4,
};

static void __attribute__ ((noreturn))
guard_main (int pipe_fd, int init_pidfd)
{
  /* Terminal signals are for the sandbox (haven forwards them); the guard
   * must outlive a Ctrl-C that haven survives. */
  static const int ignored[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE,
                                 SIGUSR1, SIGUSR2, SIGWINCH };
  for (size_t i = 0; i < N_ELEMENTS (ignored); i++)
    signal (ignored[i], SIG_IGN);
  /* Hold none of haven's descriptors: a reader of haven's stdout must see
   * EOF when haven is done, not when the guard is. */
  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0)
    for (int i = 0; i < 3; i++)
      dup2 (devnull, i);
  /* Move both above the fixed numbers first: dup2 of one onto the
   * other's number would close it. */
  int hi_pipe = fcntl (pipe_fd, F_DUPFD_CLOEXEC, GUARD_PIDFD + 1);
  int hi_pidfd = fcntl (init_pidfd, F_DUPFD_CLOEXEC, GUARD_PIDFD + 1);
  if (hi_pipe < 0 || hi_pidfd < 0 || dup2 (hi_pipe, GUARD_PIPE_FD) < 0 || dup2 (hi_pidfd, GUARD_PIDFD) < 0)
    {
      /* Cannot watch haven: do not leave the sandbox unwatched. */
      syscall (SYS_pidfd_send_signal, hi_pidfd >= 0 ? hi_pidfd : init_pidfd, SIGKILL, NULL, 0);
      _exit (1);
    }
  syscall (SYS_close_range, GUARD_PIDFD + 1, ~0U, 0);
  for (;;)
    {
      struct pollfd pfd[2] = { { .fd = GUARD_PIPE_FD, .events = POLLIN }, { .fd = GUARD_PIDFD, .events = POLLIN } };
      if (poll (pfd, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break; /* cannot watch: fail closed */
        }
      if (pfd[1].revents)
        _exit (0); /* the sandbox ended first */
      if (pfd[0].revents)
        break; /* EOF: haven is gone, or done with the sandbox */
    }
  syscall (SYS_pidfd_send_signal, GUARD_PIDFD, SIGKILL, NULL, 0);
  _exit (0);
}

int
hv_guard_start (int init_pidfd, struct hv_guard *g, hv_error **err)
{
  g->pid = 0;
  g->keepalive_fd = -1;
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return hv_error_set (err, errno, "guard pipe");
  pid_t pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      close (p[0]);
      close (p[1]);
      return hv_error_set (err, e, "fork guard");
    }
  if (pid == 0)
    {
      close (p[1]);
      guard_main (p[0], init_pidfd);
    }
  close (p[0]);
  g->pid = pid;
  g->keepalive_fd = p[1];
  return 0;
}

void
hv_guard_stop (struct hv_guard *g)
{
  /* By now init has exited (or was killed): the guard's kill through the
   * pidfd, which cannot name a reused pid, finds nothing. */
  if (g->keepalive_fd >= 0)
    {
      close (g->keepalive_fd);
      g->keepalive_fd = -1;
    }
  if (g->pid > 0)
    {
      while (waitpid (g->pid, NULL, 0) < 0 && errno == EINTR)
        ;
      g->pid = 0;
    }
}
