/* net-denied, dns-refused and denials-suppressed records (egress_audit.h). */
#include "config.h"
#include "egress_audit.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <sys/socket.h>

#include "denial_explain.h"
#include "denial_view.h"
#include "dns_message.h"
#include "json_gen.h"

void
hv_egress_audit_denied (struct hv_audit_trail *t, const hv_egress_denial *d, hv_egress_names_fn names_for,
                        void *data)
{
  char dst[INET6_ADDRSTRLEN] = "";
  inet_ntop (d->family == AF_INET ? AF_INET : AF_INET6, d->addr, dst, sizeof (dst));
  yajl_gen g = hv_audit_trail_record (t, "net-denied");
  hv_audit_put_kv (g, "destination", dst);
  jg_str (g, "port");
  yajl_gen_integer (g, d->port);
  hv_audit_put_kv (g, "protocol", hv_egress_l4_name (d->protocol));
  jg_str (g, "names");
  yajl_gen_array_open (g);
  const char *names[HV_EGRESS_AUDIT_MAX_NAMES];
  size_t n = names_for ? names_for (data, d->family, d->addr, names, HV_EGRESS_AUDIT_MAX_NAMES) : 0;
  if (n > HV_EGRESS_AUDIT_MAX_NAMES)
    n = HV_EGRESS_AUDIT_MAX_NAMES;
  for (size_t i = 0; i < n; i++)
    hv_audit_put_str (g, names[i]);
  yajl_gen_array_close (g);
  /* The most recent name is the one the program asked for. */
  struct hv_denial_facts f = { .kind = HV_DENIAL_NET, .name = n ? names[0] : NULL, .address = dst,
                               .port = d->port, .protocol = hv_egress_l4_name (d->protocol) };
  hv_denial_explain_put (g, t->rules, &f);
  hv_audit_denial_emit (t, g);
}

void
hv_egress_audit_refused (struct hv_audit_trail *t, const char *qname, uint16_t qtype, const char *why)
{
  char buf[16];
  yajl_gen g = hv_audit_trail_record (t, "dns-refused");
  hv_audit_put_kv (g, "name", qname);
  hv_audit_put_kv (g, "type", hv_dns_type_name (qtype, buf));
  hv_audit_put_kv (g, "why", why);
  struct hv_denial_facts f = { .kind = HV_DENIAL_DNS, .name = qname, .why = why, .type = buf };
  hv_denial_explain_put (g, t->rules, &f);
  hv_audit_denial_emit (t, g);
}

void
hv_egress_audit_suppressed (struct hv_audit_trail *t, const hv_denial_summary *s)
{
  hv_audit_trail_denials_summary (t, "egress", s);
}
