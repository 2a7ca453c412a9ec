/* Haven's egress resolver from the shell, for tests/integration/
 * test_egress_resolver.sh.  Makes the egress table in the sandbox's
 * netns (DNS redirected to 127.0.0.1:53 and [::1]:53 there), the
 * listening sockets in that netns, and runs the resolver until killed.
 *
 *   egress_resolver_tool SANDBOX_NETNS TABLE [OPTIONS]
 *       --allow NAME PORTS      NAME or *.ZONE; PORTS: 443 or 1000-2000
 *       --deny NAME PORTS       (both repeatable)
 *       --allow-cidr CIDR PORTS also allowed by the table itself
 *       --deny-cidr CIDR PORTS
 *       --upstream ADDR         port 53 (repeatable, in order)
 *       --upstream-port ADDR PORT
 *       --upstream-netns PATH   where upstream sockets are made
 *       --mark MARK             SO_MARK of upstream queries, the table's too
 *       --ttl-floor S --ttl-cap S --grace S --timeout-ms MS
 *       --policy NAME
 * Prints "ready", then one line per event: "refused NAME TYPE WHY",
 * "pinned NAME ADDR SECONDS NAMES_FOR" (NAMES_FOR: what names_for says
 * of ADDR, comma-separated); "error: ..." and exit 1 when the resolver
 * ends. */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress_resolver.h"

#define MAX_RULES 64

static hv_egress_resolver *resolver;

static void
on_refused (void *data, const char *qname, uint16_t qtype, const char *why)
{
  (void) data;
  printf ("refused %s %u %s\n", qname, qtype, why);
  fflush (stdout);
}

static void
on_pinned (void *data, const char *qname, int family, const uint8_t addr[16], uint32_t timeout_s)
{
  (void) data;
  char text[INET6_ADDRSTRLEN];
  inet_ntop (family, addr, text, sizeof (text));
  const char *names[8];
  size_t n = hv_egress_resolver_names_for (resolver, family, addr, names, 8);
  printf ("pinned %s %s %u ", qname, text, timeout_s);
  for (size_t i = 0; i < n; i++)
    printf ("%s%s", i ? "," : "", names[i]);
  printf ("\n");
  fflush (stdout);
}

static int
fail (const char *what, hv_error **err)
{
  fprintf (stderr, "egress_resolver_tool: %s%s%s\n", what, err && *err ? ": " : "", err && *err ? (*err)->msg : "");
  hv_error_free (err);
  return 1;
}

static int
parse_rule (const char *name, const char *ports, hv_egress_name_rule *r)
{
  hv_error *err = NULL;
  r->subdomains = strncmp (name, "*.", 2) == 0;
  r->name = r->subdomains ? name + 2 : name;
  if (hv_egress_ports_parse (ports, &r->port_min, &r->port_max, &err) < 0)
    return fail ("ports", &err);
  return 0;
}

/* A listening socket bound in the current netns. */
static int
listen_socket (int family, int type)
{
  int fd = socket (family, type | SOCK_CLOEXEC, 0);
  int one = 1;
  struct sockaddr_storage ss = { 0 };
  socklen_t len;
  if (family == AF_INET)
    {
      struct sockaddr_in *s = (struct sockaddr_in *) &ss;
      s->sin_family = AF_INET;
      s->sin_port = htons (53);
      s->sin_addr.s_addr = htonl (INADDR_LOOPBACK);
      len = sizeof (*s);
    }
  else
    {
      struct sockaddr_in6 *s = (struct sockaddr_in6 *) &ss;
      s->sin6_family = AF_INET6;
      s->sin6_port = htons (53);
      s->sin6_addr = in6addr_loopback;
      len = sizeof (*s);
      setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof (one));
    }
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof (one));
  if (fd < 0 || bind (fd, (struct sockaddr *) &ss, len) < 0 || (type == SOCK_STREAM && listen (fd, 64) < 0))
    {
      perror ("egress_resolver_tool: listening socket");
      exit (1);
    }
  return fd;
}

