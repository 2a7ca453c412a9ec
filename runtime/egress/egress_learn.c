#include "config.h"
#include "egress_learn.h"

#include <string.h>

#include "egress_decide.h"
#include "egress_resolver_state.h"

struct hv_res_learn
{
  char (*names)[HV_RES_NAME_MAX]; /* the i-th sinkhole's name: 240.0.0.0 + i + 1 */
  size_t n;
};

/* Does an allowed CIDR share an address with 240.0.0.0/8? */
static bool
allow_reaches_sinkholes (const hv_egress_resolver_config *cfg)
{
  for (size_t i = 0; i < cfg->n_allow_cidrs; i++)
    {
      const hv_egress_cidr *c = &cfg->allow_cidrs[i];
      if (c->family == AF_INET && (c->prefix_len == 0 || c->addr[0] == HV_RES_LEARN_NET))
        return true;
      if (c->family == AF_INET && c->prefix_len < 8
          && ((unsigned) c->addr[0] >> (8 - c->prefix_len)) == (HV_RES_LEARN_NET >> (8 - c->prefix_len)))
        return true;
    }
  return false;
}

hv_res_learn *
hv_res_learn_new (const hv_egress_resolver_config *cfg)
{
  if (!cfg->learn || allow_reaches_sinkholes (cfg))
    return NULL;
  hv_res_learn *l = xmalloc0 (sizeof (*l));
  return l;
}

void
hv_res_learn_free (hv_res_learn *l)
{
  if (l == NULL)
    return;
  free (l->names);
  free (l);
}

/* The sinkhole of name: the one it had, else a new one; -1 when full. */
static long
sinkhole (hv_res_learn *l, const char *name)
{
  for (size_t i = 0; i < l->n; i++)
    if (strcmp (l->names[i], name) == 0)
      return (long) i;
  if (l->n == HV_RES_LEARN_MAX || strlen (name) >= HV_RES_NAME_MAX)
    return -1;
  if (l->names == NULL)
    l->names = xmalloc0 (HV_RES_LEARN_MAX * sizeof (*l->names));
  memcpy (l->names[l->n], name, strlen (name) + 1);
  return (long) l->n++;
}

bool
hv_res_learn_answer (hv_res_learn *l, const hv_dns_message *query, const char *qname, uint16_t qtype,
                     const char *why, const char *text, hv_dns_message *reply, uint8_t addr[4], bool *has_addr)
{
  *has_addr = false;
  /* Only a name the policy does not list: a denied one stays denied, a
   * refused type of an allowed name stays refused. */
  if (l == NULL || strcmp (why, HV_EGRESS_WHY_UNLISTED) != 0 || query->questions[0].cls != HV_DNS_CLASS_IN
      || (qtype != HV_DNS_TYPE_A && qtype != HV_DNS_TYPE_AAAA))
    return false;
  long i = sinkhole (l, qname);
  if (i < 0)
    return false;
  cleanup_error hv_error *err = NULL;
  if (hv_dns_reply_init (reply, query, HV_DNS_RCODE_NOERROR, HV_RES_UPSTREAM_EDNS, &err) < 0)
    return false;
  cleanup_free char *said = xasprintf ("%s; learn mode: answered with a sinkhole address that no connect reaches",
                                       text);
  if (hv_dns_add_ede (reply, HV_DNS_EDE_BLOCKED, said, &err) < 0)
    {
      hv_dns_message_free (reply);
      return false;
    }
  if (qtype == HV_DNS_TYPE_AAAA)
    return true; /* no data: the program takes the A record */
  uint32_t n = (uint32_t) i + 1;
  addr[0] = HV_RES_LEARN_NET;
  addr[1] = (uint8_t) (n >> 16);
  addr[2] = (uint8_t) (n >> 8);
  addr[3] = (uint8_t) n;
  if (hv_dns_add_rr (reply, HV_DNS_ANSWER, &query->questions[0].name, HV_DNS_TYPE_A, HV_DNS_CLASS_IN,
                     HV_RES_LEARN_TTL, addr, 4, &err)
      < 0)
    {
      hv_dns_message_free (reply);
      return false;
    }
  *has_addr = true;
  return true;
}
