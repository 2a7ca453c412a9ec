/* The network of a Kubernetes pod under a policy: one network namespace
 * (CNI's, held by the pod's sandbox container) that every container of
 * the pod joins, so one set of network rules for all of them.
 *
 * The sandbox (pause) container puts the rules in: with an allowlist
 * (run.haven.egress) the egress table and the resolver, whose monitor
 * lives as long as the pod; with network `none` (run.haven.network) a
 * table that lets nothing but loopback out or in (the namespace keeps
 * CNI's interface: containers of a pod talk over loopback, so the pod
 * keeps its namespace rather than each container getting an empty one).
 * It then writes a record (HV_POD_NETWORK_RECORD_FILE) in its state
 * directory: the namespace's identity, the table's fingerprint, the
 * policy and its network rules.
 *
 * A container of the pod makes no table and no resolver: its create
 * reads the sandbox's record (same state root, the directory named by
 * the sandbox id, opened without following links), refuses network rules
 * other than the pod's ("all containers of a pod share one network
 * policy"), and once init is in its network namespace checks that it is
 * the recorded one and that the table there is the recorded one,
 * unchanged.  Its DNS reaches the pod's resolver: the table sends port
 * 53 of any address there, whatever resolv.conf names.  Its delete
 * leaves the table (it wrote no egress-netns record): the sandbox's
 * delete removes it with the pod. */
#ifndef HAVEN_POD_NETWORK_H
#define HAVEN_POD_NETWORK_H

#include <stdbool.h>
#include <sys/types.h>

#include "egress_config.h"
#include "egress_table.h"
#include "error.h"
#include "oci_spec.h"
#include "pod_identity.h"

#define HV_POD_NETWORK_RECORD_FILE "pod-network"
/* The rules of network `none`, as the record names them. */
#define HV_POD_NETWORK_NONE "none"

struct hv_pod_network
{
  /* HV_POD_NONE: not a pod's config, or one without network rules:
   * nothing here applies. */
  hv_pod_role role;
  char *sandbox_id;
  char *pod;        /* "NAMESPACE/NAME" for messages */
  char *container;  /* the container's name (NULL for the sandbox) */
  char *policy;     /* this config's policy (run.haven.policy), "" if none */
  char *rules;      /* HV_POD_NETWORK_NONE, or the egress rules without the policy's name */
  /* A container: the sandbox's record. */
  unsigned long long netns_dev, netns_ino;
  char fingerprint[HV_EGRESS_FINGERPRINT_LEN];
};
#define HV_POD_NETWORK_INIT { .role = HV_POD_NONE }

/* Before anything is made.  egress: the config's parsed run.haven.egress
 * (NULL if none); none: it asks for network none.  For a container of a
 * pod with rules, reads the sandbox's record under state_root and fails
 * if the rules differ or the sandbox has none. */
int hv_pod_network_prepare (const oci_spec *spec, const char *state_root, const hv_egress_config *egress, bool none,
                            struct hv_pod_network *p, hv_error **err);

/* The sandbox with network none: the table that lets only loopback
 * through, in the network namespace of pid (init, waiting).  *table: the
 * handle (the caller deletes the table if create fails); fingerprint:
 * what the kernel holds. */
int hv_pod_network_install_none (pid_t pid, hv_egress_table **table, char fingerprint[HV_EGRESS_FINGERPRINT_LEN],
                                 hv_error **err);

/* The sandbox, its table in place: write the record into dir (its state
 * directory). */
int hv_pod_network_record (const struct hv_pod_network *p, const char *dir, pid_t pid, const char *fingerprint,
                           hv_error **err);

/* A container: init (pid) is in the recorded namespace and the table
 * there is the recorded one, unchanged (what: when, for the message). */
int hv_pod_network_check (const struct hv_pod_network *p, pid_t pid, const char *what, hv_error **err);

void hv_pod_network_clear (struct hv_pod_network *p);

/* The record's text, and its parse (for the tests). */
char *hv_pod_network_record_text (unsigned long long dev, unsigned long long ino, const char *fingerprint,
                                  const char *policy, const char *rules);
int hv_pod_network_record_parse (const char *text, const char *name, struct hv_pod_network *out, char **policy,
                                 char **rules, hv_error **err);
#endif
