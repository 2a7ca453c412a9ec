#include "config.h"
#include "run_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "utils.h"

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

enum
{
  GUARD_SOCK_FD = 3,
  GUARD_PIDFD = 4,
  GUARD_STDERR_FD = 5,
  GUARD_KEEP_FD = 6,
};

static const char done_byte = 'd';

static void
guard_say (const char *msg)
{
  write_all (GUARD_STDERR_FD, msg, strlen (msg));
}

/* Wait until init is gone, at most HV_GUARD_WAIT_MS. */
static bool
wait_init_gone (void)
{
  struct timespec start, now;
  clock_gettime (CLOCK_MONOTONIC, &start);
  for (;;)
    {
      clock_gettime (CLOCK_MONOTONIC, &now);
      long elapsed = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
      if (elapsed >= HV_GUARD_WAIT_MS)
        return false;
      struct pollfd pfd = { .fd = GUARD_PIDFD, .events = POLLIN };
      int r = poll (&pfd, 1, (int) (HV_GUARD_WAIT_MS - elapsed));
      if (r > 0)
        return true;
      if (r < 0 && errno != EINTR)
        return false;
    }
}

static void __attribute__ ((noreturn))
guard_main (int sock_fd, int init_pidfd, const struct hv_guard_after *after)
{
  /* Terminal signals are for the sandbox (haven forwards them); the guard
   * must outlive a Ctrl-C that haven survives. */
  static const int ignored[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE,
                                 SIGUSR1, SIGUSR2, SIGWINCH };
  for (size_t i = 0; i < N_ELEMENTS (ignored); i++)
    signal (ignored[i], SIG_IGN);
  /* Out of haven's process group: a kill of the whole job must leave the
   * guard to clean up after it (haven does the same from its side, so a
   * kill right after the fork finds it moved already or not at all). */
  setpgid (0, 0);
  if (after && after->fn == NULL)
    after = NULL;
  /* Move them all above the fixed numbers first: dup2 of one onto
   * another's number would close it.  stderr is kept only for `after`,
   * which runs when haven is gone and can no longer tell the user. */
  int hi_sock = fcntl (sock_fd, F_DUPFD_CLOEXEC, GUARD_KEEP_FD + 1);
  int hi_pidfd = fcntl (init_pidfd, F_DUPFD_CLOEXEC, GUARD_KEEP_FD + 1);
  int hi_keep = after && after->keep_fd >= 0 ? fcntl (after->keep_fd, F_DUPFD_CLOEXEC, GUARD_KEEP_FD + 1) : -1;
  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  int hi_stderr = after ? fcntl (2, F_DUPFD_CLOEXEC, GUARD_KEEP_FD + 1) : -1;
  if (hi_stderr < 0 && devnull >= 0)
    hi_stderr = fcntl (devnull, F_DUPFD_CLOEXEC, GUARD_KEEP_FD + 1);
  /* Hold none of haven's descriptors on 0-2: a reader of haven's stdout
   * must see EOF when haven is done, not when the guard is. */
  if (devnull >= 0)
    for (int i = 0; i < 3; i++)
      dup2 (devnull, i);
  if (hi_sock < 0 || hi_pidfd < 0 || dup2 (hi_sock, GUARD_SOCK_FD) < 0 || dup2 (hi_pidfd, GUARD_PIDFD) < 0)
    {
      /* Cannot watch haven: do not leave the sandbox unwatched. */
      syscall (SYS_pidfd_send_signal, hi_pidfd >= 0 ? hi_pidfd : init_pidfd, SIGKILL, NULL, 0);
      _exit (1);
    }
  /* Without them `after` still runs, only unheard. */
  if (hi_stderr >= 0)
    dup2 (hi_stderr, GUARD_STDERR_FD);
  if (hi_keep >= 0)
    dup2 (hi_keep, GUARD_KEEP_FD);
  syscall (SYS_close_range, hi_keep >= 0 ? GUARD_KEEP_FD + 1 : GUARD_KEEP_FD, ~0U, 0);
  /* Watch haven, not the sandbox: when init exits first, haven still has
   * work to do after it, which `after` must do if haven dies meanwhile. */
  bool init_gone = false;
  for (;;)
    {
      struct pollfd pfd[2] = { { .fd = GUARD_SOCK_FD, .events = POLLIN },
                               { .fd = init_gone ? -1 : GUARD_PIDFD, .events = POLLIN } };
      if (poll (pfd, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break; /* cannot watch: fail closed, then wait for haven's word */
        }
      if (pfd[1].revents)
        init_gone = true;
      if (pfd[0].revents)
        break; /* haven is done, or gone */
    }
  syscall (SYS_pidfd_send_signal, GUARD_PIDFD, SIGKILL, NULL, 0);
  char c = 0;
  ssize_t n;
  while ((n = read (GUARD_SOCK_FD, &c, 1)) < 0 && errno == EINTR)
    ;
  bool haven_done = n == 1 && c == done_byte;
  if (haven_done || after == NULL)
    _exit (0);
  /* haven died before it was done.  `after` may look at what the sandbox
   * wrote: only once nothing of the sandbox runs any more (init's exit
   * ends its pid namespace with every process in it). */
  if (!init_gone && !wait_init_gone ())
    guard_say ("haven: warning: the sandbox had not ended 10 s after haven died; what follows "
               "checks the project while it may still change\n");
  dup2 (GUARD_STDERR_FD, 2);
  if (after->keep_fd >= 0 && after->keep_fd != GUARD_KEEP_FD)
    dup2 (GUARD_KEEP_FD, after->keep_fd);
  after->fn (after->data);
  _exit (0);
}

int
hv_guard_start (int init_pidfd, const struct hv_guard_after *after, struct hv_guard *g, hv_error **err)
{
  g->pid = 0;
  g->keepalive_fd = -1;
  int s[2];
  /* A socket, not a pipe: haven's "done" byte must not raise SIGPIPE in
   * haven when the guard is already gone (send with MSG_NOSIGNAL). */
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) < 0)
    return hv_error_set (err, errno, "guard socket");
  pid_t pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      close (s[0]);
      close (s[1]);
      return hv_error_set (err, e, "fork guard");
    }
  if (pid == 0)
    {
      close (s[1]);
      guard_main (s[0], init_pidfd, after);
    }
  close (s[0]);
  setpgid (pid, pid);
  g->pid = pid;
  g->keepalive_fd = s[1];
  return 0;
}

void
hv_guard_stop (struct hv_guard *g)
{
  /* By now init has exited (or was killed): the guard's kill through the
   * pidfd, which cannot name a reused pid, finds nothing. */
  if (g->keepalive_fd >= 0)
    {
      (void) send (g->keepalive_fd, &done_byte, 1, MSG_NOSIGNAL);
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
