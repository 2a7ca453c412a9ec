/* Network namespace setup over rtnetlink (libmnl). */
#ifndef HAVEN_NETWORK_H
#define HAVEN_NETWORK_H
#include "error.h"
/* Bring "lo" up in the current network namespace: a fresh namespace has
 * it down, and programs expect 127.0.0.1 to work. */
int hv_net_loopback_up (hv_error **err);

/* hv_netns_call's result when coming back failed: the calling thread is
 * still in the other namespace, so it must make nothing more (fail
 * closed); *err says so, and what fn made is the caller's to release. */
#define HV_NETNS_STRANDED (-2)
/* ... when entering failed (nothing ran, this thread is where it was). */
#define HV_NETNS_NOT_ENTERED (-3)

/* Run fn in the network namespace netns_fd and come back to self (an fd
 * of this thread's own namespace; -1: open /proc/thread-self/ns/net).
 * setns changes this thread only, and a socket stays in the namespace it
 * was made in: this is how sockets are made in a sandbox's namespace.
 * Returns fn's result, HV_NETNS_NOT_ENTERED or HV_NETNS_STRANDED (the
 * error names the namespace by what and carries setns's errno). */
int hv_netns_call (int netns_fd, int self, const char *what, int (*fn) (void *data, hv_error **err), void *data,
                   hv_error **err);
#endif
