/* Allowed destinations of the egress table as plain values: CIDRs with a
 * TCP port range, parsed from text and normalised into the disjoint
 * (address range . port range) elements an nf_tables interval set of
 * concatenations accepts.  Pure logic, no netlink (unit-tested). */
#ifndef HAVEN_EGRESS_RANGES_H
#define HAVEN_EGRESS_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* One allowed destination: TCP to any address of a CIDR on a port range
 * (0-65535: any port).  IPv4 addresses use the first 4 bytes of addr,
 * in network byte order; host bits are zero. */
typedef struct hv_egress_cidr
{
  int family; /* AF_INET or AF_INET6 */
  uint8_t addr[16];
  unsigned prefix_len;
  uint16_t port_min, port_max;
} hv_egress_cidr;

/* One set element: every address lo..hi (inclusive, network byte order)
 * with every port port_lo..port_hi. */
typedef struct hv_egress_range
{
  uint8_t lo[16], hi[16];
  uint16_t port_lo, port_hi;
} hv_egress_range;

/* Address length in bytes of a family (4 or 16), 0 for any other. */
size_t hv_egress_addr_len (int family);

/* "192.0.2.0/24", "2001:db8::/32" or a bare address (a /32 or /128).
 * Host bits set ("10.0.0.1/8") are an error rather than silently masked:
 * a rule that allows more than it shows is a policy mistake. */
int hv_egress_cidr_parse (const char *text, hv_egress_cidr *out, hv_error **err);
/* "any", "443" or "1000-2000" (1-65535; "0" is not a port). */
int hv_egress_ports_parse (const char *text, uint16_t *min, uint16_t *max, hv_error **err);
/* Check a struct built by a caller: family, prefix, host bits, ports. */
int hv_egress_cidr_check (const hv_egress_cidr *c, hv_error **err);

/* The elements for the CIDRs of one family in cidrs (others skipped):
 * disjoint (the kernel refuses overlapping interval elements), adjacent
 * address ranges merged, in ascending order.  *out is malloc'ed (NULL
 * with *n_out = 0 when none). */
int hv_egress_ranges_build (const hv_egress_cidr *cidrs, size_t n, int family, hv_egress_range **out,
                            size_t *n_out, hv_error **err);

/* "192.0.2.0-192.0.2.255 . 0-65535" (for error messages). */
char *hv_egress_range_text (int family, const hv_egress_range *r);
#endif
