/* The per-container monitor's egress side: monitor_egress.h. */
#include "config.h"
#include "monitor_egress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dns_message.h"
#include "egress_ask.h"
#include "egress_audit.h"
#include "egress_config.h"
#include "egress_decide.h"
#include "egress_denials.h"
#include "egress_forward.h"
#include "egress_notice.h"
#include "egress_resolver.h"
#include "egress_table.h"
#include "haven_annotations.h"
#include "json_gen.h"
#include "resolv_conf.h"
#include "utils.h"

/* The host's, for "connect": "pasta": the monitor runs in the host's
 * namespace, so a loopback stub there (systemd-resolved's 127.0.0.53)
 * answers too.  Written by the host's administrator, not the sandbox
 * (whose / is the host's, read-only): a link there is followed. */
#define HOST_RESOLV_CONF "/etc/resolv.conf"

struct hv_monitor_egress
{
  struct hv_audit_trail *trail;
  hv_egress_config *config;
  hv_egress_ask_config *ask; /* run.haven.ask, or NULL */
  hv_egress_table *table;
  hv_egress_resolver *resolver;
  hv_egress_denials *denials;
  hv_egress_forward *forward; /* haven's way out (egress_forward.h), or NULL */
  struct stat home; /* this thread's network namespace at start */
  hv_denial_summary held; /* summaries past the trail's size cap, for the final one */
  bool holding;
  int notice_fd;  /* egress_notice.h; -1: none */
  bool noticed;   /* the line was said (or tried): once per run */
};

/* {"event":"egress-error","part":PART,"error":TEXT,"effect":EFFECT} */
static void
record_error (hv_monitor_egress *e, const char *part, const hv_error *err, const char *effect)
{
  yajl_gen g = hv_audit_trail_record (e->trail, "egress-error");
  hv_audit_put_kv (g, "part", part);
  hv_audit_put_kv (g, "error", err ? err->msg : "");
  hv_audit_put_kv (g, "effect", effect);
  hv_audit_trail_emit (e->trail, g);
}

static const char resolver_effect[]
    = "the resolver is not running: every DNS query of the sandbox fails and nothing more is pinned";

static const char forward_effect[]
    = "the forwarder is not running: the sandbox's connections to allowed hosts fail";

/* Did a failed setns back leave this thread in the sandbox's namespace? */
static int
check_home (const hv_monitor_egress *e, hv_error **err)
{
  struct stat now;
  if (stat ("/proc/thread-self/ns/net", &now) < 0)
    return hv_error_set (err, errno, "stat /proc/thread-self/ns/net");
  if (now.st_dev != e->home.st_dev || now.st_ino != e->home.st_ino)
    return hv_error_set (err, 0, "the monitor was left in the container's network namespace");
  return 0;
}

static void
on_refused (void *data, const char *qname, uint16_t qtype, const char *why)
{
  hv_monitor_egress *e = data;
  /* The first refused name, on haven run's stderr: once, whatever the
   * limiter does, and never for a type refused for an allowed name (the
   * name itself resolves). */
  if (e->notice_fd >= 0 && !e->noticed && strcmp (why, HV_EGRESS_WHY_TYPE) != 0)
    {
      e->noticed = true;
      hv_egress_notice_write (e->notice_fd, e->config ? e->config->policy : NULL, qname, why, e->trail->fd >= 0);
    }
  /* Through the listener's limiter; no listener (no trail): dropped. */
  if (e->denials)
    hv_egress_denials_refused (e->denials, qname, qtype, why);
}

static size_t
names_for (void *data, int family, const uint8_t addr[16], const char **names, size_t max)
{
  hv_monitor_egress *e = data;
  return e->resolver ? hv_egress_resolver_names_for (e->resolver, family, addr, names, max) : 0;
}

static void
on_denied (void *data, const hv_egress_denial *d)
{
  hv_monitor_egress *e = data;
  hv_egress_audit_denied (e->trail, d, names_for, e);
}

/* The forwarder refused a connection the table let through: through
 * the listener's limiter, like the kernel's denials. */
static void
on_forward_denied (void *data, const hv_egress_denial *d)
{
  hv_monitor_egress *e = data;
  if (e->denials)
    hv_egress_denials_denied (e->denials, d);
}

