#include "config.h"
#include "network.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "utils.h"

int
hv_net_loopback_up (hv_error **err)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct mnl_socket *nl = mnl_socket_open (NETLINK_ROUTE);
  if (nl == NULL)
    return hv_error_set (err, errno, "netlink socket");
  int r = -1;
  if (mnl_socket_bind (nl, 0, MNL_SOCKET_AUTOPID) < 0)
    {
      hv_error_set (err, errno, "netlink bind");
      goto out;
    }
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = RTM_NEWLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  unsigned seq = (unsigned) time (NULL);
  nlh->nlmsg_seq = seq;
  struct ifinfomsg *ifm = mnl_nlmsg_put_extra_header (nlh, sizeof (*ifm));
  ifm->ifi_family = AF_UNSPEC;
  ifm->ifi_index = 1; /* loopback is always index 1 in a new namespace */
  ifm->ifi_flags = IFF_UP;
  ifm->ifi_change = IFF_UP;
  if (mnl_socket_sendto (nl, nlh, nlh->nlmsg_len) < 0)
    {
      hv_error_set (err, errno, "netlink send");
      goto out;
    }
  ssize_t n = mnl_socket_recvfrom (nl, buf, sizeof (buf));
  if (n < 0 || mnl_cb_run (buf, (size_t) n, seq, mnl_socket_get_portid (nl), NULL, NULL) < 0)
    {
      hv_error_set (err, errno, "bring up loopback");
      goto out;
    }
  r = 0;
out:
  mnl_socket_close (nl);
  return r;
}

int
hv_netns_call (int netns_fd, int self, const char *what, int (*fn) (void *data, hv_error **err), void *data,
               hv_error **err)
{
  cleanup_close int opened = -1;
  if (self < 0)
    {
      opened = self = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
      if (self < 0)
        {
          hv_error_set (err, errno, "open /proc/thread-self/ns/net");
          return HV_NETNS_NOT_ENTERED;
        }
    }
  if (setns (netns_fd, CLONE_NEWNET) < 0)
    {
      hv_error_set (err, errno, "enter %s", what);
      return HV_NETNS_NOT_ENTERED;
    }
  int r = fn (data, err);
  if (setns (self, CLONE_NEWNET) < 0)
    {
      int e = errno;
      hv_error_free (err);
      hv_error_set (err, e, "return from %s (this thread is still in it)", what);
      return HV_NETNS_STRANDED;
    }
  return r;
}
