/* The per-container monitor process: monitor_loop.h. */
#include "config.h"
#include "monitor_loop.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "audit_notify.h"
#include "audit_trail.h"
#include "git_broker.h"
#include "json_gen.h"
#include "denial_explain.h"
#include "denial_view.h"
#include "landlock_audit.h"
#include "ssh_agent_service.h"
#include "monitor_egress.h"
#include "monitor_gateway.h"
#include "monitor_git.h"
#include "sync.h"
#include "utils.h"

struct monitor;

/* One fd of the loop and what to do when it is ready. */
struct source
{
  int fd;
  void (*ready) (struct monitor *m, struct source *s, uint32_t events);
  const char *process; /* notify fds: "init" or "exec" */
  pid_t peer;          /* listener connections: the connecting process */
  struct source *next;
};

struct monitor
{
  const struct hv_monitor_args *a;
  int epfd;
  struct source *sources;
  struct hv_audit_trail trail;
  struct timespec start;
  pid_t init_pid;
  int init_pidfd;       /* owned by its source */
  bool attached;        /* create handed us init */
  /* Egress (HV_SYNC_EGRESS before GO): the annotation, init's network
   * namespace, the resolver's listening sockets, the table's netfilter
   * netlink socket (hv_egress_table_open_socket) and an unbound one for
   * the denial listener (hv_egress_denials_open_socket), all made in the
   * sandbox's netns; -1 when absent.  The sockets go to egress at GO. */
  char *egress_config;
  struct hv_egress_fds egress_fds;
  hv_monitor_egress *egress; /* the resolver and the denial listener, once GO came */
  const char *end;      /* set: leave the loop; the exit record's reason ("" for none) */
  /* Landlock's refusals (landlock_audit.h), or why they are not read. */
  hv_landlock_audit *landlock;
  const char *landlock_off;
  int landlock_errno;
  bool gateway_off; /* the gateway failed to start and is gone */
};