static void
on_pins_added (void *data, const hv_egress_pin *pins, size_t n)
{
  hv_monitor_egress *e = data;
  if (e->forward)
    hv_egress_forward_pinned (e->forward, pins, n);
}

static void
on_limited_refusal (void *data, const char *qname, uint16_t qtype, const char *why)
{
  hv_monitor_egress *e = data;
  hv_egress_audit_refused (e->trail, qname, qtype, why);
}

/* Past the trail's size cap a summary is held for the final one (its
 * counts are never dropped). */
static void
on_suppressed (void *data, const hv_denial_summary *s)
{
  hv_monitor_egress *e = data;
  if (!e->trail->capped)
    {
      hv_egress_audit_suppressed (e->trail, s);
      return;
    }
  hv_denial_summary_add (&e->held, s);
  e->holding = true;
}

static bool
trail_capped (void *data)
{
  hv_monitor_egress *e = data;
  return e->trail->capped;
}

/* {"event":"ask","id":ID,"name":NAME,"type":"A","decision":D,"by":BY[,"why":WHY]}:
 * one per decided request, straight into the trail (a person's decision
 * is not a denial the limiter may fold). */
static void
on_asked (void *data, const char *id, const char *qname, uint16_t qtype, const char *decision, const char *by,
          const char *why)
{
  hv_monitor_egress *e = data;
  char buf[16];
  if (e->trail->fd < 0)
    return;
  yajl_gen g = hv_audit_trail_record (e->trail, "ask");
  hv_audit_put_kv (g, "id", id);
  hv_audit_put_kv (g, "name", qname);
  hv_audit_put_kv (g, "type", hv_dns_type_name (qtype, buf));
  hv_audit_put_kv (g, "decision", decision);
  hv_audit_put_kv (g, "by", by);
  if (why)
    hv_audit_put_kv (g, "why", why);
  hv_audit_trail_emit (e->trail, g);
}

/* The run.haven.ask annotation, with what the egress annotation says of
 * asking: NULL (recorded) when it cannot be read, so that every name to
 * ask is refused. */
static hv_egress_ask_config *
ask_config (hv_monitor_egress *e, const char *text)
{
  const hv_egress_config *c = e->config;
  if (!(c->ask_all || c->n_ask_names))
    return NULL;
  cleanup_error hv_error *err = NULL;
  hv_egress_ask_config *a = NULL;
  if (text == NULL)
    hv_error_set (&err, 0, "no " HV_ASK_ANNOTATION " annotation: nobody to ask");
  else if (hv_egress_ask_config_parse (text, "config.json", &a, &err) == 0)
    {
      a->policy = xstrdup (c->policy);
      a->timeout_ms = c->ask_timeout_ms;
      /* The run's id, for the requests': the session's, or one of ours. */
      uint8_t raw[8] = { 0 };
      bool make = a->run[0] == '\0';
      if (make && getrandom (raw, sizeof (raw), 0) != (ssize_t) sizeof (raw))
        hv_error_set (&err, errno, "getrandom");
      for (size_t i = 0; make && i < sizeof (raw); i++)
        snprintf (a->run + 2 * i, 3, "%02x", raw[i]);
      if (err == NULL)
        return a;
      hv_egress_ask_config_free (a);
    }
  record_error (e, "approvals", err, "names the policy asks for are refused (nobody to ask)");
  return NULL;
}

/* The upstreams and where they are asked from. */
static int
read_upstreams (const struct hv_monitor_egress_args *a, const hv_egress_config *c, hv_resolv_conf *rc,
                hv_error **err)
{
  if (c->connect == HV_EGRESS_CONNECT_PASTA)
    return hv_resolv_conf_read (HOST_RESOLV_CONF, true, rc, err);
  /* An engine container without a resolv.conf of the engine's: nobody to
   * ask (allowed names get SERVFAIL; nothing else is tried). */
  if (a->resolv_conf == NULL)
    return hv_error_set (err, 0, "the config binds no file on /etc/resolv.conf: no upstream resolver");
  return hv_resolv_conf_read (a->resolv_conf, false, rc, err);
}

/* The resolver, which takes the listening sockets from own (whatever
 * happens). */
