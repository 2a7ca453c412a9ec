/* The egress table over nf_tables netlink (libnftnl builds the objects,
 * libmnl carries them).  Every change is one batch with NLM_F_ACK on each
 * message: the kernel processes the batch while sendto() runs and queues
 * one acknowledgement or error per message before it returns, so reading
 * without waiting afterwards sees every answer, and an error's sequence
 * number tells which object failed. */
#include "config.h"
#include "egress_table.h"
#include "network.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "utils.h"

struct hv_egress_table
{
  char *name;
  struct mnl_socket *nl;
  uint32_t seq;
  hv_egress_refresh refresh;
};

/* Set names and nftables' own type ids of their keys (for `nft list`). */
#define SET_ALLOW4 "allow4"
#define SET_ALLOW6 "allow6"
#define SET_PIN4 "pin4"
#define SET_PIN6 "pin6"
#define SET_PROBE "refresh_probe"
#define SET_DENY4 "deny4"
#define SET_DENY6 "deny6"
#define TYPE_IPV4_SERVICE ((7u << 6) | 13u) /* ipv4_addr . inet_service */
#define TYPE_IPV6_SERVICE ((8u << 6) | 13u) /* ipv6_addr . inet_service */
#define KEY4_LEN 8                          /* address, port in a 32-bit register */
#define KEY6_LEN 20

/* ------------------------------------------------------------------ */
/* Batches                                                             */
/* ------------------------------------------------------------------ */

/* Room kept free for the next message: libnftnl writes payloads without
 * a bound, and no message built here comes near this. */
#define MSG_ROOM 16384

typedef struct batch
{
  char *buf;
  size_t len, cap;
  uint32_t first_seq; /* of the first message after BEGIN */
  size_t n;           /* messages after BEGIN */
  char **what;        /* what[i]: the object message i makes, for errors */
} batch;

static void
batch_init (batch *b, hv_egress_table *t)
{
  memset (b, 0, sizeof (*b));
  b->cap = 4 * MSG_ROOM;
  b->buf = xmalloc0 (b->cap);
  nftnl_batch_begin (b->buf, t->seq++);
  b->len = NLMSG_ALIGN (((struct nlmsghdr *) b->buf)->nlmsg_len);
  b->first_seq = t->seq;
}

static void
batch_free (batch *b)
{
  for (size_t i = 0; i < b->n; i++)
    free (b->what[i]);
  free (b->what);
  free (b->buf);
}

static void
batch_room (batch *b)
{
  if (b->cap - b->len >= MSG_ROOM)
    return;
  b->cap *= 2;
  b->buf = xrealloc (b->buf, b->cap);
  memset (b->buf + b->len, 0, b->cap - b->len);
}

/* Start message TYPE (NFT_MSG_*); the caller builds its payload and then
 * calls batch_done. what: the object, for error messages (owned). */
static struct nlmsghdr *
batch_msg (batch *b, hv_egress_table *t, uint16_t type, uint16_t flags, char *what)
{
  batch_room (b);
  b->what = xrealloc (b->what, (b->n + 1) * sizeof (*b->what));
  b->what[b->n++] = what;
  return nftnl_nlmsg_build_hdr (b->buf + b->len, type, NFPROTO_INET, flags | NLM_F_ACK, t->seq++);
}

static void
batch_done (batch *b, struct nlmsghdr *nlh)
{
  b->len += NLMSG_ALIGN (nlh->nlmsg_len);
}

/* The error's text: errno's, and the kernel's extended-ack message when
 * it gave one. */
static char *
nlerr_text (const struct nlmsghdr *nlh, int error)
{
  const char *ext = NULL;
  if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
    {
      const struct nlmsgerr *e = mnl_nlmsg_get_payload (nlh);
      size_t off = sizeof (*e);
      if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
        off += e->msg.nlmsg_len - sizeof (struct nlmsghdr);
      const struct nlattr *a;
      mnl_attr_for_each (a, nlh, off)
      {
        if (mnl_attr_get_type (a) == NLMSGERR_ATTR_MSG)
          ext = mnl_attr_get_str (a);
      }
    }
  return ext ? xasprintf ("%s (%s)", strerror (error), ext) : xstrdup (strerror (error));
}

/* Send the batch and read every answer.  The first error names its
 * object; the kernel undid the whole batch then. */
static int
batch_send (batch *b, hv_egress_table *t, hv_error **err)
{
  batch_room (b);
  nftnl_batch_end (b->buf + b->len, t->seq++);
  b->len += NLMSG_ALIGN (((struct nlmsghdr *) (b->buf + b->len))->nlmsg_len);
  if (mnl_socket_sendto (t->nl, b->buf, b->len) < 0)
    return hv_error_set (err, errno, "send nf_tables batch of %zu messages", b->n);

  size_t acked = 0;
  char *first_err = NULL;
  int first_errno = 0;
  cleanup_free char *rbuf = xmalloc0 (MNL_SOCKET_BUFFER_SIZE * 4);
  while (acked < b->n)
    {
      ssize_t r = recv (mnl_socket_get_fd (t->nl), rbuf, MNL_SOCKET_BUFFER_SIZE * 4, MSG_DONTWAIT);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        break; /* nothing more comes: see the comment at the top */
      if (r < 0)
        {
          free (first_err);
          return hv_error_set (err, errno, "read nf_tables acknowledgements");
        }
      const struct nlmsghdr *nlh = (const struct nlmsghdr *) rbuf;
      int len = (int) r;
      for (; mnl_nlmsg_ok (nlh, len); nlh = mnl_nlmsg_next (nlh, &len))
        {
          if (nlh->nlmsg_type != NLMSG_ERROR)
            continue;
          const struct nlmsgerr *e = mnl_nlmsg_get_payload (nlh);
          uint32_t seq = nlh->nlmsg_seq;
          const char *what = seq >= b->first_seq && seq - b->first_seq < b->n ? b->what[seq - b->first_seq]
                                                                              : "the batch";
          acked++;
          if (e->error != 0 && first_err == NULL)
            {
              cleanup_free char *text = nlerr_text (nlh, -e->error);
              first_err = xasprintf ("%s: %s", what, text);
              first_errno = -e->error;
            }
        }
    }
  if (first_err != NULL)
    {
      hv_error_set (err, 0, "%s", first_err);
      (*err)->errno_code = first_errno; /* strerror is in the text already */
      free (first_err);
      return -1;
    }
  if (acked < b->n)
    return hv_error_set (err, 0, "the kernel acknowledged %zu of %zu nf_tables messages", acked, b->n);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Expressions                                                         */
/* ------------------------------------------------------------------ */

static void
x_meta (struct nftnl_rule *r, uint32_t key, uint32_t dreg)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("meta");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_META_KEY, key);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_META_DREG, dreg);
  nftnl_rule_add_expr (r, e);
}

