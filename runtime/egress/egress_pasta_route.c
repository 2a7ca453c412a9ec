/* The host's interface and gateway that pasta is told about:
 * egress_pasta_route.h. */
#include "config.h"
#include "egress_pasta_route.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "utils.h"

/* Route flags of /proc/net/route and /proc/net/ipv6_route. */
#define F_UP 0x1u
#define F_GATEWAY 0x2u
#define F_REJECT 0x200u
#define F_LOCAL 0x80000000u

/* More than any host has; the rest is not read (each is a bounded loop). */
#define MAX_ROUTES 4096

struct route
{
  char ifname[16];
  uint8_t dst[16];
  unsigned dst_len;
  uint8_t gw[16];
  bool has_gw;
  unsigned long metric;
};

static void
routes_free (struct route **r)
{
  free (*r);
}
#define cleanup_routes __attribute__ ((cleanup (routes_free)))

static bool
hex_bytes (const char *hex, uint8_t *out, size_t n)
{
  if (strlen (hex) != 2 * n)
    return false;
  for (size_t i = 0; i < n; i++)
    {
      unsigned v;
      if (sscanf (hex + 2 * i, "%2x", &v) != 1)
        return false;
      out[i] = (uint8_t) v;
    }
  return true;
}

/* One line of the family's route file; false when it is not a route a
 * sandbox could use (down, local, rejecting, on lo, link-local or
 * multicast destinations). */
static bool
parse_route (int family, const char *line, struct route *r)
{
  char ifname[32];
  unsigned long flags;
  memset (r, 0, sizeof (*r));
  if (family == AF_INET)
    {
      unsigned long dst, gw, refcnt, use, met, mask;
      if (sscanf (line, "%31s %lx %lx %lx %lu %lu %lu %lx", ifname, &dst, &gw, &flags, &refcnt, &use, &met, &mask)
          != 8)
        return false;
      /* The kernel prints the network-order word as a host integer. */
      uint32_t d = (uint32_t) dst, g = (uint32_t) gw, m = (uint32_t) mask;
      memcpy (r->dst, &d, 4);
      memcpy (r->gw, &g, 4);
      r->dst_len = (unsigned) __builtin_popcount (m);
      r->metric = met;
      /* 169.254.0.0/16 is denied by the table; 224.0.0.0/4 is not TCP's. */
      if ((r->dst_len >= 16 && r->dst[0] == 169 && r->dst[1] == 254) || (r->dst_len >= 4 && (r->dst[0] & 0xf0) == 224))
        return false;
    }
  else
    {
      char dst[33], src[33], nexthop[33];
      unsigned dst_len, src_len;
      unsigned long met, refcnt, use;
      if (sscanf (line, "%32s %x %32s %x %32s %lx %lx %lx %lx %31s", dst, &dst_len, src, &src_len, nexthop, &met,
                  &refcnt, &use, &flags, ifname)
          != 10
          || !hex_bytes (dst, r->dst, 16) || !hex_bytes (nexthop, r->gw, 16))
        return false;
      r->dst_len = dst_len;
      r->metric = met;
      if ((dst_len >= 10 && r->dst[0] == 0xfe && (r->dst[1] & 0xc0) == 0x80) || (dst_len >= 8 && r->dst[0] == 0xff))
        return false;
    }
  if (!(flags & F_UP) || (flags & (F_REJECT | F_LOCAL)) || strcmp (ifname, "lo") == 0 || strlen (ifname) >= 16)
    return false;
  static const uint8_t zero[16];
  r->has_gw = (flags & F_GATEWAY) && memcmp (r->gw, zero, family == AF_INET ? 4 : 16) != 0;
  memcpy (r->ifname, ifname, strlen (ifname) + 1);
  return true;
}

static int
read_routes (int family, struct route **out, size_t *n, hv_error **err)
{
  /* thread-self: the namespace of this thread, which is what pasta,
   * started from it, will see. */
  const char *path = family == AF_INET ? "/proc/thread-self/net/route" : "/proc/thread-self/net/ipv6_route";
  *out = NULL;
  *n = 0;
  FILE *f = fopen (path, "re");
  if (f == NULL)
    {
      /* No IPv6 in this kernel: no IPv6 route either. */
      if (errno == ENOENT && family == AF_INET6)
        return 0;
      return hv_error_set (err, errno, "open %s", path);
    }
  char line[512];
  size_t cap = 0;
  while (fgets (line, sizeof (line), f) && *n < MAX_ROUTES)
    {
      struct route r;
      if (!parse_route (family, line, &r))
        continue;
      if (*n == cap)
        {
          cap = cap ? cap * 2 : 16;
          *out = xrealloc (*out, cap * sizeof (**out));
        }
      (*out)[(*n)++] = r;
    }
  fclose (f);
  return 0;
}

/* The route with the lowest metric, default routes only or any. */
static const struct route *
best_route (const struct route *rs, size_t n, bool default_only)
{
  const struct route *best = NULL;
  for (size_t i = 0; i < n; i++)
    if ((!default_only || rs[i].dst_len == 0) && (best == NULL || rs[i].metric < best->metric))
      best = &rs[i];
  return best;
}

