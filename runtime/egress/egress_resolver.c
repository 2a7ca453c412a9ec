/* Haven's egress resolver: the loop, the queries and the answers ("pin,
 * then answer"; see egress_resolver.h).  Decisions live in
 * egress_decide.c, upstream forwarding in egress_upstream.c, TCP
 * clients in egress_resolver_tcp.c. */
#include "config.h"
#include "egress_resolver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "denial_explain.h"
#include "egress_decide.h"
#include "egress_resolver_ask.h"
#include "egress_learn.h"
#include "egress_resolver_state.h"
#include "egress_resolver_tcp.h"
#include "egress_upstream.h"

/* --- config ---------------------------------------------------------------- */

static int
copy_rules (const hv_egress_name_rule *in, size_t n, hv_egress_name_rule **out, const char *what, hv_error **err)
{
  *out = n ? xmalloc0 (n * sizeof (**out)) : NULL;
  for (size_t i = 0; i < n; i++)
    {
      const char *name = in[i].name;
      if (name == NULL || !hv_egress_name_plain (name) || name[strlen (name) - 1] == '.')
        return hv_error_set (err, 0, "egress resolver: %s name rule %zu: \"%s\" is not a plain DNS name", what,
                             i, name ? name : "(null)");
      if (in[i].port_min > in[i].port_max || in[i].port_max == 0)
        return hv_error_set (err, 0, "egress resolver: %s name rule %s: bad ports %u-%u", what, name,
                             in[i].port_min, in[i].port_max);
      (*out)[i] = in[i];
      (*out)[i].name = xstrdup (name);
      /* "any" (0-65535): TCP has no port 0 to pin. */
      if ((*out)[i].port_min == 0)
        (*out)[i].port_min = 1;
    }
  return 0;
}

static void *
copy_array (const void *p, size_t n, size_t size)
{
  if (n == 0)
    return NULL;
  void *c = xmalloc0 (n * size);
  memcpy (c, p, n * size);
  return c;
}

static int
copy_config (hv_egress_resolver *r, const hv_egress_resolver_config *in, hv_error **err)
{
  hv_egress_resolver_config *c = &r->cfg;
  *c = *in;
  c->allow = c->deny = c->ask = NULL;
  c->allow_cidrs = c->deny_cidrs = NULL;
  c->upstreams = NULL;
  c->policy_name = xstrdup (in->policy_name ? in->policy_name : "(unnamed)");
  hv_egress_name_rule *allow = NULL, *deny = NULL;
  int rc_allow = copy_rules (in->allow, in->n_allow, &allow, "allow", err);
  c->allow = allow;
  if (rc_allow < 0)
    return -1;
  int rc_deny = copy_rules (in->deny, in->n_deny, &deny, "deny", err);
  c->deny = deny;
  if (rc_deny < 0)
    return -1;
  hv_egress_name_rule *ask = NULL;
  int rc_ask = copy_rules (in->ask, in->n_ask, &ask, "ask", err);
  c->ask = ask;
  if (rc_ask < 0)
    return -1;
  for (size_t i = 0; i < in->n_allow_cidrs; i++)
    if (hv_egress_cidr_check (&in->allow_cidrs[i], err) < 0)
      return hv_error_wrap (err, "egress resolver: allow CIDR %zu", i);
  for (size_t i = 0; i < in->n_deny_cidrs; i++)
    if (hv_egress_cidr_check (&in->deny_cidrs[i], err) < 0)
      return hv_error_wrap (err, "egress resolver: deny CIDR %zu", i);
  c->allow_cidrs = copy_array (in->allow_cidrs, in->n_allow_cidrs, sizeof (hv_egress_cidr));
  c->deny_cidrs = copy_array (in->deny_cidrs, in->n_deny_cidrs, sizeof (hv_egress_cidr));
  struct sockaddr_storage *ups = copy_array (in->upstreams, in->n_upstreams, sizeof (*ups));
  c->upstreams = ups;
  for (size_t i = 0; i < in->n_upstreams; i++)
    {
      if (ups[i].ss_family == AF_INET)
        {
          struct sockaddr_in *s = (struct sockaddr_in *) &ups[i];
          if (s->sin_port == 0)
            s->sin_port = htons (HV_DNS_PORT);
        }
      else if (ups[i].ss_family == AF_INET6)
        {
          struct sockaddr_in6 *s = (struct sockaddr_in6 *) &ups[i];
          if (s->sin6_port == 0)
            s->sin6_port = htons (HV_DNS_PORT);
        }
      else
        return hv_error_set (err, 0, "egress resolver: upstream %zu: address family %d", i, ups[i].ss_family);
    }
  if (c->table == NULL)
    return hv_error_set (err, 0, "egress resolver: no egress table to pin into");
  if (c->ttl_floor == 0)
    c->ttl_floor = HV_EGRESS_TTL_FLOOR_DEFAULT;
  if (c->ttl_cap == 0)
    c->ttl_cap = HV_EGRESS_TTL_CAP_DEFAULT;
  if (c->ttl_floor > c->ttl_cap)
    return hv_error_set (err, 0, "egress resolver: TTL floor %u above the cap %u", c->ttl_floor, c->ttl_cap);
  if (c->grace == 0)
    c->grace = HV_EGRESS_GRACE_DEFAULT;
  if (c->query_timeout_ms == 0)
    c->query_timeout_ms = HV_EGRESS_QUERY_TIMEOUT_MS_DEFAULT;
  return 0;
}

