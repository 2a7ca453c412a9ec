#include "config.h"
#include "audit_monitor.h"
#include "audit_notify.h"
#include "audit_trail.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "denial_explain.h"
#include "denial_view.h"
#include "json_gen.h"
#include "log.h"
#include "utils.h"

/* Close every descriptor above stdio but those of keep (-1: none). */
static void
close_all_but (int *keep, size_t n)
{
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--)
      {
        int t = keep[j];
        keep[j] = keep[j - 1];
        keep[j - 1] = t;
      }
  unsigned from = 3;
  for (size_t i = 0; i < n; i++)
    {
      if (keep[i] < (int) from)
        continue;
      if ((unsigned) keep[i] > from)
        syscall (SYS_close_range, from, (unsigned) keep[i] - 1, 0U);
      from = (unsigned) keep[i] + 1;
    }
  syscall (SYS_close_range, from, ~0U, 0U);
}

/* The listener process: answers every notification with EPERM after
 * recording it, until no process uses the filter any more (POLLHUP). */
static void __attribute__ ((noreturn))
listener_main (int listen_fd, int log_fd, const char *policy, const char *sandbox, const char *run,
               const char *sock_path, const char *denials, pid_t parent)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (getppid () != parent)
    _exit (0);
  /* Hold none of haven's stdio: a pipe reader must see EOF when the
   * command is done, not when the listener is. */
  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0)
    for (int i = 0; i < 3; i++)
      dup2 (devnull, i);
  /* Nothing else of our creator's: we may outlive it (below), and a
   * copy of one of its sockets held here (a service's maker's record
   * socket) would hide its end from whoever waits for that. */
  int keep[] = { listen_fd, log_fd, hv_log_fd () };
  close_all_but (keep, sizeof (keep) / sizeof (keep[0]));
  int conn = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC);
  /* A service's sandbox outlives the process that made it (its maker
   * exits once the sandbox is handed over): once the filter's connection
   * is here, the listener lives as long as the filter has users (POLLHUP
   * below), not as long as its parent.  Killed with the maker, every
   * denied call of the sandbox would get ENOSYS and go unrecorded. */
  if (conn >= 0 && sandbox != NULL)
    prctl (PR_SET_PDEATHSIG, 0);
  close (listen_fd);
  /* Connected: the socket has served its one use (and its absence tells
   * haven the listener has a container to wait for). */
  unlink (sock_path);
  int notify_fd = conn < 0 ? -1 : hv_audit_receive_notify_fd (conn, NULL);
  if (notify_fd < 0)
    _exit (1);
  close (conn);
  struct hv_audit_trail trail;
  hv_audit_trail_init (&trail, log_fd, policy, NULL);
  trail.sandbox = sandbox;
  trail.run = run;
  /* Each denied call says what refused it and what would allow it, and
   * goes to the run's view too (`haven why`: denial_view.h). */
  hv_denial_rules *rules = hv_denial_rules_parse (denials);
  trail.rules = rules;
  trail.view = rules ? hv_denial_view_open (rules->view) : NULL;
  for (;;)
    {
      struct pollfd pfd = { .fd = notify_fd, .events = POLLIN };
      /* With drops pending and the rate limit (not the cap) the reason,
       * summarize them within a second even if no denial follows. */
      int timeout = hv_audit_trail_summary_due (&trail) ? 1000 : -1;
      int ready = poll (&pfd, 1, timeout);
      if (ready < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (ready == 0)
        {
          hv_audit_trail_summarize (&trail, false);
          continue;
        }
      if (!(pfd.revents & POLLIN))
        break; /* POLLHUP: every process using the filter has exited */
      if (hv_audit_trail_answer (&trail, notify_fd, NULL) < 0)
        break;
    }
  hv_audit_trail_summarize (&trail, trail.capped);
  hv_denial_view_free (trail.view);
  hv_denial_rules_free (rules);
  _exit (0);
}

int
hv_audit_begin (const char *path, const char *policy_name, const char *sandbox, const char *run, const char *bundle,
                char **cmd, const char *project, const char *denials, struct hv_audit *a, hv_error **err)
{
  return hv_audit_begin_isolated (path, policy_name, sandbox, run, bundle, cmd, project, denials, NULL, a, err);
}

