#include "config.h"
#include "run_leftovers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_systemd.h"
#include "container.h"
#include "container_monitor.h"
#include "create_record.h"
#include "runtime.h"
#include "log.h"
#include "signals.h"
#include "state.h"
#include "utils.h"

#define BUNDLE_PREFIX "haven-run-"
#define OWNER_FILE "owner"

int
hv_run_bundle_create (const char *parent, char **out, hv_error **err)
{
  cleanup_free char *tmpl = xasprintf ("%s/" BUNDLE_PREFIX "%d.XXXXXX", parent, getpid ());
  if (mkdtemp (tmpl) == NULL)
    return hv_error_set (err, errno, "create bundle directory %s", tmpl);
  unsigned long long start = 0;
  if (proc_start_time (getpid (), &start, NULL) < 0 || start == 0)
    {
      rmdir (tmpl);
      return hv_error_set (err, 0, "cannot read this process's start time");
    }
  char owner[64];
  int n = snprintf (owner, sizeof (owner), "%d %llu\n", getpid (), start);
  if (write_file_atomic (tmpl, OWNER_FILE, owner, (size_t) n, err) < 0)
    {
      rmdir (tmpl);
      return -1;
    }
  *out = steal_pointer (&tmpl);
  return 0;
}

/* How deep a bundle's directories go: rootfs, git/ (the git
 * credential broker's directory of run_credentials.c) and what a future part adds below. */
#define BUNDLE_MAX_DEPTH 4

/* Unlink the entries of a directory, not following anything: files,
 * sockets and links are unlinked themselves; directories are emptied
 * the same way and removed, never across a mount (a mount point left by
 * a killed run stays, with what is under it) and never deeper than
 * max_depth.  A bundle can hold secrets (config.json's environment,
 * git/'s token file): a killed run's must not stay. */
/* A directory of ours, opened to be emptied.  One the sandbox made
 * unreadable or unwritable (chmod 000, 500: it runs as our uid when
 * rootless) is given rwx back first, never through a link: the chmod goes
 * through our O_PATH fd of it. */
