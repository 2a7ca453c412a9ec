/* What the policy compiler knows of one run on the workstation: where the
 * project and the homes are, who runs what, and where the run's bundle
 * and state live.  Filled by the session layer (session/run_context.c). */
#ifndef HAVEN_RUN_CTX_H
#define HAVEN_RUN_CTX_H

#include <stdbool.h>
#include <sys/types.h>

#include "oci_spec.h"

struct hv_run_ctx
{
  const char *project; /* absolute, real path */
  const char *home;    /* $HOME, or NULL */
  /* The caller's homes ($HOME and the password database's, real paths;
   * NULL: just home) and, to hide as well, the other users' homes. */
  const oci_strv *homes;
  const oci_strv *other_homes;
  /* Container engines' data roots that exist (hv_engine_roots): hidden
   * always. */
  const oci_strv *engine_roots;
  const char *cwd;     /* where the command starts */
  const char *rootfs;  /* empty directory the host root is mounted on */
  uid_t uid;
  gid_t gid;
  bool rootless; /* not root: a user namespace maps the caller */
  bool terminal;
  char **argv;
  char **host_env;
  /* With an audit trail: denied system calls are sent to this seccomp
   * listener socket (runtime/monitor/audit_monitor.c) instead of failing in the filter. */
  const char *audit_socket;
  /* Per-project state directory holding the upper layers of copy-on-write
   * home_allow entries (session/home_state.c); NULL: they are bound read-only. */
  const char *home_state;
  /* Credentials the policy gives (session/run_credentials.c): values of
   * env.set_from_file/set_from_env, the host's ssh-agent socket (bound
   * at HV_SSH_AGENT_SOCKET), the run's own directory holding the git
   * broker's socket, made by create (bound at HV_GIT_CREDENTIALS_DIR).  NULL: none. */
  const oci_kv_list *secret_env;
  const char *ssh_agent_socket;
  /* credentials.ssh_agent {keys: [...]}: the run's directory where create
   * binds the restricted view's socket (bound at HV_SSH_AGENT_VIEW_DIR)
   * and the fingerprints of the keys it shows; NULL: no view. */
  const char *ssh_agent_view_dir;
  const oci_strv *ssh_agent_view_keys;
  const char *git_credentials;
  /* git's config for the sandbox (the host's identity) and its excludes
   * for hidden files (session/git_identity.c), bound read-only; NULL:
   * none. */
  const char *git_config;
  const char *git_excludes;
  const char *git_attributes;
  /* Under network none: the nsswitch.conf bound on /etc/nsswitch.conf
   * (session/run_offline.h, policy/offline.h); NULL: none. */
  const char *nsswitch; /* the filters of git_shown (session/git_hidden_tracked.h) */
  /* Hidden files git tracks unchanged (session/git_hidden_tracked.h):
   * git_shown->v[i] is masked with the read-only placeholder
   * git_shown_snapshots->v[i] (blank lines git reads through a filter),
   * not /dev/null. */
  const oci_strv *git_shown;
  const oci_strv *git_shown_snapshots;
  /* What the compiler and the session's preparation tell the user (a
   * path not made writable or not shown, and why; a state directory
   * that cannot be made...): appended here, one line each without
   * "haven: ", for the front end to print; NULL: not kept.  The
   * libraries print nothing themselves. */
  oci_strv *notes;
  /* Under a policy that asks (network.ask, mode: ask): the approvals
   * directory the resolver writes its requests in, and the directory of
   * the approved files (session/approvals.h), both made 0700 by the
   * session and hidden from the sandbox; NULL: none (a policy that asks
   * is then refused). */
  const char *approvals_dir;
  const char *approved_dir;
  /* The run's id (16 lower-case hex), the requests' ids begin with it;
   * NULL: the monitor makes one. */
  const char *run_id;
};
#endif