static struct source *
monitor_add_source (struct monitor *m, int fd, void (*ready) (struct monitor *, struct source *, uint32_t))
{
  struct source *s = xmalloc0 (sizeof (*s));
  s->fd = fd;
  s->ready = ready;
  struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };
  if (epoll_ctl (m->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
    {
      /* Not watched, so not kept: for a notify fd the kernel then answers
       * its calls ENOSYS (closed, never allowed). */
      close (fd);
      free (s);
      return NULL;
    }
  s->next = m->sources;
  m->sources = s;
  return s;
}

static void
monitor_remove_source (struct monitor *m, struct source *s)
{
  epoll_ctl (m->epfd, EPOLL_CTL_DEL, s->fd, NULL);
  close (s->fd);
  for (struct source **p = &m->sources; *p; p = &(*p)->next)
    if (*p == s)
      {
        *p = s->next;
        break;
      }
  free (s);
}

/* A seccomp notify fd: answer its calls until no process uses the filter. */
static void
on_notify (struct monitor *m, struct source *s, uint32_t events)
{
  if (!(events & EPOLLIN) || hv_audit_trail_answer (&m->trail, s->fd, s->process) < 0)
    monitor_remove_source (m, s);
}

/* Init's own filter or an exec's?  Init connects from itself and sends
 * the container's state, whose pid is its own; exec connects from the
 * runtime's exec process, never init.  (Whoever connects is the runtime:
 * the socket is in the 0700 state directory, out of the container's
 * reach.) */
static const char *
which_process (pid_t peer, const char *msg)
{
  yajl_val root = yajl_tree_parse (msg, NULL, 0);
  static const char *path[] = { "state", "pid", NULL };
  yajl_val pid = root ? yajl_tree_get (root, path, yajl_t_number) : NULL;
  bool init = pid && YAJL_IS_INTEGER (pid) && peer > 0 && YAJL_GET_INTEGER (pid) == peer;
  yajl_tree_free (root);
  return init ? "init" : "exec";
}

/* A runtime process connected: its one message brings a notify fd. */
static void
on_connection (struct monitor *m, struct source *s, uint32_t events)
{
  cleanup_free char *msg = NULL;
  int fd = (events & EPOLLIN) ? hv_audit_receive_notify_fd (s->fd, &msg) : -1;
  const char *process = fd >= 0 ? which_process (s->peer, msg) : NULL;
  monitor_remove_source (m, s);
  if (fd < 0)
    return; /* closed without a filter (none loaded, or it failed) */
  struct source *n = monitor_add_source (m, fd, on_notify);
  if (n)
    n->process = process;
}

static void
on_listener (struct monitor *m, struct source *s, uint32_t events)
{
  (void) events;
  int conn = accept4 (s->fd, NULL, NULL, SOCK_CLOEXEC);
  if (conn < 0)
    return;
  struct ucred cred = { 0 };
  socklen_t len = sizeof (cred);
  getsockopt (conn, SOL_SOCKET, SO_PEERCRED, &cred, &len);
  struct source *c = monitor_add_source (m, conn, on_connection);
  if (c)
    c->peer = cred.pid;
}

static void
on_init_exit (struct monitor *m, struct source *s, uint32_t events)
{
  (void) s;
  (void) events;
  m->end = "init exited";
}

static void
on_signal (struct monitor *m, struct source *s, uint32_t events)
{
  (void) events;
  struct signalfd_siginfo si;
  if (read (s->fd, &si, sizeof (si)) == (ssize_t) sizeof (si))
    m->end = "deleted";
}

/* resources.timeout: the container has had its time. */
static void
on_timeout (struct monitor *m, struct source *s, uint32_t events)
{
  (void) events;
  uint64_t expirations;
  if (read (s->fd, &expirations, sizeof (expirations)) != (ssize_t) sizeof (expirations))
    return;
  yajl_gen g = hv_audit_trail_record (&m->trail, "timeout");
  jg_str (g, "pid");
  yajl_gen_integer (g, m->init_pid);
  jg_str (g, "seconds");
  yajl_gen_integer (g, m->a->timeout_s);
  hv_audit_trail_emit (&m->trail, g);
  /* Through the pidfd: the pid may be reused once init is gone. */
  syscall (SYS_pidfd_send_signal, m->init_pidfd, SIGKILL, NULL, 0);
  monitor_remove_source (m, s);
}

/* The timer of a timeout; failing to arm it ends the container, never
 * lets it run without one. */
static bool
arm_timeout (struct monitor *m)
{
  if (m->a->timeout_s == 0)
    return true;
  int fd = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC);
  struct itimerspec its = { .it_value = { .tv_sec = m->a->timeout_s } };
  if (fd < 0 || timerfd_settime (fd, 0, &its, NULL) < 0)
    {
      if (fd >= 0)
        close (fd);
      return false;
    }
  return monitor_add_source (m, fd, on_timeout) != NULL;
}

static void
write_start (struct monitor *m)
{
  yajl_gen g = hv_audit_trail_record (&m->trail, "start");
  jg_str (g, "pid");
  yajl_gen_integer (g, m->init_pid);
  jg_str (g, "monitor_pid");
  yajl_gen_integer (g, getpid ());
  hv_audit_put_kv (g, "bundle", m->a->bundle);
  jg_str (g, "command");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < m->a->command->n; i++)
    hv_audit_put_str (g, m->a->command->v[i]);
  yajl_gen_array_close (g);
  hv_audit_trail_emit (&m->trail, g);
}

/* One egress fd from create (container_monitor.c, pass_fd): "netns
 * CONFIG", "udp4", "tcp4", "udp6", "tcp6", "nft", "nflog".  Anything else, or twice:
 * false (create is confused; the monitor ends and the container with it). */
