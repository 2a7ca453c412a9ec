/* Reading the egress table back: its fingerprint (a hash of what the
 * kernel holds), so that a table changed or made anew since it was
 * checked is told apart (hv_egress_table_verify). */
#include "config.h"
#include "egress_table.h"

#include <stdio.h> /* before libnftnl's headers, which use FILE */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter/nf_tables.h>
#include <stdarg.h>
#include <string.h>

#include "egress_table_batch.h"
#include "egress_table_sets.h"
#include "utils.h"

/* FNV-1a, 64 bits: a change detector, not a defence against an attacker
 * who can write the table (that one has CAP_NET_ADMIN here anyway). */
typedef struct fp
{
  uint64_t h;
  const char *table;
  int error;
} fp;

static void
fp_add (fp *f, const char *s)
{
  for (; *s; s++)
    {
      f->h ^= (uint8_t) *s;
      f->h *= 0x100000001b3ULL;
    }
  f->h ^= '\n';
  f->h *= 0x100000001b3ULL;
}

static void
fp_addf (fp *f, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
static void
fp_addf (fp *f, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *s = xvasprintf (fmt, ap);
  va_end (ap);
  fp_add (f, s);
}

static void
fp_hex (fp *f, const void *data, uint32_t len)
{
  char hex[2 * 64 + 1] = "";
  const uint8_t *p = data;
  for (uint32_t i = 0; i < len && i < 64; i++)
    snprintf (hex + 2 * i, 3, "%02x", p[i]);
  fp_add (f, hex);
}

static int
fp_table_cb (const struct nlmsghdr *nlh, void *data)
{
  fp *f = data;
  struct nftnl_table *tb = nftnl_table_alloc ();
  if (nftnl_table_nlmsg_parse (nlh, tb) == 0)
    fp_addf (f, "table %s flags %u handle %llu use %u", nftnl_table_get_str (tb, NFTNL_TABLE_NAME),
             nftnl_table_get_u32 (tb, NFTNL_TABLE_FLAGS),
             (unsigned long long) nftnl_table_get_u64 (tb, NFTNL_TABLE_HANDLE),
             nftnl_table_get_u32 (tb, NFTNL_TABLE_USE));
  nftnl_table_free (tb);
  return MNL_CB_OK;
}

static int
fp_chain_cb (const struct nlmsghdr *nlh, void *data)
{
  fp *f = data;
  struct nftnl_chain *c = nftnl_chain_alloc ();
  if (nftnl_chain_nlmsg_parse (nlh, c) == 0 && strcmp (nftnl_chain_get_str (c, NFTNL_CHAIN_TABLE), f->table) == 0)
    {
      bool base = nftnl_chain_is_set (c, NFTNL_CHAIN_HOOKNUM);
      fp_addf (f, "chain %s handle %llu use %u flags %u hook %d type %s prio %d policy %u",
               nftnl_chain_get_str (c, NFTNL_CHAIN_NAME),
               (unsigned long long) nftnl_chain_get_u64 (c, NFTNL_CHAIN_HANDLE),
               nftnl_chain_get_u32 (c, NFTNL_CHAIN_USE), nftnl_chain_get_u32 (c, NFTNL_CHAIN_FLAGS),
               base ? (int) nftnl_chain_get_u32 (c, NFTNL_CHAIN_HOOKNUM) : -1,
               base ? nftnl_chain_get_str (c, NFTNL_CHAIN_TYPE) : "-",
               base ? nftnl_chain_get_s32 (c, NFTNL_CHAIN_PRIO) : 0,
               base ? nftnl_chain_get_u32 (c, NFTNL_CHAIN_POLICY) : 0);
    }
  nftnl_chain_free (c);
  return MNL_CB_OK;
}

static int
fp_rule_cb (const struct nlmsghdr *nlh, void *data)
{
  fp *f = data;
  struct nftnl_rule *r = nftnl_rule_alloc ();
  if (nftnl_rule_nlmsg_parse (nlh, r) == 0 && strcmp (nftnl_rule_get_str (r, NFTNL_RULE_TABLE), f->table) == 0)
    {
      char text[8192];
      nftnl_rule_snprintf (text, sizeof (text), r, NFTNL_OUTPUT_DEFAULT, 0);
      fp_add (f, text);
    }
  nftnl_rule_free (r);
  return MNL_CB_OK;
}

static int
fp_set_cb (const struct nlmsghdr *nlh, void *data)
{
  fp *f = data;
  struct nftnl_set *s = nftnl_set_alloc ();
  if (nftnl_set_nlmsg_parse (nlh, s) == 0 && strcmp (nftnl_set_get_str (s, NFTNL_SET_TABLE), f->table) == 0)
    fp_addf (f, "set %s handle %llu flags %u key %u/%u data %u/%u timeout %llu",
             nftnl_set_get_str (s, NFTNL_SET_NAME), (unsigned long long) nftnl_set_get_u64 (s, NFTNL_SET_HANDLE),
             nftnl_set_get_u32 (s, NFTNL_SET_FLAGS), nftnl_set_get_u32 (s, NFTNL_SET_KEY_TYPE),
             nftnl_set_get_u32 (s, NFTNL_SET_KEY_LEN), nftnl_set_get_u32 (s, NFTNL_SET_DATA_TYPE),
             nftnl_set_get_u32 (s, NFTNL_SET_DATA_LEN), (unsigned long long) nftnl_set_get_u64 (s, NFTNL_SET_TIMEOUT));
  nftnl_set_free (s);
  return MNL_CB_OK;
}

static void
fp_elem (struct nftnl_set_elem *e, void *data)
{
  fp *f = data;
  uint32_t len = 0;
  const void *k = nftnl_set_elem_get (e, NFTNL_SET_ELEM_KEY, &len);
  fp_add (f, "elem");
  if (k != NULL)
    fp_hex (f, k, len);
  k = nftnl_set_elem_get (e, NFTNL_SET_ELEM_KEY_END, &len);
  if (k != NULL)
    fp_hex (f, k, len);
}

static void
build_table_get (struct nlmsghdr *nlh, void *arg)
{
  mnl_attr_put_strz (nlh, NFTA_TABLE_NAME, arg);
}

static void
build_rule_get (struct nlmsghdr *nlh, void *arg)
{
  mnl_attr_put_strz (nlh, NFTA_RULE_TABLE, arg);
}

static void
build_set_get (struct nlmsghdr *nlh, void *arg)
{
  mnl_attr_put_strz (nlh, NFTA_SET_TABLE, arg);
}

/* The elements of one set, named (an element moved from one set to
 * another changes the fingerprint). */
static int
fp_set_elems (hv_egress_table *t, fp *f, const char *set, hv_error **err)
{
  fp_addf (f, "elements of %s", set);
  return hv_nft_get_elems (t, set, fp_elem, f, err);
}

int
hv_egress_table_fingerprint (hv_egress_table *t, char out[HV_EGRESS_FINGERPRINT_LEN], hv_error **err)
{
  fp f = { .h = 0xcbf29ce484222325ULL, .table = t->name };
  if (hv_nft_get (t, NFT_MSG_GETTABLE, true, build_table_get, t->name, fp_table_cb, &f, err) < 0)
    {
      if ((*err)->errno_code == ENOENT)
        {
          hv_error_free (err);
          hv_error_set (err, 0, "egress table inet %s is gone", t->name);
          (*err)->errno_code = ENOENT;
          return -1;
        }
      return hv_error_wrap (err, "read egress table inet %s", t->name);
    }
  if (hv_nft_get (t, NFT_MSG_GETCHAIN, false, NULL, NULL, fp_chain_cb, &f, err) < 0
      || hv_nft_get (t, NFT_MSG_GETSET, false, build_set_get, t->name, fp_set_cb, &f, err) < 0
      || hv_nft_get (t, NFT_MSG_GETRULE, false, build_rule_get, t->name, fp_rule_cb, &f, err) < 0
      || fp_set_elems (t, &f, HV_NFT_SET_ALLOW4, err) < 0 || fp_set_elems (t, &f, HV_NFT_SET_ALLOW6, err) < 0
      || fp_set_elems (t, &f, HV_NFT_SET_DENY4, err) < 0 || fp_set_elems (t, &f, HV_NFT_SET_DENY6, err) < 0)
    return hv_error_wrap (err, "read egress table inet %s", t->name);
  snprintf (out, HV_EGRESS_FINGERPRINT_LEN, "%016llx", (unsigned long long) f.h);
  return 0;
}

int
hv_egress_table_verify (hv_egress_table *t, const char *expected, hv_error **err)
{
  char now[HV_EGRESS_FINGERPRINT_LEN];
  if (hv_egress_table_fingerprint (t, now, err) < 0)
    return -1;
  if (strcmp (now, expected) != 0)
    return hv_error_set (err, 0, "egress table inet %s changed since it was made (fingerprint %s, expected %s)",
                         t->name, now, expected);
  return 0;
}
