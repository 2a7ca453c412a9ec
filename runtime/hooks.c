#include "config.h"
#include "hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "utils.h"

static long long
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int
run_one (const oci_hook *h, const char *stage, size_t index, const char *state_json, hv_error **err)
{
  int in[2], out[2];
  if (pipe2 (in, O_CLOEXEC) < 0)
    return hv_error_set (err, errno, "pipe");
  if (pipe2 (out, O_CLOEXEC) < 0)
    {
      close (in[0]);
      close (in[1]);
      return hv_error_set (err, errno, "pipe");
    }
  pid_t pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      close (in[0]), close (in[1]), close (out[0]), close (out[1]);
      return hv_error_set (err, e, "fork %s hook", stage);
    }
  if (pid == 0)
    {
      /* stdin: the state; stdout and stderr: captured for the error. */
      dup2 (in[0], 0);
      dup2 (out[1], 1);
      dup2 (out[1], 2);
      signal (SIGPIPE, SIG_DFL);
      char *default_argv[] = { h->path, NULL };
      char *empty_env[] = { NULL };
      execve (h->path, h->args.n ? h->args.v : default_argv, h->env.n ? h->env.v : empty_env);
      _exit (127);
    }
  close (in[0]);
  close (out[1]);
  /* A hook that does not read its stdin must not block us: ignore EPIPE. */
  void (*old) (int) = signal (SIGPIPE, SIG_IGN);
  write_all (in[1], state_json, strlen (state_json));
  signal (SIGPIPE, old);
  close (in[1]);

  char output[1024];
  size_t got = 0;
  long long deadline = h->timeout.set ? now_ms () + h->timeout.value * 1000 : -1;
  bool timed_out = false;
  fcntl (out[0], F_SETFL, O_NONBLOCK);
  for (;;)
    {
      int wait_ms = deadline < 0 ? -1 : (int) (deadline - now_ms ());
      if (deadline >= 0 && wait_ms <= 0)
        {
          timed_out = true;
          break;
        }
      struct pollfd pfd = { .fd = out[0], .events = POLLIN };
      int r = poll (&pfd, 1, wait_ms);
      if (r < 0 && errno == EINTR)
        continue;
      if (r == 0)
        {
          timed_out = true;
          break;
        }
      char buf[512];
      ssize_t n = read (out[0], buf, sizeof (buf));
      if (n > 0)
        {
          size_t keep = (size_t) n < sizeof (output) - 1 - got ? (size_t) n : sizeof (output) - 1 - got;
          memcpy (output + got, buf, keep);
          got += keep;
          continue;
        }
      if (n < 0 && errno == EAGAIN)
        continue;
      break; /* EOF: the hook (and whatever it spawned) closed its output */
    }
  close (out[0]);
  output[got] = '\0';
  while (got > 0 && (output[got - 1] == '\n' || output[got - 1] == ' '))
    output[--got] = '\0';

  int status = 0;
  if (timed_out)
    {
      kill (pid, SIGKILL);
      waitpid (pid, &status, 0);
      return hv_error_set (err, 0, "%s hook #%zu (%s) timed out after %lld s", stage, index, h->path,
                           (long long) h->timeout.value);
    }
  /* Output closed; the hook may still be running until the deadline. */
  for (;;)
    {
      pid_t w = waitpid (pid, &status, deadline < 0 ? 0 : WNOHANG);
      if (w == pid)
        break;
      if (w < 0 && errno != EINTR)
        return hv_error_set (err, errno, "wait for %s hook", stage);
      if (w == 0)
        {
          if (now_ms () >= deadline)
            {
              kill (pid, SIGKILL);
              waitpid (pid, &status, 0);
              return hv_error_set (err, 0, "%s hook #%zu (%s) timed out after %lld s", stage, index, h->path,
                                   (long long) h->timeout.value);
            }
          struct timespec ts = { 0, 2000000 };
          nanosleep (&ts, NULL);
        }
    }
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  if (WIFEXITED (status))
    return hv_error_set (err, 0, "%s hook #%zu (%s) failed with exit status %d%s%s", stage, index, h->path,
                         WEXITSTATUS (status), got ? ": " : "", output);
  return hv_error_set (err, 0, "%s hook #%zu (%s) killed by signal %d", stage, index, h->path, WTERMSIG (status));
}

int
hv_hooks_run (const oci_hook_list *hooks, const char *stage, const char *state_json, hv_error **err)
{
  for (size_t i = 0; i < hooks->n; i++)
    if (run_one (&hooks->v[i], stage, i, state_json, err) < 0)
      return -1;
  return 0;
}
