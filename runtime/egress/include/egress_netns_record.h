/* An egress table left in a network namespace that outlives its
 * container: what delete needs to find it again. */
#ifndef HAVEN_EGRESS_NETNS_RECORD_H
#define HAVEN_EGRESS_NETNS_RECORD_H

#include "error.h"
#include "oci_spec.h"

#define HV_EGRESS_NETNS_RECORD_FILE "egress-netns"

/* When the container joins a network namespace by path (a pod's, one an
 * engine or `ip netns` made), record in the state directory DIR that path
 * and the namespace's identity, before the table goes in (a create killed
 * right after leaves it to delete too).  Its own namespace (no path) dies
 * with its processes, the table with it. */
int hv_egress_netns_record (const char *dir, const oci_spec *spec, hv_error **err);

/* After the container's processes are gone (delete): remove the table
 * from the recorded namespace if that namespace still exists and is the
 * same one.  0 without a record or when the namespace is gone. */
int hv_egress_netns_cleanup (const char *dir, hv_error **err);

#endif
