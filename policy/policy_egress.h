/* A policy's egress (network.allow and network.deny under an allowlist)
 * as the runtime takes it: the run.haven.egress annotation
 * (runtime/egress/include/egress_config.h), written into engine configs by
 * policy_apply.c and into `haven run`'s by policy_compile.c, and what an
 * allowlist takes away besides: the capabilities and sockets that would
 * get around the table. */
#ifndef HAVEN_POLICY_EGRESS_H
#define HAVEN_POLICY_EGRESS_H

#include <stdbool.h>

#include "egress_config.h"
#include "error.h"
#include "oci_spec.h"
#include "policy.h"

/* The annotation's text (a new string), or NULL when the policy is not
 * an allowlist (mode none: a private netns with loopback and nothing
 * else; open: the network as it is). */
char *hv_policy_egress_annotation (const hv_policy *p, hv_egress_connect connect);

/* Does the policy ask for names (network.ask, mode: ask)? */
bool hv_policy_asks (const hv_policy *p);

/* Is capability cap (as "CAP_NET_RAW") taken away whatever the engine or
 * the policy's capabilities ask?  Under an allowlist CAP_NET_RAW (a
 * packet socket sends what it likes, past nf_tables' output hook) and
 * CAP_NET_ADMIN (it could delete the table). */
bool hv_policy_egress_strips_cap (const hv_policy *p, const char *cap);

/* An engine config under an allowlist must give the container a network
 * namespace of its own: none in .linux.namespaces (`network: host`), or
 * a path to the runtime's own, is refused (name names the config). */
int hv_policy_egress_check_netns (const hv_policy *p, const oci_spec *spec, const char *name, hv_error **err);
#endif
