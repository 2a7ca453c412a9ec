/* The egress table's rules, chain by chain, in the order egress_table.h
 * describes them: "output" (what the sandbox may send), "deny" (log and
 * reject) and "dns" (port 53 to the resolver). */
#include "config.h"
#include "egress_table_rules.h"

#include <stdio.h> /* before libnftnl's headers, which use FILE */
#include <arpa/inet.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "egress_table_expr.h"
#include "egress_table_sets.h"
#include "utils.h"

static struct nftnl_rule *
rule_new (hv_egress_table *t, const char *chain)
{
  struct nftnl_rule *r = nftnl_rule_alloc ();
  nftnl_rule_set_str (r, NFTNL_RULE_TABLE, t->name);
  nftnl_rule_set_str (r, NFTNL_RULE_CHAIN, chain);
  nftnl_rule_set_u32 (r, NFTNL_RULE_FAMILY, NFPROTO_INET);
  return r;
}

/* Append r to its chain (what: the rule, for errors) and free it. */
static void
rule_add (hv_nft_batch *b, hv_egress_table *t, struct nftnl_rule *r, const char *what)
{
  struct nlmsghdr *nlh = hv_nft_batch_msg (b, t, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND,
                                           xasprintf ("rule \"%s\" in chain %s", what,
                                                      nftnl_rule_get_str (r, NFTNL_RULE_CHAIN)));
  nftnl_rule_nlmsg_build_payload (nlh, r);
  hv_nft_batch_done (b, nlh);
  nftnl_rule_free (r);
}

/* A set of (address . port) keys and the family of its addresses. */
typedef struct set_ref
{
  const char *set;
  uint32_t id;
  int family;
} set_ref;

/* TCP to (address . port) in set: to chain deny, or accepted. */
static void
add_lookup_rule (hv_nft_batch *b, hv_egress_table *t, const set_ref *set, bool deny)
{
  int family = set->family;
  struct nftnl_rule *r = rule_new (t, "output");
  hv_nft_l4proto (r, IPPROTO_TCP);
  hv_nft_nfproto (r, family);
  hv_nft_payload (r, NFT_PAYLOAD_NETWORK_HEADER, hv_nft_daddr_off (family), (uint32_t) hv_egress_addr_len (family),
                  NFT_REG_1);
  hv_nft_payload (r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, family == AF_INET ? NFT_REG32_01 : NFT_REG32_04);
  hv_nft_lookup (r, set->set, set->id);
  hv_nft_verdict (r, deny ? NFT_GOTO : NF_ACCEPT, deny ? "deny" : NULL);
  cleanup_free char *what = xasprintf ("tcp daddr . dport @%s %s", set->set, deny ? "goto deny" : "accept");
  rule_add (b, t, r, what);
}

/* ip daddr 127.0.0.0/8 and ip6 daddr ::1, each to verdict (accept, or
 * return from a nat chain). */
static void
add_loopback_daddr (hv_nft_batch *b, hv_egress_table *t, const char *chain, int verdict)
{
  static const uint8_t net4[4] = { 127 }, mask4[4] = { 0xff };
  static const uint8_t lo6[16] = { [15] = 1 };
  struct nftnl_rule *r = rule_new (t, chain);
  hv_nft_nfproto (r, AF_INET);
  hv_nft_payload (r, NFT_PAYLOAD_NETWORK_HEADER, hv_nft_daddr_off (AF_INET), 4, NFT_REG_1);
  hv_nft_mask (r, mask4, 4);
  hv_nft_cmp (r, NFT_CMP_EQ, net4, 4);
  hv_nft_verdict (r, verdict, NULL);
  rule_add (b, t, r, "ip daddr 127.0.0.0/8");
  r = rule_new (t, chain);
  hv_nft_nfproto (r, AF_INET6);
  hv_nft_payload (r, NFT_PAYLOAD_NETWORK_HEADER, hv_nft_daddr_off (AF_INET6), 16, NFT_REG_1);
  hv_nft_cmp (r, NFT_CMP_EQ, lo6, 16);
  hv_nft_verdict (r, verdict, NULL);
  rule_add (b, t, r, "ip6 daddr ::1");
}

