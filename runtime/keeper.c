/* The keeper (keeper.h): a sandbox's init that starts commands on
 * request.  Single-threaded; one poll over the caller's socket and a
 * signalfd for SIGCHLD.  A command is fork, then in the child setsid,
 * stdio, chdir, execve: the spawn path is one recvmsg and one fork.
 *
 * The caller is trusted (it made the sandbox) but its requests are still
 * decoded strictly: one that does not decode means the two sides do not
 * agree, and the keeper ends (fail closed) instead of guessing. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exit_status.h"
#include "keeper_proto.h"
#include "keeper_serve.h"
#include "process.h"
#include "utils.h"

struct keeper_run
{
  uint32_t run_id;
  pid_t pid; /* also its process group (setsid) */
};

struct keeper
{
  int sock;
  int sigfd;
  const char *default_cwd;
  struct keeper_run *runs;
  size_t n_runs, cap_runs;
  char *buf; /* one request, and a byte to see a longer one */
};

/* Init's fds were made close-on-exec for the program it no longer runs:
 * the keeper closes them (the exec fifo among them: its close tells
 * `start` the sandbox is serving). */
static void
close_all_but (int keep)
{
  if ((keep == 3 || syscall (SYS_close_range, 3U, (unsigned) keep - 1, 0U) == 0)
      && syscall (SYS_close_range, (unsigned) keep + 1, ~0U, 0U) == 0)
    return;
  for (int fd = 3; fd < 65536; fd++)
    if (fd != keep)
      close (fd);
}

/* Handlers init inherited from the runtime would run haven's code in
 * here: every signal back to its default, but SIGPIPE (a command's pipe
 * or the caller's end closing must not kill the keeper) and SIGCHLD,
 * blocked for the signalfd.  A command gets all of them back as they
 * were (run_child). */
/* The kernel's struct sigaction, for rt_sigaction itself: glibc's
 * sigaction refuses the two real-time signals it keeps for itself (32 and
 * 33), and one of them ignored by whoever started the runtime would stay
 * ignored in every command (an ignored signal survives execve). */
struct kernel_sigaction
{
  void (*handler) (int);
  unsigned long flags;
  void (*restorer) (void);
  uint64_t mask;
};

static void
signal_default (int sig)
{
  struct kernel_sigaction dfl = { .handler = SIG_DFL };
  syscall (SYS_rt_sigaction, sig, &dfl, NULL, sizeof (dfl.mask));
}

