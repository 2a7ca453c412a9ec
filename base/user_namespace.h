/* Which user namespace this process is in. */
#ifndef HAVEN_USER_NAMESPACE_H
#define HAVEN_USER_NAMESPACE_H

#include <stdbool.h>

/* Not in the initial user namespace (/proc/self/uid_map). */
bool hv_in_user_namespace (void);
/* Root only inside a user namespace, for a user other than root (USER):
 * what rootless Podman runs the runtime as.  Whatever it keeps on the host
 * goes where the user's own would, never to root's places. */
bool hv_root_of_user_namespace (void);
#endif
