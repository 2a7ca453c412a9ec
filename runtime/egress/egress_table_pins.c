/* Pins: (address . port) pairs the resolver allows for a while, added
 * in one batch and acknowledged before its answer goes out; and the
 * probe that tells how this kernel renews a pin's timeout. */
#include "config.h"
#include "egress_table.h"

#include <stdio.h> /* before libnftnl's headers, which use FILE */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/set.h>
#include <linux/netfilter/nf_tables.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "egress_table_batch.h"
#include "egress_table_sets.h"
#include "utils.h"

const char *
hv_egress_refresh_name (hv_egress_refresh mode)
{
  switch (mode)
    {
    case HV_EGRESS_REFRESH_READD:
      return "re-add";
    case HV_EGRESS_REFRESH_DELETE_ADD:
      return "delete+add";
    default:
      return "unknown";
    }
}

void
hv_egress_table_force_refresh_mode (hv_egress_table *t, hv_egress_refresh mode)
{
  t->refresh = mode;
}

typedef struct probe_find
{
  uint8_t key[HV_NFT_KEY6_LEN];
  bool found;
  uint64_t expiration_ms;
} probe_find;

static void
probe_elem (struct nftnl_set_elem *e, void *data)
{
  probe_find *p = data;
  uint32_t len = 0;
  const void *k = nftnl_set_elem_get (e, NFTNL_SET_ELEM_KEY, &len);
  if (k != NULL && len == HV_NFT_KEY4_LEN && memcmp (k, p->key, HV_NFT_KEY4_LEN) == 0)
    {
      p->found = true;
      p->expiration_ms = nftnl_set_elem_get_u64 (e, NFTNL_SET_ELEM_EXPIRATION);
    }
}

/* In the table's own unreferenced set: an element with a short timeout,
 * re-added with a long one; if the kernel now says it expires later than
 * the short timeout allows, re-adding refreshes. */
static int
probe_refresh (hv_egress_table *t, hv_error **err)
{
  enum
  {
    SHORT_MS = 10000,
    LONG_MS = 3600000
  };
  static const uint8_t zero4[4];
  probe_find p = { 0 };
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  /* A key no other probe is using (they expire in 10 s). */
  uint16_t port = 0;
  int r = -1;
  for (int attempt = 0; attempt < 8 && r < 0; attempt++)
    {
      hv_error_free (err);
      port = (uint16_t) (((uint32_t) getpid () * 2654435761u + (uint32_t) ts.tv_nsec + (uint32_t) attempt * 7919u)
                         | 1u);
      hv_nft_make_key (p.key, AF_INET, zero4, port);
      hv_nft_batch b;
      hv_nft_batch_init (&b, t);
      hv_nft_add_elem (&b, t, NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_EXCL, HV_NFT_SET_PROBE, p.key, NULL,
                       HV_NFT_KEY4_LEN, SHORT_MS,
                       xasprintf ("probe element 0.0.0.0 . %u of set %s", port, HV_NFT_SET_PROBE));
      r = hv_nft_batch_send (&b, t, err);
      hv_nft_batch_free (&b);
      if (r < 0 && (*err)->errno_code != EEXIST)
        return hv_error_wrap (err, "probe how pins are renewed");
    }
  if (r < 0)
    return hv_error_wrap (err, "probe how pins are renewed");
  hv_nft_batch b;
  hv_nft_batch_init (&b, t);
  hv_nft_add_elem (&b, t, NFT_MSG_NEWSETELEM, NLM_F_CREATE, HV_NFT_SET_PROBE, p.key, NULL, HV_NFT_KEY4_LEN, LONG_MS,
                   xasprintf ("probe element 0.0.0.0 . %u of set %s (again)", port, HV_NFT_SET_PROBE));
  r = hv_nft_batch_send (&b, t, err);
  hv_nft_batch_free (&b);
  if (r < 0)
    return hv_error_wrap (err, "probe how pins are renewed");
  if (hv_nft_get_elems (t, HV_NFT_SET_PROBE, probe_elem, &p, err) < 0)
    return hv_error_wrap (err, "probe how pins are renewed");
  if (!p.found)
    return hv_error_set (err, 0, "probe how pins are renewed: the probe element is not in set %s",
                         HV_NFT_SET_PROBE);
  t->refresh = p.expiration_ms > 2 * SHORT_MS ? HV_EGRESS_REFRESH_READD : HV_EGRESS_REFRESH_DELETE_ADD;
  /* Tidy up; it would expire anyway. */
  hv_nft_batch_init (&b, t);
  hv_nft_add_elem (&b, t, NFT_MSG_DELSETELEM, 0, HV_NFT_SET_PROBE, p.key, NULL, HV_NFT_KEY4_LEN, 0,
                   xstrdup ("probe element"));
  cleanup_error hv_error *ignored = NULL;
  hv_nft_batch_send (&b, t, &ignored);
  hv_nft_batch_free (&b);
  return 0;
}

int
hv_egress_table_refresh_mode (hv_egress_table *t, hv_egress_refresh *out, hv_error **err)
{
  if (t->refresh == HV_EGRESS_REFRESH_UNKNOWN && probe_refresh (t, err) < 0)
    return hv_error_wrap (err, "egress table %s", t->name);
  *out = t->refresh;
  return 0;
}

int
hv_egress_pin_add (hv_egress_table *t, const hv_egress_pin *pins, size_t n, hv_error **err)
{
  for (size_t i = 0; i < n; i++)
    if (hv_nft_check_pin (&pins[i], err) < 0)
      return hv_error_wrap (err, "egress table %s", t->name);
  if (n == 0)
    return 0;
  hv_egress_refresh mode = HV_EGRESS_REFRESH_UNKNOWN;
  if (hv_egress_table_refresh_mode (t, &mode, err) < 0)
    return -1;
  hv_nft_batch b;
  hv_nft_batch_init (&b, t);
  for (size_t i = 0; i < n; i++)
    {
      if (mode == HV_EGRESS_REFRESH_DELETE_ADD)
        {
          /* Make sure it exists (no error if it does), delete it, add it
           * with the new timeout: on these kernels re-adding an existing
           * element keeps its old expiry.  One batch: never a moment
           * without the pin. */
          hv_nft_add_pin (&b, t, NFT_MSG_NEWSETELEM, &pins[i]);
          hv_nft_add_pin (&b, t, NFT_MSG_DELSETELEM, &pins[i]);
        }
      hv_nft_add_pin (&b, t, NFT_MSG_NEWSETELEM, &pins[i]);
    }
  int r = hv_nft_batch_send (&b, t, err);
  hv_nft_batch_free (&b);
  if (r < 0)
    return hv_error_wrap (err, "pin in egress table %s", t->name);
  return 0;
}

