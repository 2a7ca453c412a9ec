#include "config.h"
#include "tty_proxy.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include "utils.h"

static struct termios saved;
static bool restored = true;

static void
restore_terminal (void)
{
  if (!restored)
    tcsetattr (0, TCSANOW, &saved);
  restored = true;
}

static void
copy_window_size (int master)
{
  struct winsize ws;
  if (ioctl (0, TIOCGWINSZ, &ws) == 0)
    ioctl (master, TIOCSWINSZ, &ws);
}

int
hv_tty_proxy (int master, const struct hv_run_hook *hook, hv_error **err)
{
  bool hooked = hook != NULL && hook->fn != NULL;
  bool local_tty = isatty (0);
  if (local_tty && tcgetattr (0, &saved) == 0)
    {
      struct termios raw = saved;
      cfmakeraw (&raw);
      restored = false;
      tcsetattr (0, TCSANOW, &raw);
      copy_window_size (master);
    }
  /* SIGWINCH through a signalfd so it is seen in the same poll loop. */
  sigset_t mask;
  sigemptyset (&mask);
  sigaddset (&mask, SIGWINCH);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  cleanup_close int sfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

  bool stdin_open = true;
  bool line_start = true;
  char buf[8192];
  int r = 0;
  for (;;)
    {
      struct pollfd p[4] = { { .fd = master, .events = POLLIN },
                             { .fd = stdin_open ? 0 : -1, .events = POLLIN },
                             { .fd = sfd, .events = POLLIN },
                             { .fd = hooked ? hook->fd : -1, .events = POLLIN } };
      if (poll (p, 4, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          r = hv_error_set (err, errno, "terminal: poll");
          break;
        }
      if (p[2].revents & POLLIN)
        {
          struct signalfd_siginfo si;
          while (read (sfd, &si, sizeof (si)) > 0)
            ;
          copy_window_size (master);
        }
      if (p[1].revents & (POLLIN | POLLHUP))
        {
          ssize_t n = read (0, buf, sizeof (buf));
          if (n <= 0)
            stdin_open = false; /* like runc: the container keeps its terminal */
          else
            write_all (master, buf, (size_t) n);
        }
      if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
        {
          ssize_t n = read (master, buf, sizeof (buf));
          if (n <= 0)
            break; /* EIO: every slave fd is closed, the container is done */
          write_all (1, buf, (size_t) n);
          line_start = buf[n - 1] == '\n';
        }
      /* Last: what the user typed before the hook's event has been
       * passed on, and what they type while fn holds the terminal is
       * fn's. */
      if (p[3].revents & POLLIN)
        {
          struct hv_tty_pause t = { .master = master, .line_start = line_start };
          hook->fn (hook->data, local_tty && stdin_open ? &t : NULL);
          line_start = t.line_start;
        }
    }
  restore_terminal ();
  sigprocmask (SIG_UNBLOCK, &mask, NULL);
  return r;
}
