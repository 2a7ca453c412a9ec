/* A sandbox that outlives one command: the policy's sandbox exactly as
 * `haven run` makes it (the same compile, trust checks, home state,
 * credentials, audit trail, egress, project guard), whose init is a keeper
 * (keeper.h) that starts commands on request.  `haven serve` holds these;
 * `haven run` shares the steps that make them.
 *
 * Making one takes milliseconds and forks, so the service does it in a
 * child process (the maker): hv_sandbox_make_start forks it, the child
 * makes the sandbox and sends what the caller needs to hold it (ids,
 * paths, the keeper's socket and init's pidfd), then exits; the sandbox's
 * processes are then the caller's (it must be a child subreaper:
 * PR_SET_CHILD_SUBREAPER, so that they are reparented to it, not to pid 1).
 * pasta (an allowlist's network) is the caller's child from the start (the
 * maker starts it as its sibling, egress_pasta.h), so it dies with the
 * caller, not with the maker.  A maker that dies before it hands its
 * sandbox over has what it started outside the container (in its session:
 * it calls setsid) killed by make_finish or make_abort.
 * destroy reaps init, pasta and the audit listener; the caller reaps the
 * rest of what is reparented to it (the container's monitor: waitpid(-1,
 * WNOHANG) on SIGCHLD), as any subreaper must.
 * What must be in the caller's memory before the sandbox runs (the project
 * guard's snapshot of a project) is taken in the caller by make_start. */
#ifndef HAVEN_SANDBOX_H
#define HAVEN_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "oci_spec.h"

typedef struct hv_sandbox hv_sandbox;

struct hv_sandbox_opts
{
  const char *policy;      /* name or file, as `haven run --policy` */
  const char *project;     /* a project directory (the rules of `haven run`), or NULL: a scratch workspace */
  const char *scratch_dir; /* where scratch workspaces are made (0700, the caller's); NULL: none allowed */
  const char *haven_argv0; /* how haven was invoked (run_trust.h) */
  const char *label;       /* the service's sandbox id, for the container id and the trail */
  /* A haven binary the maker executes (`haven __sandbox-maker`, which
   * calls hv_sandbox_maker_main): the sandbox's init, cloned from the
   * maker and keeping its memory for life as a keeper, then holds only
   * what the maker itself allocated, nothing of the caller's (another
   * sandbox's requests, a long-lived heap).  NULL: the maker is a fork
   * of the caller (tests that are no haven binary). */
  const char *maker_exe;
};

/* `haven __sandbox-maker POLICY WORKSPACE LABEL SCRATCH HAVEN_ARGV0`,
 * with the caller's end of the record's socket as fd 3: the maker's
 * work in a fresh process (maker_exe above).  Returns its exit status. */
int hv_sandbox_maker_main (int argc, char **argv);

/* A sandbox being made in a child process. */
struct hv_sandbox_maker
{
  pid_t pid;
  int fd;    /* readable (or hung up) when the child is done: poll it, then make_finish */
  /* The child's pidfd (close-on-exec; -1 where the kernel has none),
   * readable once it has exited: poll it beside fd.  fd alone may never
   * hang up: a process the maker forked and that outlives it (the
   * sandbox's init before it serves, the audit listener) holds a copy
   * of its end. */
  int pidfd;
  void *priv; /* what the caller keeps meanwhile (the project guard's snapshot) */
};
#define HV_SANDBOX_MAKER_INIT { .pid = 0, .fd = -1, .pidfd = -1, .priv = NULL }

int hv_sandbox_make_start (const struct hv_sandbox_opts *o, struct hv_sandbox_maker *m, hv_error **err);
/* Blocks until the child is done (poll m->fd and m->pidfd first to
 * avoid it); reaps the child; *out is the sandbox, or -1 with *err the
 * reason the child gave (a policy's error keeps its FILE:LINE:COL), or,
 * for a child that exited without handing over a whole record, how it
 * ended (everything it made is removed then, as by make_abort). */
int hv_sandbox_make_finish (struct hv_sandbox_maker *m, hv_sandbox **out, hv_error **err);
/* Give up on a maker (kill it, reap it, remove whatever it had made). */
void hv_sandbox_make_abort (struct hv_sandbox_maker *m);
/* make_start + make_finish. */
int hv_sandbox_create (const struct hv_sandbox_opts *o, hv_sandbox **out, hv_error **err);

/* The caller's end of the keeper's socket (keeper.h), non-blocking,
 * close-on-exec; owned by the sandbox. */
int hv_sandbox_keeper_fd (const hv_sandbox *sb);
/* A pidfd of the sandbox's init (readable once it has exited). */
int hv_sandbox_pidfd (const hv_sandbox *sb);
const char *hv_sandbox_policy_name (const hv_sandbox *sb);
/* The project or scratch workspace: its host path, where commands see
 * it (the same path, as under haven run; the commands' default cwd), and
 * an O_PATH|O_DIRECTORY fd of it opened without following links (the
 * files API resolves beneath it: sandbox_files.h). */
const char *hv_sandbox_workspace (const hv_sandbox *sb);
int hv_sandbox_workspace_fd (const hv_sandbox *sb);
bool hv_sandbox_is_scratch (const hv_sandbox *sb);
/* The policy's time limit (`run: timeout:`), which bounds each command
 * as it bounds `haven run`'s; 0: none. */
unsigned hv_sandbox_timeout_s (const hv_sandbox *sb);
/* The compiled config the sandbox was made from (the pool compares). */
const char *hv_sandbox_config (const hv_sandbox *sb);

/* The environment of a command: the policy's environment (the config's
 * process.env) with the request's variables (NAME=VALUE, NULL-terminated,
 * may be NULL) added, each checked against the policy's env rules: a
 * variable the policy would not pass into `haven run` is refused, naming
 * it and the rule. */
int hv_sandbox_command_env (const hv_sandbox *sb, char *const *request_env, oci_strv *envp, hv_error **err);

/* Whether a shell (sh) may run in it: not under process.block_shell, nor
 * under an allow_exec list that does not name sh. */
bool hv_sandbox_shell (const hv_sandbox *sb);
/* GET /v1/sandboxes/ID/denials (docs/api.md): the last `limit` (>= 1)
 * denial records of this sandbox in its policy's trail, oldest first,
 * each with its kind, what was refused and the rule, as that answer's
 * JSON; a note instead when the policy keeps no trail. */
char *hv_sandbox_denials_json (const hv_sandbox *sb, unsigned limit, hv_error **err);

/* The trail (when the policy keeps one): a pooled sandbox handed to a
 * client now (its start record is from when it was made, for the pool). */
void hv_sandbox_trail_claimed (hv_sandbox *sb);
/* The trail (when the policy keeps one): one record per command. */
void hv_sandbox_trail_command (hv_sandbox *sb, uint32_t run_id, char *const *argv, int exit_status);

/* Kill every process of the sandbox, delete the container, check the
 * project (guard, links: what they report goes into *notes), end the
 * trail, remove the bundle and a scratch workspace, free.  Returns -1
 * with *err when the project guard had to quarantine something (the
 * sandbox is gone all the same). */
int hv_sandbox_destroy (hv_sandbox *sb, oci_strv *notes, hv_error **err);

/* At the service's start: remove what sandboxes of a service that was
 * killed left (containers whose label starts with prefix in the state
 * root, their bundles, scratch workspaces under scratch_dir). */
void hv_sandbox_clean_leftovers (const char *prefix, const char *scratch_dir);

#endif
