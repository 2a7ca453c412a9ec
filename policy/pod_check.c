/* A pod's refusals under a policy: pod_check.h. */
#include "config.h"
#include "pod_check.h"

#include <linux/capability.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "oci_tables.h"
#include "pod_identity.h"

/* Is path the namespace at /proc/self/ns/WHICH: the runtime's own, which
 * under a CRI runtime is the node's (containerd and its shims run in the
 * host's namespaces)? */
static bool
is_own_ns (const char *path, const char *which)
{
  struct stat a, b;
  char self[32];
  snprintf (self, sizeof (self), "/proc/self/ns/%s", which);
  if (stat (path, &a) < 0 || stat (self, &b) < 0)
    return false; /* a namespace that cannot be opened fails at create */
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* No namespace of the type (the config shares the runtime's), or one
 * joined by a path that is the runtime's own.  A CRI runtime leaves the
 * network namespace out of a hostNetwork pod's sandbox config and gives
 * its containers the sandbox's, which is then the node's: both cases. */
static bool
shares_host_ns (const oci_spec *spec, int type, const char *which)
{
  const oci_namespace *ns = oci_spec_find_namespace (spec, type);
  return ns == NULL || (ns->path && ns->path[0] && is_own_ns (ns->path, which));
}

/* containerd 1.6 makes a privileged container's config (oci.WithPrivileged
 * and, unless privileged_without_host_devices, every host device) with
 * every capability it holds itself in every set, no maskedPaths, no
 * readonlyPaths, a writable /sys and no seccomp profile; CRI-O does the
 * same.  Neither alone tells: containerd leaves maskedPaths and
 * readonlyPaths empty whenever the request has none (kubelet fills them
 * in; a CRI client need not), and capabilities.add: ["ALL"] gives every
 * capability with the masks in place.  Both together are what privileged
 * sets, and a config with both is as strong as a privileged one anyway,
 * so refusing it errs on the safe side.  "Every capability" is every one
 * in this process's bounding set (the runtime inherits it from the CRI
 * runtime through its shim: a containerd without CAP_SYS_RESOURCE, as in
 * some containers, gives a privileged container all but that one), and
 * CAP_SYS_ADMIN among them.  The devices and /sys are left out: the first
 * depends on a runtime option, the second on how a mount is spelt. */
bool
hv_pod_config_privileged (const oci_spec *spec)
{
  if (spec->linux_cfg.masked_paths.n || spec->linux_cfg.readonly_paths.n)
    return false;
  uint64_t have = 0;
  const oci_strv *b = &spec->process.capabilities.bounding;
  for (size_t i = 0; i < b->n; i++)
    {
      int cap = oci_capability_from_name (b->v[i]);
      if (cap >= 0 && cap < 64)
        have |= UINT64_C (1) << cap;
    }
  if (!(have & (UINT64_C (1) << CAP_SYS_ADMIN)))
    return false;
  for (int cap = 0; cap < 64; cap++)
    if (prctl (PR_CAPBSET_READ, cap, 0, 0, 0) == 1 && !(have & (UINT64_C (1) << cap)))
      return false;
  return true;
}

/* A Kubernetes pod: a CRI runtime names the pod's namespace and name on
 * each of its containers.  Podman puts CRI-O's type and sandbox-id
 * annotations on the containers of its own pods too (for Kata), naming
 * no namespace: those keep Podman's behaviour (pod_network.c says the
 * same). */
static bool
kubernetes_pod (const hv_pod_identity *id)
{
  return id->role != HV_POD_NONE && id->pod_namespace && id->pod_name;
}

int
hv_pod_policy_check (const oci_spec *spec, const char *name, const char *policy, bool *pod, hv_error **err)
{
  *pod = false;
  hv_pod_identity id;
  if (hv_pod_identity_read (spec, name, &id, err) < 0)
    return -1;
  if (!kubernetes_pod (&id))
    return 0;
  *pod = true;
  const char *what = id.role == HV_POD_SANDBOX ? "the sandbox container" : "container";
  const char *cname = id.container_name ? id.container_name : "";
  const char *ns = id.pod_namespace, *pn = id.pod_name;
  if (shares_host_ns (spec, CLONE_NEWNET, "net"))
    return hv_error_set (err, 0,
                         "%s: %s%s%s of pod %s/%s shares the node's network namespace (hostNetwork: true): refused under "
                         "policy %s, whose network rules cannot hold there; run the pod without hostNetwork",
                         name, what, cname[0] ? " " : "", cname, ns, pn, policy);
  if (shares_host_ns (spec, CLONE_NEWPID, "pid"))
    return hv_error_set (err, 0,
                         "%s: %s%s%s of pod %s/%s shares the node's pid namespace (hostPID: true): refused under "
                         "policy %s (every process of the node would be in reach); run the pod without hostPID",
                         name, what, cname[0] ? " " : "", cname, ns, pn, policy);
  if (hv_pod_config_privileged (spec))
    return hv_error_set (err, 0,
                         "%s: %s%s%s of pod %s/%s is privileged (securityContext.privileged: true: every capability, "
                         "no masked paths): refused under policy %s; run it without privileged",
                         name, what, cname[0] ? " " : "", cname, ns, pn, policy);
  return 0;
}