static void
add_output_rules (hv_nft_batch *b, hv_egress_table *t, const hv_egress_spec *spec)
{
  struct nftnl_rule *r;

  /* The sandbox's own packets, marked first (egress_table.h). */
  if (spec->sandbox_cgroup)
    {
      r = rule_new (t, "output");
      hv_nft_socket_cgroupv2_eq (r, spec->sandbox_cgroup_level, spec->sandbox_cgroup);
      hv_nft_meta_set_mark (r, spec->sandbox_mark);
      rule_add (b, t, r, "socket cgroupv2 (the sandbox's) meta mark set");
    }

  /* Docker's embedded DNS (127.0.0.11, on loopback, on a port of its
   * own) only through the resolver: it answers any name and forwards
   * what it does not know. */
  uint8_t docker_dns[4];
  inet_pton (AF_INET, HV_EGRESS_DOCKER_DNS, docker_dns);
  r = rule_new (t, "output");
  hv_nft_nfproto (r, AF_INET);
  hv_nft_payload (r, NFT_PAYLOAD_NETWORK_HEADER, hv_nft_daddr_off (AF_INET), 4, NFT_REG_1);
  hv_nft_cmp (r, NFT_CMP_EQ, docker_dns, 4);
  hv_nft_meta (r, NFT_META_MARK, NFT_REG_1);
  hv_nft_cmp (r, NFT_CMP_NEQ, &spec->resolver_mark, 4);
  hv_nft_verdict (r, NFT_GOTO, "deny");
  rule_add (b, t, r, "ip daddr " HV_EGRESS_DOCKER_DNS " meta mark != (the resolver's) goto deny");

  /* Loopback: the index of "lo" is 1 in every network namespace.  With
   * the forwarder every packet leaves by lo (its default route): there
   * loopback is told by destination. */
  if (spec->forward_port)
    add_loopback_daddr (b, t, "output", NF_ACCEPT);
  else
    {
      r = rule_new (t, "output");
      uint32_t lo = 1;
      hv_nft_meta (r, NFT_META_OIF, NFT_REG_1);
      hv_nft_cmp (r, NFT_CMP_EQ, &lo, 4);
      hv_nft_verdict (r, NF_ACCEPT, NULL);
      rule_add (b, t, r, "oif lo accept");
    }

  /* Neighbour discovery: without it no IPv6 address on a link is
   * reachable.  Hop limit 255 is what RFC 4861 requires of it. */
  static const uint8_t nd_types[] = { 133, 135, 136 };
  for (size_t i = 0; i < N_ELEMENTS (nd_types); i++)
    {
      r = rule_new (t, "output");
      hv_nft_nfproto (r, AF_INET6);
      hv_nft_l4proto (r, IPPROTO_ICMPV6);
      hv_nft_payload (r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NFT_REG_1);
      hv_nft_cmp_u8 (r, nd_types[i]);
      hv_nft_payload (r, NFT_PAYLOAD_NETWORK_HEADER, 7, 1, NFT_REG_1);
      hv_nft_cmp_u8 (r, 255);
      hv_nft_verdict (r, NF_ACCEPT, NULL);
      rule_add (b, t, r, "icmpv6 neighbour discovery accept");
    }

  /* Sources :: and fe80::/10: pasta was seen sending connection data
   * from those, which stalls IPv6 clients; nothing the sandbox needs
   * comes from them once neighbour discovery is through. */
  static const uint8_t any6[16];
  r = rule_new (t, "output");
  hv_nft_nfproto (r, AF_INET6);
  hv_nft_payload (r, NFT_PAYLOAD_NETWORK_HEADER, 8, 16, NFT_REG_1);
  hv_nft_cmp (r, NFT_CMP_EQ, any6, 16);
  hv_nft_verdict (r, NF_DROP, NULL);
  rule_add (b, t, r, "ip6 saddr :: drop");
  static const uint8_t ll_mask[16] = { 0xff, 0xc0 }, ll[16] = { 0xfe, 0x80 };
  r = rule_new (t, "output");
  hv_nft_nfproto (r, AF_INET6);
  hv_nft_payload (r, NFT_PAYLOAD_NETWORK_HEADER, 8, 16, NFT_REG_1);
  hv_nft_mask (r, ll_mask, 16);
  hv_nft_cmp (r, NFT_CMP_EQ, ll, 16);
  hv_nft_verdict (r, NF_DROP, NULL);
  rule_add (b, t, r, "ip6 saddr fe80::/10 drop");

  /* Cloud metadata and link-local: before anything that accepts, so no
   * allowed CIDR can cover them. */
  static const uint8_t ll4[2] = { 169, 254 };
  r = rule_new (t, "output");
  hv_nft_nfproto (r, AF_INET);
  hv_nft_payload (r, NFT_PAYLOAD_NETWORK_HEADER, hv_nft_daddr_off (AF_INET), 2, NFT_REG_1);
  hv_nft_cmp (r, NFT_CMP_EQ, ll4, 2);
  hv_nft_verdict (r, NFT_GOTO, "deny");
  rule_add (b, t, r, "ip daddr 169.254.0.0/16 goto deny");
  uint8_t md6[16];
  inet_pton (AF_INET6, "fd00:ec2::254", md6);
  r = rule_new (t, "output");
  hv_nft_nfproto (r, AF_INET6);
  hv_nft_payload (r, NFT_PAYLOAD_NETWORK_HEADER, hv_nft_daddr_off (AF_INET6), 16, NFT_REG_1);
  hv_nft_cmp (r, NFT_CMP_EQ, md6, 16);
  hv_nft_verdict (r, NFT_GOTO, "deny");
  rule_add (b, t, r, "ip6 daddr fd00:ec2::254 goto deny");

  /* The policy's denials: before every accept below (established
   * included, so that nothing allowed earlier outlives them), so deny
   * wins over allow and over pins.  TCP only: nothing else is ever
   * accepted. */
  static const set_ref denials[] = { { HV_NFT_SET_DENY4, HV_NFT_ID_DENY4, AF_INET },
                                     { HV_NFT_SET_DENY6, HV_NFT_ID_DENY6, AF_INET6 } };
  for (size_t i = 0; i < N_ELEMENTS (denials); i++)
    add_lookup_rule (b, t, &denials[i], true);

  /* The resolver's own upstream queries (to the container's original
   * resolver, which need not be on loopback): UDP and TCP carrying its
   * mark.  SO_MARK needs CAP_NET_ADMIN over the namespace, which the
   * sandbox does not have under an allowlist. */
  static const uint8_t dns_protos[] = { IPPROTO_UDP, IPPROTO_TCP };
  for (size_t p = 0; p < N_ELEMENTS (dns_protos) && spec->resolver_mark != 0; p++)
    {
      r = rule_new (t, "output");
      hv_nft_meta (r, NFT_META_MARK, NFT_REG_1);
      hv_nft_cmp (r, NFT_CMP_EQ, &spec->resolver_mark, 4);
      hv_nft_l4proto (r, dns_protos[p]);
      hv_nft_verdict (r, NF_ACCEPT, NULL);
      rule_add (b, t, r, "meta mark (the resolver's) accept");
    }

  /* DNS of the namespace's other sockets (Docker's forwarding): to its
   * upstream (egress_table.h). */
  for (size_t p = 0; p < N_ELEMENTS (dns_protos) && spec->sandbox_cgroup; p++)
    {
      r = rule_new (t, "output");
      hv_nft_meta (r, NFT_META_MARK, NFT_REG_1);
      hv_nft_cmp (r, NFT_CMP_NEQ, &spec->sandbox_mark, 4);
      hv_nft_l4proto (r, dns_protos[p]);
      hv_nft_dport_eq (r, 53);
      hv_nft_verdict (r, NF_ACCEPT, NULL);
      rule_add (b, t, r, "meta mark != (the sandbox's) th dport 53 accept");
    }

  uint32_t est = NF_CT_STATE_BIT (IP_CT_ESTABLISHED) | NF_CT_STATE_BIT (IP_CT_RELATED), zero = 0;
  r = rule_new (t, "output");
  hv_nft_ct (r, NFT_CT_STATE);
  hv_nft_mask (r, &est, 4);
  hv_nft_cmp (r, NFT_CMP_NEQ, &zero, 4);
  hv_nft_verdict (r, NF_ACCEPT, NULL);
  rule_add (b, t, r, "ct state established,related accept");
  uint32_t inv = NF_CT_STATE_INVALID_BIT;
  r = rule_new (t, "output");
  hv_nft_ct (r, NFT_CT_STATE);
  hv_nft_mask (r, &inv, 4);
  hv_nft_cmp (r, NFT_CMP_NEQ, &zero, 4);
  hv_nft_verdict (r, NF_DROP, NULL);
  rule_add (b, t, r, "ct state invalid drop");

  /* The resolver: what chain dns sent there, and nothing else of UDP. */
  const hv_egress_dns_target *targets[] = { &spec->dns4, &spec->dns6 };
  static const uint8_t protos[] = { IPPROTO_UDP, IPPROTO_TCP };
  for (size_t f = 0; f < 2; f++)
    for (size_t p = 0; p < 2 && targets[f]->set; p++)
      {
        int family = f == 0 ? AF_INET : AF_INET6;
        r = rule_new (t, "output");
        hv_nft_nfproto (r, family);
        hv_nft_payload (r, NFT_PAYLOAD_NETWORK_HEADER, hv_nft_daddr_off (family),
                        (uint32_t) hv_egress_addr_len (family), NFT_REG_1);
        hv_nft_cmp (r, NFT_CMP_EQ, targets[f]->addr, (uint32_t) hv_egress_addr_len (family));
        hv_nft_l4proto (r, protos[p]);
        hv_nft_dport_eq (r, targets[f]->port);
        hv_nft_verdict (r, NF_ACCEPT, NULL);
        rule_add (b, t, r, "DNS to the resolver accept");
      }

  /* With the forwarder this chain runs before chain "dns": port 53 of
   * any address is still on its way there, and goes nowhere else (the
   * namespace's only interface is lo). */
  for (size_t p = 0; p < 2 && spec->forward_port; p++)
    {
      r = rule_new (t, "output");
      hv_nft_l4proto (r, protos[p]);
      hv_nft_dport_eq (r, 53);
      hv_nft_verdict (r, NF_ACCEPT, NULL);
      rule_add (b, t, r, "th dport 53 accept (chain dns sends it to the resolver)");
    }

  /* TCP to allowed and pinned (address . port). */
  static const set_ref lookups[] = { { HV_NFT_SET_ALLOW4, HV_NFT_ID_ALLOW4, AF_INET },
                                     { HV_NFT_SET_PIN4, HV_NFT_ID_PIN4, AF_INET },
                                     { HV_NFT_SET_ALLOW6, HV_NFT_ID_ALLOW6, AF_INET6 },
                                     { HV_NFT_SET_PIN6, HV_NFT_ID_PIN6, AF_INET6 } };
  for (size_t i = 0; i < N_ELEMENTS (lookups); i++)
    add_lookup_rule (b, t, &lookups[i], false);

  r = rule_new (t, "output");
  hv_nft_verdict (r, NFT_GOTO, "deny");
  rule_add (b, t, r, "goto deny");
}