static void
x_cmp (struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("cmp");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_CMP_OP, op);
  nftnl_expr_set (e, NFTNL_EXPR_CMP_DATA, data, len);
  nftnl_rule_add_expr (r, e);
}

static void
x_cmp_u8 (struct nftnl_rule *r, uint8_t v)
{
  x_cmp (r, NFT_CMP_EQ, &v, 1);
}

static void
x_payload (struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len, uint32_t dreg)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("payload");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_PAYLOAD_BASE, base);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_PAYLOAD_LEN, len);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
  nftnl_rule_add_expr (r, e);
}

static void
x_mask (struct nftnl_rule *r, const void *mask, uint32_t len)
{
  static const uint8_t zero[16];
  struct nftnl_expr *e = nftnl_expr_alloc ("bitwise");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_BITWISE_LEN, len);
  nftnl_expr_set (e, NFTNL_EXPR_BITWISE_MASK, mask, len);
  nftnl_expr_set (e, NFTNL_EXPR_BITWISE_XOR, zero, len);
  nftnl_rule_add_expr (r, e);
}

static void
x_verdict (struct nftnl_rule *r, int verdict, const char *chain)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("immediate");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_IMM_VERDICT, (uint32_t) verdict);
  if (chain != NULL)
    nftnl_expr_set_str (e, NFTNL_EXPR_IMM_CHAIN, chain);
  nftnl_rule_add_expr (r, e);
}

static void
x_imm (struct nftnl_rule *r, uint32_t dreg, const void *data, uint32_t len)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("immediate");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_IMM_DREG, dreg);
  nftnl_expr_set (e, NFTNL_EXPR_IMM_DATA, data, len);
  nftnl_rule_add_expr (r, e);
}

static void
x_ct (struct nftnl_rule *r, uint32_t key)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("ct");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_CT_KEY, key);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
  nftnl_rule_add_expr (r, e);
}

static void
x_lookup (struct nftnl_rule *r, const char *set, uint32_t set_id)
{
  struct nftnl_expr *e = nftnl_expr_alloc ("lookup");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
  nftnl_expr_set_str (e, NFTNL_EXPR_LOOKUP_SET, set);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_LOOKUP_SET_ID, set_id);
  nftnl_rule_add_expr (r, e);
}

