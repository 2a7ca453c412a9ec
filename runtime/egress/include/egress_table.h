/* The nftables table that enforces egress in a sandbox's network
 * namespace (family inet), made with libnftnl + libmnl in one netlink
 * batch that the kernel applies whole or not at all.  The runtime layer
 * knows no policies: callers hand it plain values (egress_ranges.h).
 *
 * What the table does to what the namespace sends (chain "output",
 * policy drop, in this order):
 *   - loopback accepted (the resolver's replies, the sandbox's own services);
 *   - ICMPv6 router/neighbour solicitations and neighbour advertisements
 *     with hop limit 255 accepted (IPv6 stops working without them);
 *   - anything else from :: or fe80::/10 dropped (a pasta bug sends
 *     connection data from those; docs/egress.md, "pasta");
 *   - 169.254.0.0/16 and fd00:ec2::254 (cloud metadata, link-local)
 *     denied whatever an allowed CIDR covers;
 *   - TCP to denied (address . port) ranges (sets deny4, deny6) denied;
 *   - UDP and TCP carrying spec.resolver_mark accepted (the resolver's
 *     upstream queries);
 *   - established/related accepted, invalid dropped;
 *   - UDP and TCP to the DNS redirect target accepted;
 *   - TCP to allowed (address . port) ranges (sets allow4, allow6) and to
 *     pinned (address . port) pairs (sets pin4, pin6, flags timeout)
 *     accepted;
 *   - the rest to chain "deny": NFLOG (group spec.nflog_group, prefix
 *     HV_EGRESS_LOG_PREFIX; no limit in the kernel: the reader bounds
 *     what it records, egress_denials.h), then TCP reset and ICMP(v6)
 *     admin-prohibited for everything else, so a tool fails at once.
 * Chain "dns" (nat, hook output, priority HV_EGRESS_DNS_PRIORITY) sends
 * UDP and TCP to port 53 of any address to the redirect target.
 * With forward_port, the forwarder's variant (hv_egress_spec.forward_port).
 * With drop_inbound, chain "input" (filter, hook input, policy drop)
 * accepts only what arrives on loopback: network `none` in a namespace
 * that has interfaces (a pod's, which CNI made). */
#ifndef HAVEN_EGRESS_TABLE_H
#define HAVEN_EGRESS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress_ranges.h"
#include "error.h"

#define HV_EGRESS_LOG_PREFIX "haven-egress"
/* Before NAT's usual output priority (-100: iptables' nat OUTPUT, where
 * Docker rewrites 127.0.0.11:53 to its embedded DNS): the first nat chain
 * that maps a connection decides, so `dig @127.0.0.11` reaches haven's
 * resolver too.  After conntrack (-200), which NAT needs. */
#define HV_EGRESS_DNS_PRIORITY (-110)
/* With the forwarder (spec.forward_port), chain "output" filters before
 * every NAT chain (after conntrack, -200), so what it refuses is refused
 * and logged with its real destination, not the forwarder's listener;
 * chain "forward" then redirects what it let through, after chain
 * "dns" (the first nat chain that maps a connection decides). */
#define HV_EGRESS_FORWARD_FILTER_PRIORITY (-150)
#define HV_EGRESS_FORWARD_PRIORITY (-100)
/* Hex digits of a table fingerprint, plus the terminating NUL. */
#define HV_EGRESS_FINGERPRINT_LEN 17

/* Where port 53 goes: an address and port in the sandbox's netns. */
typedef struct hv_egress_dns_target
{
  bool set; /* false: DNS of this family is denied like other UDP */
  uint8_t addr[16];
  uint16_t port;
} hv_egress_dns_target;

/* One pin: TCP to addr:port allowed for timeout_ms (the kernel refuses a
 * timeout beyond its own limit, about 2^41 ms with HZ=250). */
typedef struct hv_egress_pin
{
  int family; /* AF_INET or AF_INET6 */
  uint8_t addr[16];
  uint16_t port;
  uint64_t timeout_ms;
} hv_egress_pin;

/* Docker's embedded DNS: libnetwork's fixed address in every container
 * namespace on a user-defined network (a port of its own behind a DNAT
 * rule from :53).  The table lets only the resolver's marked queries
 * reach it. */
#define HV_EGRESS_DOCKER_DNS "127.0.0.11"