static int
set_up_signals (hv_error **err)
{
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      signal_default (sig);
  signal (SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  if (sigprocmask (SIG_SETMASK, &chld, NULL) < 0)
    return hv_error_set (err, errno, "keeper: block SIGCHLD");
  int fd = signalfd (-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0)
    return hv_error_set (err, errno, "keeper: signalfd");
  return fd;
}

static __attribute__ ((noreturn)) void
keeper_exit (struct keeper *k, int status)
{
  /* In its own pid namespace the keeper's exit ends every process in
   * it; without one, the commands still running are ended here. */
  for (size_t i = 0; i < k->n_runs; i++)
    if (kill (-k->runs[i].pid, SIGKILL) < 0)
      kill (k->runs[i].pid, SIGKILL);
  _exit (status);
}

static __attribute__ ((noreturn, format (printf, 2, 3))) void
keeper_fail (struct keeper *k, const char *fmt, ...)
{
  char line[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (line, sizeof (line), fmt, ap);
  va_end (ap);
  dprintf (2, "haven-keeper: %s\n", line);
  keeper_exit (k, 1);
}

static void
send_event (struct keeper *k, enum hv_keeper_event_kind kind, uint32_t run_id, int32_t value)
{
  struct hv_keeper_event ev = { .kind = kind, .run_id = run_id, .pid = value, .status = value };
  unsigned char buf[HV_KEEPER_EVENT_SIZE];
  hv_keeper_encode_event (&ev, buf);
  ssize_t n;
  do
    n = send (k->sock, buf, sizeof (buf), MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  /* The caller is gone (or cannot be told): nothing left to serve. */
  if (n != (ssize_t) sizeof (buf))
    keeper_exit (k, 0);
}

static struct keeper_run *
find_run (struct keeper *k, uint32_t run_id)
{
  for (size_t i = 0; i < k->n_runs; i++)
    if (k->runs[i].run_id == run_id)
      return &k->runs[i];
  return NULL;
}

static void
exec_failed (const char *what, const char *name, const char *reason, int status)
{
  dprintf (2, "haven: %s %s: %s\n", what, name, reason);
  _exit (status);
}

/* The command's side of the fork: never returns. */
static __attribute__ ((noreturn)) void
run_child (struct keeper *k, const struct hv_keeper_request *req, int fds[3])
{
  sigset_t none;
  sigemptyset (&none);
  signal (SIGPIPE, SIG_DFL);
  /* The real-time signals glibc keeps for itself, which no sigaction of
   * glibc's reaches: default again here too, whatever set them since. */
  for (int sig = 32; sig < SIGRTMIN; sig++)
    signal_default (sig);
  sigprocmask (SIG_SETMASK, &none, NULL);
  setsid ();
  /* Onto 0, 1, 2; one received below 3 (init's stdio closed) is moved
   * up first so that no dup2 overwrites another of the three. */
  for (int i = 0; i < 3; i++)
    if (fds[i] < 3)
      fds[i] = fcntl (fds[i], F_DUPFD_CLOEXEC, 3);
  for (int i = 0; i < 3; i++)
    if (fds[i] < 0 || dup2 (fds[i], i) < 0)
      _exit (HV_EXIT_CANNOT_EXECUTE);
  const char *cwd = req->cwd ? req->cwd : k->default_cwd;
  if (chdir (cwd) < 0)
    exec_failed ("cwd", cwd, strerror (errno), HV_EXIT_CANNOT_EXECUTE);
  const char *name = req->argv[0];
  char *exe = NULL, *refused = NULL;
  int e = hv_process_find_exe (name, req->envp, &exe, &refused);
  bool in_path = e == ENOENT && !strchr (name, '/');
  if (e == 0)
    {
      execve (exe, req->argv, req->envp);
      /* Refused by Landlock (allow_exec), a noexec mount, not a
       * program; ENOENT: its interpreter or loader is missing. */
      e = errno;
    }
  exec_failed ("exec", name, in_path ? "command not found" : strerror (e),
               e == ENOENT ? HV_EXIT_NOT_FOUND : HV_EXIT_CANNOT_EXECUTE);
  __builtin_unreachable ();
}

static void
spawn (struct keeper *k, const struct hv_keeper_request *req, int fds[3])
{
  if (find_run (k, req->run_id))
    keeper_fail (k, "spawn: run %u is running", req->run_id);
  pid_t pid = fork ();
  if (pid == 0)
    run_child (k, req, fds);
  if (pid < 0)
    dprintf (fds[2], "haven: fork: %s\n", strerror (errno));
  for (int i = 0; i < 3; i++)
    close (fds[i]);
  if (pid < 0)
    {
      send_event (k, HV_KEEPER_EXITED, req->run_id, HV_EXIT_CANNOT_EXECUTE);
      return;
    }
  if (k->n_runs == k->cap_runs)
    {
      k->cap_runs = k->cap_runs ? 2 * k->cap_runs : 8;
      k->runs = xrealloc (k->runs, k->cap_runs * sizeof (*k->runs));
    }
  k->runs[k->n_runs++] = (struct keeper_run) { .run_id = req->run_id, .pid = pid };
  send_event (k, HV_KEEPER_STARTED, req->run_id, pid);
}

static void
signal_run (struct keeper *k, const struct hv_keeper_request *req)
{
  /* A run that ended (its EXITED may be on the way): nothing to do. */
  struct keeper_run *r = find_run (k, req->run_id);
  if (r == NULL)
    return;
  /* Its group exists once the child's setsid ran; a signal sent right
   * after STARTED may come before that: then to the child itself. */
  if (kill (-r->pid, req->sig) < 0 && errno == ESRCH)
    kill (r->pid, req->sig);
}

/* Every child (as pid 1, the orphans of the sandbox too); EXITED only for
 * the runs. */
static void
reap (struct keeper *k)
{
  struct signalfd_siginfo si[8];
  while (read (k->sigfd, si, sizeof (si)) > 0)
    ;
  int status;
  pid_t pid;
  while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
    for (size_t i = 0; i < k->n_runs; i++)
      if (k->runs[i].pid == pid)
        {
          uint32_t run_id = k->runs[i].run_id;
          k->runs[i] = k->runs[--k->n_runs];
          send_event (k, HV_KEEPER_EXITED, run_id,
                      WIFSIGNALED (status) ? 128 + WTERMSIG (status) : WEXITSTATUS (status));
          break;
        }
}

/* One request; false once the caller's end is closed. */
static bool
serve_one (struct keeper *k)
{
  struct iovec iov = { .iov_base = k->buf, .iov_len = HV_KEEPER_MAX_MESSAGE + 1 };
  union
  {
    char buf[CMSG_SPACE (3 * sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof (ctl.buf) };
  ssize_t n = recvmsg (k->sock, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0)
    return errno == EINTR || errno == EAGAIN;
  if (n == 0)
    return false;
  int fds[3] = { -1, -1, -1 };
  size_t nfds = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN (0))
      {
        size_t m = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        for (size_t i = 0; i < m; i++, nfds++)
          if (nfds < 3)
            memcpy (&fds[nfds], CMSG_DATA (c) + i * sizeof (int), sizeof (int));
      }
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
    keeper_fail (k, "a request longer than %d bytes or with more than 3 fds", HV_KEEPER_MAX_MESSAGE);
  struct hv_keeper_request req;
  hv_error *err = NULL;
  if (hv_keeper_decode_request (k->buf, (size_t) n, nfds, &req, &err) < 0)
    keeper_fail (k, "%s", err->msg);
  if (req.type == HV_KEEPER_REQ_SPAWN)
    spawn (k, &req, fds);
  else
    signal_run (k, &req);
  hv_keeper_request_clear (&req);
  return true;
}

/* Our command line is the creating process's (the service's: its
 * binary's and socket's paths on the host); a command reading
 * /proc/1/cmdline sees "haven-keeper" and NULs instead (its length is
 * fixed without CAP_SYS_RESOURCE).  The arguments are one
 * block starting at argv[0] (program_invocation_name), as long as what
 * /proc/self/cmdline gives; best effort: the line is not a secret. */
static void
rename_self (void)
{
  static const char name[] = "haven-keeper";
  char buf[4096];
  cleanup_close int fd = open ("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  ssize_t n = read (fd, buf, sizeof (buf));
  if (n < (ssize_t) sizeof (name) || (size_t) n >= sizeof (buf))
    return;
  memset (program_invocation_name, 0, (size_t) n);
  memcpy (program_invocation_name, name, sizeof (name));
  prctl (PR_SET_NAME, name, 0, 0, 0);
}

void
hv_keeper_serve (int keeper_fd, const char *default_cwd)
{
  struct keeper k = { .sock = keeper_fd, .sigfd = -1, .default_cwd = default_cwd };
  hv_error *err = NULL;
  /* The keeper is a copy of the process that made the sandbox, and keeps
   * its memory (the config, whatever the caller held): not dumpable, so
   * that no command (same uid, its descendant) can read it through
   * /proc/1/mem or ptrace, nor open the runtime's binary through
   * /proc/1/exe.  Each command's execve makes it dumpable again. */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    keeper_fail (&k, "PR_SET_DUMPABLE: %s", strerror (errno));
  close_all_but (keeper_fd);
  /* Ours alone: a request waits in a blocking read, an event in a
   * blocking send (the caller reads them as they come). */
  int flags = fcntl (keeper_fd, F_GETFL);
  if (flags >= 0 && (flags & O_NONBLOCK))
    fcntl (keeper_fd, F_SETFL, flags & ~O_NONBLOCK);
  k.sigfd = set_up_signals (&err);
  if (k.sigfd < 0)
    keeper_fail (&k, "%s", err->msg);
  /* Without a pid namespace of its own, the orphans of its commands are
   * still the keeper's to reap (best effort: pid 1 reaps them anyway). */
  if (getpid () != 1)
    prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  /* Not zeroed: a request writes what it uses, and pages never written
   * cost nothing (zeroing them made 128 KiB of every idle keeper dirty). */
  k.buf = xrealloc (NULL, HV_KEEPER_MAX_MESSAGE + 1);
  rename_self ();
  /* What the creating process had allocated and freed is ours too, as
   * private copies once touched: handed back to the kernel (an idle
   * keeper of a pool is most of what a waiting sandbox costs), and freed
   * data of the caller's (requests it served) is gone with the pages. */
  malloc_trim (0);
  for (;;)
    {
      struct pollfd p[2] = { { .fd = k.sock, .events = POLLIN }, { .fd = k.sigfd, .events = POLLIN } };
      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          keeper_fail (&k, "poll: %s", strerror (errno));
        }
      if (p[1].revents)
        reap (&k);
      if (p[0].revents & POLLIN)
        {
          if (!serve_one (&k))
            keeper_exit (&k, 0);
        }
      else if (p[0].revents)
        keeper_exit (&k, 0);
    }
}
