/* Can this caller make the sandbox's namespaces here?  Tried the way
 * `haven run` makes them, in a throwaway child: what a container's
 * seccomp profile, a missing capability or a sysctl refuses shows up as
 * the step that failed, with the kernel's answer. */
#include "config.h"
#include "host_probe.h"
#include "host_probe_child.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "network.h"
#include "utils.h"

/* The namespaces a sandbox gets besides the user namespace
 * (policy_compile.c's list, with the network namespace of every policy
 * but network: open). */
#define SANDBOX_NS_FLAGS (CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWNET)

/* The child's answer: the failed step, in the pipe, and exit status 1. */
static _Noreturn void
child_fail (int fd, const char *fmt, ...)
{
  char buf[256];
  int e = errno;
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (buf, sizeof (buf), fmt, ap);
  va_end (ap);
  if (n > 0 && (size_t) n < sizeof (buf))
    snprintf (buf + n, sizeof (buf) - (size_t) n, ": %s", strerror (e));
  if (write_all (fd, buf, strlen (buf)) < 0)
    _exit (2);
  _exit (1);
}

static int
write_proc_self (const char *file, const char *text)
{
  char path[64];
  snprintf (path, sizeof (path), "/proc/self/%s", file);
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  int r = write_all (fd, text, strlen (text));
  int e = errno;
  close (fd);
  errno = e;
  return r;
}

/* A new user namespace mapping the caller to itself, as `haven run` maps
 * it (the setgroups "deny" an unprivileged gid map needs). */
static void
enter_user_namespace (int fd, uid_t uid, gid_t gid)
{
  char map[64];
  if (unshare (CLONE_NEWUSER) < 0)
    child_fail (fd, "clone(CLONE_NEWUSER)");
  if (write_proc_self ("setgroups", "deny") < 0 && errno != ENOENT)
    child_fail (fd, "write /proc/self/setgroups");
  snprintf (map, sizeof (map), "%u %u 1\n", (unsigned) uid, (unsigned) uid);
  if (write_proc_self ("uid_map", map) < 0)
    child_fail (fd, "write uid_map");
  snprintf (map, sizeof (map), "%u %u 1\n", (unsigned) gid, (unsigned) gid);
  if (write_proc_self ("gid_map", map) < 0)
    child_fail (fd, "write gid_map");
}

/* In the new pid namespace's first process: the mounts the sandbox's
 * setup makes first (a tmpfs, a procfs of the new pid namespace) and its
 * loopback. */
static _Noreturn void
in_pid_namespace (int fd, bool loopback)
{
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    child_fail (fd, "make the mounts private");
  struct stat st;
  const char *dir = stat ("/tmp", &st) == 0 && S_ISDIR (st.st_mode) ? "/tmp" : "/";
  if (mount ("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=64k") < 0)
    child_fail (fd, "mount tmpfs on %s", dir);
  char proc[64];
  snprintf (proc, sizeof (proc), "%s/proc", strcmp (dir, "/") == 0 ? "" : dir);
  if (mkdir (proc, 0700) < 0)
    child_fail (fd, "mkdir %s on the tmpfs", proc);
  if (mount ("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    child_fail (fd, "mount proc (of the new pid namespace)");
  hv_error *err = NULL;
  if (loopback && hv_net_loopback_up (&err) < 0)
    {
      /* The message has the kernel's answer already. */
      if (write_all (fd, err->msg, strlen (err->msg)) < 0)
        _exit (2);
      _exit (1);
    }
  _exit (0);
}

enum probe_kind
{
  PROBE_FULL,      /* every step a start takes */
  PROBE_USER_ONLY, /* a user namespace */
  PROBE_QUICK,     /* the steps that fail first, without the costly ones */
};

/* Whether this process's effective set holds capability cap (as root:
 * a container's default set lacks CAP_SYS_ADMIN and CAP_NET_ADMIN). */
static bool
has_effective_cap (unsigned cap)
{
  FILE *f = fopen ("/proc/self/status", "re");
  char line[256];
  unsigned long long eff = 0;
  bool found = false;
  while (f && fgets (line, sizeof (line), f))
    if (sscanf (line, "CapEff: %llx", &eff) == 1)
      {
        found = true;
        break;
      }
  if (f)
    fclose (f);
  return found && (eff >> cap) & 1;
}

/* The quick probe: the full steps but the one that costs most, a network
 * namespace and its loopback (about 2 ms of the 3-5 here): the user
 * namespace and the unshare a container's seccomp profile refuses, the
 * mounts (a procfs of a new pid namespace is what a container's masked
 * /proc refuses a user).  As root the loopback's need is read off the
 * capability sets instead: root makes no user namespace, so the new
 * network namespace's loopback needs CAP_NET_ADMIN of its own (an
 * ordinary user has every capability in the user namespace above). */
static _Noreturn void
quick_probe_child (int fd, uid_t uid, gid_t gid)
{
  if (uid != 0)
    enter_user_namespace (fd, uid, gid);
  if (unshare (SANDBOX_NS_FLAGS & ~CLONE_NEWNET) < 0)
    child_fail (fd, "unshare(mount, pid, network, ipc, uts, cgroup namespaces)");
  errno = EPERM;
  if (uid == 0 && !has_effective_cap (12 /* CAP_NET_ADMIN */))
    child_fail (fd, "bring up loopback: no CAP_NET_ADMIN");
  pid_t pid = fork ();
  if (pid < 0)
    child_fail (fd, "fork into the new pid namespace");
  if (pid == 0)
    in_pid_namespace (fd, false);
  int status = 0;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      child_fail (fd, "wait");
  _exit (WIFEXITED (status) ? WEXITSTATUS (status) : 1);
}

static _Noreturn void
probe_child (int fd, enum probe_kind kind, uid_t uid, gid_t gid)
{
  if (kind == PROBE_QUICK)
    quick_probe_child (fd, uid, gid);
  bool user_only = kind == PROBE_USER_ONLY;
  if (uid != 0 || user_only)
    enter_user_namespace (fd, uid, gid);
  if (user_only)
    _exit (0);
  if (unshare (SANDBOX_NS_FLAGS) < 0)
    child_fail (fd, "unshare(mount, pid, network, ipc, uts, cgroup namespaces)");
  pid_t pid = fork ();
  if (pid < 0)
    child_fail (fd, "fork into the new pid namespace");
  if (pid == 0)
    in_pid_namespace (fd, true);
  int status = 0;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      child_fail (fd, "wait");
  _exit (WIFEXITED (status) ? WEXITSTATUS (status) : 1);
}

struct probe_args
{
  enum probe_kind kind;
  uid_t uid;
  gid_t gid;
};

static void
probe_entry (int fd, void *data)
{
  const struct probe_args *a = data;
  probe_child (fd, a->kind, a->uid, a->gid);
}

static void
run_probe (hv_probe *out, enum probe_kind kind)
{
  struct probe_args a = { kind, geteuid (), getegid () };
  hv_probe_in_child (out, probe_entry, &a);
}

void
hv_probe_namespaces (hv_probe *out)
{
  run_probe (out, PROBE_FULL);
}

void
hv_probe_namespaces_quick (hv_probe *out)
{
  run_probe (out, PROBE_QUICK);
}

void
hv_probe_user_namespace (hv_probe *out)
{
  run_probe (out, PROBE_USER_ONLY);
}
