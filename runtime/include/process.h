/* Turning the (forked, namespaced) runtime process into the container
 * process: shared by the container's init and by `exec`. */
#ifndef HAVEN_PROCESS_H
#define HAVEN_PROCESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci_spec.h"

struct hv_process_ctx
{
  const oci_process *process;
  const oci_seccomp *seccomp; /* the container's profile, NULL if none */
  int procfd;                 /* trusted procfs instance, -1 if none */
  int preserve_fds;           /* fds 3 .. 3+N-1 survive exec */
  bool userns;                /* inside a user namespace */
  bool setgroups_denied;      /* /proc/PID/setgroups is "deny" */
  int seccomp_listener;       /* connected socket for the notify fd, or -1 */
  const char *state_json;     /* for the seccomp listener message */
  const char *landlock;       /* run.haven.landlock rules, NULL if none */
  bool landlock_log;          /* a trail reads Landlock's refusals (landlock_audit.h) */
  const char *seccomp_extra;  /* run.haven.seccomp: a second profile stacked on the first, NULL if none */
  oci_seccomp *seccomp_extra_parsed;
  pid_t host_pid;             /* our pid as the runtime sees it (0: unknown) */
  char *exe;                  /* resolved executable */
  char **envp;                /* final environment */
  bool seccomp_loaded;
  bool keeper;                /* keeper mode (keeper.h): process.args is not resolved, nor executed */
};

/* Everything that can fail in a way the caller should see at create time:
 * resolve the executable, rlimits, AppArmor, personality, scheduling,
 * seccomp (early, when no_new_privs is off: loading it needs CAP_SYS_ADMIN),
 * user and groups, capabilities, cwd. */
int hv_process_prepare (struct hv_process_ctx *ctx, hv_error **err);
/* Last steps before the program: no_new_privs, Landlock, the stacked
 * seccomp profile, the config's (if not loaded yet), umask, every fd the
 * container must not inherit (from 3 + preserve_fds) made close-on-exec.
 * After it, the process is the config's process in all but its program
 * (what the keeper serves requests as). */
int hv_process_finish (struct hv_process_ctx *ctx, hv_error **err);
/* hv_process_finish, then execve.  Returns only on error. */
int hv_process_exec (struct hv_process_ctx *ctx, hv_error **err);
/* argv[0] as execve will find it: a name with a '/' as it is, any other
 * through the PATH in envp (a default PATH without one), relative to the
 * cwd.  Returns 0 with *out (a new string), or ENOENT (not found),
 * EACCES with *refused (no one may execute it: the name, or the first
 * candidate in PATH that was not executable), EISDIR, or stat's error
 * (*refused NULL). */
int hv_process_find_exe (const char *name, char *const *envp, char **out, char **refused);
void hv_process_ctx_free (struct hv_process_ctx *ctx);

/* Is AppArmor enabled on this host? */
bool hv_apparmor_enabled (void);
/* One line of an /etc/passwd (modified in place; the strings point into
 * it): false when it is not a well-formed entry. */
struct hv_passwd_entry
{
  const char *name, *home;
  uint32_t uid, gid;
};
bool hv_passwd_parse (char *line, struct hv_passwd_entry *e);
/* The home field of one passwd line (modified in place) when its uid
 * field is exactly uid, else NULL (a new string). */
char *hv_passwd_home (char *line, uid_t uid);
/* A private procfs instance for the current pid namespace (fd of its
 * root), so writes to /proc files cannot be redirected by the container's
 * /proc (CVE-2019-16884, CVE-2025-52881). */
int hv_open_private_procfs (hv_error **err);
/* In a user namespace: has setgroups(2) been disabled ("deny")? */
bool hv_setgroups_denied (int procfd);
#endif
