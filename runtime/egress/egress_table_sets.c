/* The egress table's sets and their elements: allowed and denied
 * (address . port) ranges, pins with their timeouts. */
#include "config.h"
#include "egress_table_sets.h"

#include <stdio.h> /* before libnftnl's headers, which use FILE */
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>

#include "utils.h"

void
hv_nft_add_set (hv_nft_batch *b, hv_egress_table *t, const char *name, uint32_t id, int family, bool interval)
{
  struct nftnl_set *s = nftnl_set_alloc ();
  nftnl_set_set_str (s, NFTNL_SET_TABLE, t->name);
  nftnl_set_set_str (s, NFTNL_SET_NAME, name);
  nftnl_set_set_u32 (s, NFTNL_SET_FAMILY, NFPROTO_INET);
  nftnl_set_set_u32 (s, NFTNL_SET_ID, id);
  nftnl_set_set_u32 (s, NFTNL_SET_KEY_TYPE, family == AF_INET ? HV_NFT_TYPE_IPV4_SERVICE : HV_NFT_TYPE_IPV6_SERVICE);
  nftnl_set_set_u32 (s, NFTNL_SET_KEY_LEN, family == AF_INET ? HV_NFT_KEY4_LEN : HV_NFT_KEY6_LEN);
  if (interval)
    {
      /* Ranges of concatenations: the kernel's pipapo set, which needs the
       * length of each field. */
      uint8_t fields[] = { (uint8_t) hv_egress_addr_len (family), 2 };
      nftnl_set_set_u32 (s, NFTNL_SET_FLAGS, NFT_SET_INTERVAL | NFT_SET_CONCAT);
      nftnl_set_set_data (s, NFTNL_SET_DESC_CONCAT, fields, sizeof (fields));
    }
  else
    nftnl_set_set_u32 (s, NFTNL_SET_FLAGS, NFT_SET_TIMEOUT);
  struct nlmsghdr *nlh
      = hv_nft_batch_msg (b, t, NFT_MSG_NEWSET, NLM_F_CREATE | NLM_F_EXCL, xasprintf ("set %s", name));
  nftnl_set_nlmsg_build_payload (nlh, s);
  hv_nft_batch_done (b, nlh);
  nftnl_set_free (s);
}

uint32_t
hv_nft_make_key (uint8_t key[HV_NFT_KEY6_LEN], int family, const uint8_t *addr, uint16_t port)
{
  size_t alen = hv_egress_addr_len (family);
  uint16_t be = htons (port);
  memset (key, 0, HV_NFT_KEY6_LEN);
  memcpy (key, addr, alen);
  memcpy (key + alen, &be, 2);
  return (uint32_t) alen + 4;
}

void
hv_nft_add_elem (hv_nft_batch *b, hv_egress_table *t, uint16_t type, uint16_t flags, const char *set,
                 const uint8_t *key, const uint8_t *key_end, uint32_t key_len, uint64_t timeout_ms, char *what)
{
  struct nftnl_set *s = nftnl_set_alloc ();
  nftnl_set_set_str (s, NFTNL_SET_TABLE, t->name);
  nftnl_set_set_str (s, NFTNL_SET_NAME, set);
  nftnl_set_set_u32 (s, NFTNL_SET_FAMILY, NFPROTO_INET);
  struct nftnl_set_elem *e = nftnl_set_elem_alloc ();
  nftnl_set_elem_set (e, NFTNL_SET_ELEM_KEY, key, key_len);
  if (key_end != NULL)
    nftnl_set_elem_set (e, NFTNL_SET_ELEM_KEY_END, key_end, key_len);
  if (timeout_ms != 0)
    {
      nftnl_set_elem_set_u64 (e, NFTNL_SET_ELEM_TIMEOUT, timeout_ms);
      /* The expiration too: since 6.12 re-adding an element restarts its
       * clock only when the timeout differs from the one it has or an
       * expiration is given, so a pin renewed with the same TTL would
       * otherwise lapse at its first expiry (seen on 6.18). */
      nftnl_set_elem_set_u64 (e, NFTNL_SET_ELEM_EXPIRATION, timeout_ms);
    }
  nftnl_set_elem_add (s, e);
  struct nlmsghdr *nlh = hv_nft_batch_msg (b, t, type, flags, what);
  nftnl_set_elems_nlmsg_build_payload (nlh, s);
  hv_nft_batch_done (b, nlh);
  nftnl_set_free (s);
}

