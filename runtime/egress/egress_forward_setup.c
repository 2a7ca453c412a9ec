/* The forwarder's side in the sandbox's network namespace: its routes
 * and listeners (egress_forward.h, hv_egress_forward_setup). */
#include "config.h"
#include "egress_forward.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "utils.h"

/* Backlog of each listener: connections the monitor has not accepted
 * yet (it accepts them as its loop turns). */
#define FWD_BACKLOG 128

/* "ip route add default dev lo" for family: every destination routed,
 * nothing leaving (lo is the namespace's only interface).  -2 (no
 * error): IPv6 is disabled in the namespace. */
static int
route_default_lo (int family, hv_error **err)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct mnl_socket *nl = mnl_socket_open (NETLINK_ROUTE);
  if (nl == NULL)
    return hv_error_set (err, errno, "netlink route socket");
  int r = -1;
  if (mnl_socket_bind (nl, 0, MNL_SOCKET_AUTOPID) < 0)
    {
      hv_error_set (err, errno, "netlink bind");
      goto out;
    }
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = RTM_NEWROUTE;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
  unsigned seq = (unsigned) time (NULL);
  nlh->nlmsg_seq = seq;
  struct rtmsg *rtm = mnl_nlmsg_put_extra_header (nlh, sizeof (*rtm));
  rtm->rtm_family = (unsigned char) family;
  rtm->rtm_dst_len = 0;
  rtm->rtm_table = RT_TABLE_MAIN;
  rtm->rtm_protocol = RTPROT_BOOT;
  rtm->rtm_scope = RT_SCOPE_LINK;
  rtm->rtm_type = RTN_UNICAST;
  mnl_attr_put_u32 (nlh, RTA_OIF, 1); /* lo: index 1 in every namespace */
  /* The source: lo's addresses are host-scoped, which a link-scoped
   * route would not pick (the connection would go out from 0.0.0.0 and
   * its answer nowhere). */
  if (family == AF_INET)
    {
      struct in_addr src = { .s_addr = htonl (INADDR_LOOPBACK) };
      mnl_attr_put (nlh, RTA_PREFSRC, sizeof (src), &src);
    }
  else
    mnl_attr_put (nlh, RTA_PREFSRC, sizeof (in6addr_loopback), &in6addr_loopback);
  if (mnl_socket_sendto (nl, nlh, nlh->nlmsg_len) < 0)
    {
      hv_error_set (err, errno, "netlink send");
      goto out;
    }
  ssize_t n = mnl_socket_recvfrom (nl, buf, sizeof (buf));
  if (n < 0 || mnl_cb_run (buf, (size_t) n, seq, mnl_socket_get_portid (nl), NULL, NULL) < 0)
    {
      if (family == AF_INET6 && (errno == EAFNOSUPPORT || errno == EACCES))
        r = -2;
      else
        hv_error_set (err, errno, "%s default route on lo", family == AF_INET ? "IPv4" : "IPv6");
      goto out;
    }
  r = 0;
out:
  mnl_socket_close (nl);
  return r;
}

/* A listener on the loopback address of family, port *port (0: any; the
 * one given is written back).  -2 (no error): no IPv6 loopback. */
static int
listener (int family, uint16_t *port, hv_error **err)
{
  cleanup_close int fd = socket (family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 && family == AF_INET6 && errno == EAFNOSUPPORT)
    return -2;
  if (fd < 0)
    return hv_error_set (err, errno, "forwarder socket");
  int one = 1;
  struct sockaddr_storage ss = { 0 };
  socklen_t len;
  if (family == AF_INET)
    {
      struct sockaddr_in *a = (struct sockaddr_in *) &ss;
      a->sin_family = AF_INET;
      a->sin_port = htons (*port);
      a->sin_addr.s_addr = htonl (INADDR_LOOPBACK);
      len = sizeof (*a);
    }
  else
    {
      setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof (one));
      struct sockaddr_in6 *a = (struct sockaddr_in6 *) &ss;
      a->sin6_family = AF_INET6;
      a->sin6_port = htons (*port);
      a->sin6_addr = in6addr_loopback;
      len = sizeof (*a);
    }
  if (bind (fd, (struct sockaddr *) &ss, len) < 0)
    {
      if (family == AF_INET6 && errno == EADDRNOTAVAIL)
        return -2;
      return hv_error_set (err, errno, "bind the forwarder's %s listener", family == AF_INET ? "IPv4" : "IPv6");
    }
  if (listen (fd, FWD_BACKLOG) < 0)
    return hv_error_set (err, errno, "listen on the forwarder's socket");
  if (getsockname (fd, (struct sockaddr *) &ss, &len) < 0)
    return hv_error_set (err, errno, "getsockname");
  *port = ntohs (family == AF_INET ? ((struct sockaddr_in *) &ss)->sin_port
                                   : ((struct sockaddr_in6 *) &ss)->sin6_port);
  return steal_fd (&fd);
}

int
hv_egress_forward_setup (int fds[2], uint16_t *port, bool v4, bool v6, hv_error **err)
{
  fds[0] = fds[1] = -1;
  *port = 0;
  /* A port the kernel picks: in a fresh namespace nothing holds it, and
   * the IPv6 listener takes the same one. */
  int fd4 = listener (AF_INET, port, err);
  if (fd4 < 0)
    return -1;
  int fd6 = listener (AF_INET6, port, err);
  if (fd6 == -1)
    {
      close (fd4);
      return -1;
    }
  if (v4 && route_default_lo (AF_INET, err) < 0)
    {
      close (fd4);
      if (fd6 >= 0)
        close (fd6);
      return hv_error_wrap (err, "the forwarder's route");
    }
  if (fd6 >= 0 && v6)
    {
      int r = route_default_lo (AF_INET6, err);
      if (r == -1)
        {
          close (fd4);
          close (fd6);
          return hv_error_wrap (err, "the forwarder's route");
        }
    }
  fds[0] = fd4;
  fds[1] = fd6 >= 0 ? fd6 : -1;
  return 0;
}