/* An address of ifname of the family that is not link-local, with its
 * prefix length; false when there is none. */
static bool
template_address (const struct ifaddrs *ifs, const char *ifname, int family, uint8_t addr[16], unsigned *prefix)
{
  for (const struct ifaddrs *i = ifs; i; i = i->ifa_next)
    {
      if (i->ifa_addr == NULL || i->ifa_addr->sa_family != family || strcmp (i->ifa_name, ifname) != 0
          || i->ifa_netmask == NULL)
        continue;
      const uint8_t *a, *m;
      size_t len = family == AF_INET ? 4 : 16;
      if (family == AF_INET)
        {
          a = (const uint8_t *) &((const struct sockaddr_in *) i->ifa_addr)->sin_addr;
          m = (const uint8_t *) &((const struct sockaddr_in *) i->ifa_netmask)->sin_addr;
          if (a[0] == 169 && a[1] == 254)
            continue;
        }
      else
        {
          a = ((const struct sockaddr_in6 *) i->ifa_addr)->sin6_addr.s6_addr;
          m = ((const struct sockaddr_in6 *) i->ifa_netmask)->sin6_addr.s6_addr;
          if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
            continue;
        }
      unsigned bits = 0;
      for (size_t b = 0; b < len; b++)
        bits += (unsigned) __builtin_popcount (m[b]);
      memcpy (addr, a, len);
      *prefix = bits;
      return true;
    }
  return false;
}

/* addr with its last bits replaced: the n-th address of its subnet
 * (n < 4), or the address with its last bit flipped (flip). */
static void
subnet_address (uint8_t *out, const uint8_t *addr, size_t len, unsigned prefix, unsigned n, bool flip)
{
  memcpy (out, addr, len);
  if (flip)
    {
      out[len - 1] ^= 1;
      return;
    }
  for (unsigned bit = prefix; bit < len * 8; bit++)
    out[bit / 8] &= (uint8_t) ~(0x80u >> (bit % 8));
  out[len - 1] |= (uint8_t) n;
}

/* The gateway of the family on the template, as text into gw; false when
 * there is none to give. */
static bool
pick_gateway (int family, const struct route *rs, size_t n, const char *ifname, const struct ifaddrs *ifs, char *gw,
              size_t gw_size)
{
  size_t len = family == AF_INET ? 4 : 16;
  const struct route *def = best_route (rs, n, true);
  const uint8_t *hop = NULL;
  if (def && def->has_gw && strcmp (def->ifname, ifname) == 0)
    hop = def->gw;
  for (size_t i = 0; i < n && hop == NULL; i++)
    if (rs[i].has_gw && strcmp (rs[i].ifname, ifname) == 0)
      hop = rs[i].gw;
  uint8_t own[16], made[16];
  unsigned prefix;
  if (!template_address (ifs, ifname, family, own, &prefix))
    return false;
  if (hop == NULL)
    {
      unsigned bits = (unsigned) len * 8;
      if (prefix >= bits)
        return false; /* a /32 or /128: no neighbour to name */
      if (prefix == bits - 1)
        subnet_address (made, own, len, prefix, 0, true);
      else
        {
          subnet_address (made, own, len, prefix, 1, false);
          if (memcmp (made, own, len) == 0)
            subnet_address (made, own, len, prefix, 2, false);
        }
      hop = made;
    }
  return inet_ntop (family, hop, gw, (socklen_t) gw_size) != NULL;
}

int
hv_pasta_route (struct hv_pasta_route *r, hv_error **err)
{
  memset (r, 0, sizeof (*r));
  cleanup_routes struct route *r4 = NULL;
  cleanup_routes struct route *r6 = NULL;
  size_t n4, n6;
  if (read_routes (AF_INET, &r4, &n4, err) < 0 || read_routes (AF_INET6, &r6, &n6, err) < 0)
    return -1;
  const struct route *t = best_route (r4, n4, true);
  if (t == NULL)
    t = best_route (r4, n4, false);
  if (t == NULL)
    t = best_route (r6, n6, true);
  if (t == NULL)
    t = best_route (r6, n6, false);
  if (t == NULL)
    return 0;
  memcpy (r->ifname, t->ifname, sizeof (r->ifname));
  struct ifaddrs *ifs = NULL;
  if (getifaddrs (&ifs) < 0)
    return hv_error_set (err, errno, "getifaddrs (the host's addresses, for pasta)");
  r->v4 = n4 > 0 && pick_gateway (AF_INET, r4, n4, r->ifname, ifs, r->gw4, sizeof (r->gw4));
  r->v6 = n6 > 0 && pick_gateway (AF_INET6, r6, n6, r->ifname, ifs, r->gw6, sizeof (r->gw6));
  freeifaddrs (ifs);
  if (!r->v4 && !r->v6)
    r->ifname[0] = '\0';
  r->pasta_picks = best_route (r4, n4, true) && best_route (r6, n6, true) && r->ifname[0];
  return 0;
}
