/* HAVEN_ASK_COMMAND (run_ask.h): for each request of the run, the user's
 * command run by haven, outside the sandbox, through /bin/sh -c, in /,
 * with the request in its environment and stdin /dev/null.  The first word of its
 * stdout is its answer (once, run, always, deny) when it exits 0;
 * anything else is no answer, and the deadline decides.  It runs in a
 * process group of its own, killed whole at the deadline, when the
 * request is answered elsewhere or gone, when it has exited (what it left
 * behind), and at the run's end. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "deadline.h"
#include "run_ask_priv.h"
#include "utils.h"

extern char **environ;

static const char *const answers[] = { "once", "run", "always", "deny" };

static bool
ours (const char *entry)
{
  static const char *const names[]
      = { "HAVEN_ASK_ID=",      "HAVEN_ASK_RUN=",     "HAVEN_ASK_NAME=",         "HAVEN_ASK_TYPE=",
          "HAVEN_ASK_POLICY=",  "HAVEN_ASK_PROJECT=", "HAVEN_ASK_DEADLINE=",     "HAVEN_ASK_COMMAND_LINE=" };
  for (size_t i = 0; i < N_ELEMENTS (names); i++)
    if (strncmp (entry, names[i], strlen (names[i])) == 0)
      return true;
  return false;
}

/* haven's environment (the user's) with the request's variables. */
static void
request_env (const hv_approval_request *r, oci_strv *env)
{
  for (char **e = environ; e && *e; e++)
    if (!ours (*e))
      oci_strv_push (env, *e);
  oci_strv_pushf (env, "HAVEN_ASK_ID=%s", r->id);
  oci_strv_pushf (env, "HAVEN_ASK_RUN=%s", r->run);
  oci_strv_pushf (env, "HAVEN_ASK_NAME=%s", r->name);
  oci_strv_pushf (env, "HAVEN_ASK_TYPE=%s", r->type);
  oci_strv_pushf (env, "HAVEN_ASK_POLICY=%s", r->policy);
  oci_strv_pushf (env, "HAVEN_ASK_PROJECT=%s", r->project);
  oci_strv_pushf (env, "HAVEN_ASK_DEADLINE=%lld", (long long) (r->deadline_ms / 1000));
  size_t len = 0;
  for (size_t i = 0; r->command && r->command[i]; i++)
    len += strlen (r->command[i]) + 1;
  cleanup_free char *line = xmalloc0 (len + 1);
  for (size_t i = 0; r->command && r->command[i]; i++)
    {
      if (i > 0)
        strcat (line, " ");
      strcat (line, r->command[i]);
    }
  oci_strv_pushf (env, "HAVEN_ASK_COMMAND_LINE=%s", line);
}

static void
unwatch (struct hv_run_ask *a, int *fd)
{
  if (*fd < 0)
    return;
  epoll_ctl (a->ep, EPOLL_CTL_DEL, *fd, NULL);
  close (*fd);
  *fd = -1;
}

static int
spawn (struct hv_run_ask *a, const hv_approval_request *r, struct hv_ask_runner *w, hv_error **err)
{
  cleanup_strv oci_strv env = { 0 };
  request_env (r, &env);
  char *argv[] = { (char *) "/bin/sh", (char *) "-c", a->command, NULL };
  cleanup_close int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  int out[2];
  if (devnull < 0)
    return hv_error_set (err, errno, "open /dev/null");
  if (pipe2 (out, O_CLOEXEC) < 0)
    return hv_error_set (err, errno, "pipe");
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (out[0]);
      close (out[1]);
      return hv_error_set (err, errno, "fork");
    }
  if (pid == 0)
    {
      /* A plain process: no signal blocked (the proxy blocks SIGWINCH),
       * none ignored, its own group, gone with haven. */
      hv_default_signals ();
      setpgid (0, 0);
      prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
      /* Not the project's directory, which the agent wrote: a relative
       * name in the command must not find a file it planted there. */
      if (chdir ("/") < 0 || dup2 (devnull, 0) < 0 || dup2 (out[1], 1) < 0)
        _exit (127);
      execve (argv[0], argv, env.v);
      _exit (127);
    }
  setpgid (pid, pid);
  close (out[1]);
  *w = (struct hv_ask_runner){ .pid = pid, .pidfd = -1, .out = out[0], .id = xstrdup (r->id),
                               .name = xstrdup (r->name), .deadline_ms = r->deadline_ms };
  fcntl (w->out, F_SETFL, O_NONBLOCK);
  w->pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  struct epoll_event ev = { .events = EPOLLIN };
  ev.data.fd = w->out;
  epoll_ctl (a->ep, EPOLL_CTL_ADD, w->out, &ev);
  if (w->pidfd >= 0)
    {
      ev.data.fd = w->pidfd;
      epoll_ctl (a->ep, EPOLL_CTL_ADD, w->pidfd, &ev);
    }
  return 0;
}

