/* A container's egress table at create: egress_sandbox.h. */
#include "config.h"
#include "egress_sandbox.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array_size.h"
#include "cgroup_ident.h"
#include "egress_forward.h"
#include "egress_host_addrs.h"
#include "egress_pasta_route.h"
#include "haven_annotations.h"
#include "netns_sockets.h"
#include "network.h"
#include "utils.h"

#define RESOLVER_PORT 53

int
hv_egress_sandbox_prepare (const oci_spec *spec, const char *name, struct hv_egress_sandbox *s, hv_error **err)
{
  const char *text = oci_kv_get (&spec->annotations, HV_EGRESS_ANNOTATION);
  if (text == NULL)
    return 0;
  if (hv_egress_config_parse (text, name, &s->config, err) < 0)
    return -1;
  s->text = xstrdup (text);
  return 0;
}

/* One listening socket of the resolver, made in the current namespace:
 * -1 with *err, or -2 (no error) when the family has no loopback address
 * there (IPv6 disabled, as Docker does on networks without IPv6). */
static int
resolver_socket (int family, int type, hv_error **err)
{
  cleanup_close int fd = socket (family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const char *what = family == AF_INET ? (type == SOCK_DGRAM ? "UDP 127.0.0.1:53" : "TCP 127.0.0.1:53")
                                       : (type == SOCK_DGRAM ? "UDP [::1]:53" : "TCP [::1]:53");
  if (fd < 0 && family == AF_INET6 && errno == EAFNOSUPPORT)
    return -2;
  if (fd < 0)
    return hv_error_set (err, errno, "resolver socket %s", what);
  int one = 1;
  if (type == SOCK_STREAM)
    setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof (one));
  int r;
  if (family == AF_INET)
    {
      struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (RESOLVER_PORT),
                               .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
      r = bind (fd, (struct sockaddr *) &a, sizeof (a));
    }
  else
    {
      setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof (one));
      struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons (RESOLVER_PORT),
                                .sin6_addr = IN6ADDR_LOOPBACK_INIT };
      r = bind (fd, (struct sockaddr *) &a, sizeof (a));
      if (r < 0 && errno == EADDRNOTAVAIL)
        return -2;
    }
  if (r < 0)
    return hv_error_set (err, errno, "bind resolver socket %s in the container's network namespace", what);
  if (type == SOCK_STREAM && listen (fd, 64) < 0)
    return hv_error_set (err, errno, "listen on resolver socket %s", what);
  return steal_fd (&fd);
}

static int
make_sockets (struct hv_egress_fds *f, hv_error **err)
{
  if (hv_net_loopback_up (err) < 0)
    return hv_error_wrap (err, "bring loopback up");
  f->udp4 = resolver_socket (AF_INET, SOCK_DGRAM, err);
  if (f->udp4 < 0)
    return -1;
  f->tcp4 = resolver_socket (AF_INET, SOCK_STREAM, err);
  if (f->tcp4 < 0)
    return -1;
  f->udp6 = resolver_socket (AF_INET6, SOCK_DGRAM, err);
  if (f->udp6 == -1)
    return -1;
  f->tcp6 = f->udp6 >= 0 ? resolver_socket (AF_INET6, SOCK_STREAM, err) : -2;
  if (f->tcp6 == -1)
    return -1;
  if (f->tcp6 < 0 && f->udp6 >= 0)
    {
      close (f->udp6);
      f->udp6 = -1;
    }
  f->udp6 = f->udp6 < 0 ? -1 : f->udp6;
  f->tcp6 = f->tcp6 < 0 ? -1 : f->tcp6;
  return 0;
}

/* An unbound netfilter netlink socket of the namespace: the kernel ties
 * a netlink socket to the namespace of the process that made it, and
 * checks the opener's capabilities there on every message (with the
 * sender's: the runtime, later the monitor, as the namespace's owner). */
static int
helper_netlink (hv_error **err)
{
  int fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
  if (fd < 0)
    return hv_error_set (err, errno, "netfilter netlink socket in the container's network namespace");
  return fd;
}

/* What the helper makes in the sandbox's namespace, in the order of
 * hv_egress_socket_names; the IPv6 pair may be -1 (no IPv6 loopback
 * there). */