static bool
take_egress_fd (struct monitor *m, const char *payload, int fd)
{
  if (strncmp (payload, "netns ", 6) == 0 && m->egress_fds.netns < 0)
    {
      m->egress_fds.netns = fd;
      m->egress_config = xstrdup (payload + 6);
      return true;
    }
  for (unsigned i = 0; i < HV_EGRESS_N_SOCKETS; i++)
    {
      int *slot = hv_egress_fds_socket (&m->egress_fds, i);
      if (strcmp (payload, hv_egress_socket_names[i]) == 0 && *slot < 0 && m->egress_fds.netns >= 0)
        {
          *slot = fd;
          return true;
        }
    }
  return false;
}

/* The listener of a gateway api (container_monitor.c, hv_monitor_pass_gateway). */
static bool
take_gateway_fd (struct monitor *m, const char *payload, int fd)
{
  if (strncmp (payload, "gateway ", 8) != 0 || m->a->gateway_live == NULL)
    return false;
  return hv_monitor_gateway_take_fd (m->a->gateway_live, payload + 8, fd);
}

/* The container runs: the gateway serves its listeners.  When it cannot,
 * they are closed (the sandbox's connects are refused) and the trail says
 * why; the rest of the monitor goes on. */
static void
start_gateway (struct monitor *m)
{
  if (m->a->gateway_live == NULL)
    return;
  cleanup_error hv_error *err = NULL;
  if (hv_monitor_gateway_start (m->a->gateway_live, &m->trail, &err) == 0)
    return;
  yajl_gen g = hv_audit_trail_record (&m->trail, "gateway-error");
  hv_audit_put_kv (g, "message", err->msg);
  hv_audit_trail_emit (&m->trail, g);
  hv_monitor_gateway_free (m->a->gateway_live);
  m->gateway_off = true;
}

static void
close_egress (struct monitor *m)
{
  hv_egress_fds_close (&m->egress_fds);
  free (m->egress_config);
  m->egress_config = NULL;
}

static void
on_resolver (struct monitor *m, struct source *s, uint32_t events)
{
  (void) events;
  cleanup_error hv_error *err = NULL;
  int r = hv_monitor_egress_resolver_ready (m->egress, &err);
  if (r <= 0)
    monitor_remove_source (m, s);
  if (r < 0)
    m->end = "monitor error: left in the container's network namespace";
}

static void watch_egress_fd (struct monitor *m, int fd, void (*ready) (struct monitor *, struct source *, uint32_t));

static void
on_landlock (struct monitor *m, struct source *s, uint32_t events)
{
  (void) events;
  if (hv_landlock_audit_ready (m->landlock, &m->trail) < 0)
    monitor_remove_source (m, s);
}

/* The container runs: its domain's refusals are recorded from here on
 * (the socket listened since the monitor started, so init's first
 * refusal, which names the domain, is not missed).  When they cannot
 * be, the trail says why once: an absent record then proves nothing. */
static void
start_landlock (struct monitor *m)
{
  if (m->a->landlock_audit == NULL)
    return;
  int enabled = m->landlock ? hv_landlock_audit_enabled () : -1;
  if (enabled == 0)
    m->landlock_off = "the kernel's audit is disabled (haven does not enable it)";
  /* On: the reader should hear the record of its own join; if it does
   * not, the trail says why (landlock_audit.h), without waiting here. */
  if (enabled == 1)
    hv_landlock_audit_expect_join (m->landlock);
  if (m->landlock_off)
    {
      yajl_gen g = hv_audit_trail_record (&m->trail, "landlock-unrecorded");
      hv_audit_put_kv (g, "reason", m->landlock_off);
      if (m->landlock_errno)
        hv_audit_put_kv (g, "error", strerror (m->landlock_errno));
      hv_audit_trail_emit (&m->trail, g);
    }
  if (m->landlock == NULL)
    return;
  hv_landlock_audit_attach (m->landlock, m->init_pid);
  watch_egress_fd (m, hv_landlock_audit_fd (m->landlock), on_landlock);
}

