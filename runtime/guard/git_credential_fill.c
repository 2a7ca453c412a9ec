/* Asking the host's own git for a credential: `git credential fill` with
 * the user's helpers (keychain, credential store), run so that it can
 * neither prompt nor read a repository's config.  See git_credential.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "git_credential.h"
#include "array_size.h"
#include "deadline.h"
#include "utils.h"

extern char **environ;

/* What git and the user's helpers need from haven's environment (where
 * the config and keychain are); everything else, GIT_* above all
 * (GIT_CONFIG_PARAMETERS, GIT_DIR...), stays out. */
static const char *const kept_env[] = {
  "HOME=", "PATH=", "USER=", "LOGNAME=", "XDG_CONFIG_HOME=", "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS=",
};

/* No prompt of any kind: GIT_TERMINAL_PROMPT=0 stops the terminal one,
 * and an empty GIT_ASKPASS stops git from running core.askPass or
 * SSH_ASKPASS (an empty value is "set" and wins over both).  The ceiling
 * keeps git from finding a repository at "/". */
static const char *const set_env[] = {
  "GIT_TERMINAL_PROMPT=0",
  "GIT_ASKPASS=",
  "GIT_CEILING_DIRECTORIES=/",
  "LC_ALL=C",
};

#define ANSWER_MAX HV_GIT_CREDENTIAL_MAX_BYTES

static char **
child_env (void)
{
  size_t n = 0;
  char **env = xmalloc0 ((N_ELEMENTS (kept_env) + N_ELEMENTS (set_env) + 1) * sizeof *env);
  for (char **e = environ; *e; e++)
    for (size_t i = 0; i < N_ELEMENTS (kept_env); i++)
      if (str_has_prefix (*e, kept_env[i]))
        env[n++] = *e;
  for (size_t i = 0; i < N_ELEMENTS (set_env); i++)
    env[n++] = (char *) set_env[i];
  return env;
}

/* Write the whole request; git may exit without reading it, so SIGPIPE is
 * held off for this thread and a pending one taken away again. */
static int
write_request (int fd, const char *buf, size_t len)
{
  sigset_t pipe_set, old;
  sigemptyset (&pipe_set);
  sigaddset (&pipe_set, SIGPIPE);
  sigset_t pending;
  sigpending (&pending);
  bool was_pending = sigismember (&pending, SIGPIPE);
  pthread_sigmask (SIG_BLOCK, &pipe_set, &old);
  int r = write_all (fd, buf, len);
  int saved = errno;
  if (r < 0 && saved == EPIPE && !was_pending)
    {
      struct timespec zero = { 0, 0 };
      sigtimedwait (&pipe_set, NULL, &zero);
    }
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  errno = saved;
  return r;
}

/* Read git's answer until it closes its stdout, at most ANSWER_MAX bytes,
 * before the deadline. */
static int
read_answer (int fd, int64_t deadline, char *buf, size_t *len, hv_error **err)
{
  if (hv_read_until_eof (fd, deadline, buf, ANSWER_MAX, len) == 0)
    return 0;
  if (errno == ETIMEDOUT)
    return hv_error_set (err, ETIMEDOUT, "git credential fill");
  if (errno == EMSGSIZE)
    return hv_error_set (err, 0, "git credential fill: answer over %d bytes", ANSWER_MAX);
  return hv_error_set (err, errno, "git credential fill: read");
}

/* In the child before exec: every signal's disposition back to the
 * default.  An ignored signal stays ignored across exec, and whoever
 * started haven may have ignored some (nohup: SIGHUP; a shell's
 * background job: SIGINT and SIGQUIT), as the monitor ignores SIGPIPE.
 * Through the system call, with an all-zero action (SIG_DFL, no flags,
 * an empty mask, whatever the architecture's layout), because glibc's
 * sigaction refuses its own two real-time signals; only system calls
 * here, after fork in a process with threads. */
