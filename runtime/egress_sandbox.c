/* A container's egress table at create: egress_sandbox.h. */
#include "config.h"
#include "egress_sandbox.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "network.h"
#include "utils.h"

/* linux/pidfd.h since 6.11; Debian 12's headers are older. */
#ifndef PIDFD_GET_NET_NAMESPACE
#define PIDFD_GET_NET_NAMESPACE _IO (0xFF, 4)
#endif

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

/* init's network namespace, through a pidfd: the namespace of that
 * process, never of another that got its pid.  Kernels before 6.11 have
 * no PIDFD_GET_NET_NAMESPACE: /proc then, and the pidfd tells whether
 * the process was still alive after the open (a pid is not reused while
 * its process lives, and init waits for us). */
static int
open_init_netns (pid_t pid, hv_error **err)
{
  cleanup_close int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0)
    return hv_error_set (err, errno, "pidfd of container init %d", pid);
  int ns = ioctl (pidfd, PIDFD_GET_NET_NAMESPACE, 0);
  if (ns >= 0)
    {
      fcntl (ns, F_SETFD, FD_CLOEXEC);
      return ns;
    }
  char path[64];
  snprintf (path, sizeof (path), "/proc/%d/ns/net", pid);
  ns = open (path, O_RDONLY | O_CLOEXEC);
  if (ns < 0)
    return hv_error_set (err, errno, "open %s", path);
  if (syscall (SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
    {
      close (ns);
      return hv_error_set (err, 0, "container init exited during create");
    }
  return ns;
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
make_sockets (struct hv_egress_sandbox *s, hv_error **err)
{
  if (hv_net_loopback_up (err) < 0)
    return hv_error_wrap (err, "bring loopback up");
  s->udp4 = resolver_socket (AF_INET, SOCK_DGRAM, err);
  if (s->udp4 < 0)
    return -1;
  s->tcp4 = resolver_socket (AF_INET, SOCK_STREAM, err);
  if (s->tcp4 < 0)
    return -1;
  s->udp6 = resolver_socket (AF_INET6, SOCK_DGRAM, err);
  if (s->udp6 == -1)
    return -1;
  s->tcp6 = s->udp6 >= 0 ? resolver_socket (AF_INET6, SOCK_STREAM, err) : -2;
  if (s->tcp6 == -1)
    return -1;
  if (s->tcp6 < 0 && s->udp6 >= 0)
    {
      close (s->udp6);
      s->udp6 = -1;
    }
  s->udp6 = s->udp6 < 0 ? -1 : s->udp6;
  s->tcp6 = s->tcp6 < 0 ? -1 : s->tcp6;
  return 0;
}

/* The sockets are made in the sandbox's namespace (a socket stays in the
 * namespace it was made in): enter it, make them, come back.  This
 * thread only; create is single-threaded. */
static int
call_make_sockets (void *data, hv_error **err)
{
  return make_sockets (data, err);
}

static int
make_sockets_in (struct hv_egress_sandbox *s, hv_error **err)
{
  int r = hv_netns_call (s->netns, -1, "the container's network namespace", call_make_sockets, s, err);
  /* setns needs CAP_SYS_ADMIN in our own user namespace too: a runtime
   * that is not root of the initial one (rootless haven run, rootless
   * Podman) cannot enter the container's namespace or come back, so the
   * table cannot be made and create fails closed.  Say so rather than
   * only "not permitted". */
  if ((r == HV_NETNS_NOT_ENTERED || r == HV_NETNS_STRANDED) && err && *err && (*err)->errno_code == EPERM)
    return hv_error_wrap (err, "a runtime without root in the initial user namespace cannot install the egress "
                               "table yet (use a policy with network mode none, or run as root)");
  return r < 0 ? -1 : 0;
}

static int
build_table (struct hv_egress_sandbox *s, hv_error **err)
{
  const hv_egress_config *c = s->config;
  hv_egress_spec spec = { .allow = c->allow, .n_allow = c->n_allow, .deny = c->deny, .n_deny = c->n_deny,
                          .resolver_mark = HV_EGRESS_RESOLVER_MARK, .nflog_group = HV_EGRESS_NFLOG_GROUP };
  spec.dns4.set = true;
  inet_pton (AF_INET, "127.0.0.1", spec.dns4.addr);
  spec.dns4.port = RESOLVER_PORT;
  /* Without an IPv6 loopback, DNS over IPv6 is denied like other UDP. */
  spec.dns6.set = s->udp6 >= 0;
  inet_pton (AF_INET6, "::1", spec.dns6.addr);
  spec.dns6.port = RESOLVER_PORT;
  if (hv_egress_table_open (HV_EGRESS_TABLE_NAME, s->netns, &s->table, err) < 0)
    return -1;
  char fingerprint[HV_EGRESS_FINGERPRINT_LEN];
  if (hv_egress_table_create (s->table, &spec, fingerprint, err) < 0)
    {
      /* Made by someone else (a namespace shared with another policed
       * container): not ours to delete. */
      hv_egress_table_close (s->table);
      s->table = NULL;
      return -1;
    }
  /* Read back as a separate step: what the kernel holds now is what the
   * container gets. */
  return hv_egress_table_verify (s->table, fingerprint, err);
}

int
hv_egress_sandbox_install (struct hv_egress_sandbox *s, pid_t pid, hv_error **err)
{
  if (s->config == NULL)
    return 0;
  s->netns = open_init_netns (pid, err);
  if (s->netns < 0 || make_sockets_in (s, err) < 0 || build_table (s, err) < 0)
    return hv_error_wrap (err, "egress rules of policy %s (%s)", s->config->policy, HV_EGRESS_ANNOTATION);
  return 0;
}

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

void
hv_egress_sandbox_release (struct hv_egress_sandbox *s)
{
  hv_egress_table_close (s->table);
  s->table = NULL;
  close_fd (&s->netns);
  close_fd (&s->udp4);
  close_fd (&s->tcp4);
  close_fd (&s->udp6);
  close_fd (&s->tcp6);
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
