/* `haven serve`'s loop: the socket, the signals, and one poll over every
 * connection, maker, keeper and run pipe.  Nothing blocks: makers make
 * sandboxes in child processes, pipes and sockets are non-blocking, and
 * time limits are the poll's timeout. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "service.h"
#include "service_base.h"
#include "service_conn.h"
#include "service_pool.h"
#include "service_reply.h"
#include "service_run.h"
#include "service_sandbox.h"
#include "service_socket.h"
#include "unix_socket.h"
#include "utils.h"

/* --- signals ---------------------------------------------------------- */

static void
signals_read (struct svc *s)
{
  struct signalfd_siginfo si;
  while (read (s->signal_fd, &si, sizeof (si)) == (ssize_t) sizeof (si))
    if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
      {
        svc_log (s, false, "signal %d: stopping", (int) si.ssi_signo);
        s->stopping = true;
      }
  svc_reap (s);
}

/* --- the socket ------------------------------------------------------- */

/* The socket's directory: made 0700 if missing; an existing one must be a
 * directory of ours (not a link) that no one else may write to (a
 * socket there could be replaced under us).  The default one is made
 * 0700; one the user named keeps its mode (--socket ~/x.sock must not
 * change the home directory's). */
static int
socket_dir (const char *path, bool is_default, hv_error **err)
{
  cleanup_free char *copy = xstrdup (path);
  const char *dir = dirname (copy);
  bool made = mkdir (dir, 0700) == 0;
  if (!made && errno != EEXIST)
    return hv_error_set (err, errno, "mkdir %s", dir);
  cleanup_close int fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "socket directory %s", dir);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return hv_error_set (err, errno, "stat %s", dir);
  if (st.st_uid != geteuid ())
    return hv_error_set (err, 0, "socket directory %s belongs to uid %u, not to this user", dir,
                         (unsigned) st.st_uid);
  if (!made && !is_default && (st.st_mode & (S_IWGRP | S_IWOTH)))
    return hv_error_set (err, 0, "socket directory %s may be written by others (mode %04o)", dir,
                         (unsigned) (st.st_mode & 07777));
  if ((made || is_default) && (st.st_mode & 07777) != 0700 && fchmod (fd, 0700) < 0)
    return hv_error_set (err, errno, "chmod 0700 %s", dir);
  return 0;
}

/* A socket left by a service that died is replaced; a live service's is
 * not (two services on one socket would each hold half the sandboxes),
 * nor anything that is not a socket of ours. */
static int
socket_stale (const char *path, hv_error **err)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? 0 : hv_error_set (err, errno, "stat %s", path);
  if (!S_ISSOCK (st.st_mode) || st.st_uid != geteuid ())
    return hv_error_set (err, 0, "%s exists and is not a socket of this user's: not replaced", path);
  hv_error *e = NULL;
  int fd = hv_unix_connect (path, &e);
  if (fd >= 0)
    {
      close (fd);
      return hv_error_set (err, 0, "a service already answers on %s (stop it first, or use --socket)", path);
    }
  bool refused = e && e->errno_code == ECONNREFUSED;
  hv_error_free (&e);
  if (!refused)
    return hv_error_set (err, 0, "%s: cannot tell whether a service answers there: not replaced", path);
  if (unlink (path) < 0)
    return hv_error_set (err, errno, "remove stale socket %s", path);
  return 0;
}

static int
socket_open (struct svc *s, hv_error **err)
{
  if (socket_dir (s->socket_path, s->o->socket_path == NULL, err) < 0 || socket_stale (s->socket_path, err) < 0)
    return -1;
  /* Made 0600 by the umask: never reachable by others, not even briefly. */
  mode_t old = umask (0177);
  s->listen_fd = hv_unix_listen (s->socket_path, 128, err);
  umask (old);
  if (s->listen_fd < 0)
    return -1;
  if (chmod (s->socket_path, 0600) < 0)
    return hv_error_set (err, errno, "chmod %s", s->socket_path);
  int fl = fcntl (s->listen_fd, F_GETFL);
  fcntl (s->listen_fd, F_SETFL, fl | O_NONBLOCK);
  return 0;
}

/* --- the poll --------------------------------------------------------- */

enum slot_kind
{
  SLOT_LISTEN,
  SLOT_SIGNAL,
  SLOT_CONN,
  SLOT_MAKER,
  SLOT_KEEPER,
  SLOT_INIT,
  SLOT_RUN,
};

