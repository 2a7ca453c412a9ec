/* haven run's askers (run_ask.h): the watch of the approvals directory
 * and the question on the terminal. */
#include "config.h"
#include "run_ask.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "file_read.h"
#include "json_walk.h"
#include "deadline.h"
#include "run_ask_priv.h"
#include "utils.h"

/* How much of the run's command the question shows. */
#define COMMAND_SHOWN 80

/* Text the sandbox chose (the name, its command) or that holds the
 * user's paths, made safe to print on a terminal: no control byte (an
 * escape sequence could rewrite the question), nothing beyond ASCII. */
static char *
printable (const char *s, size_t max)
{
  size_t n = strlen (s);
  bool cut = n > max;
  if (cut)
    n = max;
  char *out = xmalloc0 (n + 4);
  for (size_t i = 0; i < n; i++)
    out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  if (cut)
    memcpy (out + n, "...", 3);
  return out;
}

static char *
command_line (const hv_approval_request *r)
{
  size_t len = 0;
  for (size_t i = 0; r->command && r->command[i]; i++)
    len += strlen (r->command[i]) + 1;
  char *s = xmalloc0 (len + 1);
  for (size_t i = 0; r->command && r->command[i]; i++)
    {
      if (i > 0)
        strcat (s, " ");
      strcat (s, r->command[i]);
    }
  return s;
}

/* The answer another answerer wrote (ID.answer, while the holder has not
 * yet taken it): its decision and by, or -1 when it cannot be read. */
