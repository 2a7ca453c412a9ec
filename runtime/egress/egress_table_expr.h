/* Expressions for the egress table's rules (egress_table_expr.c): each
 * appends one or two nftables expressions to rule r.  Used by
 * egress_table_rules.c; not for other callers. */
#ifndef HAVEN_EGRESS_TABLE_EXPR_H
#define HAVEN_EGRESS_TABLE_EXPR_H

#include <stdint.h>

struct nftnl_rule;

/* meta KEY into dreg. */
void hv_nft_meta (struct nftnl_rule *r, uint32_t key, uint32_t dreg);
/* Register 1 compared (NFT_CMP_*) with len bytes of data. */
void hv_nft_cmp (struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len);
void hv_nft_cmp_u8 (struct nftnl_rule *r, uint8_t v);
/* len bytes at offset of header base (NFT_PAYLOAD_*) into dreg. */
void hv_nft_payload (struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len, uint32_t dreg);
/* Register 1 &= mask. */
void hv_nft_mask (struct nftnl_rule *r, const void *mask, uint32_t len);
/* The verdict (NF_ACCEPT, NF_DROP, NFT_GOTO chain, NFT_RETURN). */
void hv_nft_verdict (struct nftnl_rule *r, int verdict, const char *chain);
/* len bytes of data into dreg. */
void hv_nft_imm (struct nftnl_rule *r, uint32_t dreg, const void *data, uint32_t len);
/* dnat to address (register 1) and port (register 2) of family
 * (AF_INET, AF_INET6): ip/ip6 ... dnat to ADDR:PORT. */
void hv_nft_dnat (struct nftnl_rule *r, int family);
/* ct KEY into register 1. */
void hv_nft_ct (struct nftnl_rule *r, uint32_t key);
/* Register 1 (on) looked up in set (the batch's set_id while it is new). */
void hv_nft_lookup (struct nftnl_rule *r, const char *set, uint32_t set_id);
/* meta nfproto == family (AF_INET, AF_INET6) */
void hv_nft_nfproto (struct nftnl_rule *r, int family);
/* meta l4proto == proto */
void hv_nft_l4proto (struct nftnl_rule *r, uint8_t proto);
/* Offset of the destination address in the network header. */
uint32_t hv_nft_daddr_off (int family);
/* th dport == port */
void hv_nft_dport_eq (struct nftnl_rule *r, uint16_t port);
/* socket cgroupv2 level LEVEL == ID: the packet's socket was made by a
 * process in that cgroup or below it.  No socket, or a socket whose
 * cgroup is above LEVEL: the rule does not match. */
void hv_nft_socket_cgroupv2_eq (struct nftnl_rule *r, uint32_t level, uint64_t id);
/* meta mark set MARK (register 1). */
void hv_nft_meta_set_mark (struct nftnl_rule *r, uint32_t mark);
#endif
