/* /dev inside the container: default devices, configured devices, the
 * standard symlinks.  Without a user namespace nodes are created with
 * mknod; inside one (where mknod is refused) the host's node is
 * bind-mounted after checking it is the device the config names. */
#ifndef HAVEN_DEVICES_H
#define HAVEN_DEVICES_H

#include <stdbool.h>

#include "error.h"
#include "oci_spec.h"

int hv_devices_setup (int rootfd, const oci_spec *spec, bool userns, hv_error **err);
/* Does the config mount something at /dev that is not a bind of the host's? */
bool hv_devices_need_setup (const oci_spec *spec);
#endif