static void
reset_dispositions (void)
{
  unsigned long action[8] = { 0 };
  for (int sig = 1; sig <= 64; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      syscall (SYS_rt_sigaction, sig, action, NULL, (size_t) 8);
}

static pid_t
spawn (const char *git, int in_fd, int out_fd, char **env)
{
  pid_t pid = fork ();
  if (pid != 0)
    return pid;
  /* Its own session: no terminal to prompt on, and one process group to
   * kill with the helpers git started when the deadline passes. */
  setsid ();
  /* git and the user's helpers start with signals as a program expects
   * them, whatever the caller's thread had (the monitor's service threads
   * block every signal, and the monitor ignores SIGPIPE). */
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  reset_dispositions ();
  int null_fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  if (dup2 (in_fd, 0) < 0 || dup2 (out_fd, 1) < 0 || null_fd < 0 || dup2 (null_fd, 2) < 0 || chdir ("/") < 0)
    _exit (127);
  cloexec_from (3);
  char *argv[] = { (char *) git, (char *) "credential", (char *) "fill", NULL };
  execvpe (git, argv, env);
  _exit (127);
}

int
hv_git_credential_fill (const char *git, const hv_git_credential *req, int timeout_ms, char **username,
                        char **password, hv_error **err)
{
  if (!req->protocol || !req->host)
    return hv_error_set (err, 0, "git credential fill: the request has no protocol or host");
  /* The parser lets no line break through; a caller that built the
   * request itself must not add a key to what git reads either. */
  if (strpbrk (req->protocol, "\r\n") || strpbrk (req->host, "\r\n") || (req->path && strpbrk (req->path, "\r\n")))
    return hv_error_set (err, 0, "git credential fill: a line break in the request");
  cleanup_free char *request = xasprintf ("protocol=%s\nhost=%s\n%s%s%s\n", req->protocol, req->host,
                                          req->path ? "path=" : "", req->path ? req->path : "", req->path ? "\n" : "");
  int in[2], out[2];
  if (pipe2 (in, O_CLOEXEC) < 0)
    return hv_error_set (err, errno, "git credential fill: pipe");
  if (pipe2 (out, O_CLOEXEC) < 0)
    {
      int saved = errno;
      close (in[0]);
      close (in[1]);
      return hv_error_set (err, saved, "git credential fill: pipe");
    }
  cleanup_free char **env = child_env ();
  pid_t pid = spawn (git ? git : "git", in[0], out[1], env);
  int spawn_errno = errno;
  close (in[0]);
  close (out[1]);
  cleanup_close int to_git = in[1];
  cleanup_close int from_git = out[0];
  if (pid < 0)
    return hv_error_set (err, spawn_errno, "git credential fill: fork");

  int64_t deadline = hv_now_ms () + timeout_ms;
  char buf[ANSWER_MAX];
  size_t len = 0;
  int r = 0;
  /* A write error (git gone) shows in its exit status below. */
  (void) write_request (to_git, request, strlen (request));
  close (steal_fd (&to_git));
  r = read_answer (from_git, deadline, buf, &len, err);
  /* Whatever happened, nothing git started outlives the call. */
  kill (-pid, SIGKILL);
  int status;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (r < 0)
    {
      explicit_bzero (buf, sizeof buf);
      return -1;
    }
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      explicit_bzero (buf, sizeof buf);
      return hv_error_set (err, 0, "git credential fill: git found no credential (exit %d)",
                           WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
    }
  hv_git_credential answer = { 0 };
  cleanup_error hv_error *parse_err = NULL;
  r = hv_git_credential_parse (buf, len, &answer, &parse_err);
  explicit_bzero (buf, sizeof buf);
  if (r < 0)
    return hv_error_set (err, 0, "git credential fill: unreadable answer");
  if (!answer.username || !answer.password)
    {
      hv_git_credential_clear (&answer);
      return hv_error_set (err, 0, "git credential fill: the answer has no username or password");
    }
  *username = steal_pointer (&answer.username);
  *password = steal_pointer (&answer.password);
  hv_git_credential_clear (&answer);
  return 0;
}