static int
start_resolver (hv_monitor_egress *e, const struct hv_monitor_egress_args *a, struct hv_egress_fds *own,
                hv_error **err)
{
  const hv_egress_config *c = e->config;
  /* Zeroed: when there is nothing to read, no upstreams (not stack garbage). */
  hv_resolv_conf rc = { 0 };
  cleanup_error hv_error *rc_err = NULL;
  if (read_upstreams (a, c, &rc, &rc_err) < 0)
    {
      rc.n_ns = 0;
      record_error (e, "upstreams", rc_err, "allowed names cannot be resolved (SERVFAIL)");
    }
  else if (rc.n_ns == 0)
    {
      hv_error_set (&rc_err, 0, "no nameserver line with an IP address");
      record_error (e, "upstreams", rc_err, "allowed names cannot be resolved (SERVFAIL)");
    }
  bool engine = c->connect == HV_EGRESS_CONNECT_ENGINE;
  hv_egress_resolver_config rcfg = {
    .table = e->table,
    .allow = c->names, .n_allow = c->n_names, .deny = c->deny_names, .n_deny = c->n_deny_names,
    .allow_cidrs = c->allow, .n_allow_cidrs = c->n_allow, .deny_cidrs = c->deny, .n_deny_cidrs = c->n_deny,
    .udp4_fd = hv_egress_fd_take (&own->udp4), .tcp4_fd = hv_egress_fd_take (&own->tcp4),
    .udp6_fd = hv_egress_fd_take (&own->udp6), .tcp6_fd = hv_egress_fd_take (&own->tcp6),
    .upstreams = rc.ns, .n_upstreams = rc.n_ns,
    /* Engine: asked from inside the sandbox, where the engine's resolver
     * is reachable; marked, so the table lets the query out unredirected. */
    .upstream_netns_fd = engine ? a->fds->netns : -1,
    .upstream_mark = engine ? HV_EGRESS_RESOLVER_MARK : 0,
    .policy_name = c->policy,
    .ask = c->ask_names, .n_ask = c->n_ask_names, .ask_all = c->ask_all, .asker = e->ask,
    .events = { .refused = on_refused, .pins_added = on_pins_added, .asked = on_asked, .data = e },
  };
  return hv_egress_resolver_new (&rcfg, &e->resolver, err);
}

hv_monitor_egress *
hv_monitor_egress_start (const struct hv_monitor_egress_args *a, struct hv_audit_trail *trail, hv_error **err)
{
  /* Every socket is this call's from here on: what is not handed on
   * below (an early failure, no trail for the listener) is closed on
   * return.  The namespace stays the caller's. */
  cleanup_egress_fds struct hv_egress_fds own = HV_EGRESS_FDS_INIT;
  for (unsigned i = 0; i < HV_EGRESS_N_SOCKETS; i++)
    *hv_egress_fds_socket (&own, i) = hv_egress_fd_take (hv_egress_fds_socket (a->fds, i));
  const int netns = a->fds->netns;
  hv_monitor_egress *e = xmalloc0 (sizeof (*e));
  e->trail = trail;
  e->notice_fd = a->notice_fd;
  cleanup_error hv_error *part_err = NULL;
  if (stat ("/proc/thread-self/ns/net", &e->home) < 0)
    {
      hv_monitor_egress_free (e);
      hv_error_set (err, errno, "stat /proc/thread-self/ns/net");
      return NULL;
    }
  if (hv_egress_config_parse (a->config, HV_EGRESS_ANNOTATION, &e->config, &part_err) < 0)
    {
      /* create parsed the same text: not expected; no resolver then. */
      record_error (e, "resolver", part_err, resolver_effect);
      return e;
    }
  /* The denial listener first: refusals go through its limiter. */
  if (trail->fd >= 0)
    {
      hv_egress_denials_events ev = { .denied = on_denied, .refused = on_limited_refusal,
                                      .suppressed = on_suppressed, .capped = trail_capped, .data = e };
      int r = own.nflog >= 0 ? hv_egress_denials_open_socket (hv_egress_fd_take (&own.nflog), HV_EGRESS_NFLOG_GROUP, 0,
                                                               &ev, &e->denials, &part_err)
                             : hv_egress_denials_open (netns, HV_EGRESS_NFLOG_GROUP, 0, &ev, &e->denials, &part_err);
      if (r < 0)
        {
          record_error (e, "denials", part_err, "no net-denied or dns-refused records (denials are still refused)");
          hv_error_free (&part_err);
        }
    }
  /* The forwarder before the resolver, which tells it every pin. */
  if (own.fwd4 >= 0)
    {
      hv_egress_forward_args fa = { .config = e->config, .listen4 = hv_egress_fd_take (&own.fwd4),
                                    .listen6 = hv_egress_fd_take (&own.fwd6), .denied = on_forward_denied,
                                    .data = e };
      e->forward = hv_egress_forward_new (&fa, &part_err);
      if (e->forward == NULL)
        {
          record_error (e, "forwarder", part_err, forward_effect);
          hv_error_free (&part_err);
        }
    }
  e->ask = ask_config (e, a->ask);
  /* No trail, no listener: its socket is not used (closed on return). */
  int t = own.nft >= 0
              ? hv_egress_table_open_socket (HV_EGRESS_TABLE_NAME, hv_egress_fd_take (&own.nft), &e->table, &part_err)
              : hv_egress_table_open (HV_EGRESS_TABLE_NAME, netns, &e->table, &part_err);
  if (t < 0)
    record_error (e, "resolver", part_err, resolver_effect); /* the listening sockets are closed on return */
  else if (start_resolver (e, a, &own, &part_err) < 0)
    record_error (e, "resolver", part_err, resolver_effect); /* the sockets went with it */
  if (check_home (e, err) < 0)
    {
      hv_monitor_egress_free (e);
      return NULL;
    }
  return e;
}