/* The command's first word, if it is an answer. */
static int
first_word (const char *buf, hv_ask_decision *d)
{
  const char *p = buf + strspn (buf, " \t\r\n");
  size_t len = strcspn (p, " \t\r\n");
  for (size_t i = 0; i < N_ELEMENTS (answers); i++)
    if (len == strlen (answers[i]) && strncmp (p, answers[i], len) == 0)
      return hv_ask_decision_parse (answers[i], d);
  return -1;
}

/* What the command has written so far; its end of file stops the watch
 * of the pipe (level-triggered, it would wake the run for ever). */
static void
drain (struct hv_run_ask *a, struct hv_ask_runner *w)
{
  while (w->out >= 0)
    {
      char tmp[512];
      ssize_t n = read (w->out, tmp, sizeof (tmp));
      if (n < 0 && errno == EINTR)
        continue;
      if (n == 0)
        unwatch (a, &w->out);
      if (n <= 0)
        return;
      size_t take = (size_t) n;
      if (take > HV_ASK_OUT_MAX - w->len)
        take = HV_ASK_OUT_MAX - w->len;
      memcpy (w->buf + w->len, tmp, take);
      w->len += take;
      w->buf[w->len] = '\0';
    }
}

/* Kill the group, reap, let go of the slot. */
static int
end_runner (struct hv_run_ask *a, struct hv_ask_runner *w)
{
  kill (-w->pid, SIGKILL);
  int status = 0;
  while (waitpid (w->pid, &status, 0) < 0 && errno == EINTR)
    ;
  unwatch (a, &w->out);
  unwatch (a, &w->pidfd);
  free (w->id);
  free (w->name);
  *w = (struct hv_ask_runner){ .pid = 0, .pidfd = -1, .out = -1 };
  return status;
}

static bool
exited (const struct hv_ask_runner *w)
{
  siginfo_t si = { 0 };
  return waitid (P_PID, (id_t) w->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == w->pid;
}

static void
finish (struct hv_run_ask *a, struct hv_ask_runner *w)
{
  drain (a, w);
  cleanup_free char *id = xstrdup (w->id);
  cleanup_free char *name = xstrdup (w->name);
  hv_ask_decision d;
  bool said = first_word (w->buf, &d) == 0;
  int status = end_runner (a, w);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0 || !said)
    {
      if (WIFEXITED (status))
        hv_ask_note (a, "HAVEN_ASK_COMMAND gave no answer for %s (exit status %d%s): the deadline decides", name,
                     WEXITSTATUS (status), said || WEXITSTATUS (status) ? "" : ", its output is not once, run, always or deny");
      else
        hv_ask_note (a, "HAVEN_ASK_COMMAND gave no answer for %s (killed by signal %d): the deadline decides", name,
                     WTERMSIG (status));
      return;
    }
  hv_approval_status st = HV_APPROVAL_FAILED;
  cleanup_error hv_error *err = NULL;
  if (hv_approval_answer (a->dirfd, id, d, "command", &st, &err) == 0 || st == HV_APPROVAL_OK)
    {
      free (a->cmd_answer_id);
      a->cmd_answer_id = xstrdup (id);
      a->cmd_answer = d;
    }
  if (err && st != HV_APPROVAL_ANSWERED && st != HV_APPROVAL_NO_SUCH)
    hv_ask_note (a, "HAVEN_ASK_COMMAND's answer for %s: %s", name, err->msg);
}

