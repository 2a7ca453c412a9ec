/* run: create and start a container, and in the foreground proxy its
 * terminal, forward signals and wait for its end.  `haven-runc run` and
 * `haven run` both come here, each with its own options. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container.h"
#include "exit_status.h"
#include "fault_point.h"
#include "run_guard.h"
#include "signals.h"
#include "tty_proxy.h"
#include "utils.h"

/* Kill what create made and remove it: nothing may outlive a failed run. */
static void
abandon (const struct hv_runtime *rt, hv_container *c)
{
  cleanup_error hv_error *ignored = NULL;
  kill (c->pid, SIGKILL);
  hv_wait_exit (c->pid, 5000);
  hv_container_destroy (rt, c, &ignored);
}

static int
wait_status (pid_t pid)
{
  int status = 0;
  for (;;)
    {
      pid_t w = waitpid (pid, &status, 0);
      if (w == pid)
        return status;
      if (w < 0 && errno != EINTR)
        {
          /* Not our child (double fork without subreaper): poll for it. */
          hv_wait_exit (pid, -1);
          return 0;
        }
    }
}

/* Without a terminal: the hook's events until the container's init has
 * exited (its pidfd readable). */
static void
wait_hooked (int pidfd, const struct hv_run_hook *hook)
{
  for (;;)
    {
      struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = hook->fd, .events = POLLIN } };
      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return;
        }
      if (p[0].revents)
        return;
      if (p[1].revents & POLLIN)
        hook->fn (hook->data, NULL);
      else if (p[1].revents)
        return;
    }
}

int
hv_container_run (const struct hv_runtime *rt, const struct hv_run_opts *o, struct hv_guard *guard, int *exit_status,
                  hv_error **err)
{
  struct hv_create_opts co = o->create;
  cleanup_container hv_container *c = NULL;
  cleanup_close int pidfd = -1;
  cleanup_close int master = -1;
  *exit_status = 0;
  guard->pid = 0;
  guard->keepalive_fd = -1;
  co.keep_child_reapable = !o->detach;
  co.die_with_runtime = co.die_with_runtime && !o->detach;
  bool caller_stops_guard = co.die_with_runtime && o->after_runtime_died.fn != NULL;
  /* runc semantics: a foreground run without a console socket proxies the
   * container's terminal itself. */
  if (co.console_socket == NULL && !o->detach)
    co.console_master = &master;
  if (hv_container_create (rt, &co, &c, &pidfd, err) < 0)
    return -1;
  hv_fault_point ("run.created");
  if (co.die_with_runtime && (pidfd < 0 || hv_guard_start (pidfd, &o->after_runtime_died, guard, err) < 0))
    {
      /* Fail closed: no sandbox that could outlive us. */
      if (pidfd < 0)
        hv_error_set (err, errno, "pidfd of the container's init");
      abandon (rt, c);
      return -1;
    }
  hv_fault_point ("run.guard-started");
  if (!o->detach)
    hv_forward_signals_to (c->pid);
  if (hv_container_start (rt, c, err) < 0)
    {
      abandon (rt, c);
      if (!caller_stops_guard)
        hv_guard_stop (guard);
      return -1;
    }
  hv_fault_point ("run.started");
  if (o->detach)
    return 0;
  if (o->timeout_s)
    hv_kill_after (o->timeout_s);
  if (master >= 0)
    {
      cleanup_error hv_error *proxy_err = NULL;
      hv_tty_proxy (master, &o->hook, &proxy_err);
    }
  else if (o->hook.fn != NULL && pidfd >= 0)
    wait_hooked (pidfd, &o->hook);
  int status = wait_status (c->pid);
  hv_fault_point ("run.exited");
  if (!caller_stops_guard)
    hv_guard_stop (guard);
  *exit_status = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
  if (hv_time_limit_hit ())
    {
      /* As timeout(1) reports it. */
      *exit_status = HV_EXIT_TIMEOUT;
      static const char msg[] = "haven: the command ran past its time limit and was killed\n";
      write_all (2, msg, sizeof (msg) - 1);
    }
  if (!o->keep)
    {
      cleanup_error hv_error *derr = NULL;
      if (hv_container_destroy (rt, c, &derr) < 0)
        return hv_error_set (err, 0, "%s", derr->msg);
    }
  return 0;
}
