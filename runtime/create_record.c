/* The "creating" record: until state.json exists, `delete` has nothing
 * else to go on.  A create killed after it cloned init and made the
 * cgroup (SIGKILL, the OOM killer, a crashed engine) would otherwise
 * leave the cgroup, and an init that blocks on the exec fifo for ever,
 * to a delete that only removed the directory.  Written before the
 * clone (no init yet: clone3 starts init in a cgroup made just before it)
 * and again right after it with init, always before the cgroup is made,
 * so that every cgroup create makes is named here first. */
#include "config.h"
#include "create_record.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_systemd.h"
#include "file_read.h"
#include "utils.h"

int
hv_create_record_write (const char *dir, pid_t pid, bool systemd, const char *cgroup_path, hv_error **err)
{
  unsigned long long start = 0;
  if (pid != 0 && (proc_start_time (pid, &start, NULL) < 0 || start == 0))
    return hv_error_set (err, 0, "container init exited during create");
  cleanup_free char *text = xasprintf ("%d %llu %d %s\n", pid, start, systemd ? 1 : 0, cgroup_path);
  return write_file_atomic (dir, HV_CREATE_RECORD_FILE, text, strlen (text), err);
}

/* SIGKILL pid if it still has the recorded start time: through a pidfd
 * opened before the check, so a reused pid is never signalled. */
static void
kill_recorded (pid_t pid, unsigned long long start)
{
  cleanup_close int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  unsigned long long now = 0;
  if (pidfd < 0 || proc_start_time (pid, &now, NULL) < 0 || now != start)
    return;
  syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
}

int
hv_create_record_undo (const char *dir, hv_error **err)
{
  cleanup_close int dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_free char *text = NULL;
  if (dirfd < 0 || read_file_at (dirfd, HV_CREATE_RECORD_FILE, &text, NULL) < 0)
    return 0; /* create died before it cloned init: no cgroup either */
  int pid = 0, systemd = 0, at = 0;
  unsigned long long start = 0;
  if (sscanf (text, "%d %llu %d %n", &pid, &start, &systemd, &at) != 3 || pid < 0)
    return hv_error_set (err, 0, "%s/%s: not a creating record", dir, HV_CREATE_RECORD_FILE);
  char *path = text + at;
  path[strcspn (path, "\n")] = '\0';
  if (pid > 0) /* 0: written before init was cloned */
    kill_recorded (pid, start);
  /* No cgroup recorded: haven run without limits (run.haven.cgroup).
   * Otherwise remove it, killing what it holds (init after a double fork,
   * processes of the hooks); hv_cgroup_destroy checks the path and
   * succeeds when create died before making it. */
  if (path[0] == '\0')
    return 0;
  return systemd ? hv_systemd_destroy (path, err) : hv_cgroup_destroy (path, err);
}
