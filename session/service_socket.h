/* Where the user's `haven serve` listens, for the service itself and for
 * its clients in the tree (`haven mcp`), so that they cannot disagree. */
#ifndef HAVEN_SERVICE_SOCKET_H
#define HAVEN_SERVICE_SOCKET_H

/* root's /run/haven/haven.sock; a user's $XDG_RUNTIME_DIR/haven/haven.sock,
 * else /run/user/UID/haven/haven.sock.  Malloc'd. */
char *hv_service_default_socket (void);

#endif