static void
free_config (hv_egress_resolver_config *c)
{
  for (size_t i = 0; c->allow && i < c->n_allow; i++)
    free ((char *) c->allow[i].name);
  for (size_t i = 0; c->deny && i < c->n_deny; i++)
    free ((char *) c->deny[i].name);
  for (size_t i = 0; c->ask && i < c->n_ask; i++)
    free ((char *) c->ask[i].name);
  free ((void *) c->ask);
  free ((void *) c->allow);
  free ((void *) c->deny);
  free ((void *) c->allow_cidrs);
  free ((void *) c->deny_cidrs);
  free ((void *) c->upstreams);
  free ((char *) c->policy_name);
}

/* --- lifetime ------------------------------------------------------------------ */

static int
watch (hv_egress_resolver *r, int fd, uint32_t events, uint64_t token, hv_error **err)
{
  struct epoll_event ev = { .events = events, .data.u64 = token };
  if (epoll_ctl (r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
    return hv_error_set (err, errno, "egress resolver: epoll_ctl");
  return 0;
}

int
hv_egress_resolver_new (const hv_egress_resolver_config *config, hv_egress_resolver **out, hv_error **err)
{
  hv_egress_resolver *r = xmalloc0 (sizeof (*r));
  r->epfd = r->timerfd = r->self_netns_fd = -1;
  r->listen_fd[0] = config->udp4_fd;
  r->listen_fd[1] = config->tcp4_fd;
  r->listen_fd[2] = config->udp6_fd;
  r->listen_fd[3] = config->tcp6_fd;
  for (size_t i = 0; i < HV_RES_MAX_TCP_CLIENTS; i++)
    r->tcp[i].fd = -1;
  *out = NULL;
  if (copy_config (r, config, err) < 0)
    goto fail;
  r->learn = hv_res_learn_new (&r->cfg);
  r->epfd = epoll_create1 (EPOLL_CLOEXEC);
  if (r->epfd < 0)
    {
      hv_error_set (err, errno, "egress resolver: epoll_create1");
      goto fail;
    }
  r->timerfd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (r->timerfd < 0)
    {
      hv_error_set (err, errno, "egress resolver: timerfd_create");
      goto fail;
    }
  if (watch (r, r->timerfd, EPOLLIN, hv_res_token (HV_RES_K_TIMER, 0, 0), err) < 0)
    goto fail;
  /* Where to come back to after making an upstream socket elsewhere. */
  if (r->cfg.upstream_netns_fd >= 0)
    {
      r->self_netns_fd = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
      if (r->self_netns_fd < 0)
        {
          hv_error_set (err, errno, "egress resolver: open /proc/thread-self/ns/net");
          goto fail;
        }
    }
  for (size_t i = 0; i < HV_RES_LISTENERS; i++)
    {
      int fd = r->listen_fd[i];
      if (fd < 0)
        continue;
      int fl = fcntl (fd, F_GETFL);
      if (fl < 0 || fcntl (fd, F_SETFL, fl | O_NONBLOCK) < 0)
        {
          hv_error_set (err, errno, "egress resolver: listening socket %d", fd);
          goto fail;
        }
      bool tcp = i % 2 == 1;
      if (watch (r, fd, EPOLLIN, hv_res_token (tcp ? HV_RES_K_TCP_LISTEN : HV_RES_K_UDP_LISTEN, (uint32_t) i, 0),
                 err) < 0)
        goto fail;
    }
  r->scratch = xmalloc0 (HV_DNS_MESSAGE_MAX);
  if (r->cfg.n_ask || r->cfg.ask_all)
    {
      /* A directory that cannot be used leaves nobody to ask: each name
       * to ask is then refused, and recorded as such. */
      cleanup_error hv_error *ask_err = NULL;
      (void) hv_res_ask_new (r, &ask_err);
    }
  *out = r;
  return 0;
fail:
  hv_egress_resolver_free (r);
  return -1;
}

static void
pending_free (hv_egress_resolver *r, uint32_t slot)
{
  hv_res_pending *p = r->pending[slot];
  if (p == NULL)
    return;
  hv_res_upstream_close (r, p);
  if (p->client.tcp)
    {
      hv_res_tcp_client *c = &r->tcp[p->client.slot];
      if (c->fd >= 0 && c->gen == p->client.gen && c->pending > 0)
        c->pending--;
    }
  hv_dns_message_free (&p->query);
  hv_egress_ports_free (&p->ports);
  free (p);
  r->pending[slot] = NULL;
  r->n_pending--;
}

void
hv_egress_resolver_free (hv_egress_resolver *r)
{
  if (r == NULL)
    return;
  hv_res_ask_free (r);
  for (uint32_t i = 0; i < HV_RES_MAX_PENDING; i++)
    pending_free (r, i);
  for (size_t i = 0; i < HV_RES_MAX_TCP_CLIENTS; i++)
    if (r->tcp[i].fd >= 0)
      hv_res_tcp_close (r, &r->tcp[i]);
  for (size_t i = 0; i < HV_RES_LISTENERS; i++)
    if (r->listen_fd[i] >= 0)
      close (r->listen_fd[i]);
  if (r->timerfd >= 0)
    close (r->timerfd);
  if (r->epfd >= 0)
    close (r->epfd);
  if (r->self_netns_fd >= 0)
    close (r->self_netns_fd);
  free_config (&r->cfg);
  hv_res_learn_free (r->learn);
  hv_error_free (&r->fatal);
  free (r->scratch);
  free (r);
}

int
hv_egress_resolver_fd (const hv_egress_resolver *r)
{
  return r->epfd;
}

size_t
hv_egress_resolver_names_for (const hv_egress_resolver *r, int family, const uint8_t addr[16], const char **names,
                              size_t max)
{
  size_t n = 0, len = hv_egress_addr_len (family);
  for (size_t k = 0; k < r->n_recent && n < max; k++)
    {
      const hv_res_recent *e = &r->recent[(r->recent_next + HV_RES_RECENT - 1 - k) % HV_RES_RECENT];
      if (e->family != family || len == 0 || memcmp (e->addr, addr, len) != 0)
        continue;
      bool dup = false;
      for (size_t j = 0; j < n && !dup; j++)
        dup = strcmp (names[j], e->name) == 0;
      if (!dup)
        names[n++] = e->name;
    }
  return n;
}

static void
remember (hv_egress_resolver *r, int family, const uint8_t *addr, const char *name)
{
  hv_res_recent *e = &r->recent[r->recent_next];
  e->family = family;
  memset (e->addr, 0, sizeof (e->addr));
  memcpy (e->addr, addr, hv_egress_addr_len (family));
  snprintf (e->name, sizeof (e->name), "%s", name);
  r->recent_next = (r->recent_next + 1) % HV_RES_RECENT;
  if (r->n_recent < HV_RES_RECENT)
    r->n_recent++;
}

/* --- replies --------------------------------------------------------------- */

/* Send an encoded reply to client (TCP: framed, buffered). */
static void
send_reply (hv_egress_resolver *r, const hv_res_client *c, const uint8_t *buf, size_t len)
{
  if (c->tcp)
    {
      hv_res_tcp_send (r, c->slot, c->gen, buf, len);
      return;
    }
  /* A reply the socket buffer cannot take is lost like any datagram;
   * the client retries. */
  (void) sendto (c->listen_fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *) &c->peer,
                 c->peer_len);
}

static void
send_message (hv_egress_resolver *r, const hv_res_client *c, const hv_dns_message *query, const hv_dns_message *reply)
{
  cleanup_error hv_error *err = NULL;
  size_t max = c->tcp ? HV_DNS_MESSAGE_MAX : hv_dns_reply_max_size (query), len;
  if (max > HV_RES_UDP_REPLY_MAX && !c->tcp)
    max = HV_RES_UDP_REPLY_MAX;
  if (hv_dns_encode (reply, r->scratch, HV_DNS_MESSAGE_MAX, max, &len, NULL, &err) < 0)
    return;
  send_reply (r, c, r->scratch, len);
}

/* A reply without records; text (may be NULL) becomes an EDE. */
static void
reply_simple (hv_egress_resolver *r, const hv_res_client *c, const hv_dns_message *query, uint16_t rcode,
              uint16_t ede, const char *text)
{
  cleanup_error hv_error *err = NULL;
  cleanup_dns_message hv_dns_message reply = { 0 };
  if (hv_dns_reply_init (&reply, query, rcode, HV_RES_UPSTREAM_EDNS, &err) < 0)
    return;
  if (text && hv_dns_add_ede (&reply, ede, text, &err) < 0)
    return;
  send_message (r, c, query, &reply);
}

static void
reply_refused (hv_egress_resolver *r, const hv_res_client *c, const hv_dns_message *query, const char *qname,
               uint16_t qtype, const char *why)
{
  if (r->cfg.events.refused)
    r->cfg.events.refused (r->cfg.events.data, qname, qtype, why);
  /* The text is what a person sees in dig or an agent in its error:
   * say who refused and which policy to change. */
  char tbuf[16];
  struct hv_denial_facts f = { .kind = HV_DENIAL_DNS, .name = qname, .why = why, .type = hv_dns_type_name (qtype, tbuf) };
  struct hv_denial_explained e;
  hv_denial_explain (NULL, &f, &e);
  /* ... and what would allow it, where a policy line may (an engine's
   * container has no `haven why` to ask). */
  cleanup_free char *text = xasprintf ("haven egress policy \"%s\": %s (type %u): %s%s%s", r->cfg.policy_name, qname,
                                       qtype, why, e.never ? "" : "; allow it with ", e.never ? "" : e.allow);
  hv_denial_explained_release (&e);
  /* A refused name is "not found" for the sandbox, so that lookups fail
   * at once and for good (egress_decide.h, HV_EGRESS_REFUSE); "no data"
   * where allowed names lie below it.  Only a type refused for an
   * allowed name is REFUSED: the name itself resolves. */
  uint16_t rcode = HV_DNS_RCODE_REFUSED;
  if (strcmp (why, HV_EGRESS_WHY_TYPE) != 0)
    rcode = hv_egress_name_allowed_below (&r->cfg, qname) ? HV_DNS_RCODE_NOERROR : HV_DNS_RCODE_NXDOMAIN;
  reply_simple (r, c, query, rcode, HV_DNS_EDE_BLOCKED, text);
}

/* Learn mode: a sinkhole instead of the refusal (egress_learn.h), the
 * refusal still reported; false: refuse as usual. */
static bool
learn_answer (hv_egress_resolver *r, const hv_res_client *c, const hv_dns_message *query, const char *qname,
              uint16_t qtype, const char *why)
{
  cleanup_free char *text = xasprintf ("haven egress policy \"%s\": %s (type %u): %s", r->cfg.policy_name, qname,
                                       qtype, why);
  cleanup_dns_message hv_dns_message reply = { 0 };
  uint8_t addr[4];
  bool has_addr;
  if (!hv_res_learn_answer (r->learn, query, qname, qtype, why, text, &reply, addr, &has_addr))
    return false;
  if (r->cfg.events.refused)
    r->cfg.events.refused (r->cfg.events.data, qname, qtype, why);
  if (has_addr)
    remember (r, AF_INET, addr, qname);
  send_message (r, c, query, &reply);
  return true;
}

/* FORMERR for a query whose header is all that parses: the header alone. */
static void
reply_formerr (hv_egress_resolver *r, const hv_res_client *c, uint16_t id, uint16_t flags)
{
  uint8_t b[HV_DNS_HEADER_LEN] = { 0 };
  uint16_t f = (uint16_t) (HV_DNS_FLAG_QR | HV_DNS_FLAG_RA | (flags & (HV_DNS_OPCODE_MASK | HV_DNS_FLAG_RD))
                           | HV_DNS_RCODE_FORMERR);
  b[0] = (uint8_t) (id >> 8);
  b[1] = (uint8_t) id;
  b[2] = (uint8_t) (f >> 8);
  b[3] = (uint8_t) f;
  send_reply (r, c, b, sizeof (b));
}

/* --- queries ----------------------------------------------------------------- */

static void
lower (char *s)
{
  for (; *s; s++)
    if (*s >= 'A' && *s <= 'Z')
      *s = (char) (*s - 'A' + 'a');
}

/* Send query (taken) upstream for text, to be pinned on ports (taken);
 * SERVFAIL when the bounds are reached. */
static void
forward (hv_egress_resolver *r, const hv_res_client *c, hv_dns_message *q, const char *text, hv_egress_ports *ports)
{
  cleanup_error hv_error *err = NULL;
  /* Forward: a slot, or SERVFAIL at once when the bounds are reached
   * (a client flooding queries gets failures, never unbounded memory). */
  uint32_t slot = HV_RES_MAX_PENDING;
  if (r->n_pending < HV_RES_MAX_PENDING && r->cfg.n_upstreams > 0
      && !(c->tcp && r->tcp[c->slot].pending >= HV_RES_TCP_CLIENT_QUERIES))
    for (uint32_t i = 0; i < HV_RES_MAX_PENDING; i++)
      if (r->pending[i] == NULL)
        {
          slot = i;
          break;
        }
  if (slot == HV_RES_MAX_PENDING)
    {
      hv_egress_ports_free (ports);
      reply_simple (r, c, q, HV_DNS_RCODE_SERVFAIL, 0, NULL);
      return;
    }
  hv_res_pending *p = xmalloc0 (sizeof (*p));
  p->client = *c;
  p->query = *q;
  memset (q, 0, sizeof (*q));
  /* A plain name (hv_egress_decide matched it) is at most 253 bytes. */
  memcpy (p->qname, text, strnlen (text, sizeof (p->qname) - 1));
  p->ports = *ports;
  memset (ports, 0, sizeof (*ports));
  p->fd = -1;
  r->pending[slot] = p;
  r->n_pending++;
  if (c->tcp)
    r->tcp[c->slot].pending++;
  /* Only an error restoring the netns is fatal, and that is reported
   * by the next dispatch: here, fail this query closed. */
  int started = hv_res_upstream_start (r, slot, &err);
  if (started <= 0)
    {
      reply_simple (r, c, &p->query, HV_DNS_RCODE_SERVFAIL, 0, NULL);
      pending_free (r, slot);
      if (started < 0 && r->fatal == NULL)
        r->fatal = steal_pointer (&err); /* dispatch reports it */
    }
}

/* Handle one query from client; never fatal (a failed reply is dropped). */
static void
handle_query (hv_egress_resolver *r, const hv_res_client *c, const uint8_t *buf, size_t len)
{
  uint16_t id, flags;
  if (hv_dns_peek_header (buf, len, &id, &flags) < 0)
    return;
  /* Never answer an answer: two resolvers could bounce one forever. */
  if (flags & HV_DNS_FLAG_QR)
    return;
  cleanup_error hv_error *err = NULL;
  cleanup_dns_message hv_dns_message q = { 0 };
  if (hv_dns_parse (buf, len, &q, &err) < 0 || q.n_questions != 1)
    {
      reply_formerr (r, c, id, flags);
      return;
    }
  if ((q.flags & HV_DNS_OPCODE_MASK) != 0)
    {
      reply_simple (r, c, &q, HV_DNS_RCODE_NOTIMP, 0, NULL);
      return;
    }
  char text[HV_DNS_NAME_TEXT_MAX];
  hv_dns_name_to_text (&q.questions[0].name, text);
  lower (text);
  uint16_t qtype = q.questions[0].type;
  hv_egress_verdict v;
  hv_egress_decide (&r->cfg, text, q.questions[0].cls, qtype, &v);
  if (v.action == HV_EGRESS_REFUSE)
    {
      if (!learn_answer (r, c, &q, text, qtype, v.why))
        reply_refused (r, c, &q, text, qtype, v.why);
      return;
    }
  if (v.action == HV_EGRESS_EMPTY)
    {
      reply_simple (r, c, &q, HV_DNS_RCODE_NOERROR, 0, NULL);
      return;
    }
  if (v.action == HV_EGRESS_ASK)
    {
      const char *why = HV_EGRESS_WHY_ASK_NOBODY;
      enum hv_res_ask_result a = r->ask ? hv_res_ask_query (r, c, &q, text, qtype, &v.ports, &why)
                                        : HV_RES_ASK_REFUSED;
      if (a == HV_RES_ASK_HELD)
        return; /* the answer comes when someone answers (hv_res_ask_check) */
      if (a == HV_RES_ASK_REFUSED)
        {
          hv_egress_ports_free (&v.ports);
          reply_refused (r, c, &q, text, qtype, why);
          return;
        }
      /* Approved for the run: as an allowed name. */
    }
  forward (r, c, &q, text, &v.ports);
}

/* --- answers --------------------------------------------------------------------- */

static void
fail_query (hv_egress_resolver *r, uint32_t slot)
{
  hv_res_pending *p = r->pending[slot];
  reply_simple (r, &p->client, &p->query, HV_DNS_RCODE_SERVFAIL, HV_DNS_EDE_NETWORK_ERROR, NULL);
  pending_free (r, slot);
}

/* Try the next upstream after a failed attempt; SERVFAIL when none is left. */
static int
next_attempt (hv_egress_resolver *r, uint32_t slot, hv_error **err)
{
  hv_res_pending *p = r->pending[slot];
  hv_res_upstream_close (r, p);
  p->upstream++;
  p->over_tcp = false;
  int started = hv_res_upstream_start (r, slot, err);
  if (started <= 0)
    fail_query (r, slot);
  return started < 0 ? -1 : 0;
}

static const hv_dns_rr *
find_cname (const hv_dns_message *resp, const hv_dns_name *owner)
{
  const hv_dns_rr *best = NULL;
  for (size_t i = 0; i < resp->n_rr[HV_DNS_ANSWER]; i++)
    {
      const hv_dns_rr *rr = &resp->rr[HV_DNS_ANSWER][i];
      if (rr->type == HV_DNS_TYPE_CNAME && rr->cls == HV_DNS_CLASS_IN && rr->cname
          && hv_dns_name_equal (&rr->name, owner) && (best == NULL || rr->ttl < best->ttl))
        best = rr;
    }
  return best;
}

/* Pin what the answer allows, then reply with exactly that.  -1 only
 * when the kernel refused the pins (the resolver's end). */
static int
answer (hv_egress_resolver *r, uint32_t slot, const hv_dns_message *resp, hv_error **err)
{
  hv_res_pending *p = r->pending[slot];
  const hv_egress_resolver_config *cfg = &r->cfg;
  cleanup_error hv_error *soft = NULL;
  hv_dns_chain chain;
  if (hv_dns_follow_chain (resp, &p->query.questions[0].name, &chain, &soft) < 0)
    return next_attempt (r, slot, err);
  /* A deny rule for any name on the chain takes its ports away too. */
  char text[HV_DNS_NAME_TEXT_MAX];
  for (size_t i = 1; i < chain.n_names; i++)
    {
      hv_dns_name_to_text (&chain.names[i], text);
      lower (text);
      hv_egress_name_deny (cfg, text, &p->ports);
    }
  if (p->ports.n == 0)
    {
      hv_dns_chain_free (&chain);
      reply_refused (r, &p->client, &p->query, p->qname, p->query.questions[0].type, HV_EGRESS_WHY_DENIED);
      pending_free (r, slot);
      return 0;
    }
  /* Which addresses stay: the queried type's, pinnable on some port. */
  int want = p->query.questions[0].type == HV_DNS_TYPE_A ? AF_INET : AF_INET6;
  size_t nports = hv_egress_ports_count (&p->ports);
  size_t max_addrs = HV_RES_MAX_PINS / nports;
  if (max_addrs > HV_RES_MAX_ANSWER_ADDRS)
    max_addrs = HV_RES_MAX_ANSWER_ADDRS;
  cleanup_free hv_egress_pin *pins = xmalloc0 (HV_RES_MAX_PINS * sizeof (*pins));
  cleanup_free size_t *kept = xmalloc0 ((chain.n_addrs + 1) * sizeof (*kept));
  size_t n_pins = 0, n_kept = 0;
  uint32_t ttl = chain.cname_ttl;
  for (size_t i = 0; i < chain.n_addrs && n_kept < max_addrs; i++)
    {
      const hv_dns_address *a = &chain.addrs[i];
      if (a->family != want)
        continue;
      uint8_t addr[16] = { 0 };
      memcpy (addr, &a->v4, hv_egress_addr_len (a->family));
      uint64_t timeout_ms = (uint64_t) (hv_egress_ttl_clamp (a->ttl, cfg->ttl_floor, cfg->ttl_cap) + cfg->grace) * 1000;
      size_t before = n_pins;
      for (size_t k = 0; k < p->ports.n; k++)
        for (uint32_t port = p->ports.r[k].lo; port <= p->ports.r[k].hi; port++)
          if (hv_egress_pin_allowed (cfg, a->family, addr, (uint16_t) port))
            {
              hv_egress_pin *pin = &pins[n_pins++];
              pin->family = a->family;
              memcpy (pin->addr, addr, 16);
              pin->port = (uint16_t) port;
              pin->timeout_ms = timeout_ms;
            }
      if (n_pins == before)
        continue; /* private, or denied: left out of the reply */
      kept[n_kept++] = i;
      if (a->ttl < ttl)
        ttl = a->ttl;
    }
  if (ttl > cfg->ttl_cap)
    ttl = cfg->ttl_cap;
  /* The kernel's acknowledgement comes before the reply: the client can
   * connect the moment it has the address. */
  if (hv_egress_pin_add (cfg->table, pins, n_pins, err) < 0)
    {
      hv_dns_chain_free (&chain);
      return hv_error_wrap (err, "egress resolver: %s", p->qname);
    }
  if (cfg->events.pins_added && n_pins)
    cfg->events.pins_added (cfg->events.data, pins, n_pins);
  cleanup_dns_message hv_dns_message reply = { 0 };
  int ok = hv_dns_reply_init (&reply, &p->query, resp->rcode, HV_RES_UPSTREAM_EDNS, &soft);
  /* Every record gets the lowest TTL on the chain: a client never holds a
   * CNAME longer than the addresses behind it (asking the unlisted target
   * by itself would be refused), nor an address longer than its pin. */
  for (size_t i = 0; ok == 0 && i + 1 < chain.n_names; i++)
    {
      const hv_dns_rr *cn = find_cname (resp, &chain.names[i]);
      ok = hv_dns_add_rr (&reply, HV_DNS_ANSWER, &cn->name, HV_DNS_TYPE_CNAME, HV_DNS_CLASS_IN, ttl, cn->rdata,
                          cn->rdlen, &soft);
    }
  const hv_dns_name *last = &chain.names[chain.n_names - 1];
  for (size_t k = 0; ok == 0 && k < n_kept; k++)
    {
      const hv_dns_address *a = &chain.addrs[kept[k]];
      uint8_t addr[16] = { 0 };
      size_t alen = hv_egress_addr_len (a->family);
      memcpy (addr, &a->v4, alen);
      ok = hv_dns_add_rr (&reply, HV_DNS_ANSWER, last, a->family == AF_INET ? HV_DNS_TYPE_A : HV_DNS_TYPE_AAAA,
                          HV_DNS_CLASS_IN, ttl, addr, (uint16_t) alen, &soft);
      remember (r, a->family, addr, p->qname);
      if (cfg->events.pinned)
        cfg->events.pinned (cfg->events.data, p->qname, a->family, addr,
                            hv_egress_ttl_clamp (a->ttl, cfg->ttl_floor, cfg->ttl_cap) + cfg->grace);
    }
  /* The SOA of a negative answer tells the client how long to cache it. */
  for (size_t i = 0; ok == 0 && i < resp->n_rr[HV_DNS_AUTHORITY]; i++)
    {
      const hv_dns_rr *rr = &resp->rr[HV_DNS_AUTHORITY][i];
      if (rr->type == HV_DNS_TYPE_SOA && n_kept == 0)
        ok = hv_dns_add_rr (&reply, HV_DNS_AUTHORITY, &rr->name, rr->type, rr->cls,
                            rr->ttl < cfg->ttl_cap ? rr->ttl : cfg->ttl_cap, rr->rdata, rr->rdlen, &soft);
    }
  hv_dns_chain_free (&chain);
  if (ok == 0)
    send_message (r, &p->client, &p->query, &reply);
  else
    reply_simple (r, &p->client, &p->query, HV_DNS_RCODE_SERVFAIL, 0, NULL);
  pending_free (r, slot);
  return 0;
}

static int
upstream_event (hv_egress_resolver *r, uint32_t slot, uint32_t gen, uint32_t events, hv_error **err)
{
  if (slot >= HV_RES_MAX_PENDING || r->pending[slot] == NULL || r->pending[slot]->gen != gen)
    return 0;
  hv_res_pending *p = r->pending[slot];
  cleanup_dns_message hv_dns_message resp = { 0 };
  int got = hv_res_upstream_read (r, p, events, &resp);
  if (got == 0)
    return 0;
  if (got < 0)
    return next_attempt (r, slot, err);
  if (resp.flags & HV_DNS_FLAG_TC)
    {
      if (p->over_tcp)
        return next_attempt (r, slot, err);
      /* Truncated: the same upstream again, over TCP. */
      hv_res_upstream_close (r, p);
      p->over_tcp = true;
      int started = hv_res_upstream_start (r, slot, err);
      if (started <= 0)
        fail_query (r, slot);
      return started < 0 ? -1 : 0;
    }
  if (resp.rcode != HV_DNS_RCODE_NOERROR && resp.rcode != HV_DNS_RCODE_NXDOMAIN)
    return next_attempt (r, slot, err);
  return answer (r, slot, &resp, err);
}

/* --- the loop ----------------------------------------------------------------- */

static void
udp_read (hv_egress_resolver *r, int fd)
{
  uint8_t buf[HV_RES_QUERY_MAX];
  /* Bounded per call; level-triggered epoll brings the rest next time. */
  for (int i = 0; i < HV_RES_UDP_READ_BATCH; i++)
    {
      hv_res_client c = { .tcp = false, .listen_fd = fd, .peer_len = sizeof (c.peer) };
      ssize_t n = recvfrom (fd, buf, sizeof (buf), MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *) &c.peer,
                            &c.peer_len);
      if (n < 0)
        return;
      if ((size_t) n > sizeof (buf))
        continue; /* longer than any query we take: dropped */
      handle_query (r, &c, buf, (size_t) n);
    }
}