static int
make_all (void *data, int *fds, hv_error **err)
{
  const struct hv_egress_sandbox *s = data;
  struct hv_egress_fds made = HV_EGRESS_FDS_INIT;
  if (make_sockets (&made, err) < 0 || (made.nft = helper_netlink (err)) < 0
      || (made.nflog = helper_netlink (err)) < 0)
    return -1; /* the helper exits: nothing to close */
  uint16_t port;
  int fwd[2];
  if (s->forward && hv_egress_forward_setup (fwd, &port, s->forward_v4, s->forward_v6, err) < 0)
    return -1;
  if (s->forward)
    {
      made.fwd4 = fwd[0];
      made.fwd6 = fwd[1];
    }
  for (unsigned i = 0; i < HV_EGRESS_N_SOCKETS; i++)
    fds[i] = *hv_egress_fds_socket (&made, i);
  return 0;
}

static int
make_sockets_in (struct hv_egress_sandbox *s, hv_error **err)
{
  int fds[HV_EGRESS_N_SOCKETS];
  if (hv_netns_sockets (s->fds.netns, hv_egress_socket_names, HV_EGRESS_N_SOCKETS, make_all, s, fds, err) < 0)
    {
      if (*err && (*err)->errno_code == EPERM)
        hv_error_append (err, " (a runtime without capabilities over that namespace cannot install the egress table "
                              "yet: use a policy with network mode none, or run as root)");
      return -1;
    }
  for (unsigned i = 0; i < HV_EGRESS_N_SOCKETS; i++)
    *hv_egress_fds_socket (&s->fds, i) = fds[i];
  const struct hv_egress_fds *f = &s->fds;
  if (f->udp4 < 0 || f->tcp4 < 0 || f->nft < 0 || f->nflog < 0 || (f->udp6 < 0) != (f->tcp6 < 0)
      || (s->forward && f->fwd4 < 0) || (!s->forward && (f->fwd4 >= 0 || f->fwd6 >= 0)))
    return hv_error_set (err, 0, "the helper in the container's network namespace sent too few sockets");
  return 0;
}

/* The port the forwarder's listeners took (both the same). */
static int
forward_port (const struct hv_egress_sandbox *s, uint16_t *port, hv_error **err)
{
  struct sockaddr_in a;
  socklen_t len = sizeof (a);
  if (getsockname (s->fds.fwd4, (struct sockaddr *) &a, &len) < 0 || a.sin_family != AF_INET)
    return hv_error_set (err, errno, "the forwarder's listener");
  *port = ntohs (a.sin_port);
  return 0;
}

