/* The listening socket of a monitor service that the sandbox reaches
 * through a directory bound into it (the git credential broker's, the
 * ssh-agent view's).
 *
 * The directory's path is the caller's: it is reached from / through no
 * symbolic link, and must be ours and enterable by no one else, because
 * the socket itself answers whoever connects.  The socket is bound
 * through the directory's O_PATH fd, so nothing swapped in on the path
 * after the check is bound instead. */
#ifndef HAVEN_SERVICE_SOCKET_H
#define HAVEN_SERVICE_SOCKET_H

#include "error.h"

/* A listening SOCK_STREAM socket (close-on-exec) bound at dir/name.
 * what names the configuration field dir came from in errors (after
 * "config.json: "), service names the service (e.g. "ssh-agent view"). */
int hv_service_listen_in (const char *dir, const char *name, const char *what, const char *service,
                          hv_error **err);
#endif