static void
add_deny_rules (hv_nft_batch *b, hv_egress_table *t, const hv_egress_spec *spec)
{
  /* Every denied packet is logged, and rejected whether its log message
   * is read or not (NFLOG is asynchronous: the sandbox never waits for
   * the reader).  No limit here: a kernel limit dropped the log of a new
   * destination behind a burst of junk, unseen by the reader.
   * The reader bounds what it writes (denial_limiter.h), reads a bounded
   * number per turn, and says in the trail when its socket overflowed. */
  struct nftnl_rule *r = rule_new (t, "deny");
  struct nftnl_expr *e = nftnl_expr_alloc ("log");
  nftnl_expr_set_str (e, NFTNL_EXPR_LOG_PREFIX, HV_EGRESS_LOG_PREFIX);
  nftnl_expr_set_u16 (e, NFTNL_EXPR_LOG_GROUP, spec->nflog_group);
  nftnl_rule_add_expr (r, e);
  rule_add (b, t, r, "log group");

  /* A reset or an ICMP error makes connect() fail at once: a tool that
   * waited for a timeout would retry, or look for another way out. */
  r = rule_new (t, "deny");
  hv_nft_l4proto (r, IPPROTO_TCP);
  e = nftnl_expr_alloc ("reject");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_TCP_RST);
  nftnl_expr_set_u8 (e, NFTNL_EXPR_REJECT_CODE, 0);
  nftnl_rule_add_expr (r, e);
  rule_add (b, t, r, "reject with tcp reset");
  r = rule_new (t, "deny");
  e = nftnl_expr_alloc ("reject");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_ICMPX_UNREACH);
  nftnl_expr_set_u8 (e, NFTNL_EXPR_REJECT_CODE, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
  nftnl_rule_add_expr (r, e);
  rule_add (b, t, r, "reject with icmpx admin-prohibited");
}

