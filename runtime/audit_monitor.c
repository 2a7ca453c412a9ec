#include "config.h"
#include "audit_monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "json_gen.h"
#include "log.h"
#include "utils.h"

/* Every string of a record is valid UTF-8: a byte that does not start or
 * continue a well-formed sequence (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF) becomes U+FFFD.  yajl escapes the
 * control characters but passes bytes through unchecked, and a process
 * named "\xff\xfe" used to make a line that was not JSON.  Returns a new
 * string. */
char *
hv_audit_utf8_sanitize (const char *s)
{
  const unsigned char *in = (const unsigned char *) s;
  size_t len = strlen (s);
  unsigned char *out = xmalloc0 (3 * len + 1), *o = out;
  for (size_t i = 0; i < len;)
    {
      unsigned char c = in[i];
      size_t need = 0;
      unsigned char lo = 0x80, hi = 0xbf;
      if (c < 0x80)
        {
          *o++ = c;
          i++;
          continue;
        }
      if (c >= 0xc2 && c <= 0xdf)
        need = 1;
      else if (c >= 0xe0 && c <= 0xef)
        {
          need = 2;
          lo = c == 0xe0 ? 0xa0 : 0x80;
          hi = c == 0xed ? 0x9f : 0xbf;
        }
      else if (c >= 0xf0 && c <= 0xf4)
        {
          need = 3;
          lo = c == 0xf0 ? 0x90 : 0x80;
          hi = c == 0xf4 ? 0x8f : 0xbf;
        }
      bool ok = need > 0 && i + need < len;
      for (size_t k = 1; ok && k <= need; k++)
        {
          unsigned char b = i + k < len ? in[i + k] : 0;
          unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xbf;
          ok = b >= l && b <= h;
        }
      if (ok)
        {
          memcpy (o, in + i, need + 1);
          o += need + 1;
          i += need + 1;
        }
      else
        {
          memcpy (o, "\xef\xbf\xbd", 3);
          o += 3;
          i++;
        }
    }
  *o = '\0';
  return (char *) out;
}

static void
put_str (yajl_gen g, const char *s)
{
  cleanup_free char *clean = hv_audit_utf8_sanitize (s ? s : "");
  jg_str (g, clean);
}

static void
put_kv (yajl_gen g, const char *key, const char *value)
{
  jg_str (g, key);
  put_str (g, value);
}

/* Write the record as one line; returns the bytes written. */
static size_t
emit (int fd, yajl_gen g)
{
  yajl_gen_map_close (g);
  size_t n = hv_write_json_line (fd, g);
  yajl_gen_free (g);
  return n;
}

static yajl_gen
record (const char *event, const char *policy)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  cleanup_free char *now = now_rfc3339 ();
  yajl_gen_map_open (g);
  put_kv (g, "time", now);
  put_kv (g, "event", event);
  put_kv (g, "policy", policy);
  return g;
}

/* What the listener left out, for the "dropped" summary. */
struct dropped_kind
{
  uint32_t arch;
  int nr;
  uint64_t count;
};

struct audit_limit
{
  double tokens;          /* token bucket: HV_AUDIT_RATE per second, HV_AUDIT_BURST at most */
  struct timespec last;   /* last refill */
  uint64_t written;       /* bytes this run */
  bool capped;            /* HV_AUDIT_MAX_BYTES reached: only the final summary */
  uint64_t dropped;       /* since the last summary */
  uint64_t dropped_total; /* this run, for the final summary */
  struct dropped_kind kinds[HV_AUDIT_MAX_KINDS];
  size_t n_kinds;
  uint64_t other; /* denials of kinds past HV_AUDIT_MAX_KINDS */
};

static double
elapsed (const struct timespec *a, const struct timespec *b)
{
  return (double) (b->tv_sec - a->tv_sec) + (double) (b->tv_nsec - a->tv_nsec) / 1e9;
}

static void
count_dropped (struct audit_limit *l, const struct seccomp_notif *req)
{
  l->dropped++;
  l->dropped_total++;
  for (size_t i = 0; i < l->n_kinds; i++)
    if (l->kinds[i].arch == req->data.arch && l->kinds[i].nr == req->data.nr)
      {
        l->kinds[i].count++;
        return;
      }
  if (l->n_kinds < HV_AUDIT_MAX_KINDS)
    l->kinds[l->n_kinds++] = (struct dropped_kind) { req->data.arch, req->data.nr, 1 };
  else
    l->other++;
}

