/* The egress resolver's decisions (see egress_decide.h). */
#include "config.h"

#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "dns_message.h"
#include "egress_decide.h"

#define HV_DNS_TYPE_SVCB 64
#define HV_DNS_TYPE_HTTPS 65

void
hv_egress_ports_free (hv_egress_ports *p)
{
  free (p->r);
  p->r = NULL;
  p->n = 0;
}

void
hv_egress_ports_add (hv_egress_ports *p, uint16_t lo, uint16_t hi)
{
  if (lo > hi)
    return;
  /* Merge every range that overlaps or touches lo..hi into it. */
  uint32_t nlo = lo, nhi = hi;
  size_t out = 0;
  hv_egress_port_range *keep = xmalloc0 ((p->n + 1) * sizeof (*keep));
  bool placed = false;
  for (size_t i = 0; i < p->n; i++)
    {
      hv_egress_port_range r = p->r[i];
      if ((uint32_t) r.hi + 1 < nlo)
        keep[out++] = r;
      else if (r.lo > nhi + 1)
        {
          if (!placed)
            {
              keep[out++] = (hv_egress_port_range) { (uint16_t) nlo, (uint16_t) nhi };
              placed = true;
            }
          keep[out++] = r;
        }
      else
        {
          nlo = r.lo < nlo ? r.lo : nlo;
          nhi = r.hi > nhi ? r.hi : nhi;
        }
    }
  if (!placed)
    keep[out++] = (hv_egress_port_range) { (uint16_t) nlo, (uint16_t) nhi };
  free (p->r);
  p->r = keep;
  p->n = out;
}

void
hv_egress_ports_remove (hv_egress_ports *p, uint16_t lo, uint16_t hi)
{
  if (lo > hi || p->n == 0)
    return;
  hv_egress_port_range *keep = xmalloc0 ((p->n + 1) * sizeof (*keep));
  size_t out = 0;
  for (size_t i = 0; i < p->n; i++)
    {
      hv_egress_port_range r = p->r[i];
      if (r.hi < lo || r.lo > hi)
        {
          keep[out++] = r;
          continue;
        }
      if (r.lo < lo)
        keep[out++] = (hv_egress_port_range) { r.lo, (uint16_t) (lo - 1) };
      if (r.hi > hi)
        keep[out++] = (hv_egress_port_range) { (uint16_t) (hi + 1), r.hi };
    }
  free (p->r);
  p->r = keep;
  p->n = out;
}

size_t
hv_egress_ports_count (const hv_egress_ports *p)
{
  size_t n = 0;
  for (size_t i = 0; i < p->n; i++)
    n += (size_t) p->r[i].hi - p->r[i].lo + 1;
  return n;
}

void
hv_egress_ports_limit (hv_egress_ports *p, size_t max)
{
  size_t seen = 0;
  for (size_t i = 0; i < p->n; i++)
    {
      size_t w = (size_t) p->r[i].hi - p->r[i].lo + 1;
      if (seen + w > max)
        {
          if (seen == max)
            p->n = i;
          else
            {
              p->r[i].hi = (uint16_t) (p->r[i].lo + (max - seen) - 1);
              p->n = i + 1;
            }
          return;
        }
      seen += w;
    }
}

bool
hv_egress_name_rule_matches (const hv_egress_name_rule *rule, const char *name)
{
  size_t nl = strlen (name), rl = strlen (rule->name);
  if (nl > 0 && name[nl - 1] == '.')
    nl--;
  if (rl == 0)
    return false;
  if (!rule->subdomains)
    return nl == rl && strncasecmp (name, rule->name, rl) == 0;
  /* "*.zone": at least one whole label before the zone, never the zone
   * itself, and never "xzone" (the boundary must be a dot). */
  return nl > rl + 1 && name[nl - rl - 1] == '.' && strncasecmp (name + nl - rl, rule->name, rl) == 0;
}

bool
hv_egress_name_plain (const char *name)
{
  size_t n = strlen (name);
  if (n == 0 || n > HV_DNS_PLAIN_NAME_MAX)
    return false;
  for (size_t i = 0; i < n; i++)
    if (name[i] == '\\' || (name[i] == '.' && (i == 0 || name[i - 1] == '.')))
      return false;
  return true;
}

void
hv_egress_name_deny (const hv_egress_resolver_config *c, const char *name, hv_egress_ports *ports)
{
  for (size_t i = 0; i < c->n_deny; i++)
    if (hv_egress_name_rule_matches (&c->deny[i], name))
      hv_egress_ports_remove (ports, c->deny[i].port_min, c->deny[i].port_max);
}

