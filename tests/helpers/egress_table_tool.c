/* The egress table's C API from the shell, for tests/integration/
 * test_egress_table.sh (run it inside the namespace: ip netns exec).
 *
 *   egress_table_tool create NAME [OPTIONS]      prints the fingerprint
 *       --allow CIDR PORTS    PORTS: any, 443 or 1000-2000 (repeatable)
 *       --deny CIDR PORTS     (repeatable)
 *       --dns4 ADDR PORT      --dns6 ADDR PORT     --nflog GROUP
 *       --mark MARK           --pin ADDR PORT MS   (repeatable)
 *   egress_table_tool pin NAME [--mode readd|delete-add] ADDR PORT MS...
 *                                                 prints the renewal used
 *   egress_table_tool refresh-mode NAME           prints what the probe chose
 *   egress_table_tool fingerprint NAME
 *   egress_table_tool verify NAME FINGERPRINT
 *   egress_table_tool delete NAME
 *   egress_table_tool nflog GROUP COUNT SECONDS   prints one line per
 *       record ("haven-egress tcp 192.0.2.9 81") until COUNT or SECONDS;
 *       "listening" on stderr once bound */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "egress_table.h"

static int
usage (void)
{
  fprintf (stderr, "usage: egress_table_tool create|pin|refresh-mode|fingerprint|verify|delete|nflog ...\n");
  return 2;
}

static int
report (hv_error **err)
{
  fprintf (stderr, "egress_table_tool: %s\n", (*err)->msg);
  hv_error_free (err);
  return 1;
}

static int
parse_addr (const char *s, int *family, uint8_t addr[16])
{
  memset (addr, 0, 16);
  if (inet_pton (AF_INET, s, addr) == 1)
    *family = AF_INET;
  else if (inet_pton (AF_INET6, s, addr) == 1)
    *family = AF_INET6;
  else
    {
      fprintf (stderr, "egress_table_tool: bad address %s\n", s);
      return -1;
    }
  return 0;
}

static int
parse_pin (char **argv, hv_egress_pin *p)
{
  memset (p, 0, sizeof (*p));
  if (parse_addr (argv[0], &p->family, p->addr) < 0)
    return -1;
  p->port = (uint16_t) strtoul (argv[1], NULL, 10);
  p->timeout_ms = strtoull (argv[2], NULL, 10);
  return 0;
}

static int
cmd_create (hv_egress_table *t, int argc, char **argv)
{
  hv_error *err = NULL;
  hv_egress_spec spec = { 0 };
  hv_egress_cidr allow[64], deny[64];
  hv_egress_pin pins[64];
  for (int i = 0; i < argc; i++)
    {
      const char *o = argv[i];
      if ((strcmp (o, "--allow") == 0 || strcmp (o, "--deny") == 0) && i + 2 < argc && spec.n_allow < 64
          && spec.n_deny < 64)
        {
          hv_egress_cidr *c = o[2] == 'a' ? &allow[spec.n_allow++] : &deny[spec.n_deny++];
          if (hv_egress_cidr_parse (argv[i + 1], c, &err) < 0
              || hv_egress_ports_parse (argv[i + 2], &c->port_min, &c->port_max, &err) < 0)
            return report (&err);
          i += 2;
        }
      else if ((strcmp (o, "--dns4") == 0 || strcmp (o, "--dns6") == 0) && i + 2 < argc)
        {
          hv_egress_dns_target *d = o[5] == '4' ? &spec.dns4 : &spec.dns6;
          int family;
          if (parse_addr (argv[i + 1], &family, d->addr) < 0)
            return 2;
          d->set = true;
          d->port = (uint16_t) strtoul (argv[i + 2], NULL, 10);
          i += 2;
        }
      else if (strcmp (o, "--nflog") == 0 && i + 1 < argc)
        spec.nflog_group = (uint16_t) strtoul (argv[++i], NULL, 10);
      else if (strcmp (o, "--mark") == 0 && i + 1 < argc)
        spec.resolver_mark = (uint32_t) strtoul (argv[++i], NULL, 0);
      else if (strcmp (o, "--pin") == 0 && i + 3 < argc && spec.n_pins < 64)
        {
          if (parse_pin (argv + i + 1, &pins[spec.n_pins++]) < 0)
            return 2;
          i += 3;
        }
      else
        return usage ();
    }
  spec.allow = allow;
  spec.deny = deny;
  spec.pins = pins;
  char fp[HV_EGRESS_FINGERPRINT_LEN];
  if (hv_egress_table_create (t, &spec, fp, &err) < 0)
    return report (&err);
  printf ("%s\n", fp);
  return 0;
}

