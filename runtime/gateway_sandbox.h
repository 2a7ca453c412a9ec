/* The model API gateway at create (docs/gateway.md): the run.haven.gateway
 * annotation parsed before anything is made, each api's key found (in
 * create's service_secrets, "api:PROVIDER", or read from the api's
 * key_file), and once init has its network namespace, one listening TCP
 * socket per api on 127.0.0.1:PORT *inside* it (made there by a
 * short-lived child, netns_sockets.h, as the egress resolver's are),
 * handed to the per-container monitor, which serves them
 * (monitor_gateway.h) and is their only holder.
 *
 * The keys reach the monitor in its memory, by the fork that starts it;
 * create's own copies are wiped once it has (before init is cloned).
 * Nothing of them goes to the config, an annotation, the state directory
 * or the sandbox.
 *
 * Fail closed: an annotation not understood, a key missing or unreadable,
 * a sandbox without a network namespace of its own (its loopback would be
 * the host's), a listener that cannot be made or handed over: create fails
 * naming what. */
#ifndef HAVEN_GATEWAY_SANDBOX_H
#define HAVEN_GATEWAY_SANDBOX_H

#include <sys/types.h>

#include "container.h"
#include "container_monitor.h"
#include "error.h"
#include "gateway_config.h"
#include "oci_spec.h"

struct hv_gateway_sandbox
{
  hv_gw_config *config;            /* NULL: no gateway */
  char *keys[HV_GW_N_PROVIDERS];   /* config->apis[i]'s key, until wiped */
  int fds[HV_GW_N_PROVIDERS];      /* the listeners, until the monitor has them */
};
#define HV_GATEWAY_SANDBOX_INIT { NULL, { NULL }, { -1, -1, -1 } }

/* Parse the annotation, if any, and find every key (name names the config
 * in errors). */
int hv_gateway_sandbox_prepare (const oci_spec *spec, const struct hv_create_opts *opts, const char *name,
                                struct hv_gateway_sandbox *s, hv_error **err);
/* Make the listeners in the network namespace of init (pid, alive and
 * waiting) and hand them to the monitor. */
int hv_gateway_sandbox_listen (struct hv_gateway_sandbox *s, pid_t pid, struct hv_monitor *m, hv_error **err);
/* The monitor has its copy: wipe and free create's. */
void hv_gateway_sandbox_wipe_keys (struct hv_gateway_sandbox *s);
void hv_gateway_sandbox_release (struct hv_gateway_sandbox *s);
#endif