/* A TCP client's event; then every whole query it sent, answered in turn
 * (a client closed while one is answered has no more). */
static void
tcp_event (hv_egress_resolver *r, uint32_t slot, uint32_t gen, uint32_t events)
{
  hv_res_tcp_event (r, slot, gen, events);
  hv_res_client who = { .tcp = true, .listen_fd = -1, .slot = slot, .gen = gen };
  uint8_t query[HV_RES_QUERY_MAX];
  size_t len;
  while ((len = hv_res_tcp_take_query (r, slot, gen, query)) > 0)
    handle_query (r, &who, query, len);
}

static const hv_res_ask_ops ask_ops = { .forward = forward, .refuse = reply_refused };

static int
expire (hv_egress_resolver *r, uint64_t now, uint64_t *next, hv_error **err)
{
  int rc = 0;
  *next = hv_res_tcp_expire (r, now);
  /* Answers and deadlines of held names; a forward that failed fatally
   * is reported like one of a query's. */
  uint64_t ask_next = hv_res_ask_check (r, now, &ask_ops);
  if (ask_next < *next)
    *next = ask_next;
  if (r->fatal)
    {
      *err = steal_pointer (&r->fatal);
      return -1;
    }
  for (uint32_t i = 0; i < HV_RES_MAX_PENDING; i++)
    {
      hv_res_pending *p = r->pending[i];
      if (p == NULL)
        continue;
      if (p->deadline_ms <= now && next_attempt (r, i, err) < 0)
        rc = -1;
      p = r->pending[i];
      if (p && p->deadline_ms < *next)
        *next = p->deadline_ms;
      if (rc < 0)
        return rc;
    }
  return 0;
}