static int
build_table (struct hv_egress_sandbox *s, pid_t pid, const char *own_cgroup, hv_error **err)
{
  const hv_egress_config *c = s->config;
  hv_egress_spec spec = { .allow = c->allow, .n_allow = c->n_allow, .deny = c->deny, .n_deny = c->n_deny,
                          .resolver_mark = HV_EGRESS_RESOLVER_MARK, .nflog_group = HV_EGRESS_NFLOG_GROUP,
                          .sandbox_mark = HV_EGRESS_SANDBOX_MARK };
  /* An engine's namespace has the engine's own sockets in it too
   * (Docker's DNS forwarding): told apart by init's cgroup, which every
   * process of the container is in (egress_table.h).  Only a cgroup made
   * for this container tells: a rootless one without a cgroup shares
   * its cgroup with processes of the user that are not the container's
   * (its exec would not join).  Without one, every DNS query of the
   * namespace goes to the resolver (Docker then cannot forward a name it
   * does not know). */
  if (c->connect == HV_EGRESS_CONNECT_ENGINE && own_cgroup && own_cgroup[0]
      && hv_cgroup_v2_ident (pid, own_cgroup, &spec.sandbox_cgroup, &spec.sandbox_cgroup_level, err) < 0)
    return hv_error_wrap (err, "the container's cgroup");
  cleanup_free hv_egress_cidr *deny = NULL;
  if (s->deny_host_addrs)
    {
      cleanup_free hv_egress_cidr *host = NULL;
      size_t n_host;
      if (hv_egress_host_addrs (&host, &n_host, err) < 0)
        return -1;
      deny = xmalloc0 ((c->n_deny + n_host + 1) * sizeof (*deny));
      if (c->n_deny)
        memcpy (deny, c->deny, c->n_deny * sizeof (*deny));
      if (n_host)
        memcpy (deny + c->n_deny, host, n_host * sizeof (*deny));
      spec.deny = deny;
      spec.n_deny = c->n_deny + n_host;
    }
  spec.dns4.set = true;
  inet_pton (AF_INET, "127.0.0.1", spec.dns4.addr);
  spec.dns4.port = RESOLVER_PORT;
  /* Without an IPv6 loopback, DNS over IPv6 is denied like other UDP. */
  spec.dns6.set = s->fds.udp6 >= 0;
  inet_pton (AF_INET6, "::1", spec.dns6.addr);
  spec.dns6.port = RESOLVER_PORT;
  if (s->forward && forward_port (s, &spec.forward_port, err) < 0)
    return -1;
  spec.forward6 = s->fds.fwd6 >= 0;
  if (hv_egress_table_open_socket (HV_EGRESS_TABLE_NAME, hv_egress_fd_take (&s->fds.nft), &s->table, err) < 0)
    return -1;
  char *fingerprint = s->fingerprint;
  int r = hv_egress_table_create (s->table, &spec, fingerprint, err);
  /* A kernel without `socket cgroupv2` (before 5.13: EOPNOTSUPP) or
   * without nft_socket (ENOENT) refuses the whole batch (nothing was
   * made): the table without it, as before (egress_table.h). */
  if (r < 0 && spec.sandbox_cgroup && *err
      && ((*err)->errno_code == EOPNOTSUPP || (*err)->errno_code == ENOENT))
    {
      hv_error_free (err);
      spec.sandbox_cgroup = 0;
      r = hv_egress_table_create (s->table, &spec, fingerprint, err);
    }
  if (r < 0)
    {
      /* Made by someone else (a namespace shared with another policed
       * container): not ours to delete. */
      hv_egress_table_close (s->table);
      s->table = NULL;
      /* One table name per network namespace, and every packet of the
       * namespace passes every table's chains: two containers in one
       * namespace (a pod, a joined netns) cannot each have their own
       * allowlist.  Say so, rather than only the kernel's "File exists". */
      if (*err && (*err)->errno_code == EEXIST)
        hv_error_append (err, " (the network namespace already has haven's egress table: another container with an "
                              "egress policy shares this namespace, or left its table there without a delete; "
                              "containers in one network namespace share its egress rules, so only one of them at a "
                              "time may have an egress policy)");
      return -1;
    }
  /* Read back as a separate step: what the kernel holds now is what the
   * container gets. */
  return hv_egress_table_verify (s->table, fingerprint, err);
}

int
hv_egress_sandbox_install (struct hv_egress_sandbox *s, pid_t pid, const char *own_cgroup, hv_error **err)
{
  if (s->config == NULL)
    return 0;
  if (s->forward)
    {
      /* What the host reaches, seen from here (the forwarder connects
       * from the caller's namespace). */
      struct hv_pasta_route route;
      if (hv_pasta_route (&route, err) < 0)
        return hv_error_wrap (err, "egress: the host's routes");
      s->forward_v4 = route.v4 || route.pasta_picks;
      s->forward_v6 = route.v6 || route.pasta_picks;
    }
  s->fds.netns = hv_netns_open_of_pid (pid, err);
  if (s->fds.netns < 0 || make_sockets_in (s, err) < 0 || build_table (s, pid, own_cgroup, err) < 0)
    return hv_error_wrap (err, "egress rules of policy %s (%s)", s->config->policy, HV_EGRESS_ANNOTATION);
  return 0;
}

void
hv_egress_sandbox_release (struct hv_egress_sandbox *s)
{
  hv_egress_table_close (s->table);
  s->table = NULL;
  hv_egress_fds_close (&s->fds);
  hv_egress_config_free (s->config);
  s->config = NULL;
  free (s->text);
  s->text = NULL;
}

void
hv_egress_sandbox_abort (struct hv_egress_sandbox *s)
{
  if (s->table)
    {
      cleanup_error hv_error *ignored = NULL;
      hv_egress_table_delete (s->table, &ignored);
    }
  hv_egress_sandbox_release (s);
}
