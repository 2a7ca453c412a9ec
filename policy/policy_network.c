/* network.allow / network.deny entries into rules (policy_network.h). */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "policy_network.h"
#include "utils.h"

static int
problem_set (char **problem, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static int
problem_set (char **problem, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  *problem = xvasprintf (fmt, ap);
  va_end (ap);
  return -1;
}

static void
push_rule (hv_net_rules *out, const hv_net_rule *r)
{
  out->v = xrealloc (out->v, (out->n + 1) * sizeof (hv_net_rule));
  out->v[out->n] = *r;
  out->v[out->n].name = r->name ? xstrdup (r->name) : NULL;
  out->v[out->n].entry = r->entry ? xstrdup (r->entry) : NULL;
  out->v[out->n].where = r->where ? xstrdup (r->where) : NULL;
  out->n++;
}

/* "443" or "1000-2000".  Strict digits: no sign, no spaces, no "*". */
static int
parse_port (const char *s, size_t len, uint16_t *out, char **problem)
{
  if (len == 0)
    return problem_set (problem, "empty port");
  unsigned long v = 0;
  for (size_t i = 0; i < len; i++)
    {
      if (!isdigit ((unsigned char) s[i]))
        return problem_set (problem, "port \"%.*s\" is not a number from 1 to 65535", (int) len, s);
      v = v * 10 + (unsigned long) (s[i] - '0');
      if (v > 65535)
        return problem_set (problem, "port \"%.*s\" is above 65535", (int) len, s);
    }
  if (v == 0)
    return problem_set (problem, "port 0 is not a port (ports are 1 to 65535)");
  *out = (uint16_t) v;
  return 0;
}

static int
parse_ports (const char *s, uint16_t *lo, uint16_t *hi, char **problem)
{
  const char *dash = strchr (s, '-');
  if (parse_port (s, dash ? (size_t) (dash - s) : strlen (s), lo, problem) < 0)
    return -1;
  *hi = *lo;
  if (dash && parse_port (dash + 1, strlen (dash + 1), hi, problem) < 0)
    return -1;
  if (*hi < *lo)
    return problem_set (problem, "port range %u-%u is reversed (write %u-%u)", *lo, *hi, *hi, *lo);
  return 0;
}

static bool
is_ipv4_mapped (const uint8_t *a)
{
  static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
  return memcmp (a, prefix, sizeof (prefix)) == 0;
}

/* addr[/prefix], host bits zero. */
static int
parse_address (char *host, bool bracketed, hv_net_rule *r, char **problem)
{
  char *slash = strchr (host, '/');
  if (slash)
    *slash = '\0';
  r->kind = HV_NET_RULE_CIDR;
  r->family = strchr (host, ':') ? AF_INET6 : AF_INET;
  unsigned max = r->family == AF_INET ? 32 : 128;
  if (bracketed && r->family == AF_INET)
    return problem_set (problem, "brackets are for IPv6 addresses (write an IPv4 address as 192.0.2.1:443)");
  if (inet_pton (r->family, host, r->addr) != 1)
    {
      if (r->family == AF_INET)
        return problem_set (problem, "\"%s\" is not an IPv4 address (four numbers from 0 to 255) nor a host name "
                                     "(a name's last label is not all digits)",
                            host);
      return problem_set (problem, "\"%s\" is not an IPv6 address (with a port, write it in brackets: "
                                   "[2001:db8::1]:443; zone indexes such as %%eth0 are not supported)",
                          host);
    }
  if (r->family == AF_INET6 && is_ipv4_mapped (r->addr))
    return problem_set (problem, "an IPv4-mapped IPv6 address: write the IPv4 address (%u.%u.%u.%u)", r->addr[12],
                        r->addr[13], r->addr[14], r->addr[15]);
  r->prefix = max;
  if (slash)
    {
      const char *p = slash + 1;
      unsigned v = 0;
      if (*p == '\0' || strlen (p) > 3)
        return problem_set (problem, "prefix length \"/%s\" is not a number from 0 to %u", p, max);
      for (; *p; p++)
        {
          if (!isdigit ((unsigned char) *p))
            return problem_set (problem, "prefix length \"/%s\" is not a number from 0 to %u", slash + 1, max);
          v = v * 10 + (unsigned) (*p - '0');
        }
      if (v > max)
        return problem_set (problem, "prefix length /%u is longer than %u", v, max);
      r->prefix = v;
    }
  /* Host bits set: "192.0.2.7/24" could mean the /24 or a typo for one
   * host; the table needs one meaning, so ask. */
  uint8_t net[HV_NET_ADDR_MAX] = { 0 };
  for (unsigned bit = 0; bit < r->prefix; bit++)
    net[bit / 8] = (uint8_t) (net[bit / 8] | (r->addr[bit / 8] & (0x80u >> (bit % 8)))); /* bytes */
  if (memcmp (net, r->addr, max / 8) != 0)
    {
      char text[INET6_ADDRSTRLEN];
      inet_ntop (r->family, net, text, sizeof (text));
      return problem_set (problem, "host bits set after /%u (the network is %s/%u; for one host write it without "
                                   "a prefix)",
                          r->prefix, text, r->prefix);
    }
  return 0;
}

/* A host name (without "*."): letters, digits, '-' and '_' (Docker and
 * compose service names have them), labels 1-63, at most 253 bytes. */
static int
check_name (char *name, char **problem)
{
  size_t len = strlen (name);
  if (len > 0 && name[len - 1] == '.')
    name[--len] = '\0';
  if (len == 0)
    return problem_set (problem, "empty name");
  if (len > HV_NET_NAME_MAX)
    return problem_set (problem, "name is %zu characters long (at most %d)", len, HV_NET_NAME_MAX);
  for (char *c = name; *c; c++)
    *c = (char) tolower ((unsigned char) *c);
  for (const char *label = name;;)
    {
      const char *dot = strchr (label, '.');
      size_t l = dot ? (size_t) (dot - label) : strlen (label);
      if (l == 0)
        return problem_set (problem, "empty label (two dots, or a dot at the start)");
      if (l > HV_NET_LABEL_MAX)
        return problem_set (problem, "label \"%.*s\" is %zu characters long (at most %d)", (int) l, label, l,
                            HV_NET_LABEL_MAX);
      for (size_t i = 0; i < l; i++)
        if (!isalnum ((unsigned char) label[i]) && label[i] != '-' && label[i] != '_')
          {
            if (label[i] == '*')
              return problem_set (problem, "* only as the whole first label (*.example.com)");
            return problem_set (problem, "'%c' is not allowed in a host name", label[i]);
          }
      if (label[0] == '-' || label[l - 1] == '-')
        return problem_set (problem, "label \"%.*s\" begins or ends with '-'", (int) l, label);
      if (dot == NULL)
        break;
      label = dot + 1;
    }
  return 0;
}

/* The last label all digits: an address, not a name (RFC 3696 2.1). */
static bool
looks_numeric (const char *host)
{
  const char *last = strrchr (host, '.');
  last = last ? last + 1 : host;
  if (*last == '\0')
    return false;
  for (; *last; last++)
    if (!isdigit ((unsigned char) *last))
      return false;
  return true;
}

int
hv_net_entry_parse (const char *entry, bool deny, const char *where, hv_net_rules *out, char **problem)
{
  if (entry[0] == '\0')
    return problem_set (problem, "empty entry");
  for (const char *c = entry; *c; c++)
    {
      if ((unsigned char) *c >= 0x80)
        return problem_set (problem, "not ASCII: write an internationalised name in punycode (xn--...), as DNS "
                                     "carries it");
      if (isspace ((unsigned char) *c) || iscntrl ((unsigned char) *c))
        return problem_set (problem, "contains white space or a control character");
    }
  if (strstr (entry, "://"))
    return problem_set (problem, "a URL: write the host name, with :PORT if it is not 443 or 80");

  cleanup_free char *host = NULL;
  const char *ports = NULL;
  bool bracketed = entry[0] == '[';
  if (bracketed)
    {
      const char *close = strchr (entry, ']');
      if (close == NULL)
        return problem_set (problem, "'[' without ']'");
      host = xasprintf ("%.*s", (int) (close - entry - 1), entry + 1);
      if (close[1] == ':')
        ports = close + 2;
      else if (close[1] != '\0')
        return problem_set (problem, "after ']' expected :PORT or nothing");
    }
  else
    {
      const char *colon = strchr (entry, ':');
      /* Two colons or more: an IPv6 address, which takes no port unless
       * it is in brackets (2001:db8::1:443 has no one meaning). */
      if (colon && strchr (colon + 1, ':') == NULL)
        {
          host = xasprintf ("%.*s", (int) (colon - entry), entry);
          ports = colon + 1;
        }
      else
        host = xstrdup (entry);
    }
  if (host[0] == '\0')
    return problem_set (problem, "no host before the port");

  hv_net_rule r = { .port_lo = 1, .port_hi = 65535, .entry = (char *) entry, .where = (char *) where };
  if (ports && parse_ports (ports, &r.port_lo, &r.port_hi, problem) < 0)
    return -1;

  char *slash = strchr (host, '/');
  if (slash && !bracketed && strchr (host, ':') == NULL)
    {
      *slash = '\0';
      bool numeric = looks_numeric (host);
      *slash = '/';
      if (!numeric)
        return problem_set (problem, "a path after a name: write the host name only (with :PORT if needed)");
    }
  if (bracketed || slash || strchr (host, ':') || looks_numeric (host))
    {
      if (parse_address (host, bracketed, &r, problem) < 0)
        return -1;
      push_rule (out, &r);
      return 0;
    }

  if (strcmp (host, "*") == 0 || strcmp (host, "*.") == 0)
    return problem_set (problem, "a lone * would allow every name: list the names (or a *.zone), or use mode: open");
  r.kind = HV_NET_RULE_NAME;
  char *name = host;
  if (str_has_prefix (host, "*."))
    {
      r.kind = HV_NET_RULE_WILDCARD;
      name = host + 2;
    }
  if (check_name (name, problem) < 0)
    return -1;
  r.name = name;
  if (ports || deny)
    push_rule (out, &r);
  else
    {
      /* A bare name: HTTPS and HTTP, what an API client or a package
       * manager needs, and nothing else (git over ssh needs name:22). */
      r.port_lo = r.port_hi = 443;
      push_rule (out, &r);
      r.port_lo = r.port_hi = 80;
      push_rule (out, &r);
    }
  return 0;
}

static bool
same_rule (const hv_net_rule *a, const hv_net_rule *b)
{
  if (a->kind != b->kind || a->port_lo != b->port_lo || a->port_hi != b->port_hi)
    return false;
  if (a->kind == HV_NET_RULE_CIDR)
    return a->family == b->family && a->prefix == b->prefix && memcmp (a->addr, b->addr, sizeof (a->addr)) == 0;
  return strcmp (a->name, b->name) == 0;
}

void
hv_net_rules_append (hv_net_rules *dst, const hv_net_rules *src)
{
  for (size_t i = 0; i < src->n; i++)
    {
      size_t j = 0;
      while (j < dst->n && !same_rule (&dst->v[j], &src->v[i]))
        j++;
      if (j == dst->n)
        push_rule (dst, &src->v[i]);
    }
}

void
hv_net_rules_free (hv_net_rules *r)
{
  for (size_t i = 0; i < r->n; i++)
    {
      free (r->v[i].name);
      free (r->v[i].entry);
      free (r->v[i].where);
    }
  free (r->v);
  r->v = NULL;
  r->n = 0;
}

bool
hv_net_name_under (const char *name, const char *zone, bool or_self)
{
  size_t n = strlen (name), z = strlen (zone);
  if (n > 0 && name[n - 1] == '.')
    n--;
  if (n == z)
    return or_self && strncasecmp (name, zone, z) == 0;
  return n > z && name[n - z - 1] == '.' && strncasecmp (name + n - z, zone, z) == 0;
}

bool
hv_net_rule_matches_name (const hv_net_rule *r, const char *name)
{
  if (r->kind == HV_NET_RULE_CIDR)
    return false;
  size_t n = strlen (name);
  if (n > 0 && name[n - 1] == '.')
    n--;
  if (r->kind == HV_NET_RULE_NAME)
    return n == strlen (r->name) && strncasecmp (name, r->name, n) == 0;
  /* *.zone: below the zone at any depth, never the zone itself. */
  return hv_net_name_under (name, r->name, false);
}

static bool
prefix_matches (const uint8_t *net, unsigned prefix, const uint8_t *addr)
{
  unsigned full = prefix / 8, rest = prefix % 8;
  if (memcmp (net, addr, full) != 0)
    return false;
  if (rest == 0)
    return true;
  uint8_t mask = (uint8_t) (0xff << (8 - rest));
  return (net[full] & mask) == (addr[full] & mask);
}

bool
hv_net_rule_matches_addr (const hv_net_rule *r, int family, const void *addr)
{
  return r->kind == HV_NET_RULE_CIDR && r->family == family && prefix_matches (r->addr, r->prefix, addr);
}

static bool
port_in (const hv_net_rule *r, uint16_t port)
{
  return port >= r->port_lo && port <= r->port_hi;
}

bool
hv_net_name_allowed (const hv_net_rules *allow, const hv_net_rules *deny, const char *name, uint16_t port)
{
  for (size_t i = 0; i < deny->n; i++)
    if (port_in (&deny->v[i], port) && hv_net_rule_matches_name (&deny->v[i], name))
      return false;
  for (size_t i = 0; i < allow->n; i++)
    if (port_in (&allow->v[i], port) && hv_net_rule_matches_name (&allow->v[i], name))
      return true;
  return false;
}

bool
hv_net_addr_denied (const hv_net_rules *deny, int family, const void *addr, uint16_t port)
{
  for (size_t i = 0; i < deny->n; i++)
    if (port_in (&deny->v[i], port) && hv_net_rule_matches_addr (&deny->v[i], family, addr))
      return true;
  return false;
}

bool
hv_net_addr_allowed (const hv_net_rules *allow, const hv_net_rules *deny, int family, const void *addr,
                     uint16_t port)
{
  if (hv_net_addr_denied (deny, family, addr, port))
    return false;
  for (size_t i = 0; i < allow->n; i++)
    if (port_in (&allow->v[i], port) && hv_net_rule_matches_addr (&allow->v[i], family, addr))
      return true;
  return false;
}

char *
hv_net_rule_target (const hv_net_rule *r)
{
  if (r->kind == HV_NET_RULE_NAME)
    return xstrdup (r->name);
  if (r->kind == HV_NET_RULE_WILDCARD)
    return xasprintf ("*.%s", r->name);
  char text[INET6_ADDRSTRLEN];
  inet_ntop (r->family, r->addr, text, sizeof (text));
  if (r->prefix == (r->family == AF_INET ? 32u : 128u))
    return xstrdup (text);
  return xasprintf ("%s/%u", text, r->prefix);
}
