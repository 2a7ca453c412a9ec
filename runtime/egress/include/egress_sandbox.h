/* The egress table of one container, installed at create.
 *
 * When the config has the run.haven.egress annotation (egress_config.h),
 * create parses it before anything is made, and once init reports that
 * it has made or joined its network namespace (HV_SYNC_NETNS: before any
 * hook and long before the process runs; init goes on with its mounts
 * meanwhile, and its hooks wait for the table) it installs, in init's
 * namespace:
 *   - table "haven" (egress_table.h): the annotation's allow and deny
 *     CIDRs, port 53 redirected to 127.0.0.1:53 and [::1]:53, the
 *     resolver's mark, NFLOG group HV_EGRESS_NFLOG_GROUP; read back and
 *     verified against the fingerprint the kernel gave at creation;
 *   - the resolver's listening sockets there (UDP and TCP on 127.0.0.1:53
 *     and, where the namespace has IPv6, [::1]:53), loopback brought up.
 * The sockets and two netfilter netlink sockets (the table's, for pins,
 * and one for the denial listener) are made in that namespace by a
 * short-lived child of the runtime, which enters the user namespace that
 * owns it first when that is not the runtime's (rootless: the runtime
 * owns it and has every capability there, but setns(CLONE_NEWNET) also
 * wants CAP_SYS_ADMIN in the caller's own user namespace); the runtime
 * builds the table through the passed socket, which the kernel allows to
 * the namespace's owner.  One path for root and rootless.
 * The sockets and a handle on the namespace then go to the per-container
 * monitor (container_monitor.h), which runs the resolver.
 *
 * Fail closed: no nf_tables, a batch the kernel refuses, a table that
 * reads back differently: create fails and removes what it made (the
 * table too, when the namespace outlives init: an engine's). */
#ifndef HAVEN_EGRESS_SANDBOX_H
#define HAVEN_EGRESS_SANDBOX_H

#include <stdbool.h>
#include <sys/types.h>

#include "egress_config.h"
#include "egress_fds.h"
#include "egress_table.h"
#include "error.h"
#include "oci_spec.h"

struct hv_egress_sandbox
{
  hv_egress_config *config; /* NULL: no egress annotation */
  char *text;               /* the annotation, for the monitor */
  hv_egress_table *table;   /* until create is done: removed if it fails */
  /* Init's network namespace and the sockets made there, for the
   * monitor (hv_monitor_pass_egress takes them); nft only until the table
   * has it (the monitor gets a copy of the table's). */
  struct hv_egress_fds fds;
  /* The way out relays from the caller's namespace (pasta): the table
   * also denies the caller's own addresses (egress_host_addrs.h).  Set
   * before hv_egress_sandbox_install. */
  bool deny_host_addrs;
  /* The way out is haven's forwarder (egress_forward.h): the namespace
   * gets its routes and listeners, the table its redirect.  Set before
   * hv_egress_sandbox_install. */
  bool forward;
  bool forward_v4, forward_v6; /* the families the host has a route for (install fills them) */
  /* The table as the kernel held it once made (hv_egress_table_verify). */
  char fingerprint[HV_EGRESS_FINGERPRINT_LEN];
};
#define HV_EGRESS_SANDBOX_INIT { NULL, NULL, NULL, HV_EGRESS_FDS_INIT, false }

/* Parse the annotation, if any (name names the config in errors). */
int hv_egress_sandbox_prepare (const oci_spec *spec, const char *name, struct hv_egress_sandbox *s, hv_error **err);
/* Install the table and make the sockets in the network namespace of
 * init (pid, our child or grandchild, alive and waiting).  own_cgroup:
 * the cgroup made for this container (every exec joins it), or NULL or
 * "" when it has none of its own; only then can the container's sockets
 * be told from the engine's (egress_table.h, sandbox_cgroup). */
int hv_egress_sandbox_install (struct hv_egress_sandbox *s, pid_t pid, const char *own_cgroup, hv_error **err);
/* create failed: delete the table (if made) and close everything. */
void hv_egress_sandbox_abort (struct hv_egress_sandbox *s);
/* create is done (the table stays) or aborted: close what is left. */
void hv_egress_sandbox_release (struct hv_egress_sandbox *s);
#endif