static void
on_denials (struct monitor *m, struct source *s, uint32_t events)
{
  (void) events;
  if (hv_monitor_egress_denials_ready (m->egress) <= 0)
    monitor_remove_source (m, s);
}

static void
on_forward (struct monitor *m, struct source *s, uint32_t events)
{
  (void) events;
  if (hv_monitor_egress_forward_ready (m->egress) <= 0)
    monitor_remove_source (m, s);
}

/* The loop watches a copy of an egress part's fd (the part keeps its
 * own); not watched: that part is not served, which fails closed. */
static void
watch_egress_fd (struct monitor *m, int fd, void (*ready) (struct monitor *, struct source *, uint32_t))
{
  int copy = fd >= 0 ? fcntl (fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (copy >= 0)
    monitor_add_source (m, copy, ready);
}

/* The container runs: DNS is the resolver's (monitor_egress.h).  The
 * listening sockets go to it; whatever of it fails leaves DNS failing,
 * never open. */
static void
start_egress (struct monitor *m)
{
  if (m->egress_fds.netns < 0)
    return;
  struct hv_monitor_egress_args a = { .config = m->egress_config, .fds = &m->egress_fds,
                                      .resolv_conf = m->a->resolv_conf, .notice_fd = m->a->notice_fd,
                                      .ask = m->a->ask };
  cleanup_error hv_error *err = NULL;
  m->egress = hv_monitor_egress_start (&a, &m->trail, &err);
  /* The namespace stays open: the resolver makes its upstream sockets
   * there (engine) as it needs them. */
  free (m->egress_config);
  m->egress_config = NULL;
  if (m->egress == NULL)
    {
      m->end = "monitor error: left in the container's network namespace";
      return;
    }
  watch_egress_fd (m, hv_monitor_egress_resolver_fd (m->egress), on_resolver);
  watch_egress_fd (m, hv_monitor_egress_denials_fd (m->egress), on_denials);
  watch_egress_fd (m, hv_monitor_egress_forward_fd (m->egress), on_forward);
}

/* create: GO brings init; a close before it means create failed. */
static void
on_control (struct monitor *m, struct source *s, uint32_t events)
{
  (void) events;
  enum hv_sync_type type;
  cleanup_free char *payload = NULL;
  cleanup_error hv_error *err = NULL;
  int fd = -1;
  int got = hv_sync_recv (s->fd, &type, &payload, &fd, &err);
  if (got == 0 && type == HV_SYNC_EGRESS && fd >= 0 && !m->attached
      && (take_egress_fd (m, payload, fd) || take_gateway_fd (m, payload, fd)))
    return;
  if (got == 0 && type == HV_SYNC_GO && fd >= 0 && !m->attached)
    {
      m->init_pid = (pid_t) atoi (payload);
      m->init_pidfd = fd;
      if (monitor_add_source (m, fd, on_init_exit) == NULL)
        {
          m->end = "";
          return;
        }
      m->attached = true;
      if (!m->a->borrowed_trail)
        write_start (m);
      start_egress (m);
      start_gateway (m);
      start_landlock (m);
      if (!arm_timeout (m))
        {
          syscall (SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
          m->end = "monitor error: no timer for the timeout";
        }
      return;
    }
  if (fd >= 0)
    close (fd);
  monitor_remove_source (m, s);
  if (!m->attached)
    m->end = ""; /* no container: nothing to record */
}

/* The calls in flight when the loop ends are answered too (bounded:
 * their processes are being killed, or delete waits for us). */
static void
drain_notifications (struct monitor *m)
{
  for (struct source *s = m->sources; s; s = s->next)
    if (s->ready == on_notify)
      for (int i = 0; i < 1000; i++)
        {
          struct pollfd p = { .fd = s->fd, .events = POLLIN };
          if (poll (&p, 1, 0) <= 0 || !(p.revents & POLLIN)
              || hv_audit_trail_answer (&m->trail, s->fd, s->process) < 0)
            break;
        }
}

static void
write_exit (struct monitor *m)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  hv_audit_trail_summarize (&m->trail, true);
  yajl_gen g = hv_audit_trail_record (&m->trail, "exit");
  hv_audit_put_kv (g, "reason", m->end);
  jg_str (g, "pid");
  yajl_gen_integer (g, m->init_pid);
  char seconds[32];
  snprintf (seconds, sizeof (seconds), "%.3f",
            (double) (now.tv_sec - m->start.tv_sec) + (double) (now.tv_nsec - m->start.tv_nsec) / 1e9);
  jg_str (g, "seconds");
  yajl_gen_number (g, seconds, strlen (seconds));
  hv_audit_trail_emit (&m->trail, g);
}

/* Until delete's SIGTERM (sent once it has removed the cgroup, and with
 * it every process of the container). */
static void
wait_for_delete (int sigfd)
{
  struct signalfd_siginfo si;
  while (read (sigfd, &si, sizeof (si)) < 0 && errno == EINTR)
    ;
}

/* Something git reads appeared in a project while the container runs
 * (monitor_git.h): checked now.  Before GO there is no container yet. */
static void
on_git (struct monitor *m, struct source *s, uint32_t events)
{
  (void) s;
  (void) events;
  hv_monitor_git_ready (m->a->git_watch, &m->trail);
}

static int
watch_signals (void)
{
  /* delete's SIGTERM (and an operator's SIGINT or SIGHUP) end the loop
   * with an exit record. */
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGHUP);
  sigprocmask (SIG_SETMASK, &set, NULL);
  signal (SIGPIPE, SIG_IGN);
  return signalfd (-1, &set, SFD_CLOEXEC);
}

