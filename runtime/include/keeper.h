/* The keeper: a sandbox whose init, instead of executing the config's
 * process, stays in the sandbox (pid 1 of its pid namespace, with every
 * restriction the config gives its process already applied: namespaces,
 * mounts, cgroup, rlimits, capabilities, no_new_privs, Landlock, seccomp)
 * and starts commands on request.  A command is a fork of the keeper
 * followed by execve: it inherits exactly what the config's process would
 * have had; only argv, the environment, the cwd and the stdio differ.
 * This is what lets `haven serve` keep sandboxes made ahead of time (the
 * pool) and start a command in one of them in well under a millisecond.
 *
 * The caller asks for it with hv_create_opts.keeper_fd: the sandbox's
 * end of a SOCK_SEQPACKET socketpair (above 2; init keeps it, every
 * command is started without it).  The caller keeps the other end and
 * speaks the protocol below on it.  The keeper ends (and with it, pid 1
 * gone, every process of the sandbox) when the caller's end closes.
 *
 * The keeper runs inside the sandbox: the commands it starts run as the
 * same user in the same namespaces, so it must be assumed compromised
 * once a command ran.  Everything it sends is hostile input to the
 * caller (hv_keeper_event_read checks it; it never accepts an fd). */
#ifndef HAVEN_KEEPER_H
#define HAVEN_KEEPER_H

#include <stdint.h>

#include "error.h"

/* The largest request (argv, environment and cwd together, with their
 * NULs): what the service's API accepts must fit. */
#define HV_KEEPER_MAX_REQUEST (128 * 1024)

struct hv_keeper_spawn
{
  uint32_t run_id;    /* the caller's name for this command, echoed in its events */
  char *const *argv;  /* not empty; argv[0] is resolved against the PATH in envp, in cwd */
  char *const *envp;  /* the whole environment the command gets */
  const char *cwd;    /* absolute, inside the sandbox; NULL: the config's process.cwd */
  int stdio[3];       /* stdin, stdout, stderr for the command (sent with SCM_RIGHTS; the caller keeps its copies) */
};

/* Send one spawn request.  The command runs in a new session (setsid), so
 * hv_keeper_signal reaches it and every process it started that stayed
 * in its process group.  A command that cannot be executed exits 127
 * (not found) or 126 (refused: Landlock's allow_exec, a noexec mount, not
 * a program) after writing "haven: exec ARGV0: REASON" to its stderr, as
 * a shell does. */
int hv_keeper_spawn (int keeper_fd, const struct hv_keeper_spawn *req, hv_error **err);

/* Send a signal to command run_id's process group. */
int hv_keeper_signal (int keeper_fd, uint32_t run_id, int sig, hv_error **err);

enum hv_keeper_event_kind
{
  HV_KEEPER_STARTED = 1, /* the fork is made; pid is the command's pid in the sandbox */
  HV_KEEPER_EXITED = 2,  /* status as a shell reports it: 0-255, 128+N for signal N; without a
                          * STARTED before it when the keeper could not fork (126, the reason on
                          * the command's stderr) */
};

struct hv_keeper_event
{
  enum hv_keeper_event_kind kind;
  uint32_t run_id;
  int32_t pid;    /* STARTED */
  int32_t status; /* EXITED */
};

/* Read one event (keeper_fd may be non-blocking: returns 0 with no event
 * when none is ready, 1 with *ev filled, -1 with *err on a malformed
 * message or when the keeper is gone: "keeper ended"). */
int hv_keeper_event_read (int keeper_fd, struct hv_keeper_event *ev, hv_error **err);

#endif