bool
hv_egress_name_allowed_below (const hv_egress_resolver_config *c, const char *name)
{
  size_t nl = strlen (name);
  for (size_t i = 0; i < c->n_allow; i++)
    {
      const char *rn = c->allow[i].name;
      size_t rl = strlen (rn);
      /* "*.zone" covers the names below zone itself and below any name
       * under zone (a denied name there still has allowed children). */
      if (c->allow[i].subdomains
          && ((rl == nl && strcasecmp (rn, name) == 0) || hv_egress_name_rule_matches (&c->allow[i], name)))
        return true;
      if (rl > nl + 1 && rn[rl - nl - 1] == '.' && strcasecmp (rn + rl - nl, name) == 0)
        return true;
    }
  return false;
}

void
hv_egress_name_ports (const hv_egress_resolver_config *c, const char *name, hv_egress_ports *out, bool *listed)
{
  memset (out, 0, sizeof (*out));
  *listed = false;
  if (!hv_egress_name_plain (name))
    return;
  for (size_t i = 0; i < c->n_allow; i++)
    if (hv_egress_name_rule_matches (&c->allow[i], name))
      {
        *listed = true;
        hv_egress_ports_add (out, c->allow[i].port_min, c->allow[i].port_max);
      }
  hv_egress_name_deny (c, name, out);
}

/* The ports an unlisted name gets once approved: the ask rules that
 * match it (ask_all: 443 and 80, a bare name's), less deny's. */
static void
ask_ports (const hv_egress_resolver_config *c, const char *name, hv_egress_ports *out, bool *asked)
{
  memset (out, 0, sizeof (*out));
  *asked = false;
  if (!hv_egress_name_plain (name))
    return;
  /* Only a host name is put to a person (and written in a request): a
   * name with other bytes is refused as unlisted, never asked about. */
  size_t n = strlen (name);
  if (name[n - 1] == '.' || strspn (name, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != n)
    return;
  for (size_t i = 0; i < c->n_ask; i++)
    if (hv_egress_name_rule_matches (&c->ask[i], name))
      {
        *asked = true;
        hv_egress_ports_add (out, c->ask[i].port_min ? c->ask[i].port_min : 1, c->ask[i].port_max);
      }
  if (!*asked && c->ask_all)
    {
      *asked = true;
      hv_egress_ports_add (out, 443, 443);
      hv_egress_ports_add (out, 80, 80);
    }
  hv_egress_name_deny (c, name, out);
}

void
hv_egress_decide (const hv_egress_resolver_config *c, const char *name, uint16_t qclass, uint16_t qtype,
                  hv_egress_verdict *v)
{
  bool listed;
  memset (v, 0, sizeof (*v));
  v->action = HV_EGRESS_REFUSE;
  /* The name first: an unlisted name is refused whatever its type, so
   * the refusal (and its audit record) names the real reason. */
  hv_egress_name_ports (c, name, &v->ports, &listed);
  bool asked = false;
  if (!listed)
    {
      hv_egress_ports_free (&v->ports);
      ask_ports (c, name, &v->ports, &asked);
      listed = asked;
    }
  if (!listed)
    v->why = HV_EGRESS_WHY_UNLISTED;
  else if (v->ports.n == 0)
    v->why = HV_EGRESS_WHY_DENIED;
  else if (qclass != HV_DNS_CLASS_IN)
    v->why = HV_EGRESS_WHY_TYPE;
  else if (qtype == HV_DNS_TYPE_A || qtype == HV_DNS_TYPE_AAAA)
    {
      v->action = asked ? HV_EGRESS_ASK : HV_EGRESS_FORWARD;
      hv_egress_ports_limit (&v->ports, HV_EGRESS_NAME_PORTS_MAX);
      return;
    }
  else if (qtype == HV_DNS_TYPE_HTTPS || qtype == HV_DNS_TYPE_SVCB)
    {
      /* Their ipv4hint/ipv6hint would hand out addresses nothing pinned;
       * an empty answer makes clients fall back to A/AAAA. */
      v->action = HV_EGRESS_EMPTY;
      hv_egress_ports_free (&v->ports);
      return;
    }
  else
    v->why = HV_EGRESS_WHY_TYPE;
  hv_egress_ports_free (&v->ports);
}

static bool
in_prefix (const uint8_t *addr, const uint8_t *net, unsigned bits)
{
  unsigned full = bits / 8, rest = bits % 8;
  if (memcmp (addr, net, full) != 0)
    return false;
  if (rest == 0)
    return true;
  uint8_t mask = (uint8_t) (0xff << (8 - rest));
  return (addr[full] & mask) == (net[full] & mask);
}

static bool
v4_special (const uint8_t *a)
{
  static const struct
  {
    uint8_t net[4];
    unsigned bits;
  } nets[] = {
    { { 0, 0, 0, 0 }, 8 },        /* "this network", unspecified */
    { { 10, 0, 0, 0 }, 8 },       /* RFC 1918 */
    { { 100, 64, 0, 0 }, 10 },    /* CGNAT (pasta's and clouds' internal side) */
    { { 127, 0, 0, 0 }, 8 },      /* loopback */
    { { 169, 254, 0, 0 }, 16 },   /* link-local, cloud metadata */
    { { 172, 16, 0, 0 }, 12 },    /* RFC 1918 */
    { { 192, 0, 0, 0 }, 24 },     /* IETF protocol assignments: DS-Lite, NAT64 discovery (RFC 6890) */
    { { 192, 168, 0, 0 }, 16 },   /* RFC 1918 */
    { { 224, 0, 0, 0 }, 4 },      /* multicast */
    { { 240, 0, 0, 0 }, 4 },      /* reserved, broadcast */
  };
  /* Not here: TEST-NET (192.0.2/24, 198.51.100/24, 203.0.113/24), which
   * stands for public addresses in tests and documentation, and the
   * benchmarking range 198.18.0.0/15, which proxies' fake-IP resolvers
   * hand out for every public name (the proxy maps it back to that name,
   * not onto the local network). */
  for (size_t i = 0; i < sizeof (nets) / sizeof (nets[0]); i++)
    if (in_prefix (a, nets[i].net, nets[i].bits))
      return true;
  return false;
}

bool
hv_egress_addr_special (int family, const uint8_t addr[16])
{
  if (family == AF_INET)
    return v4_special (addr);
  static const uint8_t zero[16] = { 0 };
  static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
  static const uint8_t translated[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0 };
  static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };
  static const uint8_t nat64_local[6] = { 0, 0x64, 0xff, 0x9b, 0, 1 };
  static const uint8_t teredo[4] = { 0x20, 0x01, 0, 0 };
  if (memcmp (addr, zero, 15) == 0)   /* :: and ::1 */
    return true;
  /* Forms that carry an IPv4 address: judged as that address would be,
   * and compatible addresses (::a.b.c.d, deprecated) always.  Mapped
   * (::ffff:0:0/96), translated (::ffff:0:0:0/96, RFC 2765) and the
   * NAT64 well-known prefix (64:ff9b::/96) hold it in the last 4 bytes;
   * 6to4 (2002::/16) in bytes 2-5; Teredo (2001::/32) the server's in
   * bytes 4-7 and the client's, inverted, in the last 4. */
  if (memcmp (addr, mapped, 12) == 0 || memcmp (addr, translated, 12) == 0 || memcmp (addr, nat64, 12) == 0)
    return v4_special (addr + 12);
  if (addr[0] == 0x20 && addr[1] == 0x02)
    return v4_special (addr + 2);
  if (memcmp (addr, teredo, 4) == 0)
    {
      uint8_t client[4];
      for (size_t i = 0; i < 4; i++)
        client[i] = (uint8_t) ~addr[12 + i];
      return v4_special (addr + 4) || v4_special (client);
    }
  /* The local-use NAT64 prefix (64:ff9b:1::/48, RFC 8215): a translator
   * of the local network owns it and chooses where in it the IPv4
   * address sits (/48 to /96), so no address of it is known to lead
   * somewhere public. */
  if (memcmp (addr, nat64_local, 6) == 0)
    return true;
  if (memcmp (addr, zero, 12) == 0)
    return true;
  return (addr[0] & 0xfe) == 0xfc                  /* fc00::/7 unique local */
         || (addr[0] == 0xfe && (addr[1] & 0xc0) == 0x80) /* fe80::/10 link-local */
         || (addr[0] == 0xfe && (addr[1] & 0xc0) == 0xc0) /* fec0::/10 site-local (deprecated) */
         || addr[0] == 0xff;                       /* multicast */
}