static void
run_loop (struct monitor *m)
{
  while (m->end == NULL)
    {
      struct epoll_event ev[16];
      /* Denials left out by the rate limit are summarized within a
       * second even if no denial follows. */
      int timeout = hv_audit_trail_summary_due (&m->trail) ? 1000 : -1;
      int ll = m->landlock && m->attached ? hv_landlock_audit_timeout (m->landlock) : -1;
      if (ll >= 0 && (timeout < 0 || ll < timeout))
        timeout = ll;
      int n = epoll_wait (m->epfd, ev, N_ELEMENTS (ev), timeout);
      if (n < 0 && errno != EINTR)
        {
          m->end = "monitor error";
          return;
        }
      if (n == 0 && hv_audit_trail_summary_due (&m->trail))
        hv_audit_trail_summarize (&m->trail, false);
      if (n == 0 && ll >= 0)
        hv_landlock_audit_tick (m->landlock, &m->trail);
      /* One event at a time: a callback may remove a source, and the
       * others of this batch may name it (epoll_wait reports them again). */
      if (n > 0)
        {
          struct source *s = ev[0].data.ptr;
          s->ready (m, s, ev[0].events);
        }
    }
}

void
hv_monitor_main (const struct hv_monitor_args *a)
{
  struct monitor m = { .a = a, .init_pidfd = -1, .egress_fds = HV_EGRESS_FDS_INIT };
  clock_gettime (CLOCK_MONOTONIC, &m.start);
  hv_audit_trail_init (&m.trail, a->trail_fd, a->policy, a->id);
  m.trail.pod = a->pod;
  m.trail.sandbox = a->sandbox;
  m.trail.run = a->run;
  /* Denial records say what refused them and what would allow them, and
   * go to the run's view too (`haven why` in the sandbox). */
  hv_denial_rules *rules = a->trail_fd >= 0 ? hv_denial_rules_parse (a->denials) : NULL;
  m.trail.rules = rules;
  m.trail.view = rules ? hv_denial_view_open (rules->view) : NULL;
  /* Listening before init exists: its domain is named only in the record
   * of its first refusal. */
  if (a->landlock_audit)
    m.landlock = hv_landlock_audit_open (a->landlock_audit, &m.landlock_off, &m.landlock_errno);
  m.epfd = epoll_create1 (EPOLL_CLOEXEC);
  int sigfd = watch_signals ();
  if (m.epfd < 0 || sigfd < 0 || monitor_add_source (&m, sigfd, on_signal) == NULL
      || monitor_add_source (&m, a->control_fd, on_control) == NULL
      || (a->listen_fd >= 0 && monitor_add_source (&m, a->listen_fd, on_listener) == NULL)
      || (hv_monitor_git_inotify_fd (a->git_watch) >= 0
          && (monitor_add_source (&m, hv_monitor_git_inotify_fd (a->git_watch), on_git) == NULL
              || monitor_add_source (&m, hv_monitor_git_timer_fd (a->git_watch), on_git) == NULL)))
    _exit (1);
  hv_monitor_git_report_limits (a->git_watch, &m.trail);
  /* The git credential broker answers from its own threads (the loop
   * never waits on the sandbox's git).  Not serving it ends the monitor,
   * and create with it (GO cannot be sent): a container whose git was
   * promised credentials does not start without them. */
  cleanup_error hv_error *broker_err = NULL;
  if (a->git_broker && hv_git_broker_start (a->git_broker, a->trail_fd >= 0 ? &m.trail : NULL, &broker_err) < 0)
    _exit (1);
  /* The ssh-agent view answers from its own threads (the loop never
   * waits on the sandbox).  Not serving it ends the monitor, and create
   * with it: a sandbox promised the view does not start without it. */
  cleanup_error hv_error *view_err = NULL;
  if (a->ssh_view && hv_ssh_agent_service_start (a->ssh_view, a->trail_fd >= 0 ? &m.trail : NULL, &view_err) < 0)
    _exit (1);
  run_loop (&m);
  /* No new filter can reach us from here on. */
  unlink (a->socket_path);
  /* Nor a credential request: the sandbox's git gets none once its run
   * is over (its threads' deadlines bound the wait). */
  hv_git_broker_stop (a->git_broker);
  /* Nor a request to the agent: the view ends with the run (the last
   * sign requests' records go before the exit record). */
  hv_ssh_agent_service_stop (a->ssh_view);
  if (m.attached)
    {
      drain_notifications (&m);
      /* Denials the kernel logged before init's end are in the socket:
       * recorded before the exit record (one bounded, non-blocking pass). */
      if (m.egress && hv_monitor_egress_denials_fd (m.egress) >= 0)
        hv_monitor_egress_denials_ready (m.egress);
      /* What the limiter left out since its last summary. */
      hv_monitor_egress_denials_finish (m.egress);
      /* Records still on their way are waited for until 100 ms pass
       * without one; with the kernel's audit off at the start, the trail
       * already says refusals are not recorded (start_landlock), and
       * none are coming: only what is already in the socket is read.
       * That wait was most of the end of an audited run. */
      if (m.landlock)
        hv_landlock_audit_finish (m.landlock, &m.trail, m.landlock_off ? 0 : 100);
      /* Refusals the gateway's limiter left out.  Its connections are
       * not waited for: the sandbox is gone, and they end with us. */
      if (!m.gateway_off)
        hv_monitor_gateway_finish (a->gateway_live);
    }
  if (m.attached)
    {
      /* Init is gone (and with it its pid namespace), or delete has
       * removed the cgroup (it sends its SIGTERM after that): nothing of
       * the container writes any more.  Without a GO there was no
       * container, and nothing to check. */
      if (a->n_git_guards && a->check_after_delete && strcmp (m.end, "deleted") != 0)
        wait_for_delete (sigfd);
      hv_monitor_git_check_all (a->git_guards, a->n_git_guards, &m.trail);
      if (a->borrowed_trail)
        hv_audit_trail_summarize (&m.trail, true);
      else
        write_exit (&m);
    }
  hv_monitor_egress_free (m.egress);
  hv_landlock_audit_free (m.landlock);
  close_egress (&m);
  hv_denial_view_free (m.trail.view);
  hv_denial_rules_free (rules);
  _exit (0);
}