static int
open_to_empty (int dirfd, const char *name)
{
  int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno != EACCES)
    return -1;
  cleanup_close int p = fd < 0 ? openat (dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  struct stat st;
  if (fstat (fd >= 0 ? fd : p, &st) < 0 || st.st_uid != geteuid () || (st.st_mode & 0700) == 0700)
    return fd;
  char self[64];
  snprintf (self, sizeof (self), "/proc/self/fd/%d", fd >= 0 ? fd : p);
  if (chmod (self, (st.st_mode & 07777) | 0700) < 0 || fd >= 0)
    return fd;
  return openat (p, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void
empty_dir (int dirfd, int depth, int max_depth)
{
  struct stat here;
  if (fstat (dirfd, &here) < 0)
    return;
  DIR *d = fdopendir (dup (dirfd));
  if (d == NULL)
    return;
  struct dirent *de;
  while ((de = readdir (d)))
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (unlinkat (dirfd, de->d_name, 0) == 0 || (errno != EISDIR && errno != EPERM))
        continue;
      if (depth < max_depth)
        {
          cleanup_close int sub = open_to_empty (dirfd, de->d_name);
          struct stat st;
          if (sub >= 0 && fstat (sub, &st) == 0 && st.st_dev == here.st_dev)
            empty_dir (sub, depth + 1, max_depth);
        }
      unlinkat (dirfd, de->d_name, AT_REMOVEDIR);
    }
  closedir (d);
}

int
hv_remove_tree_at (int parentfd, const char *name, int max_depth)
{
  cleanup_close int fd = open_to_empty (parentfd, name);
  if (fd < 0)
    return errno == ENOENT ? 0 : -1;
  empty_dir (fd, 0, max_depth);
  return unlinkat (parentfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -1 : 0;
}

void
hv_run_bundle_remove (const char *bundle)
{
  hv_remove_tree_at (AT_FDCWD, bundle, BUNDLE_MAX_DEPTH);
}

/* Is the process that wrote owner (pid and start time) still running? */
static bool
owner_alive (int bundlefd, pid_t name_pid)
{
  char buf[64] = "";
  cleanup_close int fd = openat (bundlefd, OWNER_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  unsigned long long now = 0;
  if (proc_start_time (name_pid, &now, NULL) < 0)
    return true; /* cannot tell: keep it */
  if (now == 0)
    return false;
  if (fd < 0 || read (fd, buf, sizeof (buf) - 1) <= 0)
    return true; /* being created right now, or unknown: keep it */
  int pid = 0;
  unsigned long long start = 0;
  if (sscanf (buf, "%d %llu", &pid, &start) != 2 || pid != name_pid)
    return true;
  return start == now;
}

/* "haven-run-<pid>" followed by end or ".": the pid, else 0. */
static pid_t
run_pid (const char *name, bool bundle)
{
  if (strncmp (name, BUNDLE_PREFIX, strlen (BUNDLE_PREFIX)) != 0)
    return 0;
  char *end;
  errno = 0;
  long pid = strtol (name + strlen (BUNDLE_PREFIX), &end, 10);
  if (errno || pid <= 0 || pid > (1L << 22) || end == name + strlen (BUNDLE_PREFIX))
    return 0;
  if (bundle ? *end != '.' : *end != '\0')
    return 0;
  return (pid_t) pid;
}

static void
clean_bundles (const char *parent)
{
  cleanup_close int pfd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pfd < 0)
    return;
  DIR *d = fdopendir (dup (pfd));
  if (d == NULL)
    return;
  struct dirent *de;
  while ((de = readdir (d)))
    {
      pid_t pid = run_pid (de->d_name, true);
      if (pid == 0 || pid == getpid ())
        continue;
      cleanup_close int fd = openat (pfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      struct stat st;
      /* In a shared /tmp anyone can name a directory like ours. */
      if (fd < 0 || fstat (fd, &st) < 0 || st.st_uid != geteuid ())
        continue;
      if (owner_alive (fd, pid))
        continue;
      hv_log (HV_LOG_DEBUG, "removing the bundle %s/%s of a killed haven run", parent, de->d_name);
      empty_dir (fd, 0, BUNDLE_MAX_DEPTH);
      unlinkat (pfd, de->d_name, AT_REMOVEDIR);
    }
  closedir (d);
}

void
hv_leftover_containers_clean (const char *state_root, pid_t (*owner) (const char *name, void *data), void *data)
{
  DIR *d = opendir (state_root);
  if (d == NULL)
    return;
  struct hv_runtime rt = { .root = state_root };
  struct dirent *de;
  while ((de = readdir (d)))
    {
      pid_t pid = owner (de->d_name, data);
      if (pid == 0)
        continue;
      cleanup_free char *dir = xasprintf ("%s/%s", state_root, de->d_name);
      struct stat st;
      if (lstat (dir, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != geteuid () || hv_state_being_created (dir))
        continue;
      cleanup_container hv_container *c = NULL;
      cleanup_error hv_error *err = NULL;
      if (hv_container_load (&rt, de->d_name, &c, &err) < 0)
        continue;
      if (hv_container_status (c) == HV_STATUS_CREATING)
        {
          /* No state.json and no create holding the lock: killed before
           * the state was saved.  Its haven must be gone (the pid in the
           * name); what it made by then (monitor, init, cgroup) goes too. */
          unsigned long long start = 0;
          if (pid > 0 && (proc_start_time (pid, &start, NULL) < 0 || start != 0))
            continue;
          hv_log (HV_LOG_DEBUG, "removing what the haven run %s killed during create left", de->d_name);
          if (hv_monitor_stop (dir, &err) < 0 || hv_create_record_undo (dir, &err) < 0)
            hv_log (HV_LOG_WARNING, "leftovers of %s: %s", de->d_name, err->msg);
          else
            hv_state_remove (dir, NULL);
          continue;
        }
      /* Only a container whose init is gone (pid and start time, so a
       * reused pid does not count): a live one may be another run's.
       * Without an owner to ask (a killed service's sandboxes), the
       * caller knows it is a leftover: every process of it is killed. */
      if (hv_container_status (c) != HV_STATUS_STOPPED)
        {
          if (pid > 0)
            continue;
          cleanup_error hv_error *kerr = NULL;
          hv_container_kill (&rt, c, SIGKILL, true, &kerr);
          if (c->pid > 0)
            hv_wait_exit (c->pid, 5000);
        }
      hv_log (HV_LOG_DEBUG, "removing the state and cgroup of the killed haven run %s", de->d_name);
      /* Not hv_container_destroy: that would run the poststop hooks of
       * whatever config the stale state points at. */
      if (c->cgroup_path && c->cgroup_path[0]
          && (c->systemd_cgroup ? hv_systemd_destroy (c->cgroup_path, &err) : hv_cgroup_destroy (c->cgroup_path, &err))
                 < 0)
        {
          hv_log (HV_LOG_WARNING, "leftover cgroup of %s: %s", de->d_name, err->msg);
          continue;
        }
      if (hv_state_remove (c->dir, &err) < 0)
        hv_log (HV_LOG_WARNING, "%s", err->msg);
    }
  closedir (d);
}

/* "haven-run-<pid>" but this run's own. */
static pid_t
run_owner (const char *name, void *data)
{
  (void) data;
  pid_t pid = run_pid (name, false);
  return pid == getpid () ? 0 : pid;
}

void
hv_run_clean_leftovers (const char *parent, const char *state_root)
{
  clean_bundles (parent);
  hv_leftover_containers_clean (state_root, run_owner, NULL);
}
