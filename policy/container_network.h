/* Network `none` on an engine's config: what the engine would do to the
 * container's network namespace besides naming it. */
#ifndef HAVEN_CONTAINER_NETWORK_H
#define HAVEN_CONTAINER_NETWORK_H

#include <stdbool.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

/* The hook Docker's network setup runs (dockerd itself, argv[0]
 * "libnetwork-setkey"): it moves the container's interface (eth0, its
 * address, its routes, the embedded DNS's rules) into the network
 * namespace of the container's init, whichever namespace that is, so a
 * private namespace alone gives no isolation under Docker. */
#define HV_DOCKER_NETWORK_HOOK "libnetwork-setkey"

/* The "hooks" object of a config (hooks: its value, an object) as it is,
 * but without the engine's network hooks when private_net (the policy's
 * network is none). */
void hv_container_emit_hooks (yajl_gen g, yajl_val hooks, bool private_net);

#endif
