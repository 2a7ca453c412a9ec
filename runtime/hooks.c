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

#include "exit_status.h"
#include "utils.h"

static long long
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Fork and exec the hook with a pipe on its stdin (*to_hook: our end) and
 * one on its stdout and stderr (*from_hook). */
static pid_t
spawn_hook (const oci_hook *h, const char *stage, int *to_hook, int *from_hook, hv_error **err)
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
      _exit (HV_EXIT_NOT_FOUND);
    }
  close (in[0]);
  close (out[1]);
  *to_hook = in[1];
  *from_hook = out[0];
  return pid;
}

static void
send_state (int to_hook, const char *state_json)
{
  /* A hook that does not read its stdin must not block us: ignore EPIPE. */
  void (*old) (int) = signal (SIGPIPE, SIG_IGN);
  write_all (to_hook, state_json, strlen (state_json));
  signal (SIGPIPE, old);
  close (to_hook);
}

/* What the hook wrote, cut to fit, trailing newlines and spaces dropped:
 * the tail of its failure message. */
struct hook_output
{
  char text[1024];
  size_t len;
};

/* Read the hook's output until it closes it, or until the deadline (-1:
 * none) passes; closes from_hook.  True when the deadline passed. */
static bool
read_output (int from_hook, long long deadline, struct hook_output *o)
{
  bool timed_out = false;
  o->len = 0;
  fcntl (from_hook, F_SETFL, O_NONBLOCK);
  for (;;)
    {
      int wait_ms = deadline < 0 ? -1 : (int) (deadline - now_ms ());
      if (deadline >= 0 && wait_ms <= 0)
        {
          timed_out = true;
          break;
        }
      struct pollfd pfd = { .fd = from_hook, .events = POLLIN };
      int r = poll (&pfd, 1, wait_ms);
      if (r < 0 && errno == EINTR)
        continue;
      if (r == 0)
        {
          timed_out = true;
          break;
        }
      char buf[512];
      ssize_t n = read (from_hook, buf, sizeof (buf));
      if (n > 0)
        {
          size_t room = sizeof (o->text) - 1 - o->len;
          size_t keep = (size_t) n < room ? (size_t) n : room;
          memcpy (o->text + o->len, buf, keep);
          o->len += keep;
          continue;
        }
      if (n < 0 && errno == EAGAIN)
        continue;
      break; /* EOF: the hook (and whatever it spawned) closed its output */
    }
  close (from_hook);
  o->text[o->len] = '\0';
  while (o->len > 0 && (o->text[o->len - 1] == '\n' || o->text[o->len - 1] == ' '))
    o->text[--o->len] = '\0';
  return timed_out;
}

/* Output closed; the hook may still be running until the deadline.  0 when
 * it exited (*status), 1 when the deadline passed first, -1 on error. */
static int
wait_for_exit (pid_t pid, long long deadline, const char *stage, int *status, hv_error **err)
{
  for (;;)
    {
      pid_t w = waitpid (pid, status, deadline < 0 ? 0 : WNOHANG);
      if (w == pid)
        return 0;
      if (w < 0 && errno != EINTR)
        return hv_error_set (err, errno, "wait for %s hook", stage);
      if (w == 0)
        {
          if (now_ms () >= deadline)
            return 1;
          struct timespec ts = { 0, 2000000 };
          nanosleep (&ts, NULL);
        }
    }
}

static int
kill_timed_out (pid_t pid, const oci_hook *h, const char *stage, size_t index, hv_error **err)
{
  int status = 0;
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  return hv_error_set (err, 0, "%s hook #%zu (%s) timed out after %lld s", stage, index, h->path,
                       (long long) h->timeout.value);
}

static int
check_exit_status (int status, const struct hook_output *o, const oci_hook *h, const char *stage, size_t index,
                   hv_error **err)
{
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  if (WIFEXITED (status))
    return hv_error_set (err, 0, "%s hook #%zu (%s) failed with exit status %d%s%s", stage, index, h->path,
                         WEXITSTATUS (status), o->len ? ": " : "", o->text);
  return hv_error_set (err, 0, "%s hook #%zu (%s) killed by signal %d", stage, index, h->path, WTERMSIG (status));
}

static int
run_one (const oci_hook *h, const char *stage, size_t index, const char *state_json, hv_error **err)
{
  int to_hook = -1, from_hook = -1;
  pid_t pid = spawn_hook (h, stage, &to_hook, &from_hook, err);
  if (pid < 0)
    return -1;
  send_state (to_hook, state_json);

  long long deadline = h->timeout.set ? now_ms () + h->timeout.value * 1000 : -1;
  struct hook_output output;
  if (read_output (from_hook, deadline, &output))
    return kill_timed_out (pid, h, stage, index, err);
  int status = 0;
  int waited = wait_for_exit (pid, deadline, stage, &status, err);
  if (waited < 0)
    return -1;
  if (waited > 0)
    return kill_timed_out (pid, h, stage, index, err);
  return check_exit_status (status, &output, h, stage, index, err);
}

int
hv_hooks_run (const oci_hook_list *hooks, const char *stage, const char *state_json, hv_error **err)
{
  for (size_t i = 0; i < hooks->n; i++)
    if (run_one (&hooks->v[i], stage, i, state_json, err) < 0)
      return -1;
  return 0;
}
