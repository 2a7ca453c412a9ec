/* A policy's rules as the kernel enforces them where haven cannot make
 * namespaces (an unprivileged container under Docker's or Podman's
 * default profile, a pod): Landlock for files, Landlock's network rules
 * and scopes and seccomp for sockets, the exec rules, the system-call
 * profile, no_new_privs, rlimits.  Every rule of the policy gets a
 * verdict: enforced (and by what), weaker (a form the policy accepted
 * explicitly under best_effort, said by explain and the trail), or
 * refused (what is missing, and the best_effort entry that would accept
 * a weaker form, if one exists).  A plan with a refused rule never runs.
 *
 * Pure: reads the policy, the compiled config (the same spec the
 * namespaced sandbox would get: its env, args, cwd, rlimits, seccomp and
 * Landlock lists are taken from it) and the host's files (link-free,
 * to expand hidden paths); starts nothing, writes nothing. */
#ifndef HAVEN_DIRECT_PLAN_H
#define HAVEN_DIRECT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "oci_spec.h"
#include "policy.h"
#include "run_ctx.h"

/* best_effort entries a policy may list to accept a weaker form without
 * namespaces (policies/README.md, "Without namespaces"). */
#define HV_WEAKER_PRIVATE_TMP "private_tmp"             /* filesystem.tmpfs: TMPDIR, not the path */
#define HV_WEAKER_NETWORK_PORTS "network_ports"         /* network.allow: ports, any address; UDP open */
#define HV_WEAKER_PROTECT_AFTER_RUN "protect_after_run" /* filesystem.protect: the guard, after the run */
#define HV_WEAKER_UNIX_SOCKETS "unix_sockets"           /* pathname Unix sockets reachable */
#define HV_WEAKER_CGROUPS "cgroups"                     /* resources.memory, cpus, pids: not limited */

enum hv_direct_verdict
{
  HV_DIRECT_ENFORCED,
  HV_DIRECT_WEAKER,
  HV_DIRECT_REFUSED,
};

typedef struct
{
  char *rule; /* the policy's words: "filesystem.block ~/.ssh", "filesystem.tmpfs /tmp", "network.allow" */
  enum hv_direct_verdict verdict;
  /* ENFORCED: by what ("Landlock: never granted").  WEAKER: the weaker
   * form and the best_effort entry that accepted it.  REFUSED: what is
   * missing, and the best_effort entry that would accept a weaker form,
   * or that none exists. */
  char *how;
} hv_direct_rule;

typedef struct
{
  /* Landlock, host paths (opened link-free when applied; a path that
   * does not exist or crosses a link gets no rule: fail closed). */
  oci_strv read;  /* read files, list directories */
  oci_strv write; /* read, write, make, remove, truncate (no execute) */
  oci_strv exec;  /* execute (and read) */
  /* List directories only (no file's content): "/", so that a directory
   * holding a hidden entry can still be listed (Landlock's rights hold
   * for a whole tree: listing cannot be granted on a directory without
   * its subdirectories, so the names of hidden entries show; their
   * content never does). */
  oci_strv list;
  /* Landlock network (ABI >= 4): TCP bind and connect handled; only
   * these ports may be connected to (none under network: none). */
  bool tcp_handled;
  uint16_t *tcp_connect_ports;
  size_t n_tcp_connect_ports;
  /* seccomp, on top of the spec's profile: socket() only for AF_INET and
   * AF_INET6 SOCK_STREAM with protocol 0 or IPPROTO_TCP, AF_NETLINK, and
   * AF_UNIX only when unix_sockets; udp: also AF_INET/6 SOCK_DGRAM
   * (network_ports' DNS); everything else EACCES. */
  bool unix_sockets;
  bool udp;
  /* Landlock scopes (ABI >= 6): no abstract Unix socket and no signal
   * outside the sandbox's domain. */
  bool scope_abstract_unix;
  bool scope_signal;
  /* private_tmp: the runner makes a 0700 directory, puts its path in
   * TMPDIR (and in write), removes it after the run. */
  bool scratch_tmp;
  /* protect_after_run: the project guard quarantines what changed. */
  bool guard_protect;
  hv_direct_rule *rules;
  size_t n_rules;
  size_t n_refused, n_weaker;
} hv_direct_plan;

int hv_direct_plan_build (const hv_policy *p, const struct hv_run_ctx *ctx, const oci_spec *spec, int landlock_abi,
                          hv_direct_plan *plan, hv_error **err);
/* The error of a plan with refused rules: each rule and why, and
 * "see haven doctor"; exit status 125. */
int hv_direct_plan_refusal (const hv_direct_plan *plan, const hv_policy *p, hv_error **err);
void hv_direct_plan_free (hv_direct_plan *plan);
#define cleanup_direct_plan __attribute__ ((cleanup (hv_direct_plan_free)))
#endif
