/* How a sandbox's allowlist reaches the network under `haven run` and
 * `haven serve`: pasta (a user-mode network stack with a tap device in
 * the sandbox's namespace, Debian package passt) or haven's forwarder
 * (egress_forward.h: the monitor accepts the sandbox's TCP inside its
 * namespace and connects from its own).  Both enforce the same table,
 * resolver, pins and trail.
 *
 * The rule (docs/egress.md, "The way out", with the figures):
 *   - HAVEN_EGRESS_WAY=pasta or =forwarder: that way (pasta then fails at
 *     create, with pasta's own words, where it cannot run);
 *   - else pasta where /dev/net/tun opens read-write for the caller and
 *     pasta answers --version;
 *   - else the forwarder, which needs neither. */
#ifndef HAVEN_EGRESS_WAY_H
#define HAVEN_EGRESS_WAY_H

#include <stddef.h>

#include "error.h"

typedef enum hv_egress_way
{
  HV_EGRESS_WAY_PASTA,
  HV_EGRESS_WAY_FORWARD,
} hv_egress_way;

/* The environment variable that forces a way. */
#define HV_EGRESS_WAY_ENV "HAVEN_EGRESS_WAY"

/* The way for this caller on this host; override: the variable's value
 * (NULL or "": none).  why (size bytes) says in words why that way, for
 * haven doctor and notes.  -1 with *err for an override that names no
 * way. */
int hv_egress_way_choose (const char *override, hv_egress_way *out, char *why, size_t size, hv_error **err);
/* "pasta" or "forwarder". */
const char *hv_egress_way_name (hv_egress_way w);
#endif
