#include "config.h"
#include "audit_monitor.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "error.h"
#include "landlock_audit.h"

/* Learn mode asks before the run, so that a kind of refusal the trail
 * cannot get is said at the start instead of silently missing: the
 * monitor's reader (landlock_audit.c) is accepted in any network
 * namespace, but the kernel's records reach only one (seen here: a
 * namespace made by `unshare -n` or `ip netns add` hears nothing).
 * Joining the log makes the kernel write a record of the join, so a
 * reader that hears nothing within wait_ms is one that never will. */
const char *
hv_audit_landlock_unseen (int wait_ms)
{
  int enabled = hv_landlock_audit_enabled ();
  if (enabled == 0)
    return "the kernel's audit is off (haven does not turn it on; `auditctl -e 1` does)";
  if (enabled < 0)
    return "the kernel's audit status cannot be read here (it needs root)";
  cleanup_close int fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_AUDIT);
  if (fd < 0)
    return "this kernel has no audit netlink socket";
  struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1U << (AUDIT_NLGRP_READLOG - 1) };
  if (bind (fd, (struct sockaddr *) &addr, sizeof (addr)) < 0)
    return errno == EPERM ? "reading the kernel's audit log needs CAP_AUDIT_READ in the initial user namespace"
                          : "the kernel's audit log cannot be read from here";
  struct pollfd p = { .fd = fd, .events = POLLIN };
  int r;
  do
    r = poll (&p, 1, wait_ms);
  while (r < 0 && errno == EINTR);
  if (r <= 0)
    return HV_LANDLOCK_AUDIT_UNHEARD;
  return NULL;
}
