/* `haven policy explain`'s network section (policy_network_explain.h).
 * Every sentence here must be true of what runs today (the egress table,
 * the resolver and pasta: runtime/egress_*.c; tests/integration/
 * test_egress_*.sh show each claim). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "offline.h"
#include "policy_network_explain.h"
#include "utils.h"

static bool
same_target (const hv_net_rule *a, const hv_net_rule *b)
{
  if (a->kind != b->kind)
    return false;
  if (a->kind == HV_NET_RULE_CIDR)
    return a->family == b->family && a->prefix == b->prefix && memcmp (a->addr, b->addr, sizeof (a->addr)) == 0;
  return strcmp (a->name, b->name) == 0;
}

static void
print_ports (const hv_net_rule *r, FILE *out)
{
  if (r->port_lo == 1 && r->port_hi == 65535)
    fprintf (out, "any port");
  else if (r->port_lo == r->port_hi)
    fprintf (out, "%u", r->port_lo);
  else
    fprintf (out, "%u-%u", r->port_lo, r->port_hi);
}

/* One line per destination, its ports gathered ("TCP 443, 80"); a rule
 * from the approved file says so, with its line. */
static void
list_rules_from (const hv_net_rules *rules, const char *approved, FILE *out)
{
  for (size_t i = 0; i < rules->n; i++)
    {
      size_t j = 0;
      while (j < i && !same_target (&rules->v[j], &rules->v[i]))
        j++;
      if (j < i)
        continue; /* printed with its first rule */
      cleanup_free char *target = hv_net_rule_target (&rules->v[i]);
      fprintf (out, "    %s: TCP ", target);
      for (size_t k = i; k < rules->n; k++)
        if (same_target (&rules->v[k], &rules->v[i]))
          {
            if (k > i)
              fprintf (out, ", ");
            print_ports (&rules->v[k], out);
          }
      if (rules->v[i].kind == HV_NET_RULE_WILDCARD)
        fprintf (out, " (names below %s at any depth, not %s itself)", rules->v[i].name, rules->v[i].name);
      const char *where = rules->v[i].where;
      if (approved && where && str_has_prefix (where, approved) && where[strlen (approved)] == ':')
        fprintf (out, " (approved in %s)", where);
      fprintf (out, "\n");
    }
}

static void
list_rules (const hv_net_rules *rules, FILE *out)
{
  list_rules_from (rules, NULL, out);
}

/* network.ask and mode: ask (session/approvals.h, the resolver's hold). */
static void
explain_ask (const hv_policy *p, FILE *out)
{
  bool all = p->net_ask_all.set && p->net_ask_all.value;
  if (!all && p->net_ask.n == 0)
    return;
  if (all)
    fprintf (out, "  Asked for (mode: ask, %s): every name the list above does not allow.\n",
             p->net_ask_all_where ? p->net_ask_all_where : "?");
  if (p->net_ask.n)
    {
      fprintf (out, "  Asked for (network.ask), on these ports once approved:\n");
      list_rules (&p->net_ask, out);
    }
  unsigned t = (unsigned) (p->net_ask_timeout_s.set ? p->net_ask_timeout_s.value : HV_POLICY_ASK_TIMEOUT_DEFAULT_S);
  fprintf (out,
           "  The first lookup of a name to ask is held by haven's resolver (nothing is reachable until\n"
           "  the answer) while `haven approve` in another terminal lists it and answers (once: the\n"
           "  held lookups only; run: for the rest of this run; always: also written to\n"
           "  ~/.config/haven/approved/%s.yaml, merged into this policy by later runs; deny).\n"
           "  Unanswered within %us (network.ask_timeout), the name is denied: \"not found\" with an\n"
           "  Extended DNS Error saying so.  A name network.deny covers is never asked for.  Each\n"
           "  decision is an `ask` record in the trail.\n",
           p->name ? p->name : "POLICY", t);
}

