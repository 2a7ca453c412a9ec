/* The egress table's sets (egress_table_sets.c): their names, ids and
 * keys, and the messages that make them and add or remove elements.
 * Used by the parts that build the table, pin and read it; not for
 * other callers. */
#ifndef HAVEN_EGRESS_TABLE_SETS_H
#define HAVEN_EGRESS_TABLE_SETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress_ranges.h"
#include "egress_table_batch.h"

struct nftnl_set_elem;

/* Set names and nftables' own type ids of their keys (for `nft list`). */
#define HV_NFT_SET_ALLOW4 "allow4"
#define HV_NFT_SET_ALLOW6 "allow6"
#define HV_NFT_SET_PIN4 "pin4"
#define HV_NFT_SET_PIN6 "pin6"
#define HV_NFT_SET_PROBE "refresh_probe"
#define HV_NFT_SET_DENY4 "deny4"
#define HV_NFT_SET_DENY6 "deny6"
#define HV_NFT_TYPE_IPV4_SERVICE ((7u << 6) | 13u) /* ipv4_addr . inet_service */
#define HV_NFT_TYPE_IPV6_SERVICE ((8u << 6) | 13u) /* ipv6_addr . inet_service */
#define HV_NFT_KEY4_LEN 8                          /* address, port in a 32-bit register */
#define HV_NFT_KEY6_LEN 20

/* Set ids within the batch that makes the table (rules look sets up by
 * them while the sets are new). */
enum
{
  HV_NFT_ID_ALLOW4 = 1,
  HV_NFT_ID_ALLOW6 = 2,
  HV_NFT_ID_PIN4 = 3,
  HV_NFT_ID_PIN6 = 4,
  HV_NFT_ID_PROBE = 5,
  HV_NFT_ID_DENY4 = 6,
  HV_NFT_ID_DENY6 = 7,
};

/* Set name (id) with keys (address . port) of family: ranges (interval)
 * or single keys with a timeout each. */
void hv_nft_add_set (hv_nft_batch *b, hv_egress_table *t, const char *name, uint32_t id, int family, bool interval);
/* A set key: the address, then the port in its own 32-bit register;
 * returns its length. */
uint32_t hv_nft_make_key (uint8_t key[HV_NFT_KEY6_LEN], int family, const uint8_t *addr, uint16_t port);
/* One element per message (type NFT_MSG_NEWSETELEM or DELSETELEM), so an
 * error names the element (what, owned); key_end: a range's end, or
 * NULL; timeout_ms 0: none. */
void hv_nft_add_elem (hv_nft_batch *b, hv_egress_table *t, uint16_t type, uint16_t flags, const char *set,
                      const uint8_t *key, const uint8_t *key_end, uint32_t key_len, uint64_t timeout_ms, char *what);
/* Ranges rs[0..n) of family into interval set. */
void hv_nft_add_range_elems (hv_nft_batch *b, hv_egress_table *t, const char *set, const hv_egress_range *rs, size_t n,
                             int family);
/* 0 when p can be pinned (a family, a port, a timeout). */
int hv_nft_check_pin (const hv_egress_pin *p, hv_error **err);
/* Add (NFT_MSG_NEWSETELEM, NLM_F_CREATE without NLM_F_EXCL: an existing
 * element is no error) or delete (NFT_MSG_DELSETELEM) pin p. */
void hv_nft_add_pin (hv_nft_batch *b, hv_egress_table *t, uint16_t type, const hv_egress_pin *p);
/* Each element of set as the kernel holds it, to each. */
int hv_nft_get_elems (hv_egress_table *t, const char *set, void (*each) (struct nftnl_set_elem *e, void *data),
                      void *data, hv_error **err);
#endif
