/* A policy's egress for the runtime: policy_egress.h. */
#include "config.h"
#include "policy_egress.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>

#include "egress_resolver.h"
#include "policy_network.h"
#include "utils.h"

static void
add_rules (const hv_net_rules *rules, hv_egress_cidr **cidrs, size_t *n_cidrs, hv_egress_name_rule **names,
           size_t *n_names)
{
  for (size_t i = 0; i < rules->n; i++)
    {
      const hv_net_rule *r = &rules->v[i];
      if (r->kind == HV_NET_RULE_CIDR)
        {
          hv_egress_cidr c = { .family = r->family, .prefix_len = r->prefix, .port_min = r->port_lo,
                               .port_max = r->port_hi };
          memcpy (c.addr, r->addr, sizeof (c.addr));
          hv_egress_config_add_cidr (cidrs, n_cidrs, &c);
        }
      else
        /* One entry per rule: policy_network already made a bare name
         * two rules (443 and 80), and a deny without port every port. */
        hv_egress_config_add_name (names, n_names, r->name, r->kind == HV_NET_RULE_WILDCARD, r->port_lo,
                                   r->port_hi);
    }
}

char *
hv_policy_egress_annotation (const hv_policy *p, hv_egress_connect connect)
{
  if (p->net_mode != HV_NET_ALLOWLIST)
    return NULL;
  hv_egress_config *c = xmalloc0 (sizeof (*c));
  c->policy = xstrdup (p->name ? p->name : "");
  c->connect = connect;
  add_rules (&p->net_allow, &c->allow, &c->n_allow, &c->names, &c->n_names);
  add_rules (&p->net_deny, &c->deny, &c->n_deny, &c->deny_names, &c->n_deny_names);
  /* network.ask has names only (policy_parse.c refuses an address). */
  hv_egress_cidr *no_cidrs = NULL;
  size_t n_no_cidrs = 0;
  add_rules (&p->net_ask, &no_cidrs, &n_no_cidrs, &c->ask_names, &c->n_ask_names);
  free (no_cidrs);
  c->ask_all = p->net_ask_all.set && p->net_ask_all.value;
  if (c->ask_all || c->n_ask_names)
    c->ask_timeout_ms
        = (unsigned) (p->net_ask_timeout_s.set ? p->net_ask_timeout_s.value : HV_POLICY_ASK_TIMEOUT_DEFAULT_S) * 1000;
  char *text = hv_egress_config_generate (c);
  hv_egress_config_free (c);
  return text;
}

bool
hv_policy_asks (const hv_policy *p)
{
  return p->net_mode == HV_NET_ALLOWLIST && (p->net_ask.n || (p->net_ask_all.set && p->net_ask_all.value));
}

bool
hv_policy_egress_strips_cap (const hv_policy *p, const char *cap)
{
  return p->net_mode == HV_NET_ALLOWLIST && (strcmp (cap, "CAP_NET_RAW") == 0 || strcmp (cap, "CAP_NET_ADMIN") == 0);
}

/* Is path the network namespace this process is in (the host's, for a
 * runtime an engine runs on the host)? */
static bool
is_own_netns (const char *path)
{
  struct stat a, b;
  if (stat (path, &a) < 0 || stat ("/proc/self/ns/net", &b) < 0)
    return false; /* a namespace that cannot be opened fails at create */
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int
hv_policy_egress_check_netns (const hv_policy *p, const oci_spec *spec, const char *name, hv_error **err)
{
  if (p->net_mode != HV_NET_ALLOWLIST)
    return 0;
  const oci_namespace *ns = oci_spec_find_namespace (spec, CLONE_NEWNET);
  if (ns == NULL)
    return hv_error_set (err, 0,
                         "%s: .linux.namespaces: policy %s allows only some destinations (network.allow), but the "
                         "container shares the host's network (network: host): its egress cannot be enforced; run "
                         "it on a network of its own (the engine's default bridge, or a user network)",
                         name, p->name);
  if (ns->path && ns->path[0] && is_own_netns (ns->path))
    return hv_error_set (err, 0,
                         "%s: .linux.namespaces: network namespace %s is the host's: policy %s allows only some "
                         "destinations (network.allow), which cannot be enforced there",
                         name, ns->path, p->name);
  return 0;
}
