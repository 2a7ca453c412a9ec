/* Making and deleting the egress table: its sets, chains, rules and
 * first pins in one batch, which the kernel applies whole or not at all
 * (see egress_table.h for what the rules do). */
#include "config.h"
#include "egress_table.h"

#include <stdio.h> /* before libnftnl's headers, which use FILE */
#include <errno.h>
#include <libnftnl/chain.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include "egress_table_batch.h"
#include "egress_table_rules.h"
#include "egress_table_sets.h"
#include "utils.h"

static void
add_table (hv_nft_batch *b, hv_egress_table *t)
{
  struct nftnl_table *tb = nftnl_table_alloc ();
  nftnl_table_set_str (tb, NFTNL_TABLE_NAME, t->name);
  nftnl_table_set_u32 (tb, NFTNL_TABLE_FAMILY, NFPROTO_INET);
  /* Not NFT_TABLE_F_OWNER: an owner table goes away with the netlink
   * socket that made it, and the sandbox outlives this process. */
  nftnl_table_set_u32 (tb, NFTNL_TABLE_FLAGS, 0);
  struct nlmsghdr *nlh = hv_nft_batch_msg (b, t, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL,
                                           xasprintf ("table inet %s", t->name));
  nftnl_table_nlmsg_build_payload (nlh, tb);
  hv_nft_batch_done (b, nlh);
  nftnl_table_free (tb);
}

