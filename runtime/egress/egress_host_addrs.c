/* The host's own addresses as deny entries: egress_host_addrs.h. */
#include "config.h"
#include "egress_host_addrs.h"

#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "utils.h"

/* More addresses than a host has (each veth of a container engine adds
 * an IPv6 link-local one); the rest would be left out, so fail instead. */
#define MAX_HOST_ADDRS 8192

static bool
add (hv_egress_cidr **out, size_t *n, size_t *cap, int family, const uint8_t *addr)
{
  size_t len = family == AF_INET ? 4 : 16;
  for (size_t i = 0; i < *n; i++)
    if ((*out)[i].family == family && memcmp ((*out)[i].addr, addr, len) == 0)
      return true;
  if (*n >= MAX_HOST_ADDRS)
    return false;
  if (*n == *cap)
    {
      *cap = *cap ? *cap * 2 : 16;
      *out = xrealloc (*out, *cap * sizeof (**out));
    }
  hv_egress_cidr *c = &(*out)[(*n)++];
  memset (c, 0, sizeof (*c));
  c->family = family;
  memcpy (c->addr, addr, len);
  c->prefix_len = (unsigned) len * 8;
  c->port_min = 0;
  c->port_max = 65535;
  return true;
}

int
hv_egress_host_addrs (hv_egress_cidr **out, size_t *n, hv_error **err)
{
  *out = NULL;
  *n = 0;
  size_t cap = 0;
  struct ifaddrs *ifs = NULL;
  if (getifaddrs (&ifs) < 0)
    return hv_error_set (err, errno, "getifaddrs (the host's own addresses, denied to the sandbox)");
  bool ok = true;
  for (const struct ifaddrs *i = ifs; i && ok; i = i->ifa_next)
    {
      if (i->ifa_addr == NULL)
        continue;
      if (i->ifa_addr->sa_family == AF_INET)
        {
          const uint8_t *a = (const uint8_t *) &((const struct sockaddr_in *) i->ifa_addr)->sin_addr;
          uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff };
          memcpy (mapped + 12, a, 4);
          ok = add (out, n, &cap, AF_INET, a) && add (out, n, &cap, AF_INET6, mapped);
        }
      else if (i->ifa_addr->sa_family == AF_INET6)
        ok = add (out, n, &cap, AF_INET6, ((const struct sockaddr_in6 *) i->ifa_addr)->sin6_addr.s6_addr);
    }
  freeifaddrs (ifs);
  if (!ok)
    {
      free (*out);
      *out = NULL;
      *n = 0;
      return hv_error_set (err, 0, "the host has more than %d addresses: too many to deny to the sandbox one by one",
                           MAX_HOST_ADDRS);
    }
  return 0;
}
