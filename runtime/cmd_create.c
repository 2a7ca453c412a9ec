/* create, start, run */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "container.h"
#include "run_guard.h"
#include "signals.h"
#include "tty_proxy.h"
#include "utils.h"

enum
{
  OPT_BUNDLE = 1,
  OPT_PID_FILE,
  OPT_CONSOLE_SOCKET,
  OPT_NO_PIVOT,
  OPT_NO_NEW_KEYRING,
  OPT_PRESERVE_FDS,
  OPT_DETACH,
  OPT_NO_SUBREAPER,
  OPT_KEEP,
};

static const struct hv_opt create_opts[] = {
  { "bundle", 'b', true, OPT_BUNDLE },
  { "pid-file", 0, true, OPT_PID_FILE },
  { "console-socket", 0, true, OPT_CONSOLE_SOCKET },
  { "no-pivot", 0, false, OPT_NO_PIVOT },
  { "no-new-keyring", 0, false, OPT_NO_NEW_KEYRING },
  { "preserve-fds", 0, true, OPT_PRESERVE_FDS },
  { "detach", 'd', false, OPT_DETACH },
  { "no-subreaper", 0, false, OPT_NO_SUBREAPER },
  { "keep", 0, false, OPT_KEEP },
  { NULL, 0, false, 0 },
};

static int
parse_create (const char *cmd, int argc, char **argv, struct hv_create_opts *o, bool *detach, bool *keep,
              hv_error **err)
{
  struct hv_opt_iter it = { argc, argv, 1, cmd };
  const char *arg;
  int id;
  memset (o, 0, sizeof (*o));
  while ((id = hv_opt_next (&it, create_opts, &arg, err)) > 0)
    switch (id)
      {
      case OPT_BUNDLE:
        o->bundle = arg;
        break;
      case OPT_PID_FILE:
        o->pid_file = arg;
        break;
      case OPT_CONSOLE_SOCKET:
        o->console_socket = arg;
        break;
      case OPT_NO_PIVOT:
        o->no_pivot = hv_opt_bool (arg);
        break;
      case OPT_NO_NEW_KEYRING:
        o->no_new_keyring = hv_opt_bool (arg);
        break;
      case OPT_PRESERVE_FDS:
        if (hv_opt_preserve_fds (cmd, arg, &o->preserve_fds, err) < 0)
          return -1;
        break;
      case OPT_DETACH:
        if (detach == NULL)
          return hv_error_set (err, 0, "%s: unknown option --detach", cmd);
        *detach = hv_opt_bool (arg);
        break;
      case OPT_KEEP:
        if (keep)
          *keep = hv_opt_bool (arg);
        break;
      default:
        break;
      }
  if (id < 0)
    return -1;
  if (cli_require_id (cmd, &it, &o->id, err) < 0)
    return -1;
  return 0;
}

int
cmd_create (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  struct hv_create_opts o;
  cleanup_container hv_container *c = NULL;
  if (parse_create ("create", argc, argv, &o, NULL, NULL, err) < 0)
    return -1;
  return hv_container_create (g, &o, &c, NULL, err);
}

int
cmd_start (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  static const struct hv_opt opts[] = { { NULL, 0, false, 0 } };
  struct hv_opt_iter it = { argc, argv, 1, "start" };
  const char *arg, *id;
  cleanup_container hv_container *c = NULL;
  if (hv_opt_next (&it, opts, &arg, err) < 0 || cli_require_id ("start", &it, &id, err) < 0)
    return -1;
  if (hv_container_load (g, id, &c, err) < 0)
    return -1;
  return hv_container_start (g, c, err);
}

unsigned hv_run_timeout_s;
bool hv_run_die_with_runtime;
struct hv_guard_after hv_run_after_runtime_died = { NULL, NULL, -1 };
/* The guard of the last foreground run; with an after-function its
 * caller ends it (hv_run_guard_stop) once it has done that work itself. */
static struct hv_guard run_guard = { 0, -1 };

void
hv_run_guard_stop (void)
{
  hv_guard_stop (&run_guard);
}

static void
guard_stop_unless_caller_does (void)
{
  if (hv_run_after_runtime_died.fn == NULL)
    hv_guard_stop (&run_guard);
}

int
cmd_run (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  struct hv_create_opts o;
  bool detach = false, keep = false;
  cleanup_container hv_container *c = NULL;
  int pidfd = -1;
  cleanup_close int master = -1;
  if (parse_create ("run", argc, argv, &o, &detach, &keep, err) < 0)
    return -1;
  o.keep_child_reapable = !detach;
  o.die_with_runtime = hv_run_die_with_runtime && !detach;
  /* runc semantics: a foreground run without a console socket proxies the
   * container's terminal itself. */
  if (o.console_socket == NULL && !detach)
    o.console_master = &master;
  if (hv_container_create (g, &o, &c, &pidfd, err) < 0)
    return -1;
  if (o.die_with_runtime
      && (pidfd < 0 || hv_guard_start (pidfd, &hv_run_after_runtime_died, &run_guard, err) < 0))
    {
      /* Fail closed: no sandbox that could outlive us. */
      cleanup_error hv_error *ignored = NULL;
      if (pidfd < 0)
        hv_error_set (err, errno, "pidfd of the container's init");
      kill (c->pid, SIGKILL);
      hv_wait_exit (c->pid, 5000);
      hv_container_destroy (g, c, &ignored);
      if (pidfd >= 0)
        close (pidfd);
      return -1;
    }
  if (pidfd >= 0)
    close (pidfd);
  if (!detach)
    {
      hv_forward_signals_to (c->pid);
    }
  if (hv_container_start (g, c, err) < 0)
    {
      cleanup_error hv_error *ignored = NULL;
      kill (c->pid, SIGKILL);
      hv_wait_exit (c->pid, 5000);
      guard_stop_unless_caller_does ();
      hv_container_destroy (g, c, &ignored);
      return -1;
    }
  if (detach)
    return 0;
  if (hv_run_timeout_s)
    hv_kill_after (hv_run_timeout_s);
  if (master >= 0)
    {
      cleanup_error hv_error *proxy_err = NULL;
      hv_tty_proxy (master, &proxy_err);
    }
  int status = 0;
  for (;;)
    {
      pid_t w = waitpid (c->pid, &status, 0);
      if (w == c->pid)
        break;
      if (w < 0 && errno != EINTR)
        {
          /* Not our child (double fork without subreaper): poll for it. */
          hv_wait_exit (c->pid, -1);
          status = 0;
          break;
        }
    }
  guard_stop_unless_caller_does ();
  hv_exit_status = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
  if (hv_time_limit_hit ())
    {
      /* As timeout(1) reports it. */
      hv_exit_status = 124;
      static const char msg[] = "haven: the command ran past its time limit and was killed\n";
      write_all (2, msg, sizeof (msg) - 1);
    }
  if (!keep)
    {
      cleanup_error hv_error *derr = NULL;
      if (hv_container_destroy (g, c, &derr) < 0)
        return hv_error_set (err, 0, "%s", derr->msg);
    }
  return 0;
}