static int
cmd_pin (hv_egress_table *t, int argc, char **argv)
{
  hv_error *err = NULL;
  int i = 0;
  if (argc >= 2 && strcmp (argv[0], "--mode") == 0)
    {
      hv_egress_table_force_refresh_mode (t, strcmp (argv[1], "readd") == 0 ? HV_EGRESS_REFRESH_READD
                                                                            : HV_EGRESS_REFRESH_DELETE_ADD);
      i = 2;
    }
  if ((argc - i) % 3 != 0 || argc - i == 0)
    return usage ();
  size_t n = (size_t) (argc - i) / 3;
  hv_egress_pin *pins = calloc (n, sizeof (*pins));
  for (size_t k = 0; k < n; k++)
    if (parse_pin (argv + i + 3 * k, &pins[k]) < 0)
      {
        free (pins);
        return 2;
      }
  int r = hv_egress_pin_add (t, pins, n, &err);
  free (pins);
  if (r < 0)
    return report (&err);
  hv_egress_refresh mode = HV_EGRESS_REFRESH_UNKNOWN;
  if (hv_egress_table_refresh_mode (t, &mode, &err) < 0)
    return report (&err);
  printf ("%s\n", hv_egress_refresh_name (mode));
  return 0;
}

/* Print one NFLOG record: prefix, protocol, destination, port. */
static int
nflog_cb (const struct nlmsghdr *nlh, void *data)
{
  int *seen = data;
  const struct nfgenmsg *g = mnl_nlmsg_get_payload (nlh);
  const char *prefix = "";
  const uint8_t *pkt = NULL;
  size_t plen = 0;
  const struct nlattr *a;
  /* libmnl's macro hands mnl_attr_ok the distance to the message's end as
   * an int; mnl_cb_run handed this message within the datagram read. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
  mnl_attr_for_each (a, nlh, sizeof (*g))
#pragma GCC diagnostic pop
  {
    if (mnl_attr_get_type (a) == NFULA_PREFIX)
      prefix = mnl_attr_get_str (a);
    else if (mnl_attr_get_type (a) == NFULA_PAYLOAD)
      {
        pkt = mnl_attr_get_payload (a);
        plen = mnl_attr_get_payload_len (a);
      }
  }
  char dst[INET6_ADDRSTRLEN] = "?";
  unsigned proto = 0, port = 0;
  size_t l4 = 0;
  if (g->nfgen_family == AF_INET && pkt != NULL && plen >= 20)
    {
      inet_ntop (AF_INET, pkt + 16, dst, sizeof (dst));
      proto = pkt[9];
      l4 = (size_t) (pkt[0] & 0xf) * 4;
    }
  else if (g->nfgen_family == AF_INET6 && pkt != NULL && plen >= 40)
    {
      inet_ntop (AF_INET6, pkt + 24, dst, sizeof (dst));
      proto = pkt[6];
      l4 = 40;
    }
  if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) && plen >= l4 + 4)
    port = (unsigned) (pkt[l4 + 2] << 8 | pkt[l4 + 3]);
  const char *pname = proto == IPPROTO_TCP ? "tcp" : proto == IPPROTO_UDP ? "udp"
                      : proto == IPPROTO_ICMP ? "icmp" : proto == IPPROTO_ICMPV6 ? "icmpv6" : "other";
  printf ("%s %s %s %u\n", prefix, pname, dst, port);
  fflush (stdout);
  (*seen)++;
  return MNL_CB_OK;
}

static int
cmd_nflog (int argc, char **argv)
{
  if (argc != 3)
    return usage ();
  uint16_t group = (uint16_t) strtoul (argv[0], NULL, 10);
  int count = atoi (argv[1]);
  int seconds = atoi (argv[2]);
  struct mnl_socket *nl = mnl_socket_open (NETLINK_NETFILTER);
  if (nl == NULL || mnl_socket_bind (nl, 0, MNL_SOCKET_AUTOPID) < 0)
    {
      perror ("egress_table_tool: netlink");
      return 1;
    }
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = 1;
  struct nfgenmsg *g = mnl_nlmsg_put_extra_header (nlh, sizeof (*g));
  g->nfgen_family = AF_UNSPEC;
  g->version = NFNETLINK_V0;
  g->res_id = htons (group);
  struct nfulnl_msg_config_cmd cmd = { .command = NFULNL_CFG_CMD_BIND };
  mnl_attr_put (nlh, NFULA_CFG_CMD, sizeof (cmd), &cmd);
  struct nfulnl_msg_config_mode mode = { .copy_range = htonl (128), .copy_mode = NFULNL_COPY_PACKET };
  mnl_attr_put (nlh, NFULA_CFG_MODE, sizeof (mode), &mode);
  if (mnl_socket_sendto (nl, nlh, nlh->nlmsg_len) < 0)
    {
      perror ("egress_table_tool: nflog bind");
      return 1;
    }
  ssize_t n = mnl_socket_recvfrom (nl, buf, sizeof (buf));
  if (n < 0 || mnl_cb_run (buf, (size_t) n, 1, mnl_socket_get_portid (nl), NULL, NULL) < 0)
    {
      perror ("egress_table_tool: nflog bind group");
      return 1;
    }
  fprintf (stderr, "listening\n");
  int seen = 0;
  struct timespec start, now;
  clock_gettime (CLOCK_MONOTONIC, &start);
  for (;;)
    {
      clock_gettime (CLOCK_MONOTONIC, &now);
      long left = seconds * 1000L - ((now.tv_sec - start.tv_sec) * 1000L + (now.tv_nsec - start.tv_nsec) / 1000000);
      if (seen >= count || left <= 0)
        break;
      struct pollfd p = { .fd = mnl_socket_get_fd (nl), .events = POLLIN };
      if (poll (&p, 1, (int) left) <= 0)
        continue;
      n = mnl_socket_recvfrom (nl, buf, sizeof (buf));
      if (n < 0)
        break;
      mnl_cb_run (buf, (size_t) n, 0, 0, nflog_cb, &seen);
    }
  mnl_socket_close (nl);
  return seen >= count ? 0 : 1;
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    return usage ();
  if (strcmp (argv[1], "nflog") == 0)
    return cmd_nflog (argc - 2, argv + 2);
  hv_error *err = NULL;
  hv_egress_table *t = NULL;
  if (hv_egress_table_open (argv[2], -1, &t, &err) < 0)
    return report (&err);
  int r;
  const char *c = argv[1];
  if (strcmp (c, "create") == 0)
    r = cmd_create (t, argc - 3, argv + 3);
  else if (strcmp (c, "pin") == 0)
    r = cmd_pin (t, argc - 3, argv + 3);
  else if (strcmp (c, "refresh-mode") == 0)
    {
      hv_egress_refresh mode = HV_EGRESS_REFRESH_UNKNOWN;
      r = hv_egress_table_refresh_mode (t, &mode, &err) < 0 ? report (&err) : 0;
      if (r == 0)
        printf ("%s\n", hv_egress_refresh_name (mode));
    }
  else if (strcmp (c, "fingerprint") == 0)
    {
      char fp[HV_EGRESS_FINGERPRINT_LEN];
      r = hv_egress_table_fingerprint (t, fp, &err) < 0 ? report (&err) : 0;
      if (r == 0)
        printf ("%s\n", fp);
    }
  else if (strcmp (c, "verify") == 0 && argc == 4)
    r = hv_egress_table_verify (t, argv[3], &err) < 0 ? report (&err) : 0;
  else if (strcmp (c, "delete") == 0)
    r = hv_egress_table_delete (t, &err) < 0 ? report (&err) : 0;
  else
    r = usage ();
  hv_egress_table_close (t);
  return r;
}