static void
explain_allowlist (const hv_policy *p, FILE *out)
{
  if (p->net_allow.n == 0)
    fprintf (out, "Allowlist with nothing listed: no destination outside the sandbox.\n");
  else
    {
      fprintf (out, "Allowlist: only these destinations, TCP only (UDP, ICMP and QUIC are not in the language):\n");
      list_rules_from (&p->net_allow, p->approved_file, out);
    }
  explain_ask (p, out);
  if (p->net_deny.n)
    {
      fprintf (out, "  Denied, whatever the list above allows (an entry without a port denies every port):\n");
      list_rules (&p->net_deny, out);
    }
  bool asks = p->net_ask.n || (p->net_ask_all.set && p->net_ask_all.value);
  fprintf (out, "  Enforced in the kernel: a table in the sandbox's network namespace refuses at once (TCP\n"
                "  reset, ICMP admin-prohibited) what it does not allow; names are answered by haven's resolver,\n"
                "  which refuses unlisted names %s and allows the addresses it answers for\n"
                "  their DNS lifetime; DNS sent to any other server lands there too; link-local and cloud\n"
                "  metadata addresses are always refused.  `haven run` reaches the network through pasta, by\n"
                "  the host's own route to each allowed address (a host without a default route included),\n"
                "  without the host's own services (its loopback and every address it has when the run\n"
                "  starts); an engine container keeps its engine's network, with the table installed at\n"
                "  create, and is refused with the\n"
                "  host's network.  There only DNS of the container's own processes (its cgroup) goes to the\n"
                "  resolver, so the engine's DNS (Docker's 127.0.0.11, reached only through the resolver) can\n"
                "  forward a listed name it does not know itself.\n",
           asks ? "(but those it asks for, above)" : "without asking anyone");
  fprintf (out, "  A name the policy does not allow is answered \"not found\" (NXDOMAIN, or no data where\n"
                "  allowed names lie below it) with an Extended DNS Error naming haven and the policy, so a\n"
                "  lookup fails at once and is not retried as a temporary failure; `haven run` says the first\n"
                "  such name once on its stderr, and npm is told to retry 1 s then 2 s apart:\n  ");
  for (size_t i = 0; hv_allowlist_env_vars[i]; i++)
    fprintf (out, "%s%s", i ? ", " : "", hv_allowlist_env_vars[i]);
  fprintf (out, " (unless set).\n");
  fprintf (out, "  Limits of rules by name:\n"
                "    - Addresses are allowed per address: while a name's address is allowed, other sites that\n"
                "      share it (a CDN, a cloud load balancer) are reachable too.\n"
                "    - Hosts where anyone can write (github.com, registry.npmjs.org, pypi.org, object storage,\n"
                "      paste sites) can carry out whatever the sandbox can read.\n"
                "    - The DNS servers of a *.zone see every name asked under it, which can carry data out.\n"
                "    - A client that keeps an address past its DNS lifetime fails once the address expires.\n"
                "    - A denied name only stops the name: an address or CIDR that an allow entry covers\n"
                "      stays reachable by address unless a deny entry names the address.\n");
}

void
hv_net_explain (const hv_policy *p, FILE *out)
{
  fprintf (out, "\nNetwork\n  ");
  switch (p->net_mode)
    {
    case HV_NET_OPEN:
      fprintf (out, "Open: the host's network.\n");
      break;
    case HV_NET_ALLOWLIST:
      explain_allowlist (p, out);
      break;
    default:
      fprintf (out, "None: only the sandbox's own loopback.\n"
                    "  In an engine container too, whatever network the engine gives it (bridge, user-defined,\n"
                    "  host, another container's): Docker's network hook is not run, and create fails if any\n"
                    "  interface but loopback is there after the engine's hooks.\n");
      fprintf (out, "  haven run: names resolve from /etc/hosts only (the hosts: line of /etc/nsswitch.conf is\n"
                    "  \"files\"), so a lookup fails at once as \"not known\"; package managers are told not to\n"
                    "  retry (");
      for (size_t i = 0; hv_offline_env_vars[i]; i++)
        fprintf (out, "%s%s", i ? ", " : "", hv_offline_env_vars[i]);
      fprintf (out, ", unless set);\n"
                    "  under a terminal haven says at the start that the network is off.  To let hosts\n"
                    "  through: network.mode: allowlist and network.allow in a policy of your own.\n");
      if (p->net_allow.n)
        fprintf (out, "  network.allow entries inherited from the policies this one extends are not used\n"
                      "  (this policy says mode: none).\n");
    }
  for (size_t i = 0; i < p->warnings.n; i++)
    fprintf (out, "%s%s\n", i ? "    " : "  Cautions:\n    ", p->warnings.v[i]);
}
