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
#endif
