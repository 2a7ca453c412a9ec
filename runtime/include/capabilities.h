/* Capability sets for the container process.  The inheritable set is empty
 * unless the config lists capabilities for it (CVE-2022-29162): with a
 * non-empty inheritable set, a file-capability binary in the image could
 * regain capabilities the config dropped. */
#ifndef HAVEN_CAPABILITIES_H
#define HAVEN_CAPABILITIES_H

#include "error.h"
#include "oci_spec.h"

/* Drop from the bounding set everything not listed.  Needs CAP_SETPCAP, so
 * it runs before the user switch. */
int hv_caps_drop_bounding (const oci_capabilities *caps, hv_error **err);
/* Set effective, permitted, inheritable, then ambient (after the switch,
 * with PR_SET_KEEPCAPS having preserved the permitted set). */
int hv_caps_apply (const oci_capabilities *caps, hv_error **err);
int hv_caps_last_cap (void);
/* Log a warning (runtime-spec: "MUST log a warning") for each listed
 * capability the runtime cannot grant because its own bounding set lacks
 * it (CAP_SYS_RESOURCE on some hosts).  Runs in the runtime's process, so
 * warnings go to the runtime's log and not to the container's stderr; the
 * container then starts without those capabilities, as before. */
void hv_caps_warn_unavailable (const oci_capabilities *caps);
#endif
