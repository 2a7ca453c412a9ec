/* The result of probing one mechanism of the host (runtime's
 * host_probe.h, the egress way's tun and pasta probes): usable or not,
 * and when not, the step that failed with the kernel's answer, in words a
 * user can act on ("clone(CLONE_NEWUSER): Operation not permitted"). */
#ifndef HAVEN_PROBE_H
#define HAVEN_PROBE_H

#include <stdbool.h>

typedef struct
{
  bool ok;
  char why[256];
} hv_probe;
#endif
