/* What a pod may not ask for under a policy.  A Kubernetes pod's config
 * (made by a CRI runtime: oci/pod_identity.h) that shares the host's
 * network namespace (hostNetwork), the host's pid namespace (hostPID) or
 * is a privileged container is refused at create, with a message that
 * names the pod and the setting: the CRI runtime returns it as the error
 * of RunPodSandbox or CreateContainer, which kubelet shows as the pod's
 * event.  The policy would not hold there (an allowlist in the host's
 * network namespace, the host's processes in reach, every device and a
 * writable /sys), so the pod never runs rather than running unpoliced.
 * Docker's and Podman's configs (no pod) are not looked at here. */
#ifndef HAVEN_POD_CHECK_H
#define HAVEN_POD_CHECK_H

#include <stdbool.h>

#include "error.h"
#include "oci_spec.h"

/* 0 with *pod false for a config that is not a pod's; 0 with *pod true
 * for a pod's that may run under policy (its name, for the message);
 * else -1 and the refusal.  name: the config's name in messages. */
int hv_pod_policy_check (const oci_spec *spec, const char *name, const char *policy, bool *pod, hv_error **err);

/* Does the config look like a privileged container's (pod_check.c says
 * why these settings)? */
bool hv_pod_config_privileged (const oci_spec *spec);
#endif