typedef struct hv_egress_spec
{
  const hv_egress_cidr *allow; /* both families, any overlap */
  size_t n_allow;
  /* Denied TCP destinations (sets deny4, deny6), checked before every
   * accept: deny wins over allow and pins. */
  const hv_egress_cidr *deny;
  size_t n_deny;
  hv_egress_dns_target dns4, dns6;
  /* Packets marked with this (SO_MARK, which needs CAP_NET_ADMIN) are not
   * redirected: the resolver's own upstream queries from inside the
   * netns (Docker's 127.0.0.11).  0: none. */
  uint32_t resolver_mark;
  /* The sandbox's own cgroup (v2: its id and level, as `socket cgroupv2`
   * matches them), when it has one; sandbox_cgroup 0: unknown.  Then
   * only DNS from sockets made in it (or below it) is redirected to the
   * resolver, and DNS from other sockets of the namespace passes with
   * sandbox_mark unset: Docker's embedded DNS forwards the names it does
   * not know itself from inside the container's namespace, and those
   * queries must reach its upstream, not come back to the resolver that
   * asked (a loop that ends in SERVFAIL).  Packets of the sandbox's
   * sockets get sandbox_mark, which tells them apart (a socket match
   * cannot say "not in this cgroup" for a socket above its level). */
  uint64_t sandbox_cgroup;
  uint32_t sandbox_cgroup_level;
  uint32_t sandbox_mark;
  uint16_t nflog_group;
  /* Nothing but loopback enters either (chain "input"). */
  bool drop_inbound;
  /* The forwarder's listeners' port (egress_forward.h), 0: none.  Then
   * chain "output" runs at HV_EGRESS_FORWARD_FILTER_PRIORITY, accepts
   * loopback by destination (127.0.0.0/8, ::1: the namespace's default
   * route is lo, so every packet leaves by lo), accepts port 53 of any
   * address (chain "dns" sends it to the resolver next), and chain
   * "forward" (nat, output, HV_EGRESS_FORWARD_PRIORITY) sends TCP to any
   * other address to 127.0.0.1:forward_port, and with forward6 IPv6 to
   * [::1]:forward_port. */
  uint16_t forward_port;
  bool forward6;
  /* Pins added in the same batch (names resolved before the sandbox). */
  const hv_egress_pin *pins;
  size_t n_pins;
} hv_egress_spec;

/* How a pin's timeout is renewed; chosen by a probe of the kernel on the
 * first hv_egress_pin_add (hv_egress_table_refresh_mode tells which). */
typedef enum hv_egress_refresh
{
  HV_EGRESS_REFRESH_UNKNOWN,
  HV_EGRESS_REFRESH_READD,      /* re-adding an element resets its timeout (Linux >= 6.12) */
  HV_EGRESS_REFRESH_DELETE_ADD, /* add, delete, add again in one batch (older kernels) */
} hv_egress_refresh;

typedef struct hv_egress_table hv_egress_table;

/* A handle on table NAME ([A-Za-z0-9_-], at most 64 characters) in the
 * network namespace netns_fd (-1: the caller's): its netlink socket is
 * made there, so later calls from any namespace act on that one. */
int hv_egress_table_open (const char *name, int netns_fd, hv_egress_table **out, hv_error **err);
/* The same through fd, a NETLINK_NETFILTER socket made in the sandbox's
 * namespace by another process (egress_sandbox.c: a rootless runtime
 * cannot enter that namespace itself) and unbound, or one such handle's
 * socket passed on (hv_egress_table_fd).  Takes fd: closed on failure.
 * The kernel checks each batch against the socket's opener (its file
 * credentials) and against the sender: both need CAP_NET_ADMIN in the
 * namespace's user namespace, which its owner has from outside. */
int hv_egress_table_open_socket (const char *name, int fd, hv_egress_table **out, hv_error **err);
/* The handle's socket (still the handle's: dup it to pass it on). */
int hv_egress_table_fd (const hv_egress_table *t);
/* 0 when fd is an AF_NETLINK socket of protocol NETLINK_NETFILTER. */
int hv_egress_check_netfilter_socket (int fd, hv_error **err);
void hv_egress_table_close (hv_egress_table *t);
const char *hv_egress_table_name (const hv_egress_table *t);

/* Build the table in one batch; fails if a table of that name exists.
 * On success fingerprint (may be NULL) receives the table as the kernel
 * holds it (hv_egress_table_verify). */
int hv_egress_table_create (hv_egress_table *t, const hv_egress_spec *spec,
                            char fingerprint[HV_EGRESS_FINGERPRINT_LEN], hv_error **err);
/* Delete the table (whatever is in it); absent is not an error. */
int hv_egress_table_delete (hv_egress_table *t, hv_error **err);
/* The table's current fingerprint: a hash of its handle, flags, chains,
 * rules and sets and of the allow sets' elements (pins and the probe
 * set's elements change by design and are left out).  Handles are
 * never reused, so a table deleted and made again differs too. */
int hv_egress_table_fingerprint (hv_egress_table *t, char out[HV_EGRESS_FINGERPRINT_LEN], hv_error **err);
/* Fail unless the table exists and its fingerprint equals expected. */
int hv_egress_table_verify (hv_egress_table *t, const char *expected, hv_error **err);

/* Pin n (address . port) pairs in one batch and wait for the kernel's
 * acknowledgement: when this returns 0 the connections are allowed.  A
 * pair already pinned gets the new timeout (which may be shorter). */
int hv_egress_pin_add (hv_egress_table *t, const hv_egress_pin *pins, size_t n, hv_error **err);
/* Probe (once per handle) and return how pins are renewed. */
int hv_egress_table_refresh_mode (hv_egress_table *t, hv_egress_refresh *out, hv_error **err);
/* Use this renewal instead of probing (tests run both on one kernel). */
void hv_egress_table_force_refresh_mode (hv_egress_table *t, hv_egress_refresh mode);
const char *hv_egress_refresh_name (hv_egress_refresh mode);
#endif
