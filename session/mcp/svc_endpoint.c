/* Where haven mcp finds the service (svc_client.h): the user's own, when
 * one answers on its socket, or a private `haven serve` started for this
 * session and stopped at its end. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <yajl/yajl_tree.h>

#include "run_leftovers.h"
#include "service_socket.h"
#include "svc_client.h"
#include "utils.h"

/* How long a probe waits for GET /v1/version: a live service answers it
 * at once (its loop never blocks); one that does not is as good as none. */
#define PROBE_TIMEOUT_MS 2000
/* How long a private service has to start answering: it cleans up what a
 * killed service of the same socket left, then listens (milliseconds). */
#define START_TIMEOUT_MS 20000
/* How long a private service has to stop after SIGTERM: it destroys its
 * sandboxes (kills their processes, removes bundles and workspaces). */
#define STOP_TIMEOUT_MS 15000
/* Depth to which the private directory is removed (its workspaces hold
 * whatever the sandbox made). */
#define REMOVE_DEPTH 64

/* Whether the service at e answers GET /v1/version with API version 1. */
static int
probe (const struct hv_svc_endpoint *e, hv_error **err)
{
  cleanup_free char *body = NULL;
  size_t len;
  if (hv_svc_request (e, "GET", "/v1/version", NULL, NULL, 0, PROBE_TIMEOUT_MS, &body, &len, NULL, err) < 0)
    return -1;
  char errbuf[128];
  yajl_val tree = yajl_tree_parse (body, errbuf, sizeof (errbuf));
  const char *path[] = { "api", NULL };
  yajl_val api = tree ? yajl_tree_get (tree, path, yajl_t_number) : NULL;
  bool ok = api && YAJL_IS_INTEGER (api) && YAJL_GET_INTEGER (api) == 1;
  if (tree)
    yajl_tree_free (tree);
  if (!ok)
    return hv_error_set (err, 0, "GET /v1/version: not an answer of API version 1");
  return 0;
}

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms (long ms)
{
  struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* A new 0700 directory for the private service: under $XDG_RUNTIME_DIR
 * (the user's own tmpfs) when there is one, else /tmp.  mkdtemp makes it
 * 0700 with a name no other user can have taken. */
static char *
private_dir_make (hv_error **err)
{
  const char *rt = getenv ("XDG_RUNTIME_DIR");
  if (rt && rt[0] == '/')
    {
      char *t = xasprintf ("%s/haven-mcp-XXXXXX", rt);
      if (mkdtemp (t))
        return t;
      free (t);
    }
  char *t = xstrdup ("/tmp/haven-mcp-XXXXXX");
  if (mkdtemp (t) == NULL)
    {
      hv_error_set (err, errno, "mkdtemp %s", t);
      free (t);
      return NULL;
    }
  return t;
}

static void
private_dir_remove (const char *dir)
{
  cleanup_free char *copy = xstrdup (dir);
  char *slash = strrchr (copy, '/');
  if (slash == NULL)
    return;
  *slash = '\0';
  cleanup_close int parent = open (slash == copy ? "/" : copy, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent >= 0)
    hv_remove_tree_at (parent, slash + 1, REMOVE_DEPTH);
}

/* In the child: the private service.  It dies with this process: SIGTERM
 * rather than SIGKILL, so that it destroys its sandboxes first (a killed
 * service's sandboxes end too, but leave their files for the next one). */
static void __attribute__ ((noreturn))
private_exec (const char *path, const char *argv0, const char *socket, const char *log, pid_t parent)
{
  if (prctl (PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) < 0 || getppid () != parent)
    _exit (127);
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_DFL);
  /* stdout is the MCP client's protocol stream: nothing else may reach
   * it; and its stderr carries only what the client says itself.  The
   * service's log goes to a file beside its socket, which a failed start
   * quotes. */
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  int logfd = open (log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (null < 0 || logfd < 0 || dup2 (null, 0) < 0 || dup2 (logfd, 1) < 0 || dup2 (logfd, 2) < 0)
    _exit (127);
#ifdef SYS_close_range
  /* No fd of this process (the MCP client's pipes, a held connection) is
   * the service's. */
  syscall (SYS_close_range, 3, ~0U, 0);
#endif
  execl (path, argv0, "serve", "--socket", socket, "--pool-size", "0", (char *) NULL);
  fprintf (stderr, "haven mcp: exec %s serve: %s\n", path, strerror (errno));
  _exit (127);
}

/* The private service's last log lines, for an error: what it said
 * before it failed to start. */
static void
log_tail_append (const char *log, hv_error **err)
{
  cleanup_close int fd = open (log, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  char buf[1024];
  off_t end = lseek (fd, 0, SEEK_END);
  off_t from = end > (off_t) sizeof (buf) - 1 ? end - (off_t) sizeof (buf) + 1 : 0;
  ssize_t n = pread (fd, buf, sizeof (buf) - 1, from);
  if (n <= 0)
    return;
  buf[n] = '\0';
  while (n > 0 && buf[n - 1] == '\n')
    buf[--n] = '\0';
  if (n > 0)
    hv_error_append (err, " (its log: %s)", buf);
}

static int
private_start (const char *haven_exe, struct hv_svc_endpoint *e, hv_error **err)
{
  e->private_dir = private_dir_make (err);
  if (e->private_dir == NULL)
    return -1;
  e->socket = xasprintf ("%s/haven.sock", e->private_dir);
  cleanup_free char *log = xasprintf ("%s/serve.log", e->private_dir);
  /* haven as it was invoked: a name without a '/' was found in PATH, and
   * the binary running now is the one meant (not whatever PATH finds
   * next); argv[0] stays the name, which is how the binary knows it is
   * `haven` (not haven-runc). */
  cleanup_free char *self = NULL;
  const char *path = haven_exe, *argv0 = haven_exe;
  if (haven_exe == NULL || strchr (haven_exe, '/') == NULL)
    {
      char buf[4096];
      ssize_t n = readlink ("/proc/self/exe", buf, sizeof (buf) - 1);
      if (n <= 0)
        return hv_error_set (err, errno, "readlink /proc/self/exe");
      buf[n] = '\0';
      path = self = xstrdup (buf);
      argv0 = haven_exe ? haven_exe : "haven";
    }
  pid_t parent = getpid ();
  pid_t pid = fork ();
  if (pid < 0)
    return hv_error_set (err, errno, "fork");
  if (pid == 0)
    private_exec (path, argv0, e->socket, log, parent);
  e->private_pid = pid;
  int64_t deadline = now_ms () + START_TIMEOUT_MS;
  for (;;)
    {
      int status;
      pid_t w = waitpid (pid, &status, WNOHANG);
      if (w == pid)
        {
          e->private_pid = 0;
          if (WIFEXITED (status))
            hv_error_set (err, 0, "the private haven serve exited with status %d", WEXITSTATUS (status));
          else
            hv_error_set (err, 0, "the private haven serve was killed by signal %d", WTERMSIG (status));
          log_tail_append (log, err);
          return -1;
        }
      hv_error *perr = NULL;
      if (probe (e, &perr) == 0)
        return 0;
      if (now_ms () >= deadline)
        {
          hv_error_wrap (&perr, "the private haven serve did not answer at %s within %d s", e->socket,
                         START_TIMEOUT_MS / 1000);
          log_tail_append (log, &perr);
          *err = perr;
          return -1;
        }
      hv_error_free (&perr);
      sleep_ms (25);
    }
}

int
hv_svc_endpoint_open (const char *haven_exe, const char *socket_path, struct hv_svc_endpoint *e, hv_error **err)
{
  *e = (struct hv_svc_endpoint) HV_SVC_ENDPOINT_INIT;
  e->socket = socket_path ? xstrdup (socket_path) : hv_service_default_socket ();
  hv_error *perr = NULL;
  if (probe (e, &perr) == 0)
    return 0;
  if (socket_path != NULL)
    {
      hv_error_wrap (&perr, "no haven serve answers at %s", socket_path);
      *err = perr;
      hv_svc_endpoint_close (e);
      return -1;
    }
  hv_error_free (&perr);
  free (e->socket);
  e->socket = NULL;
  if (private_start (haven_exe, e, err) < 0)
    {
      hv_svc_endpoint_close (e);
      return -1;
    }
  return 0;
}

void
hv_svc_endpoint_close (struct hv_svc_endpoint *e)
{
  if (e->private_pid > 0)
    {
      kill (e->private_pid, SIGTERM);
      int64_t deadline = now_ms () + STOP_TIMEOUT_MS;
      int status;
      pid_t w;
      while ((w = waitpid (e->private_pid, &status, WNOHANG)) == 0 && now_ms () < deadline)
        sleep_ms (20);
      if (w == 0)
        {
          kill (e->private_pid, SIGKILL);
          while (waitpid (e->private_pid, &status, 0) < 0 && errno == EINTR)
            ;
        }
      e->private_pid = 0;
    }
  if (e->private_dir)
    private_dir_remove (e->private_dir);
  free (e->private_dir);
  free (e->socket);
  *e = (struct hv_svc_endpoint) HV_SVC_ENDPOINT_INIT;
}
