/* The service's sandboxes' lives: their ids, their makers (a child
 * process each, done when its fd says so; whoever started one is told),
 * their keepers' events, idle timeouts, destroy, and the reaping of the
 * processes that become ours (the service is a child subreaper).  The
 * requests on them are service_handlers.c's. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keeper.h"
#include "service_reply.h"
#include "service_run.h"
#include "service_sandbox.h"
#include "utils.h"

static bool
id_taken (struct svc *s, const char *id)
{
  for (struct svc_sandbox *x = s->sandboxes; x; x = x->next)
    if (strcmp (x->id, id) == 0)
      return true;
  for (struct svc_maker *m = s->makers; m; m = m->next)
    if (strcmp (m->id, id) == 0)
      return true;
  for (size_t i = 0; i < s->n_ended && i < SVC_ENDED_KEEP; i++)
    if (strcmp (s->ended[i], id) == 0)
      return true;
  return false;
}

/* A new id, none of the live, being made or ended sandboxes'. */
void
svc_new_id (struct svc *s, char id[SVC_ID_LEN + 1])
{
  do
    {
      uint16_t v = 0;
      if (getrandom (&v, sizeof (v), 0) != (ssize_t) sizeof (v))
        v = (uint16_t) (svc_now_ms () ^ (uint64_t) getpid ());
      snprintf (id, SVC_ID_LEN + 1, "%s%04x", s->id_prefix, (unsigned) v);
    }
  while (id_taken (s, id));
}

/* The pid of a pidfd ("Pid:" in its fdinfo): the sweep must not reap
 * the init of a live sandbox, whose exit its pidfd reports. */
static pid_t
pidfd_pid (int pidfd)
{
  char path[64], line[256];
  snprintf (path, sizeof (path), "/proc/self/fdinfo/%d", pidfd);
  FILE *f = fopen (path, "re");
  pid_t pid = -1;
  if (f == NULL)
    return -1;
  while (fgets (line, sizeof (line), f))
    if (strncmp (line, "Pid:", 4) == 0)
      pid = (pid_t) strtol (line + 4, NULL, 10);
  fclose (f);
  return pid;
}

/* Reap the children that are no one else's: processes of destroyed
 * sandboxes reparented to us.  Never a maker (make_finish reaps it) nor a
 * live sandbox's init (destroy waits for it), so not waitpid (-1). */
static bool
reaped_by_others (struct svc *s, pid_t pid)
{
  for (struct svc_maker *m = s->makers; m; m = m->next)
    if (m->m.pid == pid)
      return true;
  for (struct svc_sandbox *x = s->sandboxes; x; x = x->next)
    if (x->init_pid == pid)
      return true;
  return false;
}