/* meta nfproto == family */
static void
x_nfproto (struct nftnl_rule *r, int family)
{
  x_meta (r, NFT_META_NFPROTO, NFT_REG_1);
  x_cmp_u8 (r, family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
}

static void
x_l4proto (struct nftnl_rule *r, uint8_t proto)
{
  x_meta (r, NFT_META_L4PROTO, NFT_REG_1);
  x_cmp_u8 (r, proto);
}

/* Offset and length of the destination address in the network header. */
static uint32_t
daddr_off (int family)
{
  return family == AF_INET ? 16 : 24;
}

static void
x_dport_eq (struct nftnl_rule *r, uint16_t port)
{
  uint16_t be = htons (port);
  x_payload (r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
  x_cmp (r, NFT_CMP_EQ, &be, 2);
}

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

static void
add_table (batch *b, hv_egress_table *t)
{
  struct nftnl_table *tb = nftnl_table_alloc ();
  nftnl_table_set_str (tb, NFTNL_TABLE_NAME, t->name);
  nftnl_table_set_u32 (tb, NFTNL_TABLE_FAMILY, NFPROTO_INET);
  /* Not NFT_TABLE_F_OWNER: an owner table goes away with the netlink
   * socket that made it, and the sandbox outlives this process. */
  nftnl_table_set_u32 (tb, NFTNL_TABLE_FLAGS, 0);
  struct nlmsghdr *nlh = batch_msg (b, t, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL,
                                    xasprintf ("table inet %s", t->name));
  nftnl_table_nlmsg_build_payload (nlh, tb);
  batch_done (b, nlh);
  nftnl_table_free (tb);
}

static void
add_set (batch *b, hv_egress_table *t, const char *name, uint32_t id, int family, bool interval)
{
  struct nftnl_set *s = nftnl_set_alloc ();
  nftnl_set_set_str (s, NFTNL_SET_TABLE, t->name);
  nftnl_set_set_str (s, NFTNL_SET_NAME, name);
  nftnl_set_set_u32 (s, NFTNL_SET_FAMILY, NFPROTO_INET);
  nftnl_set_set_u32 (s, NFTNL_SET_ID, id);
  nftnl_set_set_u32 (s, NFTNL_SET_KEY_TYPE, family == AF_INET ? TYPE_IPV4_SERVICE : TYPE_IPV6_SERVICE);
  nftnl_set_set_u32 (s, NFTNL_SET_KEY_LEN, family == AF_INET ? KEY4_LEN : KEY6_LEN);
  if (interval)
    {
      /* Ranges of concatenations: the kernel's pipapo set, which needs the
       * length of each field. */
      uint8_t fields[] = { (uint8_t) hv_egress_addr_len (family), 2 };
      nftnl_set_set_u32 (s, NFTNL_SET_FLAGS, NFT_SET_INTERVAL | NFT_SET_CONCAT);
      nftnl_set_set_data (s, NFTNL_SET_DESC_CONCAT, fields, sizeof (fields));
    }
  else
    nftnl_set_set_u32 (s, NFTNL_SET_FLAGS, NFT_SET_TIMEOUT);
  struct nlmsghdr *nlh = batch_msg (b, t, NFT_MSG_NEWSET, NLM_F_CREATE | NLM_F_EXCL, xasprintf ("set %s", name));
  nftnl_set_nlmsg_build_payload (nlh, s);
  batch_done (b, nlh);
  nftnl_set_free (s);
}

/* A set key: the address, then the port in its own 32-bit register. */
static uint32_t
make_key (uint8_t key[KEY6_LEN], int family, const uint8_t *addr, uint16_t port)
{
  size_t alen = hv_egress_addr_len (family);
  uint16_t be = htons (port);
  memset (key, 0, KEY6_LEN);
  memcpy (key, addr, alen);
  memcpy (key + alen, &be, 2);
  return (uint32_t) alen + 4;
}

/* One element per message, so an error names the element. */
static void
add_elem (batch *b, hv_egress_table *t, uint16_t type, uint16_t flags, const char *set, const uint8_t *key,
          const uint8_t *key_end, uint32_t key_len, uint64_t timeout_ms, char *what)
{
  struct nftnl_set *s = nftnl_set_alloc ();
  nftnl_set_set_str (s, NFTNL_SET_TABLE, t->name);
  nftnl_set_set_str (s, NFTNL_SET_NAME, set);
  nftnl_set_set_u32 (s, NFTNL_SET_FAMILY, NFPROTO_INET);
  struct nftnl_set_elem *e = nftnl_set_elem_alloc ();
  nftnl_set_elem_set (e, NFTNL_SET_ELEM_KEY, key, key_len);
  if (key_end != NULL)
    nftnl_set_elem_set (e, NFTNL_SET_ELEM_KEY_END, key_end, key_len);
  if (timeout_ms != 0)
    {
      nftnl_set_elem_set_u64 (e, NFTNL_SET_ELEM_TIMEOUT, timeout_ms);
      /* The expiration too: since 6.12 re-adding an element restarts its
       * clock only when the timeout differs from the one it has or an
       * expiration is given, so a pin renewed with the same TTL would
       * otherwise lapse at its first expiry (seen on 6.18). */
      nftnl_set_elem_set_u64 (e, NFTNL_SET_ELEM_EXPIRATION, timeout_ms);
    }
  nftnl_set_elem_add (s, e);
  struct nlmsghdr *nlh = batch_msg (b, t, type, flags, what);
  nftnl_set_elems_nlmsg_build_payload (nlh, s);
  batch_done (b, nlh);
  nftnl_set_free (s);
}

static void
add_chain (batch *b, hv_egress_table *t, const char *name, const char *type, int prio, int policy)
{
  struct nftnl_chain *c = nftnl_chain_alloc ();
  nftnl_chain_set_str (c, NFTNL_CHAIN_TABLE, t->name);
  nftnl_chain_set_str (c, NFTNL_CHAIN_NAME, name);
  nftnl_chain_set_u32 (c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
  if (type != NULL)
    {
      nftnl_chain_set_str (c, NFTNL_CHAIN_TYPE, type);
      nftnl_chain_set_u32 (c, NFTNL_CHAIN_HOOKNUM, NF_INET_LOCAL_OUT);
      nftnl_chain_set_s32 (c, NFTNL_CHAIN_PRIO, prio);
      nftnl_chain_set_u32 (c, NFTNL_CHAIN_POLICY, (uint32_t) policy);
    }
  struct nlmsghdr *nlh = batch_msg (b, t, NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_EXCL, xasprintf ("chain %s", name));
  nftnl_chain_nlmsg_build_payload (nlh, c);
  batch_done (b, nlh);
  nftnl_chain_free (c);
}

static struct nftnl_rule *
rule_new (hv_egress_table *t, const char *chain)
{
  struct nftnl_rule *r = nftnl_rule_alloc ();
  nftnl_rule_set_str (r, NFTNL_RULE_TABLE, t->name);
  nftnl_rule_set_str (r, NFTNL_RULE_CHAIN, chain);
  nftnl_rule_set_u32 (r, NFTNL_RULE_FAMILY, NFPROTO_INET);
  return r;
}

/* Append r to its chain (what: the rule, for errors) and free it. */
static void
rule_add (batch *b, hv_egress_table *t, struct nftnl_rule *r, const char *what)
{
  struct nlmsghdr *nlh = batch_msg (b, t, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND,
                                    xasprintf ("rule \"%s\" in chain %s", what,
                                               nftnl_rule_get_str (r, NFTNL_RULE_CHAIN)));
  nftnl_rule_nlmsg_build_payload (nlh, r);
  batch_done (b, nlh);
  nftnl_rule_free (r);
}

static void
add_output_rules (batch *b, hv_egress_table *t, const hv_egress_spec *spec)
{
  struct nftnl_rule *r;

  /* Loopback: the index of "lo" is 1 in every network namespace. */
  r = rule_new (t, "output");
  uint32_t lo = 1;
  x_meta (r, NFT_META_OIF, NFT_REG_1);
  x_cmp (r, NFT_CMP_EQ, &lo, 4);
  x_verdict (r, NF_ACCEPT, NULL);
  rule_add (b, t, r, "oif lo accept");

  /* Neighbour discovery: without it no IPv6 address on a link is
   * reachable.  Hop limit 255 is what RFC 4861 requires of it. */
  static const uint8_t nd_types[] = { 133, 135, 136 };
  for (size_t i = 0; i < N_ELEMENTS (nd_types); i++)
    {
      r = rule_new (t, "output");
      x_nfproto (r, AF_INET6);
      x_l4proto (r, IPPROTO_ICMPV6);
      x_payload (r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NFT_REG_1);
      x_cmp_u8 (r, nd_types[i]);
      x_payload (r, NFT_PAYLOAD_NETWORK_HEADER, 7, 1, NFT_REG_1);
      x_cmp_u8 (r, 255);
      x_verdict (r, NF_ACCEPT, NULL);
      rule_add (b, t, r, "icmpv6 neighbour discovery accept");
    }

  /* Sources :: and fe80::/10: pasta was seen sending connection data
   * from those, which stalls IPv6 clients; nothing the sandbox needs
   * comes from them once neighbour discovery is through. */
  static const uint8_t any6[16];
  r = rule_new (t, "output");
  x_nfproto (r, AF_INET6);
  x_payload (r, NFT_PAYLOAD_NETWORK_HEADER, 8, 16, NFT_REG_1);
  x_cmp (r, NFT_CMP_EQ, any6, 16);
  x_verdict (r, NF_DROP, NULL);
  rule_add (b, t, r, "ip6 saddr :: drop");
  static const uint8_t ll_mask[16] = { 0xff, 0xc0 }, ll[16] = { 0xfe, 0x80 };
  r = rule_new (t, "output");
  x_nfproto (r, AF_INET6);
  x_payload (r, NFT_PAYLOAD_NETWORK_HEADER, 8, 16, NFT_REG_1);
  x_mask (r, ll_mask, 16);
  x_cmp (r, NFT_CMP_EQ, ll, 16);
  x_verdict (r, NF_DROP, NULL);
  rule_add (b, t, r, "ip6 saddr fe80::/10 drop");

  /* Cloud metadata and link-local: before anything that accepts, so no
   * allowed CIDR can cover them. */
  static const uint8_t ll4[2] = { 169, 254 };
  r = rule_new (t, "output");
  x_nfproto (r, AF_INET);
  x_payload (r, NFT_PAYLOAD_NETWORK_HEADER, daddr_off (AF_INET), 2, NFT_REG_1);
  x_cmp (r, NFT_CMP_EQ, ll4, 2);
  x_verdict (r, NFT_GOTO, "deny");
  rule_add (b, t, r, "ip daddr 169.254.0.0/16 goto deny");
  uint8_t md6[16];
  inet_pton (AF_INET6, "fd00:ec2::254", md6);
  r = rule_new (t, "output");
  x_nfproto (r, AF_INET6);
  x_payload (r, NFT_PAYLOAD_NETWORK_HEADER, daddr_off (AF_INET6), 16, NFT_REG_1);
  x_cmp (r, NFT_CMP_EQ, md6, 16);
  x_verdict (r, NFT_GOTO, "deny");
  rule_add (b, t, r, "ip6 daddr fd00:ec2::254 goto deny");

  /* The policy's denials: before every accept below (established
   * included, so that nothing allowed earlier outlives them), so deny
   * wins over allow and over pins.  TCP only: nothing else is ever
   * accepted. */
  static const struct
  {
    const char *set;
    uint32_t id;
    int family;
  } denials[] = { { SET_DENY4, 6, AF_INET }, { SET_DENY6, 7, AF_INET6 } };
  for (size_t i = 0; i < N_ELEMENTS (denials); i++)
    {
      int family = denials[i].family;
      r = rule_new (t, "output");
      x_l4proto (r, IPPROTO_TCP);
      x_nfproto (r, family);
      x_payload (r, NFT_PAYLOAD_NETWORK_HEADER, daddr_off (family), (uint32_t) hv_egress_addr_len (family),
                 NFT_REG_1);
      x_payload (r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, family == AF_INET ? NFT_REG32_01 : NFT_REG32_04);
      x_lookup (r, denials[i].set, denials[i].id);
      x_verdict (r, NFT_GOTO, "deny");
      cleanup_free char *what = xasprintf ("tcp daddr . dport @%s goto deny", denials[i].set);
      rule_add (b, t, r, what);
    }

  /* The resolver's own upstream queries (to the container's original
   * resolver, which need not be on loopback): UDP and TCP carrying its
   * mark.  SO_MARK needs CAP_NET_ADMIN over the namespace, which the
   * sandbox does not have under an allowlist. */
  static const uint8_t dns_protos[] = { IPPROTO_UDP, IPPROTO_TCP };
  for (size_t p = 0; p < N_ELEMENTS (dns_protos) && spec->resolver_mark != 0; p++)
    {
      r = rule_new (t, "output");
      x_meta (r, NFT_META_MARK, NFT_REG_1);
      x_cmp (r, NFT_CMP_EQ, &spec->resolver_mark, 4);
      x_l4proto (r, dns_protos[p]);
      x_verdict (r, NF_ACCEPT, NULL);
      rule_add (b, t, r, "meta mark (the resolver's) accept");
    }

  uint32_t est = NF_CT_STATE_BIT (IP_CT_ESTABLISHED) | NF_CT_STATE_BIT (IP_CT_RELATED), zero = 0;
  r = rule_new (t, "output");
  x_ct (r, NFT_CT_STATE);
  x_mask (r, &est, 4);
  x_cmp (r, NFT_CMP_NEQ, &zero, 4);
  x_verdict (r, NF_ACCEPT, NULL);
  rule_add (b, t, r, "ct state established,related accept");
  uint32_t inv = NF_CT_STATE_INVALID_BIT;
  r = rule_new (t, "output");
  x_ct (r, NFT_CT_STATE);
  x_mask (r, &inv, 4);
  x_cmp (r, NFT_CMP_NEQ, &zero, 4);
  x_verdict (r, NF_DROP, NULL);
  rule_add (b, t, r, "ct state invalid drop");

  /* The resolver: what chain dns sent there, and nothing else of UDP. */
  const hv_egress_dns_target *targets[] = { &spec->dns4, &spec->dns6 };
  static const uint8_t protos[] = { IPPROTO_UDP, IPPROTO_TCP };
  for (size_t f = 0; f < 2; f++)
    for (size_t p = 0; p < 2 && targets[f]->set; p++)
      {
        int family = f == 0 ? AF_INET : AF_INET6;
        r = rule_new (t, "output");
        x_nfproto (r, family);
        x_payload (r, NFT_PAYLOAD_NETWORK_HEADER, daddr_off (family), (uint32_t) hv_egress_addr_len (family),
                   NFT_REG_1);
        x_cmp (r, NFT_CMP_EQ, targets[f]->addr, (uint32_t) hv_egress_addr_len (family));
        x_l4proto (r, protos[p]);
        x_dport_eq (r, targets[f]->port);
        x_verdict (r, NF_ACCEPT, NULL);
        rule_add (b, t, r, "DNS to the resolver accept");
      }

  /* TCP to allowed and pinned (address . port). */
  static const struct
  {
    const char *set;
    uint32_t id;
    int family;
  } lookups[] = { { SET_ALLOW4, 1, AF_INET }, { SET_PIN4, 3, AF_INET }, { SET_ALLOW6, 2, AF_INET6 },
                  { SET_PIN6, 4, AF_INET6 } };
  for (size_t i = 0; i < N_ELEMENTS (lookups); i++)
    {
      int family = lookups[i].family;
      r = rule_new (t, "output");
      x_l4proto (r, IPPROTO_TCP);
      x_nfproto (r, family);
      x_payload (r, NFT_PAYLOAD_NETWORK_HEADER, daddr_off (family), (uint32_t) hv_egress_addr_len (family),
                 NFT_REG_1);
      x_payload (r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, family == AF_INET ? NFT_REG32_01 : NFT_REG32_04);
      x_lookup (r, lookups[i].set, lookups[i].id);
      x_verdict (r, NF_ACCEPT, NULL);
      cleanup_free char *what = xasprintf ("tcp daddr . dport @%s accept", lookups[i].set);
      rule_add (b, t, r, what);
    }

  r = rule_new (t, "output");
  x_verdict (r, NFT_GOTO, "deny");
  rule_add (b, t, r, "goto deny");
}

static void
add_deny_rules (batch *b, hv_egress_table *t, const hv_egress_spec *spec)
{
  /* Logged at a bounded rate (a sandbox looping on connect must not
   * flood the log reader); rejected always. */
  struct nftnl_rule *r = rule_new (t, "deny");
  struct nftnl_expr *e = nftnl_expr_alloc ("limit");
  nftnl_expr_set_u64 (e, NFTNL_EXPR_LIMIT_RATE, HV_EGRESS_LOG_RATE);
  nftnl_expr_set_u64 (e, NFTNL_EXPR_LIMIT_UNIT, 1);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_LIMIT_BURST, 2 * HV_EGRESS_LOG_RATE);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
  nftnl_expr_set_u32 (e, NFTNL_EXPR_LIMIT_FLAGS, 0);
  nftnl_rule_add_expr (r, e);
  e = nftnl_expr_alloc ("log");
  nftnl_expr_set_str (e, NFTNL_EXPR_LOG_PREFIX, HV_EGRESS_LOG_PREFIX);
  nftnl_expr_set_u16 (e, NFTNL_EXPR_LOG_GROUP, spec->nflog_group);
  nftnl_rule_add_expr (r, e);
  rule_add (b, t, r, "limit log group");

  /* A reset or an ICMP error makes connect() fail at once: a tool that
   * waited for a timeout would retry, or look for another way out. */
  r = rule_new (t, "deny");
  x_l4proto (r, IPPROTO_TCP);
  e = nftnl_expr_alloc ("reject");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_TCP_RST);
  nftnl_expr_set_u8 (e, NFTNL_EXPR_REJECT_CODE, 0);
  nftnl_rule_add_expr (r, e);
  rule_add (b, t, r, "reject with tcp reset");
  r = rule_new (t, "deny");
  e = nftnl_expr_alloc ("reject");
  nftnl_expr_set_u32 (e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_ICMPX_UNREACH);
  nftnl_expr_set_u8 (e, NFTNL_EXPR_REJECT_CODE, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
  nftnl_rule_add_expr (r, e);
  rule_add (b, t, r, "reject with icmpx admin-prohibited");
}

static void
add_dns_rules (batch *b, hv_egress_table *t, const hv_egress_spec *spec)
{
  struct nftnl_rule *r;
  if (spec->resolver_mark != 0)
    {
      r = rule_new (t, "dns");
      x_meta (r, NFT_META_MARK, NFT_REG_1);
      x_cmp (r, NFT_CMP_EQ, &spec->resolver_mark, 4);
      x_verdict (r, NFT_RETURN, NULL);
      rule_add (b, t, r, "meta mark return");
    }
  const hv_egress_dns_target *targets[] = { &spec->dns4, &spec->dns6 };
  static const uint8_t protos[] = { IPPROTO_UDP, IPPROTO_TCP };
  for (size_t f = 0; f < 2; f++)
    for (size_t p = 0; p < 2 && targets[f]->set; p++)
      {
        int family = f == 0 ? AF_INET : AF_INET6;
        uint16_t port = htons (targets[f]->port);
        r = rule_new (t, "dns");
        x_nfproto (r, family);
        x_l4proto (r, protos[p]);
        x_dport_eq (r, 53);
        x_imm (r, NFT_REG_1, targets[f]->addr, (uint32_t) hv_egress_addr_len (family));
        x_imm (r, NFT_REG_2, &port, 2);
        struct nftnl_expr *e = nftnl_expr_alloc ("nat");
        nftnl_expr_set_u32 (e, NFTNL_EXPR_NAT_TYPE, NFT_NAT_DNAT);
        nftnl_expr_set_u32 (e, NFTNL_EXPR_NAT_FAMILY, family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
        nftnl_expr_set_u32 (e, NFTNL_EXPR_NAT_REG_ADDR_MIN, NFT_REG_1);
        nftnl_expr_set_u32 (e, NFTNL_EXPR_NAT_REG_PROTO_MIN, NFT_REG_2);
        nftnl_expr_set_u32 (e, NFTNL_EXPR_NAT_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
        nftnl_rule_add_expr (r, e);
        rule_add (b, t, r, "th dport 53 dnat to the resolver");
      }
}

static char *
pin_text (const hv_egress_pin *p, const char *set)
{
  char a[INET6_ADDRSTRLEN] = "?";
  inet_ntop (p->family, p->addr, a, sizeof (a));
  return xasprintf ("element %s . %u (timeout %llu ms) of set %s", a, p->port, (unsigned long long) p->timeout_ms,
                    set);
}

static int
check_pin (const hv_egress_pin *p, hv_error **err)
{
  if (hv_egress_addr_len (p->family) == 0)
    return hv_error_set (err, 0, "pin: address family %d is neither IPv4 nor IPv6", p->family);
  if (p->port == 0)
    return hv_error_set (err, 0, "pin: port 0");
  if (p->timeout_ms == 0)
    return hv_error_set (err, 0, "pin: a pin needs a timeout (0 would never expire)");
  return 0;
}

/* Add pin p with flags (NLM_F_CREATE, without NLM_F_EXCL: an existing
 * element is no error). */
static void
add_pin (batch *b, hv_egress_table *t, uint16_t type, const hv_egress_pin *p)
{
  uint8_t key[KEY6_LEN];
  const char *set = p->family == AF_INET ? SET_PIN4 : SET_PIN6;
  uint32_t klen = make_key (key, p->family, p->addr, p->port);
  add_elem (b, t, type, type == NFT_MSG_NEWSETELEM ? NLM_F_CREATE : 0, set, key, NULL, klen,
            type == NFT_MSG_NEWSETELEM ? p->timeout_ms : 0, pin_text (p, set));
}

/* ------------------------------------------------------------------ */
/* API                                                                 */
/* ------------------------------------------------------------------ */

static bool
valid_name (const char *name)
{
  size_t n = strlen (name);
  if (n == 0 || n > 64)
    return false;
  for (size_t i = 0; i < n; i++)
    {
      char c = name[i];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
        return false;
    }
  return true;
}

/* Options of the table's socket, set by whoever uses it (the buffer
 * sizes beyond the system's limits need CAP_NET_ADMIN of the caller, not
 * of the process that made the socket). */
static int
setup_nfnetlink (struct mnl_socket *nl, hv_error **err)
{
  int one = 1;
  /* Errors with the kernel's own explanation, without a copy of the
   * whole failed message. */
  setsockopt (mnl_socket_get_fd (nl), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof (one));
  setsockopt (mnl_socket_get_fd (nl), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof (one));
  /* Room for a batch of many elements and one answer to each. */
  int size = 4 << 20;
  if (setsockopt (mnl_socket_get_fd (nl), SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof (size)) < 0)
    setsockopt (mnl_socket_get_fd (nl), SOL_SOCKET, SO_SNDBUF, &size, sizeof (size));
  if (setsockopt (mnl_socket_get_fd (nl), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof (size)) < 0)
    setsockopt (mnl_socket_get_fd (nl), SOL_SOCKET, SO_RCVBUF, &size, sizeof (size));
  if (mnl_socket_bind (nl, 0, MNL_SOCKET_AUTOPID) < 0)
    return hv_error_set (err, errno, "bind nf_tables netlink socket");
  return 0;
}

static struct mnl_socket *
open_nfnetlink (hv_error **err)
{
  struct mnl_socket *nl = mnl_socket_open2 (NETLINK_NETFILTER, SOCK_CLOEXEC);
  if (nl == NULL)
    {
      hv_error_set (err, errno, "open nf_tables netlink socket");
      return NULL;
    }
  if (setup_nfnetlink (nl, err) < 0)
    {
      mnl_socket_close (nl);
      return NULL;
    }
  return nl;
}

static int
call_open_nfnetlink (void *data, hv_error **err)
{
  struct mnl_socket **nl = data;
  *nl = open_nfnetlink (err);
  return *nl ? 0 : -1;
}

static hv_egress_table *
table_new (const char *name, struct mnl_socket *nl)
{
  hv_egress_table *t = xmalloc0 (sizeof (*t));
  t->name = xstrdup (name);
  t->nl = nl;
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  t->seq = (uint32_t) ts.tv_sec ^ (uint32_t) ts.tv_nsec;
  return t;
}

int
hv_egress_table_open (const char *name, int netns_fd, hv_egress_table **out, hv_error **err)
{
  *out = NULL;
  if (!valid_name (name))
    return hv_error_set (err, 0, "egress table name \"%s\": use 1 to 64 of A-Z a-z 0-9 _ -", name);
  struct mnl_socket *nl = NULL;
  if (netns_fd < 0)
    nl = open_nfnetlink (err);
  /* A socket stays in the namespace it was made in: made there. */
  else if (hv_netns_call (netns_fd, -1, "the sandbox's network namespace", call_open_nfnetlink, &nl, err)
           == HV_NETNS_STRANDED)
    {
      if (nl != NULL)
        mnl_socket_close (nl);
      return -1;
    }
  if (nl == NULL)
    return -1;
  *out = table_new (name, nl);
  return 0;
}

int
hv_egress_check_netfilter_socket (int fd, hv_error **err)
{
  int domain = -1, protocol = -1;
  socklen_t len = sizeof (domain);
  if (getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
    return hv_error_set (err, errno, "fd %d is not a netfilter netlink socket", fd);
  len = sizeof (protocol);
  if (getsockopt (fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) < 0)
    return hv_error_set (err, errno, "fd %d is not a netfilter netlink socket", fd);
  if (domain != AF_NETLINK || protocol != NETLINK_NETFILTER)
    return hv_error_set (err, 0, "fd %d is not a netfilter netlink socket (domain %d, protocol %d)", fd, domain,
                         protocol);
  return 0;
}

int
hv_egress_table_open_socket (const char *name, int fd, hv_egress_table **out, hv_error **err)
{
  cleanup_close int owned = fd;
  *out = NULL;
  if (!valid_name (name))
    return hv_error_set (err, 0, "egress table name \"%s\": use 1 to 64 of A-Z a-z 0-9 _ -", name);
  if (hv_egress_check_netfilter_socket (fd, err) < 0)
    return hv_error_wrap (err, "egress table %s", name);
  /* Requests wait for their answers (batch_send reads without waiting
   * on its own). */
  int fl = fcntl (fd, F_GETFL);
  if (fl < 0 || fcntl (fd, F_SETFL, fl & ~O_NONBLOCK) < 0 || fcntl (fd, F_SETFD, FD_CLOEXEC) < 0)
    return hv_error_set (err, errno, "egress table %s: socket flags", name);
  struct mnl_socket *nl = mnl_socket_fdopen (fd);
  if (nl == NULL)
    return hv_error_set (err, errno, "egress table %s: nf_tables netlink socket", name);
  owned = -1;
  /* Bound already (a socket that went from the runtime to the monitor):
   * keep its port id, the options are set. */
  if (mnl_socket_get_portid (nl) == 0 && setup_nfnetlink (nl, err) < 0)
    {
      mnl_socket_close (nl);
      return hv_error_wrap (err, "egress table %s", name);
    }
  *out = table_new (name, nl);
  return 0;
}

int
hv_egress_table_fd (const hv_egress_table *t)
{
  return mnl_socket_get_fd (t->nl);
}

void
hv_egress_table_close (hv_egress_table *t)
{
  if (t == NULL)
    return;
  mnl_socket_close (t->nl);
  free (t->name);
  free (t);
}

const char *
hv_egress_table_name (const hv_egress_table *t)
{
  return t->name;
}

static int
check_spec (const hv_egress_spec *spec, hv_error **err)
{
  for (size_t i = 0; i < spec->n_allow; i++)
    if (hv_egress_cidr_check (&spec->allow[i], err) < 0)
      return hv_error_wrap (err, "allowed destination %zu", i + 1);
  for (size_t i = 0; i < spec->n_deny; i++)
    if (hv_egress_cidr_check (&spec->deny[i], err) < 0)
      return hv_error_wrap (err, "denied destination %zu", i + 1);
  if ((spec->dns4.set && spec->dns4.port == 0) || (spec->dns6.set && spec->dns6.port == 0))
    return hv_error_set (err, 0, "DNS redirect target with port 0");
  for (size_t i = 0; i < spec->n_pins; i++)
    if (check_pin (&spec->pins[i], err) < 0)
      return -1;
  return 0;
}

static void
add_range_elems (batch *b, hv_egress_table *t, const char *set, const hv_egress_range *rs, size_t n, int family)
{
  for (size_t i = 0; i < n; i++)
    {
      uint8_t key[KEY6_LEN], key_end[KEY6_LEN];
      uint32_t klen = make_key (key, family, rs[i].lo, rs[i].port_lo);
      make_key (key_end, family, rs[i].hi, rs[i].port_hi);
      cleanup_free char *text = hv_egress_range_text (family, &rs[i]);
      add_elem (b, t, NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_EXCL, set, key, key_end, klen, 0,
                xasprintf ("element %s of set %s", text, set));
    }
}

int
hv_egress_table_create (hv_egress_table *t, const hv_egress_spec *spec, char fingerprint[HV_EGRESS_FINGERPRINT_LEN],
                        hv_error **err)
{
  if (check_spec (spec, err) < 0)
    return hv_error_wrap (err, "egress table %s", t->name);
  cleanup_free hv_egress_range *r4 = NULL;
  cleanup_free hv_egress_range *r6 = NULL;
  cleanup_free hv_egress_range *d4 = NULL;
  cleanup_free hv_egress_range *d6 = NULL;
  size_t n4, n6, nd4, nd6;
  if (hv_egress_ranges_build (spec->allow, spec->n_allow, AF_INET, &r4, &n4, err) < 0
      || hv_egress_ranges_build (spec->allow, spec->n_allow, AF_INET6, &r6, &n6, err) < 0
      || hv_egress_ranges_build (spec->deny, spec->n_deny, AF_INET, &d4, &nd4, err) < 0
      || hv_egress_ranges_build (spec->deny, spec->n_deny, AF_INET6, &d6, &nd6, err) < 0)
    return hv_error_wrap (err, "egress table %s", t->name);

  batch b;
  batch_init (&b, t);
  add_table (&b, t);
  add_set (&b, t, SET_ALLOW4, 1, AF_INET, true);
  add_set (&b, t, SET_ALLOW6, 2, AF_INET6, true);
  add_set (&b, t, SET_PIN4, 3, AF_INET, false);
  add_set (&b, t, SET_PIN6, 4, AF_INET6, false);
  add_set (&b, t, SET_PROBE, 5, AF_INET, false);
  add_set (&b, t, SET_DENY4, 6, AF_INET, true);
  add_set (&b, t, SET_DENY6, 7, AF_INET6, true);
  add_range_elems (&b, t, SET_ALLOW4, r4, n4, AF_INET);
  add_range_elems (&b, t, SET_ALLOW6, r6, n6, AF_INET6);
  add_range_elems (&b, t, SET_DENY4, d4, nd4, AF_INET);
  add_range_elems (&b, t, SET_DENY6, d6, nd6, AF_INET6);
  add_chain (&b, t, "deny", NULL, 0, 0);
  add_chain (&b, t, "output", "filter", 0, NF_DROP);
  add_chain (&b, t, "dns", "nat", HV_EGRESS_DNS_PRIORITY, NF_ACCEPT);
  add_deny_rules (&b, t, spec);
  add_output_rules (&b, t, spec);
  add_dns_rules (&b, t, spec);
  for (size_t i = 0; i < spec->n_pins; i++)
    add_pin (&b, t, NFT_MSG_NEWSETELEM, &spec->pins[i]);
  int r = batch_send (&b, t, err);
  batch_free (&b);
  if (r < 0)
    return hv_error_wrap (err, "create egress table %s", t->name);
  if (fingerprint != NULL && hv_egress_table_fingerprint (t, fingerprint, err) < 0)
    return hv_error_wrap (err, "egress table %s was made", t->name);
  return 0;
}

int
hv_egress_table_delete (hv_egress_table *t, hv_error **err)
{
  batch b;
  batch_init (&b, t);
  struct nftnl_table *tb = nftnl_table_alloc ();
  nftnl_table_set_str (tb, NFTNL_TABLE_NAME, t->name);
  nftnl_table_set_u32 (tb, NFTNL_TABLE_FAMILY, NFPROTO_INET);
  struct nlmsghdr *nlh = batch_msg (&b, t, NFT_MSG_DELTABLE, 0, xasprintf ("table inet %s", t->name));
  nftnl_table_nlmsg_build_payload (nlh, tb);
  batch_done (&b, nlh);
  nftnl_table_free (tb);
  cleanup_error hv_error *e = NULL;
  int r = batch_send (&b, t, &e);
  batch_free (&b);
  if (r < 0 && e->errno_code == ENOENT)
    return 0;
  if (r < 0)
    {
      *err = steal_pointer (&e);
      return hv_error_wrap (err, "delete egress table %s", t->name);
    }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Reading the table back                                              */
/* ------------------------------------------------------------------ */

typedef int (*dump_cb) (const struct nlmsghdr *nlh, void *data);

/* One GET request (a dump unless single) and every answer to it. */
static int
nl_get (hv_egress_table *t, uint16_t type, bool single, void (*build) (struct nlmsghdr *, void *), void *arg,
        dump_cb cb, void *data, hv_error **err)
{
  cleanup_free char *buf = xmalloc0 (MNL_SOCKET_BUFFER_SIZE * 4);
  uint32_t seq = t->seq++;
  struct nlmsghdr *nlh
      = nftnl_nlmsg_build_hdr (buf, type, NFPROTO_INET, single ? NLM_F_ACK : NLM_F_DUMP, seq);
  if (build != NULL)
    build (nlh, arg);
  if (mnl_socket_sendto (t->nl, nlh, nlh->nlmsg_len) < 0)
    return hv_error_set (err, errno, "send nf_tables request");
  uint32_t portid = mnl_socket_get_portid (t->nl);
  for (int guard = 0; guard < 1000000; guard++)
    {
      ssize_t n = mnl_socket_recvfrom (t->nl, buf, MNL_SOCKET_BUFFER_SIZE * 4);
      if (n < 0)
        return hv_error_set (err, errno, "read nf_tables answer");
      int r = mnl_cb_run (buf, (size_t) n, seq, portid, (mnl_cb_t) cb, data);
      if (r < 0)
        return hv_error_set (err, errno, "nf_tables answer");
      if (r == MNL_CB_STOP)
        return 0;
    }
  return hv_error_set (err, 0, "nf_tables answer never ended");
}

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

static int
fp_elem_cb (const struct nlmsghdr *nlh, void *data)
{
  fp *f = data;
  struct nftnl_set *s = nftnl_set_alloc ();
  if (nftnl_set_elems_nlmsg_parse (nlh, s) == 0)
    {
      struct nftnl_set_elems_iter *it = nftnl_set_elems_iter_create (s);
      for (struct nftnl_set_elem *e = nftnl_set_elems_iter_cur (it); e != NULL; e = nftnl_set_elems_iter_next (it))
        {
          uint32_t len = 0;
          const void *k = nftnl_set_elem_get (e, NFTNL_SET_ELEM_KEY, &len);
          fp_add (f, "elem");
          if (k != NULL)
            fp_hex (f, k, len);
          k = nftnl_set_elem_get (e, NFTNL_SET_ELEM_KEY_END, &len);
          if (k != NULL)
            fp_hex (f, k, len);
        }
      nftnl_set_elems_iter_destroy (it);
    }
  nftnl_set_free (s);
  return MNL_CB_OK;
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

typedef struct elem_req
{
  const char *table, *set;
} elem_req;

static void
build_elem_get (struct nlmsghdr *nlh, void *arg)
{
  elem_req *q = arg;
  mnl_attr_put_strz (nlh, NFTA_SET_ELEM_LIST_TABLE, q->table);
  mnl_attr_put_strz (nlh, NFTA_SET_ELEM_LIST_SET, q->set);
}

/* The elements of one set, named (an element moved from one set to
 * another changes the fingerprint). */
static int
fp_set_elems (hv_egress_table *t, fp *f, const char *set, hv_error **err)
{
  elem_req q = { t->name, set };
  fp_addf (f, "elements of %s", set);
  return nl_get (t, NFT_MSG_GETSETELEM, false, build_elem_get, &q, fp_elem_cb, f, err);
}

int
hv_egress_table_fingerprint (hv_egress_table *t, char out[HV_EGRESS_FINGERPRINT_LEN], hv_error **err)
{
  fp f = { .h = 0xcbf29ce484222325ULL, .table = t->name };
  if (nl_get (t, NFT_MSG_GETTABLE, true, build_table_get, t->name, fp_table_cb, &f, err) < 0)
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
  if (nl_get (t, NFT_MSG_GETCHAIN, false, NULL, NULL, fp_chain_cb, &f, err) < 0
      || nl_get (t, NFT_MSG_GETSET, false, build_set_get, t->name, fp_set_cb, &f, err) < 0
      || nl_get (t, NFT_MSG_GETRULE, false, build_rule_get, t->name, fp_rule_cb, &f, err) < 0
      || fp_set_elems (t, &f, SET_ALLOW4, err) < 0 || fp_set_elems (t, &f, SET_ALLOW6, err) < 0
      || fp_set_elems (t, &f, SET_DENY4, err) < 0 || fp_set_elems (t, &f, SET_DENY6, err) < 0)
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

/* ------------------------------------------------------------------ */
/* Pins                                                                */
/* ------------------------------------------------------------------ */

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
  uint8_t key[KEY6_LEN];
  bool found;
  uint64_t expiration_ms;
} probe_find;

static int
probe_elem_cb (const struct nlmsghdr *nlh, void *data)
{
  probe_find *p = data;
  struct nftnl_set *s = nftnl_set_alloc ();
  if (nftnl_set_elems_nlmsg_parse (nlh, s) == 0)
    {
      struct nftnl_set_elems_iter *it = nftnl_set_elems_iter_create (s);
      for (struct nftnl_set_elem *e = nftnl_set_elems_iter_cur (it); e != NULL; e = nftnl_set_elems_iter_next (it))
        {
          uint32_t len = 0;
          const void *k = nftnl_set_elem_get (e, NFTNL_SET_ELEM_KEY, &len);
          if (k != NULL && len == KEY4_LEN && memcmp (k, p->key, KEY4_LEN) == 0)
            {
              p->found = true;
              p->expiration_ms = nftnl_set_elem_get_u64 (e, NFTNL_SET_ELEM_EXPIRATION);
            }
        }
      nftnl_set_elems_iter_destroy (it);
    }
  nftnl_set_free (s);
  return MNL_CB_OK;
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
      make_key (p.key, AF_INET, zero4, port);
      batch b;
      batch_init (&b, t);
      add_elem (&b, t, NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_EXCL, SET_PROBE, p.key, NULL, KEY4_LEN, SHORT_MS,
                xasprintf ("probe element 0.0.0.0 . %u of set %s", port, SET_PROBE));
      r = batch_send (&b, t, err);
      batch_free (&b);
      if (r < 0 && (*err)->errno_code != EEXIST)
        return hv_error_wrap (err, "probe how pins are renewed");
    }
  if (r < 0)
    return hv_error_wrap (err, "probe how pins are renewed");
  batch b;
  batch_init (&b, t);
  add_elem (&b, t, NFT_MSG_NEWSETELEM, NLM_F_CREATE, SET_PROBE, p.key, NULL, KEY4_LEN, LONG_MS,
            xasprintf ("probe element 0.0.0.0 . %u of set %s (again)", port, SET_PROBE));
  r = batch_send (&b, t, err);
  batch_free (&b);
  if (r < 0)
    return hv_error_wrap (err, "probe how pins are renewed");
  elem_req q = { t->name, SET_PROBE };
  if (nl_get (t, NFT_MSG_GETSETELEM, false, build_elem_get, &q, probe_elem_cb, &p, err) < 0)
    return hv_error_wrap (err, "probe how pins are renewed");
  if (!p.found)
    return hv_error_set (err, 0, "probe how pins are renewed: the probe element is not in set %s", SET_PROBE);
  t->refresh = p.expiration_ms > 2 * SHORT_MS ? HV_EGRESS_REFRESH_READD : HV_EGRESS_REFRESH_DELETE_ADD;
  /* Tidy up; it would expire anyway. */
  batch_init (&b, t);
  add_elem (&b, t, NFT_MSG_DELSETELEM, 0, SET_PROBE, p.key, NULL, KEY4_LEN, 0, xstrdup ("probe element"));
  cleanup_error hv_error *ignored = NULL;
  batch_send (&b, t, &ignored);
  batch_free (&b);
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
    if (check_pin (&pins[i], err) < 0)
      return hv_error_wrap (err, "egress table %s", t->name);
  if (n == 0)
    return 0;
  hv_egress_refresh mode = HV_EGRESS_REFRESH_UNKNOWN;
  if (hv_egress_table_refresh_mode (t, &mode, err) < 0)
    return -1;
  batch b;
  batch_init (&b, t);
  for (size_t i = 0; i < n; i++)
    {
      if (mode == HV_EGRESS_REFRESH_DELETE_ADD)
        {
          /* Make sure it exists (no error if it does), delete it, add it
           * with the new timeout: on these kernels re-adding an existing
           * element keeps its old expiry.  One batch: never a moment
           * without the pin. */
          add_pin (&b, t, NFT_MSG_NEWSETELEM, &pins[i]);
          add_pin (&b, t, NFT_MSG_DELSETELEM, &pins[i]);
        }
      add_pin (&b, t, NFT_MSG_NEWSETELEM, &pins[i]);
    }
  int r = batch_send (&b, t, err);
  batch_free (&b);
  if (r < 0)
    return hv_error_wrap (err, "pin in egress table %s", t->name);
  return 0;
}