/* {"event":"dropped","count":N,"syscalls":{"ptrace":N,...}}: the denials
 * not recorded one by one since the last summary.  "final" marks the
 * summary written after the size cap, when the sandbox is gone. */
static void
write_dropped (int log_fd, const char *policy, struct audit_limit *l, bool final)
{
  if (l->dropped == 0)
    return;
  yajl_gen g = record ("dropped", policy);
  jg_str (g, "count");
  yajl_gen_integer (g, (long long) l->dropped);
  jg_str (g, "reason");
  jg_str (g, l->capped ? "size limit" : "rate limit");
  if (final)
    {
      jg_str (g, "total_dropped");
      yajl_gen_integer (g, (long long) l->dropped_total);
    }
  jg_str (g, "syscalls");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < l->n_kinds; i++)
    {
      cleanup_free char *name = seccomp_syscall_resolve_num_arch (l->kinds[i].arch, l->kinds[i].nr);
      char nr[32];
      snprintf (nr, sizeof (nr), "%d", l->kinds[i].nr);
      put_str (g, name ? name : nr);
      yajl_gen_integer (g, (long long) l->kinds[i].count);
    }
  if (l->other)
    {
      jg_str (g, "other");
      yajl_gen_integer (g, (long long) l->other);
    }
  yajl_gen_map_close (g);
  l->written += emit (log_fd, g);
  l->dropped = 0;
  l->n_kinds = 0;
  l->other = 0;
}

/* May a denial be recorded now?  Refills the bucket. */
static bool
take_token (struct audit_limit *l)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  l->tokens += elapsed (&l->last, &now) * HV_AUDIT_RATE;
  if (l->tokens > HV_AUDIT_BURST)
    l->tokens = HV_AUDIT_BURST;
  l->last = now;
  if (l->tokens < 1)
    return false;
  l->tokens -= 1;
  return true;
}

static void
record_denial (int log_fd, const char *policy, const struct seccomp_notif *req, struct audit_limit *l)
{
  if (l->capped || !take_token (l))
    {
      count_dropped (l, req);
      return;
    }
  /* The summary of what was dropped comes before the next record. */
  write_dropped (log_fd, policy, l, false);
  yajl_gen g = record ("denied", policy);
  cleanup_free char *name = seccomp_syscall_resolve_num_arch (req->data.arch, req->data.nr);
  char nr[32];
  snprintf (nr, sizeof (nr), "%d", req->data.nr);
  put_kv (g, "syscall", name ? name : nr);
  jg_str (g, "pid");
  yajl_gen_integer (g, req->pid);
  /* The process names itself: informative only, and any bytes at all. */
  char path[64], comm[64] = "";
  snprintf (path, sizeof (path), "/proc/%u/comm", req->pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0)
    {
      ssize_t n = read (fd, comm, sizeof (comm) - 1);
      comm[n > 0 ? n : 0] = '\0';
      comm[strcspn (comm, "\n")] = '\0';
      close (fd);
    }
  put_kv (g, "comm", comm);
  jg_str (g, "args");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < 6; i++)
    {
      char hex[24];
      snprintf (hex, sizeof (hex), "0x%llx", (unsigned long long) req->data.args[i]);
      jg_str (g, hex);
    }
  yajl_gen_array_close (g);
  l->written += emit (log_fd, g);
  /* Past the cap only the final summary is written (bounded too: one
   * entry per distinct system call, at most HV_AUDIT_MAX_KINDS). */
  if (l->written >= HV_AUDIT_MAX_BYTES)
    l->capped = true;
}

static int
receive_fd (int sock)
{
  char data[65536];
  struct iovec iov = { data, sizeof (data) };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof (ctl.buf) };
  if (recvmsg (sock, &m, MSG_CMSG_CLOEXEC) <= 0)
    return -1;
  struct cmsghdr *c = CMSG_FIRSTHDR (&m);
  if (c == NULL || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
    return -1;
  int fd;
  memcpy (&fd, CMSG_DATA (c), sizeof (fd));
  return fd;
}

