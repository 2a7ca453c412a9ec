/* The reaper of a run without namespaces (direct_run.c): the command's
 * parent and subreaper, in its own process group, which kills every
 * process the command left when the command ends or haven does. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "direct_run_priv.h"
#include "exit_status.h"
#include "run_leftovers.h"
#include "utils.h"

/* How long the end of a run may take to kill what the command left (a
 * process that forks as fast as it is killed): past it, the run fails. */
#define KILL_LEFT_MS 5000

static bool
pids_has (const struct pids *p, pid_t pid)
{
  for (size_t i = 0; i < p->n; i++)
    if (p->v[i] == pid)
      return true;
  return false;
}

static void
pids_push (struct pids *p, pid_t pid)
{
  if (p->n == p->cap)
    {
      p->cap = p->cap ? 2 * p->cap : 16;
      p->v = xrealloc (p->v, p->cap * sizeof (*p->v));
    }
  p->v[p->n++] = pid;
}

/* The parent pid of /proc/PID/stat: after the name's last ')'. */
static pid_t
parent_of (int procfd, const char *pid)
{
  char path[64], buf[512];
  snprintf (path, sizeof (path), "%s/stat", pid);
  cleanup_close int fd = openat (procfd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read (fd, buf, sizeof (buf) - 1);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  char *end = strrchr (buf, ')');
  char state;
  int ppid;
  if (end == NULL || sscanf (end + 1, " %c %d", &state, &ppid) != 2)
    return -1;
  return ppid;
}

/* haven's children now, but those in skip. */
int
hv_direct_list_children (const struct pids *skip, struct pids *out, hv_error **err)
{
  out->n = 0;
  DIR *d = opendir ("/proc");
  if (d == NULL)
    return hv_error_set (err, errno, "open /proc");
  pid_t self = getpid ();
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      char *end;
      long pid = strtol (e->d_name, &end, 10);
      if (*end != '\0' || pid <= 0)
        continue;
      if (parent_of (dirfd (d), e->d_name) == self && (skip == NULL || !pids_has (skip, (pid_t) pid)))
        pids_push (out, (pid_t) pid);
    }
  closedir (d);
  return 0;
}

static long
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Kill every child haven has that it did not have before the command
 * (its audit listener, pasta), reap each, and again, until none is
 * left: a killed process's own children become haven's in turn. */
int
hv_direct_kill_left (const struct pids *before, size_t *killed, hv_error **err)
{
  struct pids left = { 0 };
  long deadline = now_ms () + KILL_LEFT_MS;
  int r = 0;
  *killed = 0;
  for (;;)
    {
      if (hv_direct_list_children (before, &left, err) < 0)
        {
          r = -1;
          break;
        }
      if (left.n == 0)
        break;
      if (now_ms () > deadline)
        {
          r = hv_error_set (err, 0, "processes the command left are still running after %d ms of killing them",
                            KILL_LEFT_MS);
          break;
        }
      for (size_t i = 0; i < left.n; i++)
        kill (left.v[i], SIGKILL);
      for (size_t i = 0; i < left.n; i++)
        while (waitpid (left.v[i], NULL, __WALL) < 0 && errno == EINTR)
          ;
      *killed += left.n;
    }
  free (left.v);
  return r;
}


int
hv_direct_read_full (int fd, void *buf, size_t len)
{
  size_t got = 0;
  while (got < len)
    {
      ssize_t n = read (fd, (char *) buf + got, len - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      got += (size_t) n;
    }
  return 0;
}

void
hv_direct_remove_scratch (const char *path)
{
  cleanup_free char *copy = xstrdup (path);
  char *slash = strrchr (copy, '/');
  *slash = '\0';
  cleanup_close int parent = open (copy[0] ? copy : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0 || hv_remove_tree_at (parent, slash + 1, 64) < 0)
    fprintf (stderr, "haven: could not remove the scratch TMPDIR %s\n", path);
}

/* The reaper: the command's parent and subreaper, until nothing of the
 * command is left.  alive_fd: EOF when haven is gone.  result_fd: the
 * command's pid, then a struct hv_direct_reaper_result. */
_Noreturn void
hv_direct_reaper (const struct hv_direct_child *c, int alive_fd, int result_fd, const struct hv_guard_after *after)
{
  bool haven_gone = false;
  struct hv_direct_reaper_result res = { 0 };
  /* Out of haven's process group, as the run guard is: a kill of the
   * whole job leaves it to clean up, and the terminal's job control
   * never stops it (the command resets these for itself). */
  static const int ignored[] = { SIGPIPE, SIGTTOU, SIGTTIN, SIGTSTP, SIGINT, SIGQUIT, SIGHUP };
  for (size_t i = 0; i < N_ELEMENTS (ignored); i++)
    signal (ignored[i], SIG_IGN);
  setpgid (0, 0);
  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
    _exit (HV_EXIT_HAVEN_FAILED);
  pid_t pid = fork ();
  if (pid < 0)
    _exit (HV_EXIT_HAVEN_FAILED);
  if (pid == 0)
    hv_direct_child_exec (c);
  close (c->report_fd);
  if (c->tty >= 0)
    close (c->tty); /* the proxy's end comes when the command's last copy closes */
  if (write_all (result_fd, &pid, sizeof (pid)) < 0)
    kill (pid, SIGKILL);
  cleanup_close int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  for (;;)
    {
      struct pollfd fds[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = alive_fd, .events = POLLIN } };
      if (pidfd < 0 || poll (fds, 2, -1) < 0)
        {
          if (pidfd >= 0 && errno == EINTR)
            continue;
          break; /* no pidfd: wait for the command alone */
        }
      if (fds[1].revents)
        {
          /* haven is gone: nothing may run on unsupervised. */
          kill (pid, SIGKILL);
          haven_gone = true;
          break;
        }
      if (fds[0].revents)
        break;
    }
  while (waitpid (pid, &res.status, 0) < 0 && errno == EINTR)
    ;
  cleanup_error hv_error *err = NULL;
  res.kill_failed = hv_direct_kill_left (NULL, &res.killed, &err) < 0;
  /* What haven would have done after the run (the scratch TMPDIR
   * removed, the project's check, the trail's end), now that nothing of
   * the command is left. */
  if (haven_gone && c->scratch)
    hv_direct_remove_scratch (c->scratch);
  if (haven_gone && after && after->fn)
    {
      signal (SIGTERM, SIG_IGN);
      after->fn (after->data);
      _exit (0);
    }
  if (write_all (result_fd, &res, sizeof (res)) < 0)
    _exit (1);
  _exit (0);
}