static void
add_chain (hv_nft_batch *b, hv_egress_table *t, const char *name, const char *type, uint32_t hook, int prio,
           int policy)
{
  struct nftnl_chain *c = nftnl_chain_alloc ();
  nftnl_chain_set_str (c, NFTNL_CHAIN_TABLE, t->name);
  nftnl_chain_set_str (c, NFTNL_CHAIN_NAME, name);
  nftnl_chain_set_u32 (c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
  if (type != NULL)
    {
      nftnl_chain_set_str (c, NFTNL_CHAIN_TYPE, type);
      nftnl_chain_set_u32 (c, NFTNL_CHAIN_HOOKNUM, hook);
      nftnl_chain_set_s32 (c, NFTNL_CHAIN_PRIO, prio);
      nftnl_chain_set_u32 (c, NFTNL_CHAIN_POLICY, (uint32_t) policy);
    }
  struct nlmsghdr *nlh
      = hv_nft_batch_msg (b, t, NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_EXCL, xasprintf ("chain %s", name));
  nftnl_chain_nlmsg_build_payload (nlh, c);
  hv_nft_batch_done (b, nlh);
  nftnl_chain_free (c);
}

static int
check_spec (const hv_egress_spec *spec, hv_error **err)
{
  for (size_t i = 0; i < spec->n_allow; i++)
    if (hv_egress_cidr_check (&spec->allow[i], err) < 0)
      return hv_error_wrap (err, "allowed destination %zu", i + 1);
  for (size_t i = 0; i < spec->n_deny; i++)
    if (hv_egress_cidr_check (&spec->deny[i], err) < 0)
      return hv_error_wrap (err, "denied destination %zu", i + 1);
  if ((spec->dns4.set && spec->dns4.port == 0) || (spec->dns6.set && spec->dns6.port == 0))
    return hv_error_set (err, 0, "DNS redirect target with port 0");
  for (size_t i = 0; i < spec->n_pins; i++)
    if (hv_nft_check_pin (&spec->pins[i], err) < 0)
      return -1;
  return 0;
}

int
hv_egress_table_create (hv_egress_table *t, const hv_egress_spec *spec, char fingerprint[HV_EGRESS_FINGERPRINT_LEN],
                        hv_error **err)
{
  if (check_spec (spec, err) < 0)
    return hv_error_wrap (err, "egress table %s", t->name);
  cleanup_free hv_egress_range *r4 = NULL;
  cleanup_free hv_egress_range *r6 = NULL;
  cleanup_free hv_egress_range *d4 = NULL;
  cleanup_free hv_egress_range *d6 = NULL;
  size_t n4, n6, nd4, nd6;
  if (hv_egress_ranges_build (spec->allow, spec->n_allow, AF_INET, &r4, &n4, err) < 0
      || hv_egress_ranges_build (spec->allow, spec->n_allow, AF_INET6, &r6, &n6, err) < 0
      || hv_egress_ranges_build (spec->deny, spec->n_deny, AF_INET, &d4, &nd4, err) < 0
      || hv_egress_ranges_build (spec->deny, spec->n_deny, AF_INET6, &d6, &nd6, err) < 0)
    return hv_error_wrap (err, "egress table %s", t->name);

  hv_nft_batch b;
  hv_nft_batch_init (&b, t);
  add_table (&b, t);
  hv_nft_add_set (&b, t, HV_NFT_SET_ALLOW4, HV_NFT_ID_ALLOW4, AF_INET, true);
  hv_nft_add_set (&b, t, HV_NFT_SET_ALLOW6, HV_NFT_ID_ALLOW6, AF_INET6, true);
  hv_nft_add_set (&b, t, HV_NFT_SET_PIN4, HV_NFT_ID_PIN4, AF_INET, false);
  hv_nft_add_set (&b, t, HV_NFT_SET_PIN6, HV_NFT_ID_PIN6, AF_INET6, false);
  hv_nft_add_set (&b, t, HV_NFT_SET_PROBE, HV_NFT_ID_PROBE, AF_INET, false);
  hv_nft_add_set (&b, t, HV_NFT_SET_DENY4, HV_NFT_ID_DENY4, AF_INET, true);
  hv_nft_add_set (&b, t, HV_NFT_SET_DENY6, HV_NFT_ID_DENY6, AF_INET6, true);
  hv_nft_add_range_elems (&b, t, HV_NFT_SET_ALLOW4, r4, n4, AF_INET);
  hv_nft_add_range_elems (&b, t, HV_NFT_SET_ALLOW6, r6, n6, AF_INET6);
  hv_nft_add_range_elems (&b, t, HV_NFT_SET_DENY4, d4, nd4, AF_INET);
  hv_nft_add_range_elems (&b, t, HV_NFT_SET_DENY6, d6, nd6, AF_INET6);
  add_chain (&b, t, "deny", NULL, 0, 0, 0);
  add_chain (&b, t, "output", "filter", NF_INET_LOCAL_OUT, spec->forward_port ? HV_EGRESS_FORWARD_FILTER_PRIORITY : 0,
             NF_DROP);
  add_chain (&b, t, "dns", "nat", NF_INET_LOCAL_OUT, HV_EGRESS_DNS_PRIORITY, NF_ACCEPT);
  if (spec->forward_port)
    add_chain (&b, t, "forward", "nat", NF_INET_LOCAL_OUT, HV_EGRESS_FORWARD_PRIORITY, NF_ACCEPT);
  if (spec->drop_inbound)
    add_chain (&b, t, "input", "filter", NF_INET_LOCAL_IN, 0, NF_DROP);
  hv_nft_add_rules (&b, t, spec);
  for (size_t i = 0; i < spec->n_pins; i++)
    hv_nft_add_pin (&b, t, NFT_MSG_NEWSETELEM, &spec->pins[i]);
  int r = hv_nft_batch_send (&b, t, err);
  hv_nft_batch_free (&b);
  if (r < 0)
    return hv_error_wrap (err, "create egress table %s", t->name);
  if (fingerprint != NULL && hv_egress_table_fingerprint (t, fingerprint, err) < 0)
    return hv_error_wrap (err, "egress table %s was made", t->name);
  return 0;
}

int
hv_egress_table_delete (hv_egress_table *t, hv_error **err)
{
  hv_nft_batch b;
  hv_nft_batch_init (&b, t);
  struct nftnl_table *tb = nftnl_table_alloc ();
  nftnl_table_set_str (tb, NFTNL_TABLE_NAME, t->name);
  nftnl_table_set_u32 (tb, NFTNL_TABLE_FAMILY, NFPROTO_INET);
  struct nlmsghdr *nlh = hv_nft_batch_msg (&b, t, NFT_MSG_DELTABLE, 0, xasprintf ("table inet %s", t->name));
  nftnl_table_nlmsg_build_payload (nlh, tb);
  hv_nft_batch_done (&b, nlh);
  nftnl_table_free (tb);
  cleanup_error hv_error *e = NULL;
  int r = hv_nft_batch_send (&b, t, &e);
  hv_nft_batch_free (&b);
  if (r < 0 && e->errno_code == ENOENT)
    return 0;
  if (r < 0)
    {
      *err = steal_pointer (&e);
      return hv_error_wrap (err, "delete egress table %s", t->name);
    }
  return 0;
}
