#include "config.h"
#include "egress_ranges.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

size_t
hv_egress_addr_len (int family)
{
  return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

static bool
host_bits_zero (const uint8_t *addr, size_t len, unsigned prefix)
{
  for (size_t bit = prefix; bit < len * 8; bit++)
    if (addr[bit / 8] & (0x80 >> (bit % 8)))
      return false;
  return true;
}

int
hv_egress_cidr_check (const hv_egress_cidr *c, hv_error **err)
{
  size_t len = hv_egress_addr_len (c->family);
  if (len == 0)
    return hv_error_set (err, 0, "address family %d is neither IPv4 nor IPv6", c->family);
  if (c->prefix_len > len * 8)
    return hv_error_set (err, 0, "prefix length /%u is longer than the address (%zu bits)", c->prefix_len, len * 8);
  if (!host_bits_zero (c->addr, len, c->prefix_len))
    return hv_error_set (err, 0, "address has bits set beyond the /%u prefix", c->prefix_len);
  if (c->port_min > c->port_max)
    return hv_error_set (err, 0, "port range %u-%u is empty", c->port_min, c->port_max);
  return 0;
}

static int
parse_uint (const char *s, size_t n, unsigned long max, unsigned long *out)
{
  if (n == 0 || n > 5)
    return -1;
  unsigned long v = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (s[i] < '0' || s[i] > '9')
        return -1;
      v = v * 10 + (unsigned long) (s[i] - '0');
    }
  if (v > max)
    return -1;
  *out = v;
  return 0;
}

int
hv_egress_cidr_parse (const char *text, hv_egress_cidr *out, hv_error **err)
{
  memset (out, 0, sizeof (*out));
  char buf[INET6_ADDRSTRLEN + 8];
  if (strlen (text) >= sizeof (buf))
    return hv_error_set (err, 0, "\"%s\" is not an address or CIDR: too long", text);
  strcpy (buf, text);
  char *slash = strchr (buf, '/');
  if (slash != NULL)
    *slash = '\0';
  if (inet_pton (AF_INET, buf, out->addr) == 1)
    out->family = AF_INET;
  else if (inet_pton (AF_INET6, buf, out->addr) == 1)
    out->family = AF_INET6;
  else
    return hv_error_set (err, 0, "\"%s\" is not an IPv4 or IPv6 address or CIDR", text);
  unsigned bits = (unsigned) hv_egress_addr_len (out->family) * 8;
  out->prefix_len = bits;
  if (slash != NULL)
    {
      unsigned long p;
      if (parse_uint (slash + 1, strlen (slash + 1), bits, &p) < 0)
        return hv_error_set (err, 0, "\"%s\": prefix length must be a number from 0 to %u", text, bits);
      out->prefix_len = (unsigned) p;
    }
  out->port_min = 0;
  out->port_max = 65535;
  if (!host_bits_zero (out->addr, bits / 8, out->prefix_len))
    return hv_error_set (err, 0, "\"%s\": address has bits set beyond the /%u prefix", text, out->prefix_len);
  return 0;
}

int
hv_egress_ports_parse (const char *text, uint16_t *min, uint16_t *max, hv_error **err)
{
  if (strcmp (text, "any") == 0)
    {
      *min = 0;
      *max = 65535;
      return 0;
    }
  const char *dash = strchr (text, '-');
  unsigned long lo, hi;
  size_t n1 = dash ? (size_t) (dash - text) : strlen (text);
  if (parse_uint (text, n1, 65535, &lo) < 0 || lo == 0)
    return hv_error_set (err, 0, "\"%s\": a port is a number from 1 to 65535 (or a range LOW-HIGH, or any)", text);
  hi = lo;
  if (dash != NULL && (parse_uint (dash + 1, strlen (dash + 1), 65535, &hi) < 0 || hi == 0))
    return hv_error_set (err, 0, "\"%s\": a port is a number from 1 to 65535 (or a range LOW-HIGH, or any)", text);
  if (lo > hi)
    return hv_error_set (err, 0, "\"%s\": port range is empty (LOW is above HIGH)", text);
  *min = (uint16_t) lo;
  *max = (uint16_t) hi;
  return 0;
}

/* An address interval (network byte order, inclusive). */
typedef struct
{
  uint8_t lo[16], hi[16];
} addr_iv;

/* Whole 16 bytes: an IPv4 interval's bytes past the 4th are zero. */
static int
cmp_iv (const void *a, const void *b)
{
  return memcmp (((const addr_iv *) a)->lo, ((const addr_iv *) b)->lo, 16);
}

static int
cmp_u32 (const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  return x < y ? -1 : x > y;
}

/* x + 1 == y (as len-byte big-endian numbers) */
static bool
is_successor (const uint8_t *x, const uint8_t *y, size_t len)
{
  uint8_t t[16];
  memcpy (t, x, len);
  for (size_t i = len; i-- > 0;)
    if (++t[i] != 0)
      return memcmp (t, y, len) == 0;
  return false; /* x is all ones: no successor */
}

/* Sort and merge overlapping or adjacent intervals in place; returns the
 * new count. */