bool
hv_egress_cidrs_cover (const hv_egress_cidr *cidrs, size_t n, int family, const uint8_t addr[16], uint16_t port)
{
  for (size_t i = 0; i < n; i++)
    if (cidrs[i].family == family && port >= cidrs[i].port_min && port <= cidrs[i].port_max
        && in_prefix (addr, cidrs[i].addr, cidrs[i].prefix_len))
      return true;
  return false;
}

bool
hv_egress_pin_allowed (const hv_egress_resolver_config *c, int family, const uint8_t addr[16], uint16_t port)
{
  if (hv_egress_cidrs_cover (c->deny_cidrs, c->n_deny_cidrs, family, addr, port))
    return false;
  if (hv_egress_addr_special (family, addr))
    return hv_egress_cidrs_cover (c->allow_cidrs, c->n_allow_cidrs, family, addr, port);
  return true;
}

uint32_t
hv_egress_ttl_clamp (uint32_t ttl, uint32_t floor, uint32_t cap)
{
  if (floor == 0)
    floor = HV_EGRESS_TTL_FLOOR_DEFAULT;
  if (cap == 0)
    cap = HV_EGRESS_TTL_CAP_DEFAULT;
  if (ttl < floor)
    ttl = floor;
  return ttl > cap ? cap : ttl;
}
