/* What this host (or the container haven itself runs in) offers, each
 * mechanism probed the way a start would use it.  A probe that needs to
 * change credentials, namespaces or filters does it in a child process:
 * nothing of the calling process changes.  Used by `haven run` to pick
 * its isolation (namespaces, or Landlock and seccomp only: direct_run.h),
 * by the egress setup to pick its way out (pasta or haven's forwarder),
 * and by `haven doctor` to tell the user what they get where. */
#ifndef HAVEN_HOST_PROBE_H
#define HAVEN_HOST_PROBE_H

#include <stdbool.h>

#include "egress_way.h" /* hv_probe_tun, hv_probe_pasta */
#include "probe.h"

/* The sandbox's namespaces exactly as `haven run` makes them for this
 * caller: as root the mount, pid, network, ipc and uts namespaces (no user
 * namespace), otherwise those inside a new user namespace mapping the
 * caller; in the child, a tmpfs mounted on a private directory and the
 * new network namespace's loopback brought up (the steps Docker's default
 * profile, or CAP_SYS_ADMIN without CAP_NET_ADMIN, refuse).  About 1 ms.
 * (runtime/host_probe_ns.c) */
void hv_probe_namespaces (hv_probe *out);
/* The same question at a lower cost, for `haven run --isolation auto` on
 * every start: the full steps but the network namespace and its loopback
 * (the costliest); as root, CAP_NET_ADMIN read off the effective set
 * instead.  Where it says yes and the full steps fail all the same, the
 * start fails and says so (hv_run_hint_namespaces runs the full probe
 * then).  (runtime/host_probe_ns.c) */
void hv_probe_namespaces_quick (hv_probe *out);
/* An unprivileged user namespace can be made (clone(CLONE_NEWUSER)).
 * (runtime/host_probe_ns.c) */
void hv_probe_user_namespace (hv_probe *out);
/* The running kernel's Landlock ABI, -1 without Landlock (also when a
 * seccomp profile refuses landlock_create_ruleset). (runtime/landlock.c's
 * hv_landlock_abi, declared here for the layers above) */
int hv_probe_landlock_abi (void);
/* A seccomp filter can be installed after no_new_privs. (host_probe_kernel.c) */
void hv_probe_seccomp (hv_probe *out);
/* A cgroup this caller may create for a sandbox's resources (memory,
 * cpus, pids): where, or why not. (host_probe_host.c) */
void hv_probe_cgroups (hv_probe *out);
/* An nf_tables table can be made in a fresh network namespace (the egress
 * table of an allowlist). (host_probe_host.c) */
void hv_probe_nftables (hv_probe *out);
/* What haven itself runs in: "docker", "podman", "kubernetes",
 * "devcontainer" (a container of one of these started by the devcontainer
 * CLI or VS Code), "container" (another), or NULL for a host.  From
 * /.dockerenv, /run/.containerenv, the container variable, the service
 * account directory, REMOTE_CONTAINERS/DEVCONTAINER variables.
 * (host_probe_host.c) */
const char *hv_probe_container (void);
#endif