static size_t
merge_ivs (addr_iv *iv, size_t n, size_t len)
{
  if (n == 0)
    return 0;
  qsort (iv, n, sizeof (*iv), cmp_iv);
  size_t w = 0;
  for (size_t i = 1; i < n; i++)
    {
      if (memcmp (iv[i].lo, iv[w].hi, len) <= 0 || is_successor (iv[w].hi, iv[i].lo, len))
        {
          if (memcmp (iv[i].hi, iv[w].hi, len) > 0)
            memcpy (iv[w].hi, iv[i].hi, len);
        }
      else
        iv[++w] = iv[i];
    }
  return w + 1;
}

static void
cidr_bounds (const hv_egress_cidr *c, size_t len, addr_iv *out)
{
  memset (out, 0, sizeof (*out));
  memcpy (out->lo, c->addr, len);
  memcpy (out->hi, c->addr, len);
  for (size_t bit = c->prefix_len; bit < len * 8; bit++)
    out->hi[bit / 8] |= (uint8_t) (0x80 >> (bit % 8));
}

int
hv_egress_ranges_build (const hv_egress_cidr *cidrs, size_t n, int family, hv_egress_range **out,
                        size_t *n_out, hv_error **err)
{
  *out = NULL;
  *n_out = 0;
  size_t len = hv_egress_addr_len (family);
  if (len == 0)
    return hv_error_set (err, 0, "address family %d is neither IPv4 nor IPv6", family);
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (hv_egress_cidr_check (&cidrs[i], err) < 0)
        return hv_error_wrap (err, "allowed destination %zu", i + 1);
      if (cidrs[i].family == family)
        m++;
    }
  if (m == 0)
    return 0;

  /* The port axis cut where any rule's range starts or ends: within one
   * piece every rule applies wholly or not at all, so the addresses of a
   * piece merge into disjoint intervals; equal neighbouring pieces join. */
  cleanup_free uint32_t *cuts = xmalloc0 (2 * m * sizeof (*cuts));
  size_t nc = 0;
  for (size_t i = 0; i < n; i++)
    if (cidrs[i].family == family)
      {
        cuts[nc++] = cidrs[i].port_min;
        cuts[nc++] = (uint32_t) cidrs[i].port_max + 1;
      }
  qsort (cuts, nc, sizeof (*cuts), cmp_u32);
  size_t u = 0;
  for (size_t i = 0; i < nc; i++)
    if (u == 0 || cuts[i] != cuts[u - 1])
      cuts[u++] = cuts[i];
  nc = u;

  cleanup_free addr_iv *cur = xmalloc0 (m * sizeof (*cur));
  cleanup_free addr_iv *prev = xmalloc0 (m * sizeof (*prev));
  size_t n_prev = 0;
  uint32_t prev_lo = 0, prev_hi = 0;
  bool have_prev = false;
  hv_egress_range *res = NULL;
  size_t n_res = 0, cap = 0;

  for (size_t k = 0; k + 1 <= nc; k++)
    {
      /* Piece k: ports cuts[k] .. cuts[k+1]-1 (the last cut ends the axis). */
      bool last = k + 1 == nc;
      uint32_t lo = cuts[k], hi = last ? 0 : cuts[k + 1] - 1;
      size_t n_cur = 0;
      if (!last)
        for (size_t i = 0; i < n; i++)
          if (cidrs[i].family == family && cidrs[i].port_min <= lo && cidrs[i].port_max >= hi)
            cidr_bounds (&cidrs[i], len, &cur[n_cur++]);
      n_cur = merge_ivs (cur, n_cur, len);
      bool same = have_prev && n_cur == n_prev && prev_hi + 1 == lo
                  && memcmp (cur, prev, n_cur * sizeof (*cur)) == 0;
      if (same)
        {
          prev_hi = hi;
          continue;
        }
      /* Flush the previous group. */
      if (have_prev)
        for (size_t j = 0; j < n_prev; j++)
          {
            if (n_res == cap)
              {
                cap = cap ? cap * 2 : 16;
                res = xrealloc (res, cap * sizeof (*res));
              }
            hv_egress_range *r = &res[n_res++];
            memset (r, 0, sizeof (*r));
            memcpy (r->lo, prev[j].lo, len);
            memcpy (r->hi, prev[j].hi, len);
            r->port_lo = (uint16_t) prev_lo;
            r->port_hi = (uint16_t) prev_hi;
          }
      memcpy (prev, cur, n_cur * sizeof (*cur));
      n_prev = n_cur;
      prev_lo = lo;
      prev_hi = hi;
      have_prev = n_cur > 0;
    }
  *out = res;
  *n_out = n_res;
  return 0;
}

char *
hv_egress_range_text (int family, const hv_egress_range *r)
{
  char lo[INET6_ADDRSTRLEN], hi[INET6_ADDRSTRLEN];
  if (inet_ntop (family, r->lo, lo, sizeof (lo)) == NULL || inet_ntop (family, r->hi, hi, sizeof (hi)) == NULL)
    return xstrdup ("(bad address)");
  if (memcmp (r->lo, r->hi, hv_egress_addr_len (family)) == 0)
    return r->port_lo == r->port_hi ? xasprintf ("%s . %u", lo, r->port_lo)
                                    : xasprintf ("%s . %u-%u", lo, r->port_lo, r->port_hi);
  return r->port_lo == r->port_hi ? xasprintf ("%s-%s . %u", lo, hi, r->port_lo)
                                  : xasprintf ("%s-%s . %u-%u", lo, hi, r->port_lo, r->port_hi);
}