static bool
answer_present (const struct hv_run_ask *a, const char *id)
{
  cleanup_free char *file = xasprintf ("%s.answer", id);
  struct stat st;
  return fstatat (a->dirfd, file, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static bool
pending (const hv_approval_request *reqs, size_t n, const char *id)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (reqs[i].id, id) == 0)
      return true;
  return false;
}

void
hv_ask_commands_pump (struct hv_run_ask *a, const hv_approval_request *reqs, size_t n)
{
  if (a->command == NULL)
    return;
  int64_t now = hv_realtime_ms ();
  for (size_t i = 0; i < HV_ASK_RUNNERS; i++)
    {
      struct hv_ask_runner *w = &a->runners[i];
      if (w->pid == 0)
        continue;
      drain (a, w);
      if (exited (w))
        finish (a, w);
      else if (now >= w->deadline_ms)
        {
          hv_ask_note (a, "HAVEN_ASK_COMMAND did not answer for %s before the deadline: killed", w->name);
          end_runner (a, w);
        }
      else if (!pending (reqs, n, w->id))
        {
          /* Answered elsewhere, or no longer held.  The holder times out
           * on a clock of its own, a little ahead of the file's deadline:
           * a request gone unanswered in the last second went at its
           * deadline. */
          if (now + HV_ASK_DEADLINE_SLACK_MS >= w->deadline_ms && !answer_present (a, w->id))
            hv_ask_note (a, "HAVEN_ASK_COMMAND did not answer for %s before the deadline: killed", w->name);
          end_runner (a, w);
        }
    }
  for (size_t j = 0; j < n; j++)
    {
      if (hv_ask_listed (&a->asked_cmd, reqs[j].id))
        continue;
      struct hv_ask_runner *w = NULL;
      for (size_t i = 0; w == NULL && i < HV_ASK_RUNNERS; i++)
        if (a->runners[i].pid == 0)
          w = &a->runners[i];
      if (w == NULL)
        break; /* the next event starts it */
      oci_strv_push (&a->asked_cmd, reqs[j].id);
      cleanup_error hv_error *err = NULL;
      if (spawn (a, &reqs[j], w, &err) < 0)
        hv_ask_note (a, "HAVEN_ASK_COMMAND for %s: %s", reqs[j].name, err->msg);
    }
  /* Forget the requests no longer pending. */
  oci_strv keep = { 0 };
  for (size_t i = 0; i < a->asked_cmd.n; i++)
    if (pending (reqs, n, a->asked_cmd.v[i]))
      oci_strv_push (&keep, a->asked_cmd.v[i]);
  oci_strv_free (&a->asked_cmd);
  a->asked_cmd = keep;
  /* The next deadline wakes the run's poll. */
  int64_t next = 0;
  for (size_t i = 0; i < HV_ASK_RUNNERS; i++)
    if (a->runners[i].pid != 0 && (next == 0 || a->runners[i].deadline_ms < next))
      next = a->runners[i].deadline_ms;
  struct itimerspec its = { 0 };
  if (next > 0)
    {
      its.it_value.tv_sec = next / 1000;
      its.it_value.tv_nsec = (long) (next % 1000) * 1000000;
    }
  timerfd_settime (a->timer, TFD_TIMER_ABSTIME, &its, NULL);
}

void
hv_ask_commands_stop (struct hv_run_ask *a)
{
  for (size_t i = 0; i < HV_ASK_RUNNERS; i++)
    if (a->runners[i].pid != 0)
      end_runner (a, &a->runners[i]);
}