static int
parse_upstream (const char *addr, const char *port, struct sockaddr_storage *ss)
{
  memset (ss, 0, sizeof (*ss));
  struct sockaddr_in *s4 = (struct sockaddr_in *) ss;
  struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) ss;
  uint16_t p = htons ((uint16_t) atoi (port));
  if (inet_pton (AF_INET, addr, &s4->sin_addr) == 1)
    {
      s4->sin_family = AF_INET;
      s4->sin_port = p;
    }
  else if (inet_pton (AF_INET6, addr, &s6->sin6_addr) == 1)
    {
      s6->sin6_family = AF_INET6;
      s6->sin6_port = p;
    }
  else
    return -1;
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    {
      fprintf (stderr, "usage: egress_resolver_tool SANDBOX_NETNS TABLE [OPTIONS]\n");
      return 2;
    }
  setvbuf (stdout, NULL, _IOLBF, 0);
  hv_error *err = NULL;
  static hv_egress_name_rule allow[MAX_RULES], deny[MAX_RULES];
  static hv_egress_cidr allow_cidrs[MAX_RULES], deny_cidrs[MAX_RULES];
  static struct sockaddr_storage ups[8];
  hv_egress_resolver_config cfg = { .allow = allow, .deny = deny, .allow_cidrs = allow_cidrs,
                                    .deny_cidrs = deny_cidrs, .upstreams = ups, .upstream_netns_fd = -1,
                                    .policy_name = "test" };
  for (int i = 3; i < argc; i++)
    {
      const char *o = argv[i];
      bool more1 = i + 1 < argc, more2 = i + 2 < argc;
      if ((strcmp (o, "--allow") == 0 || strcmp (o, "--deny") == 0) && more2)
        {
          bool a = o[2] == 'a';
          if ((a ? cfg.n_allow : cfg.n_deny) >= MAX_RULES
              || parse_rule (argv[i + 1], argv[i + 2], a ? &allow[cfg.n_allow++] : &deny[cfg.n_deny++]))
            return 2;
          i += 2;
        }
      else if ((strcmp (o, "--allow-cidr") == 0 || strcmp (o, "--deny-cidr") == 0) && more2)
        {
          bool a = o[2] == 'a';
          hv_egress_cidr *c = a ? &allow_cidrs[cfg.n_allow_cidrs++] : &deny_cidrs[cfg.n_deny_cidrs++];
          if (hv_egress_cidr_parse (argv[i + 1], c, &err) < 0
              || hv_egress_ports_parse (argv[i + 2], &c->port_min, &c->port_max, &err) < 0)
            return fail ("cidr", &err);
          i += 2;
        }
      else if (strcmp (o, "--upstream") == 0 && more1 && cfg.n_upstreams < 8)
        {
          if (parse_upstream (argv[++i], "53", &ups[cfg.n_upstreams++]) < 0)
            return fail ("bad upstream", NULL);
        }
      else if (strcmp (o, "--upstream-port") == 0 && more2 && cfg.n_upstreams < 8)
        {
          if (parse_upstream (argv[i + 1], argv[i + 2], &ups[cfg.n_upstreams++]) < 0)
            return fail ("bad upstream", NULL);
          i += 2;
        }
      else if (strcmp (o, "--upstream-netns") == 0 && more1)
        {
          cfg.upstream_netns_fd = open (argv[++i], O_RDONLY | O_CLOEXEC);
          if (cfg.upstream_netns_fd < 0)
            return fail ("open upstream netns", NULL);
        }
      else if (strcmp (o, "--mark") == 0 && more1)
        cfg.upstream_mark = (uint32_t) strtoul (argv[++i], NULL, 0);
      else if (strcmp (o, "--ttl-floor") == 0 && more1)
        cfg.ttl_floor = (uint32_t) atoi (argv[++i]);
      else if (strcmp (o, "--ttl-cap") == 0 && more1)
        cfg.ttl_cap = (uint32_t) atoi (argv[++i]);
      else if (strcmp (o, "--grace") == 0 && more1)
        cfg.grace = (uint32_t) atoi (argv[++i]);
      else if (strcmp (o, "--timeout-ms") == 0 && more1)
        cfg.query_timeout_ms = (unsigned) atoi (argv[++i]);
      else if (strcmp (o, "--policy") == 0 && more1)
        cfg.policy_name = argv[++i];
      else
        {
          fprintf (stderr, "egress_resolver_tool: unknown option %s\n", o);
          return 2;
        }
    }

  int sb = open (argv[1], O_RDONLY | O_CLOEXEC);
  int self = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (sb < 0 || self < 0)
    return fail ("open netns", NULL);
  hv_egress_table *table = NULL;
  if (hv_egress_table_open (argv[2], sb, &table, &err) < 0)
    return fail ("table", &err);
  hv_egress_spec spec = { .allow = allow_cidrs, .n_allow = cfg.n_allow_cidrs, .resolver_mark = cfg.upstream_mark };
  spec.dns4.set = spec.dns6.set = true;
  spec.dns4.port = spec.dns6.port = 53;
  inet_pton (AF_INET, "127.0.0.1", spec.dns4.addr);
  inet_pton (AF_INET6, "::1", spec.dns6.addr);
  if (hv_egress_table_create (table, &spec, NULL, &err) < 0)
    return fail ("create table", &err);

  if (setns (sb, CLONE_NEWNET) < 0)
    return fail ("setns sandbox", NULL);
  cfg.udp4_fd = listen_socket (AF_INET, SOCK_DGRAM);
  cfg.tcp4_fd = listen_socket (AF_INET, SOCK_STREAM);
  cfg.udp6_fd = listen_socket (AF_INET6, SOCK_DGRAM);
  cfg.tcp6_fd = listen_socket (AF_INET6, SOCK_STREAM);
  if (setns (self, CLONE_NEWNET) < 0)
    return fail ("setns back", NULL);
  cfg.table = table;
  cfg.events.refused = on_refused;
  cfg.events.pinned = on_pinned;
  if (hv_egress_resolver_new (&cfg, &resolver, &err) < 0)
    return fail ("resolver", &err);
  printf ("ready\n");
  for (;;)
    {
      struct pollfd p = { .fd = hv_egress_resolver_fd (resolver), .events = POLLIN };
      if (poll (&p, 1, -1) < 0)
        continue;
      if (hv_egress_resolver_dispatch (resolver, &err) < 0)
        {
          printf ("error: %s\n", err->msg);
          hv_error_free (&err);
          hv_egress_resolver_free (resolver);
          hv_egress_table_close (table);
          return 1;
        }
    }
}