static void
add (struct svc *s, struct pollfd **pfd, size_t *n, size_t *cap, int fd, short events, enum slot_kind kind,
     void *ptr)
{
  if (fd < 0)
    return;
  if (*n == *cap)
    {
      *cap = *cap ? *cap * 2 : 64;
      *pfd = xrealloc (*pfd, *cap * sizeof (**pfd));
      s->slots = xrealloc (s->slots, *cap * sizeof (*s->slots));
    }
  (*pfd)[*n] = (struct pollfd){ .fd = fd, .events = events };
  s->slots[*n] = (struct svc_slot){ kind, ptr };
  (*n)++;
}

static void
loop (struct svc *s)
{
  cleanup_free struct pollfd *pfd = NULL;
  size_t cap = 0;
  while (!s->stopping)
    {
      size_t n = 0;
      add (s, &pfd, &n, &cap, s->signal_fd, POLLIN, SLOT_SIGNAL, s);
      uint64_t now = svc_now_ms (), next = UINT64_MAX;
      if (s->n_conns < SVC_CONNS_MAX && now >= s->accept_pause_until)
        add (s, &pfd, &n, &cap, s->listen_fd, POLLIN, SLOT_LISTEN, s);
      else if (s->n_conns < SVC_CONNS_MAX)
        next = s->accept_pause_until;
      for (struct svc_conn *c = s->conns; c; c = c->next)
        {
          /* While a request is answered, the next one waits in the
           * socket; only the client's leaving is watched for. */
          short ev = c->drain_until ? POLLIN : c->busy || c->close_after ? POLLRDHUP : (POLLIN | POLLRDHUP);
          if (c->out.len)
            ev |= POLLOUT;
          add (s, &pfd, &n, &cap, c->fd, ev, SLOT_CONN, c);
        }
      for (struct svc_maker *m = s->makers; m; m = m->next)
        {
          add (s, &pfd, &n, &cap, m->m.fd, POLLIN, SLOT_MAKER, m);
          /* Its death ends the create even while a process it forked
           * (init before it serves) keeps its end of fd open. */
          add (s, &pfd, &n, &cap, m->m.pidfd, POLLIN, SLOT_MAKER, m);
        }
      for (struct svc_sandbox *x = s->sandboxes; x; x = x->next)
        {
          add (s, &pfd, &n, &cap, hv_sandbox_keeper_fd (x->sb), POLLIN, SLOT_KEEPER, x);
          add (s, &pfd, &n, &cap, hv_sandbox_pidfd (x->sb), POLLIN, SLOT_INIT, x);
        }
      for (struct svc_run *r = s->runs; r; r = r->next)
        {
          add (s, &pfd, &n, &cap, r->in_fd, POLLOUT, SLOT_RUN, r);
          add (s, &pfd, &n, &cap, r->out_fd, POLLIN, SLOT_RUN, r);
          add (s, &pfd, &n, &cap, r->err_fd, POLLIN, SLOT_RUN, r);
        }
      s->n_slots = n;
      for (struct svc_conn *c = s->conns; c; c = c->next)
        if (c->drain_until && c->drain_until <= now)
          c->dead = true;
        else if (c->drain_until && c->drain_until < next)
          next = c->drain_until;
      svc_run_timers (s, now, &next);
      svc_idle_check (s, now, &next);
      svc_pool_age_check (s, now, &next);
      if (s->pool_quiet_until > now && s->pool_quiet_until < next)
        next = s->pool_quiet_until; /* a refill held back (service_pool.c) */
      int timeout = next == UINT64_MAX ? -1 : (next <= now ? 0 : (int) (next - now > 60000 ? 60000 : next - now));
      int k = poll (pfd, n, timeout);
      if (k < 0 && errno != EINTR)
        {
          svc_log (s, false, "poll: %s", strerror (errno));
          break;
        }
      for (size_t i = 0; k > 0 && i < n; i++)
        {
          short re = pfd[i].revents;
          void *p = s->slots[i].ptr;
          if (re == 0 || p == NULL)
            continue;
          switch ((enum slot_kind) s->slots[i].kind)
            {
            case SLOT_SIGNAL:
              signals_read (s);
              break;
            case SLOT_LISTEN:
              svc_conn_accept (s);
              break;
            case SLOT_CONN:
              {
                struct svc_conn *c = p;
                if (re & POLLOUT)
                  svc_conn_output (s, c);
                if (!c->dead && (re & POLLIN) && ((!c->busy && !c->close_after) || c->drain_until))
                  svc_conn_input (s, c);
                else if (!c->dead && (re & (POLLRDHUP | POLLHUP | POLLERR)))
                  svc_conn_gone (s, c);
                break;
              }
            case SLOT_MAKER:
              svc_maker_done (s, p);
              break;
            case SLOT_KEEPER:
              svc_sandbox_keeper_input (s, p);
              break;
            case SLOT_INIT:
              svc_sandbox_ended (s, p);
              break;
            case SLOT_RUN:
              svc_run_io (s, p, pfd[i].fd, re);
              break;
            }
        }
      s->n_slots = 0;
      /* Connections marked dead are freed here, outside the handlers. */
      for (struct svc_conn **pc = &s->conns; *pc;)
        {
          struct svc_conn *c = *pc;
          if (c->dead)
            {
              *pc = c->next;
              svc_conn_free (s, c);
            }
          else
            pc = &c->next;
        }
      svc_run_reap (s);
      svc_pool_refill (s);
    }
}

