/* The expressions the egress table's rules are made of (libnftnl), one
 * function per expression as `nft list` would print it.  They write
 * register 1 and compare it, unless told otherwise. */
#include "config.h"
#include "egress_table_expr.h"

#include <stdio.h> /* before libnftnl's headers, which use FILE */
#include <arpa/inet.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <sys/socket.h>

void
hv_nft_meta (struct nftnl_rule *r, uint32_t key, uint32_t dreg)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("meta");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_META_KEY, key);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_META_DREG, dreg);
  nftnl_rule_add_expr (r, e);
}

void
hv_nft_cmp (struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("cmp");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_CMP_OP, op);
  nftnl_expr_set (e, NFTNL_EXPR_CMP_DATA, data, len);
  nftnl_rule_add_expr (r, e);
}

void
hv_nft_cmp_u8 (struct nftnl_rule *r, uint8_t v)
{
  hv_nft_cmp (r, NFT_CMP_EQ, &v, 1);
}

void
hv_nft_payload (struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len, uint32_t dreg)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("payload");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_PAYLOAD_BASE, base);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_PAYLOAD_LEN, len);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
  nftnl_rule_add_expr (r, e);
}

void
hv_nft_mask (struct nftnl_rule *r, const void *mask, uint32_t len)
{
  static const uint8_t zero[16];
  struct nftnl_expr *e = nftnl_expr_alloc ("bitwise");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_BITWISE_LEN, len);
  nftnl_expr_set (e, NFTNL_EXPR_BITWISE_MASK, mask, len);
  nftnl_expr_set (e, NFTNL_EXPR_BITWISE_XOR, zero, len);
  nftnl_rule_add_expr (r, e);
}

void
hv_nft_verdict (struct nftnl_rule *r, int verdict, const char *chain)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("immediate");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_IMM_VERDICT, (uint32_t) verdict);
  if (chain != NULL)
    nftnl_expr_set_str (e, NFTNL_EXPR_IMM_CHAIN, chain);
  nftnl_rule_add_expr (r, e);
}

void
hv_nft_imm (struct nftnl_rule *r, uint32_t dreg, const void *data, uint32_t len)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("immediate");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_IMM_DREG, dreg);
  nftnl_expr_set (e, NFTNL_EXPR_IMM_DATA, data, len);
  nftnl_rule_add_expr (r, e);
}

void
hv_nft_dnat (struct nftnl_rule *r, int family)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("nat");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_NAT_TYPE, NFT_NAT_DNAT);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_NAT_FAMILY, family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_NAT_REG_ADDR_MIN, NFT_REG_1);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_NAT_REG_PROTO_MIN, NFT_REG_2);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_NAT_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
  nftnl_rule_add_expr (r, e);
}

void
hv_nft_ct (struct nftnl_rule *r, uint32_t key)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("ct");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_CT_KEY, key);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
  nftnl_rule_add_expr (r, e);
}

void
hv_nft_lookup (struct nftnl_rule *r, const char *set, uint32_t set_id)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("lookup");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
  nftnl_expr_set_str (e, NFTNL_EXPR_LOOKUP_SET, set);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_LOOKUP_SET_ID, set_id);
  nftnl_rule_add_expr (r, e);
}

void
hv_nft_nfproto (struct nftnl_rule *r, int family)
{
  hv_nft_meta (r, NFT_META_NFPROTO, NFT_REG_1);
  hv_nft_cmp_u8 (r, family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
}

void
hv_nft_l4proto (struct nftnl_rule *r, uint8_t proto)
{
  hv_nft_meta (r, NFT_META_L4PROTO, NFT_REG_1);
  hv_nft_cmp_u8 (r, proto);
}

uint32_t
hv_nft_daddr_off (int family)
{
  return family == AF_INET ? 16 : 24;
}

void
hv_nft_dport_eq (struct nftnl_rule *r, uint16_t port)
{
  uint16_t be = htons (port);
  hv_nft_payload (r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
  hv_nft_cmp (r, NFT_CMP_EQ, &be, 2);
}

void
hv_nft_socket_cgroupv2_eq (struct nftnl_rule *r, uint32_t level, uint64_t id)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("socket");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_SOCKET_KEY, NFT_SOCKET_CGROUPV2);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_SOCKET_DREG, NFT_REG_1);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_SOCKET_LEVEL, level);
  nftnl_rule_add_expr (r, e);
  hv_nft_cmp (r, NFT_CMP_EQ, &id, sizeof (id));
}

void
hv_nft_meta_set_mark (struct nftnl_rule *r, uint32_t mark)
{
  hv_nft_imm (r, NFT_REG_1, &mark, sizeof (mark));
  struct nftnl_expr *e = nftnl_expr_alloc ("meta");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_META_KEY, NFT_META_MARK);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_META_SREG, NFT_REG_1);
  nftnl_rule_add_expr (r, e);
}