void
svc_reap (struct svc *s)
{
  char path[64];
  snprintf (path, sizeof (path), "/proc/self/task/%d/children", (int) getpid ());
  FILE *f = fopen (path, "re");
  if (f == NULL)
    {
      /* A kernel without the children file: reap the exited children in
       * turn until one that is someone else's comes first. */
      siginfo_t si;
      for (;;)
        {
          si.si_pid = 0;
          if (waitid (P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0
              || reaped_by_others (s, si.si_pid))
            return;
          waitpid (si.si_pid, NULL, WNOHANG);
        }
    }
  long pid;
  pid_t pids[512];
  size_t n = 0;
  while (n < 512 && fscanf (f, "%ld", &pid) == 1)
    pids[n++] = (pid_t) pid;
  fclose (f);
  for (size_t i = 0; i < n; i++)
    if (!reaped_by_others (s, pids[i]))
      waitpid (pids[i], NULL, WNOHANG);
}

struct svc_sandbox *
svc_sandbox_find (struct svc *s, struct svc_conn *c, const char *id)
{
  for (struct svc_sandbox *x = s->sandboxes; x; x = x->next)
    if (x->pool == NULL && strcmp (x->id, id) == 0)
      {
        x->active_ms = svc_now_ms ();
        return x;
      }
  for (size_t i = 0; i < s->n_ended && i < SVC_ENDED_KEEP; i++)
    if (strcmp (s->ended[i], id) == 0)
      {
        svc_reply_error (c, 404, "not_found", "sandbox %s ended (its processes were killed or it ran out of memory)",
                         id);
        return NULL;
      }
  svc_reply_error (c, 404, "not_found", "no sandbox %s", id);
  return NULL;
}

static void
unlink_sandbox (struct svc *s, struct svc_sandbox *x)
{
  for (struct svc_sandbox **p = &s->sandboxes; *p; p = &(*p)->next)
    if (*p == x)
      {
        *p = x->next;
        return;
      }
}

void
svc_sandbox_destroy (struct svc *s, struct svc_sandbox *x, oci_strv *notes, const char *why)
{
  unlink_sandbox (s, x);
  svc_forget (s, x);
  svc_run_sandbox_gone (s, x);
  cleanup_error hv_error *err = NULL;
  cleanup_strv oci_strv own = { 0 };
  if (notes == NULL)
    notes = &own;
  svc_signals_open ();
  int r = hv_sandbox_destroy (x->sb, notes, &err);
  svc_signals_close (s);
  svc_log (s, x->pool != NULL, "sandbox %s (%s) destroyed: %s%s%s", x->id, x->policy, why, r < 0 ? "; " : "",
           r < 0 ? err->msg : "");
  for (size_t i = 0; i < notes->n; i++)
    svc_log (s, false, "sandbox %s: %s", x->id, notes->v[i]);
  free (x->policy);
  free (x);
  svc_reap (s);
}

void
svc_sandbox_ended (struct svc *s, struct svc_sandbox *x)
{
  /* Remembered, so that its user learns what happened, not "no sandbox". */
  if (x->pool == NULL)
    snprintf (s->ended[s->n_ended++ % SVC_ENDED_KEEP], SVC_ID_LEN + 1, "%s", x->id);
  svc_sandbox_destroy (s, x, NULL, "its keeper ended");
}

/* --- makers ----------------------------------------------------------- */

int
svc_maker_start (struct svc *s, struct svc_maker *mk, hv_error **err)
{
  struct hv_sandbox_opts so = { .policy = mk->policy,
                                .project = mk->project,
                                .scratch_dir = s->scratch_dir,
                                .haven_argv0 = s->o->haven_argv0,
                                .label = mk->id,
                                /* This very binary, executed afresh: the
                                 * sandbox's keeper keeps the maker's memory,
                                 * which then holds nothing of ours. */
                                .maker_exe = "/proc/self/exe" };
  mk->m = (struct hv_sandbox_maker) HV_SANDBOX_MAKER_INIT;
  svc_signals_open ();
  int r = hv_sandbox_make_start (&so, &mk->m, err);
  svc_signals_close (s);
  if (r < 0)
    return -1;
  mk->next = s->makers;
  s->makers = mk;
  return 0;
}

static void
maker_unlink (struct svc *s, struct svc_maker *mk)
{
  for (struct svc_maker **p = &s->makers; *p; p = &(*p)->next)
    if (*p == mk)
      {
        *p = mk->next;
        break;
      }
  svc_forget (s, mk);
  if (mk->pool)
    mk->pool->making--;
  if (mk->conn)
    mk->conn->maker = NULL;
}

void
svc_maker_free (struct svc_maker *mk)
{
  free (mk->policy);
  free (mk->project);
  free (mk);
}

void
svc_maker_abort (struct svc *s, struct svc_maker *mk)
{
  maker_unlink (s, mk);
  svc_signals_open ();
  hv_sandbox_make_abort (&mk->m);
  svc_signals_close (s);
  svc_maker_free (mk);
}

void
svc_maker_done (struct svc *s, struct svc_maker *mk)
{
  maker_unlink (s, mk);
  hv_sandbox *sb = NULL;
  cleanup_error hv_error *err = NULL;
  if (hv_sandbox_make_finish (&mk->m, &sb, &err) < 0)
    {
      svc_log (s, false, "sandbox %s (%s) not made: %s", mk->id, mk->policy, err->msg);
      mk->made (s, mk, NULL, err);
      svc_maker_free (mk);
      return;
    }
  struct svc_sandbox *x = xmalloc0 (sizeof (*x));
  memcpy (x->id, mk->id, sizeof (x->id));
  x->sb = sb;
  x->policy = steal_pointer (&mk->policy);
  x->init_pid = pidfd_pid (hv_sandbox_pidfd (sb));
  x->project = mk->project != NULL;
  x->created_ms = x->active_ms = svc_now_ms ();
  x->idle_timeout_s = mk->idle_timeout_s ? mk->idle_timeout_s : s->o->idle_timeout_s;
  x->next = s->sandboxes;
  s->sandboxes = x;
  mk->made (s, mk, x, NULL);
  svc_maker_free (mk);
}

/* --- keepers and timeouts --------------------------------------------- */

void
svc_sandbox_keeper_input (struct svc *s, struct svc_sandbox *x)
{
  for (;;)
    {
      struct hv_keeper_event ev;
      cleanup_error hv_error *err = NULL;
      int k = hv_keeper_event_read (hv_sandbox_keeper_fd (x->sb), &ev, &err);
      if (k == 0)
        return;
      if (k < 0)
        {
          svc_log (s, false, "sandbox %s: %s", x->id, err->msg);
          svc_sandbox_ended (s, x);
          return;
        }
      /* A run's answer may let the connection's next request run, which
       * may delete x: the poll brings the next event. */
      if (ev.kind == HV_KEEPER_EXITED && svc_run_exited (s, x, ev.run_id, ev.status))
        return;
    }
}

void
svc_idle_check (struct svc *s, uint64_t now, uint64_t *next)
{
  for (struct svc_sandbox *x = s->sandboxes, *nx; x; x = nx)
    {
      nx = x->next;
      if (x->pool || x->runs || x->idle_timeout_s == 0)
        continue;
      uint64_t at = x->active_ms + (uint64_t) x->idle_timeout_s * 1000;
      if (at <= now)
        {
          svc_sandbox_destroy (s, x, NULL, "idle timeout");
          /* The list changed under us: the next round checks the rest. */
          *next = now;
          return;
        }
      if (at < *next)
        *next = at;
    }
}
