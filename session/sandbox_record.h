/* What a sandbox's maker (a child of the caller: sandbox.h) hands the
 * caller over their socket: a header with the descriptors (SCM_RIGHTS),
 * then the record's strings.  Or the maker's error.  The maker is the
 * caller's own fork, but it ran the policy's steps: the record is read
 * strictly all the same (lengths bounded, every string terminated). */
#ifndef HAVEN_SANDBOX_RECORD_H
#define HAVEN_SANDBOX_RECORD_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "error.h"
#include "oci_spec.h"

enum hv_sandbox_record_fd
{
  HV_SBR_KEEPER,    /* the caller's end of the keeper's socket */
  HV_SBR_PIDFD,     /* init's pidfd */
  HV_SBR_WORKSPACE, /* O_PATH of the workspace */
  HV_SBR_AUDIT_LOG, /* the trail's log, or -1 */
  HV_SBR_HOME_LOCK, /* the home state's lock, or -1 */
  HV_SBR_PASTA,     /* pasta's pidfd, or -1 */
  HV_SBR_NFDS
};

struct hv_sandbox_record
{
  bool ok;
  /* ok == false */
  char *error;
  int errno_code, exit_status;
  /* ok == true */
  char *id, *state_root, *bundle, *workspace, *policy_name, *config, *audit_socket;
  char *home_state; /* the copy-on-write home layers' directory, or "" */
  char *audit_log;  /* the trail's path as the maker opened it, or "" (none) */
  char *run;        /* the sandbox's run id, its records' "run" (audit_trail.h) */
  /* What the denials' reader says of a refused system call: the policy's
   * syscalls.profile and syscalls.deny. */
  char *syscall_profile;
  oci_strv syscall_deny;
  bool shell; /* a shell may run: no process.block_shell, no allow_exec without one */
  bool scratch, refuse_project_links;
  uint32_t timeout_s; /* the policy's time limit (run.timeout), 0: none */
  pid_t init_pid, audit_listener, pasta_pid;
  struct timespec audit_start;
  oci_strv env;       /* the config's process.env */
  oci_strv env_pass, env_deny; /* the policy's env rules */
  oci_strv env_fixed; /* names the policy or haven set: a request does not replace them */
  int fds[HV_SBR_NFDS];
};

void hv_sandbox_record_init (struct hv_sandbox_record *r);
/* Frees the strings and closes the descriptors left in it. */
void hv_sandbox_record_release (struct hv_sandbox_record *r);
int hv_sandbox_record_send (int sock, const struct hv_sandbox_record *r, hv_error **err);
/* Blocks until the whole record is read (-1 with *err when the maker
 * ended without sending one, or sent something malformed). */
int hv_sandbox_record_recv (int sock, struct hv_sandbox_record *r, hv_error **err);
#endif