void
hv_monitor_egress_free (hv_monitor_egress *e)
{
  if (e == NULL)
    return;
  hv_egress_resolver_free (e->resolver);
  /* Before the config it borrows: every relay ends here. */
  hv_egress_forward_free (e->forward);
  hv_egress_denials_free (e->denials);
  hv_egress_table_close (e->table);
  hv_egress_config_free (e->config);
  hv_egress_ask_config_free (e->ask);
  free (e);
}

int
hv_monitor_egress_resolver_fd (const hv_monitor_egress *e)
{
  return e->resolver ? hv_egress_resolver_fd (e->resolver) : -1;
}

int
hv_monitor_egress_denials_fd (const hv_monitor_egress *e)
{
  return e->denials ? hv_egress_denials_fd (e->denials) : -1;
}

int
hv_monitor_egress_forward_fd (const hv_monitor_egress *e)
{
  return e->forward ? hv_egress_forward_fd (e->forward) : -1;
}

int
hv_monitor_egress_forward_ready (hv_monitor_egress *e)
{
  cleanup_error hv_error *ferr = NULL;
  if (e->forward == NULL)
    return 0;
  if (hv_egress_forward_dispatch (e->forward, &ferr) == 0)
    return 1;
  /* Fail closed: its listeners close with it, so the sandbox's connects
   * are refused from now on. */
  hv_egress_forward_free (e->forward);
  e->forward = NULL;
  record_error (e, "forwarder", ferr, forward_effect);
  return 0;
}

int
hv_monitor_egress_resolver_ready (hv_monitor_egress *e, hv_error **err)
{
  cleanup_error hv_error *derr = NULL;
  if (e->resolver == NULL)
    return 0;
  if (hv_egress_resolver_dispatch (e->resolver, &derr) == 0)
    return 1;
  /* Fail closed: the listening sockets close with it, so the sandbox's
   * queries fail from now on; pins made so far expire with their TTL. */
  hv_egress_resolver_free (e->resolver);
  e->resolver = NULL;
  record_error (e, "resolver", derr, resolver_effect);
  return check_home (e, err) < 0 ? -1 : 0;
}

int
hv_monitor_egress_denials_ready (hv_monitor_egress *e)
{
  cleanup_error hv_error *derr = NULL;
  if (e->denials == NULL)
    return 0;
  if (hv_egress_denials_dispatch (e->denials, &derr) == 0)
    return 1;
  hv_egress_denials_free (e->denials);
  e->denials = NULL;
  record_error (e, "denials", derr, "no more net-denied or dns-refused records (denials are still refused)");
  return 0;
}

void
hv_monitor_egress_denials_finish (hv_monitor_egress *e)
{
  if (e == NULL)
    return;
  if (e->denials)
    hv_egress_denials_finish (e->denials);
  if (e->holding)
    {
      hv_egress_audit_suppressed (e->trail, &e->held);
      e->holding = false;
    }
}
