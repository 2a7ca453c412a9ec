/* exec into a container a policy was applied to. */
#ifndef HAVEN_EXEC_RESTRICT_H
#define HAVEN_EXEC_RESTRICT_H

#include "oci_spec.h"
#include "policy.h"

/* Make an exec'd process (proc: what Docker's or Podman's exec asked for,
 * --privileged included) no stronger than the container's init (init, as
 * the policy left it at create) and the policy: capabilities within
 * init's bounding set and the policy's list, no_new_privs, init's
 * AppArmor profile and SELinux label, the policy's environment rules and
 * nofile limit.  Seccomp and Landlock come from the container's config
 * for every exec already. */
void hv_policy_restrict_exec (const hv_policy *p, const oci_process *init, oci_process *proc);
#endif
