#include "config.h"
#include "signals.h"

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utils.h"

static const struct
{
  const char *name;
  int num;
} signal_table[] = {
  { "HUP", SIGHUP },     { "INT", SIGINT },       { "QUIT", SIGQUIT },   { "ILL", SIGILL },     { "TRAP", SIGTRAP },
  { "ABRT", SIGABRT },   { "IOT", SIGIOT },       { "BUS", SIGBUS },     { "FPE", SIGFPE },     { "KILL", SIGKILL },
  { "USR1", SIGUSR1 },   { "SEGV", SIGSEGV },     { "USR2", SIGUSR2 },   { "PIPE", SIGPIPE },   { "ALRM", SIGALRM },
  { "TERM", SIGTERM },   { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD },   { "CONT", SIGCONT },   { "STOP", SIGSTOP },
  { "TSTP", SIGTSTP },   { "TTIN", SIGTTIN },     { "TTOU", SIGTTOU },   { "URG", SIGURG },     { "XCPU", SIGXCPU },
  { "XFSZ", SIGXFSZ },   { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },   { "WINCH", SIGWINCH }, { "IO", SIGIO },
  { "POLL", SIGPOLL },   { "PWR", SIGPWR },       { "SYS", SIGSYS },
};

int
hv_parse_signal (const char *s, hv_error **err)
{
  if (isdigit ((unsigned char) s[0]))
    {
      char *end;
      long v = strtol (s, &end, 10);
      if (*end == '\0' && v > 0 && v <= SIGRTMAX)
        return (int) v;
      return hv_error_set (err, 0, "invalid signal \"%s\"", s);
    }
  const char *name = strncasecmp (s, "SIG", 3) == 0 ? s + 3 : s;
  for (size_t i = 0; i < N_ELEMENTS (signal_table); i++)
    if (strcasecmp (name, signal_table[i].name) == 0)
      return signal_table[i].num;
  if (strncasecmp (name, "RTMIN", 5) == 0 || strncasecmp (name, "RTMAX", 5) == 0)
    {
      int base = toupper ((unsigned char) name[4]) == 'N' ? SIGRTMIN : SIGRTMAX;
      int off = name[5] ? atoi (name + 5) : 0;
      int sig = base + off;
      if (sig >= SIGRTMIN && sig <= SIGRTMAX)
        return sig;
    }
  return hv_error_set (err, 0, "invalid signal \"%s\"", s);
}

int
hv_wait_exit (int pid, int timeout_ms)
{
  int fd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (fd < 0)
    return errno == ESRCH ? 0 : -1;
  struct pollfd p = { .fd = fd, .events = POLLIN };
  int r;
  do
    r = poll (&p, 1, timeout_ms);
  while (r < 0 && errno == EINTR);
  close (fd);
  return r > 0 ? 0 : -1;
}

static volatile pid_t forward_to;
static volatile sig_atomic_t time_limit_hit;

static void
forward_signal (int sig)
{
  if (forward_to > 0)
    kill (forward_to, sig);
}

static void
time_limit_expired (int sig)
{
  (void) sig;
  time_limit_hit = 1;
  if (forward_to > 0)
    kill (forward_to, SIGKILL);
}

void
hv_forward_signals_to (pid_t pid)
{
  static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };
  struct sigaction sa = { .sa_handler = forward_signal };
  sigemptyset (&sa.sa_mask);
  forward_to = pid;
  for (size_t i = 0; i < N_ELEMENTS (forwarded); i++)
    sigaction (forwarded[i], &sa, NULL);
}

void
hv_kill_after (unsigned seconds)
{
  struct sigaction sa = { .sa_handler = time_limit_expired };
  sigemptyset (&sa.sa_mask);
  sigaction (SIGALRM, &sa, NULL);
  alarm (seconds);
}

bool
hv_time_limit_hit (void)
{
  return time_limit_hit != 0;
}