static char *
pin_text (const hv_egress_pin *p, const char *set)
{
  char a[INET6_ADDRSTRLEN] = "?";
  inet_ntop (p->family, p->addr, a, sizeof (a));
  return xasprintf ("element %s . %u (timeout %llu ms) of set %s", a, p->port, (unsigned long long) p->timeout_ms,
                    set);
}

int
hv_nft_check_pin (const hv_egress_pin *p, hv_error **err)
{
  if (hv_egress_addr_len (p->family) == 0)
    return hv_error_set (err, 0, "pin: address family %d is neither IPv4 nor IPv6", p->family);
  if (p->port == 0)
    return hv_error_set (err, 0, "pin: port 0");
  if (p->timeout_ms == 0)
    return hv_error_set (err, 0, "pin: a pin needs a timeout (0 would never expire)");
  return 0;
}

void
hv_nft_add_pin (hv_nft_batch *b, hv_egress_table *t, uint16_t type, const hv_egress_pin *p)
{
  uint8_t key[HV_NFT_KEY6_LEN];
  const char *set = p->family == AF_INET ? HV_NFT_SET_PIN4 : HV_NFT_SET_PIN6;
  uint32_t klen = hv_nft_make_key (key, p->family, p->addr, p->port);
  hv_nft_add_elem (b, t, type, type == NFT_MSG_NEWSETELEM ? NLM_F_CREATE : 0, set, key, NULL, klen,
                   type == NFT_MSG_NEWSETELEM ? p->timeout_ms : 0, pin_text (p, set));
}

void
hv_nft_add_range_elems (hv_nft_batch *b, hv_egress_table *t, const char *set, const hv_egress_range *rs, size_t n,
                        int family)
{
  for (size_t i = 0; i < n; i++)
    {
      uint8_t key[HV_NFT_KEY6_LEN], key_end[HV_NFT_KEY6_LEN];
      uint32_t klen = hv_nft_make_key (key, family, rs[i].lo, rs[i].port_lo);
      hv_nft_make_key (key_end, family, rs[i].hi, rs[i].port_hi);
      cleanup_free char *text = hv_egress_range_text (family, &rs[i]);
      hv_nft_add_elem (b, t, NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_EXCL, set, key, key_end, klen, 0,
                       xasprintf ("element %s of set %s", text, set));
    }
}

typedef struct elem_req
{
  const char *table, *set;
  void (*each) (struct nftnl_set_elem *e, void *data);
  void *data;
} elem_req;

static void
build_elem_get (struct nlmsghdr *nlh, void *arg)
{
  elem_req *q = arg;
  mnl_attr_put_strz (nlh, NFTA_SET_ELEM_LIST_TABLE, q->table);
  mnl_attr_put_strz (nlh, NFTA_SET_ELEM_LIST_SET, q->set);
}

static int
elems_answer (const struct nlmsghdr *nlh, void *data)
{
  elem_req *q = data;
  struct nftnl_set *s = nftnl_set_alloc ();
  if (nftnl_set_elems_nlmsg_parse (nlh, s) == 0)
    {
      struct nftnl_set_elems_iter *it = nftnl_set_elems_iter_create (s);
      for (struct nftnl_set_elem *e = nftnl_set_elems_iter_cur (it); e != NULL; e = nftnl_set_elems_iter_next (it))
        q->each (e, q->data);
      nftnl_set_elems_iter_destroy (it);
    }
  nftnl_set_free (s);
  return MNL_CB_OK;
}

int
hv_nft_get_elems (hv_egress_table *t, const char *set, void (*each) (struct nftnl_set_elem *e, void *data),
                  void *data, hv_error **err)
{
  elem_req q = { t->name, set, each, data };
  return hv_nft_get (t, NFT_MSG_GETSETELEM, false, build_elem_get, &q, elems_answer, &q, err);
}
