/* Network namespace setup over rtnetlink (libmnl). */
#ifndef HAVEN_NETWORK_H
#define HAVEN_NETWORK_H
#include "error.h"
/* Bring "lo" up in the current network namespace: a fresh namespace has
 * it down, and programs expect 127.0.0.1 to work. */
int hv_net_loopback_up (hv_error **err);
#endif