static void
add_dns_rules (hv_nft_batch *b, hv_egress_table *t, const hv_egress_spec *spec)
{
  struct nftnl_rule *r;
  if (spec->resolver_mark != 0)
    {
      r = rule_new (t, "dns");
      hv_nft_meta (r, NFT_META_MARK, NFT_REG_1);
      hv_nft_cmp (r, NFT_CMP_EQ, &spec->resolver_mark, 4);
      hv_nft_verdict (r, NFT_RETURN, NULL);
      rule_add (b, t, r, "meta mark return");
    }
  const hv_egress_dns_target *targets[] = { &spec->dns4, &spec->dns6 };
  static const uint8_t protos[] = { IPPROTO_UDP, IPPROTO_TCP };
  for (size_t f = 0; f < 2; f++)
    for (size_t p = 0; p < 2 && targets[f]->set; p++)
      {
        int family = f == 0 ? AF_INET : AF_INET6;
        uint16_t port = htons (targets[f]->port);
        r = rule_new (t, "dns");
        hv_nft_nfproto (r, family);
        hv_nft_l4proto (r, protos[p]);
        hv_nft_dport_eq (r, 53);
        if (spec->sandbox_cgroup)
          hv_nft_socket_cgroupv2_eq (r, spec->sandbox_cgroup_level, spec->sandbox_cgroup);
        hv_nft_imm (r, NFT_REG_1, targets[f]->addr, (uint32_t) hv_egress_addr_len (family));
        hv_nft_imm (r, NFT_REG_2, &port, 2);
        hv_nft_dnat (r, family);
        rule_add (b, t, r, "th dport 53 dnat to the resolver");
      }
}