int
hv_egress_resolver_dispatch (hv_egress_resolver *r, hv_error **err)
{
  struct epoll_event ev[HV_RES_EPOLL_BATCH];
  int n = epoll_wait (r->epfd, ev, HV_RES_EPOLL_BATCH, 0);
  if (n < 0 && errno != EINTR)
    return hv_error_set (err, errno, "egress resolver: epoll_wait");
  for (int i = 0; i < n; i++)
    {
      uint64_t t = ev[i].data.u64;
      uint32_t kind = (uint32_t) (t >> 56), index = (uint32_t) (t >> 32) & 0xffffff, gen = (uint32_t) t;
      switch (kind)
        {
        case HV_RES_K_UDP_LISTEN:
          udp_read (r, r->listen_fd[index]);
          break;
        case HV_RES_K_TCP_LISTEN:
          hv_res_tcp_accept (r, r->listen_fd[index]);
          break;
        case HV_RES_K_TIMER:
          {
            uint64_t ticks;
            if (read (r->timerfd, &ticks, sizeof (ticks)) < 0)
              ticks = 0; /* nothing to clear: deadlines are checked below anyway */
            break;
          }
        case HV_RES_K_UPSTREAM:
          if (upstream_event (r, index, gen, ev[i].events, err) < 0)
            return -1;
          break;
        case HV_RES_K_TCP_CLIENT:
          tcp_event (r, index, gen, ev[i].events);
          break;
        case HV_RES_K_ASK:
          hv_res_ask_event (r); /* the answers are taken below */
          break;
        default:
          break;
        }
      if (r->fatal)
        {
          *err = steal_pointer (&r->fatal);
          return -1;
        }
    }
  uint64_t next;
  if (expire (r, hv_res_now_ms (), &next, err) < 0)
    return -1;
  struct itimerspec its = { 0 };
  if (next != UINT64_MAX)
    {
      /* Absolute on CLOCK_MONOTONIC; at least 1 ns so 0 does not disarm. */
      its.it_value.tv_sec = (time_t) (next / 1000);
      its.it_value.tv_nsec = (long) (next % 1000) * 1000000 + 1;
    }
  if (timerfd_settime (r->timerfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
    return hv_error_set (err, errno, "egress resolver: timerfd_settime");
  return 0;
}