int
hv_audit_begin_isolated (const char *path, const char *policy_name, const char *sandbox, const char *run,
                         const char *bundle, char **cmd, const char *project, const char *denials,
                         const struct hv_audit_isolation *iso, struct hv_audit *a, hv_error **err)
{
  memset (a, 0, sizeof (*a));
  a->log_fd = -1;
  if (path == NULL)
    return 0;
  if (path[0] != '/')
    return hv_error_set (err, 0, "audit log \"%s\" is not an absolute path", path);
  cleanup_free char *dir_copy = xstrdup (path);
  if (mkdir_p (dirname (dir_copy), 0700, err) < 0)
    return hv_error_wrap (err, "audit log directory");
  /* O_NOFOLLOW: the log is ours, never a link planted in its place. */
  cleanup_close int log_fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (log_fd < 0)
    return hv_error_set (err, errno, "open audit log %s", path);

  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  cleanup_free char *sock_path = xasprintf ("%s/audit.sock", bundle);
  if (strlen (sock_path) >= sizeof (addr.sun_path))
    return hv_error_set (err, 0, "audit socket path too long: %s", sock_path);
  strcpy (addr.sun_path, sock_path);
  cleanup_close int listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd < 0 || bind (listen_fd, (struct sockaddr *) &addr, sizeof (addr)) < 0 || listen (listen_fd, 1) < 0)
    return hv_error_set (err, errno, "audit socket %s", sock_path);

  pid_t parent = getpid ();
  pid_t pid = fork ();
  if (pid < 0)
    {
      unlink (sock_path);
      return hv_error_set (err, errno, "fork audit listener");
    }
  if (pid == 0)
    listener_main (listen_fd, log_fd, policy_name, sandbox, run, sock_path, denials, parent);

  a->listener = pid;
  a->socket_path = sock_path;
  sock_path = NULL;
  a->policy_name = xstrdup (policy_name);
  a->sandbox = sandbox ? xstrdup (sandbox) : NULL;
  a->run = run ? xstrdup (run) : NULL;
  a->log_path = xstrdup (path);
  a->log_fd = log_fd;
  log_fd = -1;
  clock_gettime (CLOCK_MONOTONIC, &a->start);

  struct hv_audit_trail trail;
  hv_audit_trail_init (&trail, a->log_fd, a->policy_name, NULL);
  trail.sandbox = a->sandbox;
  trail.run = a->run;
  yajl_gen g = hv_audit_trail_record (&trail, "start");
  hv_audit_put_kv (g, "project", project);
  jg_str (g, "command");
  yajl_gen_array_open (g);
  for (size_t i = 0; cmd[i]; i++)
    hv_audit_put_str (g, cmd[i]);
  yajl_gen_array_close (g);
  jg_str (g, "haven_pid");
  yajl_gen_integer (g, parent);
  if (iso && iso->learn)
    {
      jg_str (g, "learn");
      yajl_gen_bool (g, 1);
      hv_audit_put_kv (g, "base", iso->base);
    }
  if (iso && iso->isolation)
    {
      hv_audit_put_kv (g, "isolation", iso->isolation);
      jg_str (g, "weaker");
      yajl_gen_array_open (g);
      for (size_t i = 0; i < iso->n_weaker; i++)
        hv_audit_put_str (g, iso->weaker[i]);
      yajl_gen_array_close (g);
    }
  hv_audit_trail_emit (&trail, g);
  return 0;
}

void
hv_audit_wait_connected (const struct hv_audit *a, int timeout_ms)
{
  if (a->log_fd < 0 || a->listener <= 0 || a->socket_path == NULL)
    return;
  /* The listener removes its socket once it has accepted. */
  for (int waited = 0; waited < timeout_ms && access (a->socket_path, F_OK) == 0; waited += 2)
    usleep (2000);
}

void
hv_audit_end (struct hv_audit *a, int status)
{
  if (a->log_fd < 0)
    return;
  if (a->listener > 0)
    {
      /* It ends by itself once the sandbox's processes are gone; give it
       * a moment to record the last denials, then stop it.  If nothing
       * ever connected (the container did not start), stop it now. */
      int i = access (a->socket_path, F_OK) == 0 ? 100 : 0;
      for (; i < 100; i++)
        {
          if (waitpid (a->listener, NULL, WNOHANG) == a->listener)
            break;
          usleep (10000);
        }
      if (i == 100)
        {
          kill (a->listener, SIGKILL);
          waitpid (a->listener, NULL, 0);
        }
    }
  struct timespec end;
  clock_gettime (CLOCK_MONOTONIC, &end);
  struct hv_audit_trail trail;
  hv_audit_trail_init (&trail, a->log_fd, a->policy_name, NULL);
  trail.sandbox = a->sandbox;
  trail.run = a->run;
  yajl_gen g = hv_audit_trail_record (&trail, "exit");
  jg_str (g, "status");
  yajl_gen_integer (g, status);
  char seconds[32];
  snprintf (seconds, sizeof (seconds), "%.3f",
            (double) (end.tv_sec - a->start.tv_sec) + (double) (end.tv_nsec - a->start.tv_nsec) / 1e9);
  jg_str (g, "seconds");
  yajl_gen_number (g, seconds, strlen (seconds));
  hv_audit_trail_emit (&trail, g);
  close (a->log_fd);
  a->log_fd = -1;
  if (a->socket_path)
    unlink (a->socket_path);
  free (a->socket_path);
  free (a->policy_name);
  free (a->sandbox);
  free (a->run);
  free (a->log_path);
  a->socket_path = a->policy_name = a->sandbox = a->run = a->log_path = NULL;
}