/* The listener process: answers every notification with EPERM after
 * recording it, until no process uses the filter any more (POLLHUP). */
static void __attribute__ ((noreturn))
listener_main (int listen_fd, int log_fd, const char *policy, const char *sock_path, pid_t parent)
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
  int conn = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC);
  close (listen_fd);
  /* Connected: the socket has served its one use (and its absence tells
   * haven the listener has a container to wait for). */
  unlink (sock_path);
  int notify_fd = conn < 0 ? -1 : receive_fd (conn);
  if (notify_fd < 0)
    _exit (1);
  close (conn);
  struct seccomp_notif_sizes sizes;
  if (syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
    _exit (1);
  struct seccomp_notif *req = xmalloc0 (sizes.seccomp_notif > sizeof (*req) ? sizes.seccomp_notif : sizeof (*req));
  struct seccomp_notif_resp *resp
      = xmalloc0 (sizes.seccomp_notif_resp > sizeof (*resp) ? sizes.seccomp_notif_resp : sizeof (*resp));
  struct audit_limit limit = { .tokens = HV_AUDIT_BURST };
  clock_gettime (CLOCK_MONOTONIC, &limit.last);
  for (;;)
    {
      struct pollfd pfd = { .fd = notify_fd, .events = POLLIN };
      /* With drops pending and the rate limit (not the cap) the reason,
       * summarize them within a second even if no denial follows. */
      int timeout = limit.dropped && !limit.capped ? 1000 : -1;
      int ready = poll (&pfd, 1, timeout);
      if (ready < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (ready == 0)
        {
          write_dropped (log_fd, policy, &limit, false);
          continue;
        }
      if (!(pfd.revents & POLLIN))
        break; /* POLLHUP: every process using the filter has exited */
      memset (req, 0, sizes.seccomp_notif);
      if (ioctl (notify_fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
        {
          if (errno == EINTR || errno == ENOENT)
            continue;
          break;
        }
      /* Recorded or not, every denied call is answered EPERM below. */
      record_denial (log_fd, policy, req, &limit);
      memset (resp, 0, sizes.seccomp_notif_resp);
      resp->id = req->id;
      resp->error = -EPERM;
      /* ENOENT: the caller died meanwhile; nothing to answer. */
      ioctl (notify_fd, SECCOMP_IOCTL_NOTIF_SEND, resp);
    }
  write_dropped (log_fd, policy, &limit, limit.capped);
  _exit (0);
}

int
hv_audit_begin (const char *path, const char *policy_name, const char *bundle, char **cmd, const char *project,
                struct hv_audit *a, hv_error **err)
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
    listener_main (listen_fd, log_fd, policy_name, sock_path, parent);

  a->listener = pid;
  a->socket_path = sock_path;
  sock_path = NULL;
  a->policy_name = xstrdup (policy_name);
  a->log_fd = log_fd;
  log_fd = -1;
  clock_gettime (CLOCK_MONOTONIC, &a->start);

  yajl_gen g = record ("start", a->policy_name);
  put_kv (g, "project", project);
  jg_str (g, "command");
  yajl_gen_array_open (g);
  for (size_t i = 0; cmd[i]; i++)
    put_str (g, cmd[i]);
  yajl_gen_array_close (g);
  jg_str (g, "haven_pid");
  yajl_gen_integer (g, parent);
  emit (a->log_fd, g);
  return 0;
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
  yajl_gen g = record ("exit", a->policy_name);
  jg_str (g, "status");
  yajl_gen_integer (g, status);
  char seconds[32];
  snprintf (seconds, sizeof (seconds), "%.3f",
            (double) (end.tv_sec - a->start.tv_sec) + (double) (end.tv_nsec - a->start.tv_nsec) / 1e9);
  jg_str (g, "seconds");
  yajl_gen_number (g, seconds, strlen (seconds));
  emit (a->log_fd, g);
  close (a->log_fd);
  a->log_fd = -1;
  if (a->socket_path)
    unlink (a->socket_path);
  free (a->socket_path);
  free (a->policy_name);
  a->socket_path = a->policy_name = NULL;
}
