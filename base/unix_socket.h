/* Unix stream sockets named by a path of any length.
 *
 * sockaddr_un holds 107 bytes of path, and a container's state directory
 * under an engine's runtime root (Docker's is <exec-root>/runtime-runc/
 * moby/<64 hex digits>) can be longer.  A longer path is reached through
 * its directory: an O_PATH fd of it, and /proc/self/fd/N/NAME as the
 * address, which the kernel resolves like the path itself. */
#ifndef HAVEN_UNIX_SOCKET_H
#define HAVEN_UNIX_SOCKET_H

#include "error.h"

/* A connected SOCK_STREAM socket (close-on-exec). */
int hv_unix_connect (const char *path, hv_error **err);
/* A listening SOCK_STREAM socket (close-on-exec) bound at path. */
int hv_unix_listen (const char *path, int backlog, hv_error **err);
#endif