static int
read_answer (int dirfd, const char *id, char **decision, char **by)
{
  cleanup_free char *file = xasprintf ("%s.answer", id);
  cleanup_close int fd = openat (dirfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return -1;
  cleanup_error hv_error *err = NULL;
  cleanup_free char *text = NULL;
  size_t len;
  if (hv_read_regular_fd (fd, file, 4096, &text, &len, &err) < 0 || jw_too_deep (text, 4))
    return -1;
  json_walk w;
  jw_init (&w, file, &err);
  yajl_val tree = NULL;
  if (jw_parse (&w, text, &tree) < 0)
    return -1;
  const char *d = NULL, *b = NULL;
  int r = -1;
  if (jw_expect_object (&w, tree) == 0 && jw_member_string (&w, tree, "decision", true, &d) == 0
      && jw_member_string (&w, tree, "by", true, &b) == 0)
    {
      *decision = printable (d, 16);
      *by = printable (b, 16);
      r = 0;
    }
  yajl_tree_free (tree);
  return r;
}

static const char *
decision_said (hv_ask_decision d)
{
  switch (d)
    {
    case HV_ASK_ONCE:
      return "allowed once (the lookups waiting now)";
    case HV_ASK_RUN:
      return "allowed for the rest of this run";
    case HV_ASK_ALWAYS:
      return "allowed, now and in later runs of this policy";
    case HV_ASK_DENY:
      return "denied";
    }
  return "?";
}

static void
say (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static void
say (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *msg = xvasprintf (fmt, ap);
  va_end (ap);
  write_all (1, msg, strlen (msg));
}

/* The question withdrawn because someone else answered, or its request
 * is gone (taken by the holder, or the run's end removed it). */
static void
say_withdrawn (const struct hv_run_ask *a, const hv_approval_request *r, const char *name)
{
  const char *id = r->id;
  cleanup_free char *decision = NULL, *by = NULL;
  if (a->cmd_answer_id && strcmp (a->cmd_answer_id, id) == 0)
    say ("haven: %s: answered by command: %s\r\n", name, hv_ask_decision_name (a->cmd_answer));
  else if (read_answer (a->dirfd, id, &decision, &by) == 0)
    say ("haven: %s: answered by %s: %s\r\n", name, by, decision);
  else if (hv_realtime_ms () + HV_ASK_DEADLINE_SLACK_MS >= r->deadline_ms)
    /* Its holder times out on a clock of its own, a little ahead. */
    say ("haven: %s: no answer before the deadline: denied\r\n", name);
  else
    say ("haven: %s: the question is withdrawn (answered elsewhere, or no longer held)\r\n", name);
}

/* Is the request still waiting for an answer? */
static bool
still_pending (const struct hv_run_ask *a, const char *id)
{
  cleanup_free char *req = xasprintf ("%s.request", id);
  cleanup_free char *ans = xasprintf ("%s.answer", id);
  struct stat st;
  return fstatat (a->dirfd, req, &st, AT_SYMLINK_NOFOLLOW) == 0
         && fstatat (a->dirfd, ans, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

static void pump (struct hv_run_ask *a, hv_approval_request **reqs, size_t *n);

int
hv_ask_key_decision (const char *buf, size_t n, int *esc, hv_ask_decision *d)
{
  int found = -1;
  for (size_t i = 0; i < n; i++)
    {
      char c = buf[i];
      switch (*esc)
        {
        case 1: /* after ESC: CSI, SS3, or one key with Alt */
          *esc = c == '[' ? 2 : c == 'O' ? 3 : 0;
          continue;
        case 2: /* CSI: parameters up to a final byte */
          if (c >= 0x40 && c <= 0x7e)
            *esc = 0;
          continue;
        case 3: /* SS3: one final byte */
          *esc = 0;
          continue;
        default:
          break;
        }
      if (c == '\033')
        {
          *esc = 1;
          continue;
        }
      if (found < 0 && c != '\0' && strchr ("oradORAD", c) != NULL)
        {
          char k[2] = { (char) (c | 0x20), '\0' };
          if (hv_ask_decision_parse (k, d) == 0)
            found = 0;
        }
    }
  return found;
}

static void
answer_here (struct hv_run_ask *a, const hv_approval_request *r, const char *name, hv_ask_decision d)
{
  hv_approval_status status = HV_APPROVAL_FAILED;
  cleanup_error hv_error *err = NULL;
  say ("%s\r\n", hv_ask_decision_name (d));
  if (hv_approval_answer (a->dirfd, r->id, d, "terminal", &status, &err) == 0)
    say ("haven: %s: %s\r\n", name, decision_said (d));
  else if (status == HV_APPROVAL_OK)
    /* "always": the run is approved, the approved file was not written. */
    say ("haven: %s: %s; but: %s\r\n", name, decision_said (HV_ASK_RUN), err->msg);
  else if (status == HV_APPROVAL_ANSWERED)
    say_withdrawn (a, r, name);
  else if (status == HV_APPROVAL_EXPIRED)
    say ("haven: %s: too late, the deadline had passed: denied\r\n", name);
  else
    say ("haven: %s: the answer could not be given: %s\r\n", name, err ? err->msg : "?");
}

static int64_t
monotonic_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Keys typed while the question is on and not taken as its answer: the
 * sandbox gets them, in order, when it ends (relaying is paused, not
 * lost).  Beyond this, a key is dropped. */
#define HELD_MAX 4096

struct held
{
  char buf[HELD_MAX];
  size_t n;
};

static void
hold (struct held *h, const char *buf, size_t n)
{
  if (n > HELD_MAX - h->n)
    n = HELD_MAX - h->n;
  memcpy (h->buf + h->n, buf, n);
  h->n += n;
}

/* The question on the terminal until one of: its answer, the deadline, an
 * answer from elsewhere, the request gone, the command's end.  A key
 * answers only when it comes alone (not in a paste, not with others
 * typed at once) and HV_ASK_GRACE_MS after the question appeared: keys
 * the user was typing for the agent when it appeared are not answers. */
static void
ask_on_terminal (struct hv_run_ask *a, const hv_approval_request *r, struct hv_tty_pause *tty)
{
  cleanup_free char *name = printable (r->name, 253);
  cleanup_free char *policy = printable (r->policy, 64);
  cleanup_free char *cmd_full = command_line (r);
  cleanup_free char *cmd = printable (cmd_full, COMMAND_SHOWN);
  cleanup_error hv_error *perr = NULL;
  cleanup_free char *approved = hv_approved_path (r->policy, &perr);
  cleanup_free char *type = printable (r->type, 16);
  cleanup_free char *approved_shown = approved ? printable (approved, 200) : xstrdup ("the policy's approved file");
  cleanup_free struct held *held = xmalloc0 (sizeof (*held));
  int64_t left_s = (r->deadline_ms - hv_realtime_ms () + 999) / 1000;
  say ("%shaven: policy %s asks: may the sandbox look up %s (%s)?  asked by: %s\r\n"
       "haven: [o]nce  [r]un (the rest of this run)  [a]lways (adds it to %s)  [d]eny; "
       "no answer in %lld s denies it: ",
       tty->line_start ? "" : "\r\n", policy, name, type, cmd, approved_shown, (long long) left_s);
  int64_t asked_at = monotonic_ms ();
  bool master_gone = false;
  int esc = 0; /* where in an escape sequence the keys are */
  for (;;)
    {
      int64_t left = r->deadline_ms - hv_realtime_ms ();
      if (left <= 0)
        {
          say ("\r\nhaven: %s: no answer before the deadline: denied\r\n", name);
          break;
        }
      struct pollfd p[3] = { { .fd = 0, .events = POLLIN },
                             { .fd = a->ep, .events = POLLIN },
                             { .fd = tty->master, .events = 0 } };
      int pr = poll (p, 3, left > INT_MAX ? INT_MAX : (int) left);
      if (pr < 0 && errno != EINTR)
        {
          say ("\r\nhaven: %s: the question is withdrawn: poll: %s\r\n", name, strerror (errno));
          break;
        }
      if (pr <= 0)
        continue;
      if (p[1].revents & POLLIN)
        {
          hv_approval_request *reqs = NULL;
          size_t n = 0;
          pump (a, &reqs, &n);
          hv_approval_requests_free (reqs, n);
          if (!still_pending (a, r->id))
            {
              say ("\r\n");
              say_withdrawn (a, r, name);
              break;
            }
        }
      if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
        {
          char buf[256];
          ssize_t got = read (0, buf, sizeof (buf));
          if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
            {
              say ("\r\nhaven: %s: the terminal's input has ended: the question is left to haven approve and "
                   "the deadline\r\n",
                   name);
              break;
            }
          hv_ask_decision d;
          bool keyed = got > 0 && hv_ask_key_decision (buf, (size_t) got, &esc, &d) == 0;
          if (keyed && got == 1 && monotonic_ms () - asked_at >= HV_ASK_GRACE_MS)
            {
              answer_here (a, r, name, d);
              break;
            }
          if (got > 0)
            hold (held, buf, (size_t) got);
        }
      if (p[2].revents & (POLLHUP | POLLERR))
        {
          say ("\r\nhaven: %s: the command's terminal has closed: the question is withdrawn\r\n", name);
          master_gone = true;
          break;
        }
    }
  if (held->n && !master_gone)
    write_all (tty->master, held->buf, held->n);
}

/* Every event: drain the watch and the timer, list the run's pending
 * requests, tend the commands. */
static void
pump (struct hv_run_ask *a, hv_approval_request **reqs, size_t *n)
{
  char buf[4096] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  while (read (a->ino, buf, sizeof (buf)) > 0)
    ;
  uint64_t expirations;
  while (read (a->timer, &expirations, sizeof (expirations)) > 0)
    ;
  *reqs = NULL;
  *n = 0;
  cleanup_error hv_error *err = NULL;
  if (hv_approvals_list (a->dirfd, a->run, reqs, n, &err) < 0)
    {
      /* Nothing is known: nothing is asked, killed nor forgotten. */
      hv_ask_note (a, "approvals: %s", err->msg);
      *reqs = NULL;
      *n = 0;
      return;
    }
  hv_ask_commands_pump (a, *reqs, *n);
  /* Forget what is no longer pending: the lists stay as short as that. */
  oci_strv keep = { 0 };
  for (size_t i = 0; i < a->asked_tty.n; i++)
    for (size_t j = 0; j < *n; j++)
      if (strcmp (a->asked_tty.v[i], (*reqs)[j].id) == 0)
        oci_strv_push (&keep, a->asked_tty.v[i]);
  oci_strv_free (&a->asked_tty);
  a->asked_tty = keep;
}

static void
on_event (void *data, struct hv_tty_pause *tty)
{
  struct hv_run_ask *a = data;
  /* Each round asks one request not yet asked: the loop ends. */
  for (;;)
    {
      hv_approval_request *reqs = NULL;
      size_t n = 0;
      pump (a, &reqs, &n);
      const hv_approval_request *next = NULL;
      for (size_t i = 0; tty && a->terminal && next == NULL && i < n; i++)
        if (!hv_ask_listed (&a->asked_tty, reqs[i].id))
          next = &reqs[i];
      if (next)
        {
          oci_strv_push (&a->asked_tty, next->id);
          ask_on_terminal (a, next, tty);
          tty->line_start = true; /* every way out of it ends a line */
        }
      hv_approval_requests_free (reqs, n);
      if (next == NULL)
        return;
    }
}

static int
watch (struct hv_run_ask *a, int fd, hv_error **err)
{
  struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
  if (epoll_ctl (a->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
    return hv_error_set (err, errno, "epoll_ctl");
  return 0;
}

int
hv_run_ask_start (const char *run, bool terminal, const char *command, struct hv_run_ask **out, hv_error **err)
{
  struct hv_run_ask *a = xmalloc0 (sizeof (*a));
  a->run = xstrdup (run);
  a->dirfd = a->ino = a->ep = a->timer = -1;
  a->terminal = terminal;
  a->command = command && command[0] ? xstrdup (command) : NULL;
  for (size_t i = 0; i < HV_ASK_RUNNERS; i++)
    a->runners[i].pidfd = a->runners[i].out = -1;
  cleanup_free char *self = NULL;
  cleanup_free char *dir = hv_approvals_dir_path (err);
  if (dir == NULL || (a->dirfd = hv_approvals_dir_open (dir, true, err)) < 0)
    goto fail;
  a->ino = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  a->ep = epoll_create1 (EPOLL_CLOEXEC);
  a->timer = timerfd_create (CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
  if (a->ino < 0 || a->ep < 0 || a->timer < 0)
    {
      hv_error_set (err, errno, "watch %s", dir);
      goto fail;
    }
  /* The directory by its fd (the path could have been swapped since it
   * was checked): every file made, renamed in or out, removed. */
  self = xasprintf ("/proc/self/fd/%d", a->dirfd);
  if (inotify_add_watch (a->ino, self, IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE) < 0)
    {
      hv_error_set (err, errno, "watch %s", dir);
      goto fail;
    }
  if (watch (a, a->ino, err) < 0 || watch (a, a->timer, err) < 0)
    goto fail;
  *out = a;
  return 0;
fail:
  hv_error_wrap (err, "approvals");
  hv_run_ask_stop (a);
  return -1;
}

void
hv_run_ask_hook (struct hv_run_ask *a, struct hv_run_hook *hook)
{
  *hook = (struct hv_run_hook){ .fd = a->ep, .fn = on_event, .data = a };
}

void
hv_run_ask_stop (struct hv_run_ask *a)
{
  if (a == NULL)
    return;
  hv_ask_commands_stop (a);
  int *fds[] = { &a->dirfd, &a->ino, &a->ep, &a->timer };
  for (size_t i = 0; i < N_ELEMENTS (fds); i++)
    if (*fds[i] >= 0)
      close (*fds[i]);
  oci_strv_free (&a->asked_tty);
  oci_strv_free (&a->asked_cmd);
  free (a->cmd_answer_id);
  free (a->run);
  free (a->command);
  free (a);
}