/* Chain "forward": TCP that chain "output" let through, to anywhere but
 * loopback, to the forwarder's listener of its family (an IPv6
 * connection without an IPv6 listener has no route but lo, and fails). */
static void
add_forward_rules (hv_nft_batch *b, hv_egress_table *t, const hv_egress_spec *spec)
{
  add_loopback_daddr (b, t, "forward", NFT_RETURN);
  for (int f = 0; f < 2; f++)
    {
      int family = f == 0 ? AF_INET : AF_INET6;
      if (family == AF_INET6 && !spec->forward6)
        continue;
      uint8_t to[16] = { 0 };
      if (family == AF_INET)
        inet_pton (AF_INET, "127.0.0.1", to);
      else
        to[15] = 1;
      uint16_t port = htons (spec->forward_port);
      struct nftnl_rule *r = rule_new (t, "forward");
      hv_nft_nfproto (r, family);
      hv_nft_l4proto (r, IPPROTO_TCP);
      hv_nft_imm (r, NFT_REG_1, to, (uint32_t) hv_egress_addr_len (family));
      hv_nft_imm (r, NFT_REG_2, &port, 2);
      hv_nft_dnat (r, family);
      rule_add (b, t, r, "tcp dnat to the forwarder");
    }
}

/* Chain "input" (drop_inbound): only what arrives on loopback, so that
 * nothing from outside reaches the namespace and no reply to it can be
 * "established" on the way out. */
static void
add_input_rules (hv_nft_batch *b, hv_egress_table *t)
{
  struct nftnl_rule *r = rule_new (t, "input");
  uint32_t lo = 1;
  hv_nft_meta (r, NFT_META_IIF, NFT_REG_1);
  hv_nft_cmp (r, NFT_CMP_EQ, &lo, 4);
  hv_nft_verdict (r, NF_ACCEPT, NULL);
  rule_add (b, t, r, "iif lo accept");
}

void
hv_nft_add_rules (hv_nft_batch *b, hv_egress_table *t, const hv_egress_spec *spec)
{
  add_deny_rules (b, t, spec);
  add_output_rules (b, t, spec);
  add_dns_rules (b, t, spec);
  if (spec->forward_port)
    add_forward_rules (b, t, spec);
  if (spec->drop_inbound)
    add_input_rules (b, t);
}