static void
shutdown_all (struct svc *s)
{
  while (s->makers)
    svc_maker_abort (s, s->makers);
  while (s->sandboxes)
    svc_sandbox_destroy (s, s->sandboxes, NULL, "service stopping");
  svc_run_reap (s);
  while (s->conns)
    {
      struct svc_conn *c = s->conns;
      s->conns = c->next;
      svc_conn_free (s, c);
    }
  svc_pool_free_all (s);
  svc_reap (s);
}

int
hv_service_run (const struct hv_service_opts *o, hv_error **err)
{
  struct svc s = { .o = o, .listen_fd = -1, .signal_fd = -1, .uid = geteuid () };
  s.socket_path = o->socket_path ? xstrdup (o->socket_path) : hv_service_default_socket ();
  if (strlen (s.socket_path) >= sizeof (((struct sockaddr_un *) 0)->sun_path) && s.socket_path[0] != '/')
    return hv_error_set (err, 0, "--socket %s: a relative path this long cannot be bound", s.socket_path);
  {
    cleanup_free char *copy = xstrdup (s.socket_path);
    /* Beside the socket, which by default is in the runtime's state root
     * (root's /run/haven, a user's $XDG_RUNTIME_DIR/haven): a name that
     * is no container id (ids never start with a dot), so that
     * `haven-runc list` and the leftover cleaners never take it for one. */
    s.scratch_dir = xasprintf ("%s/.workspaces", dirname (copy));
  }
  {
    /* FNV-1a of the socket's path. */
    uint32_t h = 2166136261u;
    for (const char *p = s.socket_path; *p; p++)
      h = (h ^ (unsigned char) *p) * 16777619u;
    snprintf (s.id_prefix, sizeof (s.id_prefix), SVC_LABEL_PREFIX "%04x", (unsigned) ((h >> 16) ^ (h & 0xffff)));
  }
  int r = -1;
  /* The sandboxes' processes (init, its monitor, pasta) outlive the
   * makers that started them: they become ours, not pid 1's, so that
   * destroy can wait for them. */
  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
    {
      hv_error_set (err, errno, "prctl PR_SET_CHILD_SUBREAPER");
      goto out;
    }
  if (svc_signals_init (&s, err) < 0 || socket_open (&s, err) < 0)
    goto out;
  if (mkdir (s.scratch_dir, 0700) < 0 && errno != EEXIST)
    {
      hv_error_set (err, errno, "mkdir %s", s.scratch_dir);
      goto out;
    }
  /* What a service killed before left (its keepers ended with it). */
  svc_signals_open ();
  hv_sandbox_clean_leftovers (s.id_prefix, s.scratch_dir);
  svc_signals_close (&s);
  svc_reap (&s);
  svc_log (&s, false, "listening on %s (pool %u per policy, at most %u sandboxes)", s.socket_path, o->pool_size,
           o->max_sandboxes);
  loop (&s);
  shutdown_all (&s);
  r = 0;
  svc_log (&s, false, "stopped");
out:
  if (s.listen_fd >= 0)
    {
      close (s.listen_fd);
      unlink (s.socket_path);
    }
  if (s.signal_fd >= 0)
    close (s.signal_fd);
  free (s.socket_path);
  free (s.scratch_dir);
  free (s.slots);
  return r;
}
