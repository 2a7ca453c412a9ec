/* The egress table's handle: its netlink socket, made in the sandbox's
 * network namespace or handed over, and its name.  The table itself is
 * made in egress_table_create.c (rules: egress_table_rules.c, sets:
 * egress_table_sets.c), read back in egress_table_fingerprint.c and
 * pinned into in egress_table_pins.c, all through the batches and
 * requests of egress_table_batch.c. */
#include "config.h"
#include "egress_table.h"
#include "network.h"

#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "egress_table_internal.h"
#include "utils.h"

static bool
valid_name (const char *name)
{
  size_t n = strlen (name);
  if (n == 0 || n > 64)
    return false;
  for (size_t i = 0; i < n; i++)
    {
      char c = name[i];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
        return false;
    }
  return true;
}

/* Options of the table's socket, set by whoever uses it (the buffer
 * sizes beyond the system's limits need CAP_NET_ADMIN of the caller, not
 * of the process that made the socket). */
static int
setup_nfnetlink (struct mnl_socket *nl, hv_error **err)
{
  int one = 1;
  /* Errors with the kernel's own explanation, without a copy of the
   * whole failed message. */
  setsockopt (mnl_socket_get_fd (nl), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof (one));
  setsockopt (mnl_socket_get_fd (nl), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof (one));
  /* Room for a batch of many elements and one answer to each. */
  int size = 4 << 20;
  if (setsockopt (mnl_socket_get_fd (nl), SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof (size)) < 0)
    setsockopt (mnl_socket_get_fd (nl), SOL_SOCKET, SO_SNDBUF, &size, sizeof (size));
  if (setsockopt (mnl_socket_get_fd (nl), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof (size)) < 0)
    setsockopt (mnl_socket_get_fd (nl), SOL_SOCKET, SO_RCVBUF, &size, sizeof (size));
  if (mnl_socket_bind (nl, 0, MNL_SOCKET_AUTOPID) < 0)
    return hv_error_set (err, errno, "bind nf_tables netlink socket");
  return 0;
}

static struct mnl_socket *
open_nfnetlink (hv_error **err)
{
  struct mnl_socket *nl = mnl_socket_open2 (NETLINK_NETFILTER, SOCK_CLOEXEC);
  if (nl == NULL)
    {
      hv_error_set (err, errno, "open nf_tables netlink socket");
      return NULL;
    }
  if (setup_nfnetlink (nl, err) < 0)
    {
      mnl_socket_close (nl);
      return NULL;
    }
  return nl;
}

static int
call_open_nfnetlink (void *data, hv_error **err)
{
  struct mnl_socket **nl = data;
  *nl = open_nfnetlink (err);
  return *nl ? 0 : -1;
}

static hv_egress_table *
table_new (const char *name, struct mnl_socket *nl)
{
  hv_egress_table *t = xmalloc0 (sizeof (*t));
  t->name = xstrdup (name);
  t->nl = nl;
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  t->seq = (uint32_t) ts.tv_sec ^ (uint32_t) ts.tv_nsec;
  return t;
}

int
hv_egress_table_open (const char *name, int netns_fd, hv_egress_table **out, hv_error **err)
{
  *out = NULL;
  if (!valid_name (name))
    return hv_error_set (err, 0, "egress table name \"%s\": use 1 to 64 of A-Z a-z 0-9 _ -", name);
  struct mnl_socket *nl = NULL;
  if (netns_fd < 0)
    nl = open_nfnetlink (err);
  /* A socket stays in the namespace it was made in: made there. */
  else if (hv_netns_call (netns_fd, -1, "the sandbox's network namespace", call_open_nfnetlink, &nl, err)
           == HV_NETNS_STRANDED)
    {
      if (nl != NULL)
        mnl_socket_close (nl);
      return -1;
    }
  if (nl == NULL)
    return -1;
  *out = table_new (name, nl);
  return 0;
}

int
hv_egress_check_netfilter_socket (int fd, hv_error **err)
{
  int domain = -1, protocol = -1;
  socklen_t len = sizeof (domain);
  if (getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
    return hv_error_set (err, errno, "fd %d is not a netfilter netlink socket", fd);
  len = sizeof (protocol);
  if (getsockopt (fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) < 0)
    return hv_error_set (err, errno, "fd %d is not a netfilter netlink socket", fd);
  if (domain != AF_NETLINK || protocol != NETLINK_NETFILTER)
    return hv_error_set (err, 0, "fd %d is not a netfilter netlink socket (domain %d, protocol %d)", fd, domain,
                         protocol);
  return 0;
}

int
hv_egress_table_open_socket (const char *name, int fd, hv_egress_table **out, hv_error **err)
{
  cleanup_close int owned = fd;
  *out = NULL;
  if (!valid_name (name))
    return hv_error_set (err, 0, "egress table name \"%s\": use 1 to 64 of A-Z a-z 0-9 _ -", name);
  if (hv_egress_check_netfilter_socket (fd, err) < 0)
    return hv_error_wrap (err, "egress table %s", name);
  /* Requests wait for their answers (hv_nft_batch_send reads without waiting
   * on its own). */
  int fl = fcntl (fd, F_GETFL);
  if (fl < 0 || fcntl (fd, F_SETFL, fl & ~O_NONBLOCK) < 0 || fcntl (fd, F_SETFD, FD_CLOEXEC) < 0)
    return hv_error_set (err, errno, "egress table %s: socket flags", name);
  struct mnl_socket *nl = mnl_socket_fdopen (fd);
  if (nl == NULL)
    return hv_error_set (err, errno, "egress table %s: nf_tables netlink socket", name);
  owned = -1;
  /* Bound already (a socket that went from the runtime to the monitor):
   * keep its port id, the options are set. */
  if (mnl_socket_get_portid (nl) == 0 && setup_nfnetlink (nl, err) < 0)
    {
      mnl_socket_close (nl);
      return hv_error_wrap (err, "egress table %s", name);
    }
  *out = table_new (name, nl);
  return 0;
}

int
hv_egress_table_fd (const hv_egress_table *t)
{
  return mnl_socket_get_fd (t->nl);
}

void
hv_egress_table_close (hv_egress_table *t)
{
  if (t == NULL)
    return;
  mnl_socket_close (t->nl);
  free (t->name);
  free (t);
}

const char *
hv_egress_table_name (const hv_egress_table *t)
{
  return t->name;
}
