#include "config.h"
#include "run_learn.h"

#include <string.h>

#include <sys/socket.h>

#include "audit_monitor.h"
#include "policy_network.h"

/* Under allow_exec or block_shell Landlock refuses execs (and writes in a
 * writable mount outside the writable paths); it tells only the kernel's
 * audit (runtime/monitor/landlock_audit.h). */
static bool
exec_rules (const hv_policy *p)
{
  return p->allow_exec.n > 0 || p->block_shell.value;
}

/* Does an allow CIDR reach 240.0.0.0/8, where the resolver's sinkholes
 * are (runtime/egress/egress_learn.c turns them off then)? */
static bool
allow_reaches_sinkholes (const hv_policy *p)
{
  for (size_t i = 0; i < p->net_allow.n; i++)
    {
      const hv_net_rule *r = &p->net_allow.v[i];
      if (r->kind != HV_NET_RULE_CIDR || r->family != AF_INET)
        continue;
      unsigned len = r->prefix < 8 ? r->prefix : 8;
      if (len == 0 || ((unsigned) r->addr[0] >> (8 - len)) == (240u >> (8 - len)))
        return true;
    }
  return false;
}

int
hv_run_learn_prepare (hv_policy *p, bool direct, FILE *out, hv_error **err)
{
  if (direct)
    return hv_error_set (err, 0,
                         "haven run --learn: without namespaces (--isolation landlock, or where they cannot be made) "
                         "no refusal is recorded (no seccomp listener, no Landlock audit reader): there would be "
                         "nothing to learn");
  p->learn = true;
  /* Under network none nothing is refused by name (the sandbox has no
   * resolver to ask), so nothing could be learnt of its hosts.  The run
   * is made an allowlist of nothing instead, which widens nothing:
   *   - no name is listed, so haven's resolver refuses every name before
   *     any upstream query (egress_decide.c: an unlisted name is refused
   *     whatever its type) and learn mode answers it with a sinkhole in
   *     240.0.0.0/8, which is never pinned: the sandbox's table refuses
   *     every connect (recorded as net-denied with the name and port);
   *   - the way out is haven's forwarder, never pasta (run_steps.c): the
   *     namespace keeps loopback as its only interface, as under none;
   *     its routes lead to lo, the table sends port 53 to haven's
   *     resolver and every other connect to a non-loopback address is
   *     refused before the forwarder (which checks again: no allow CIDR,
   *     no pin) could relay it;
   *   - what none gives and this does not: /etc/nsswitch.conf's hosts:
   *     line limited to files (names must reach haven's resolver to be
   *     recorded; /etc/hosts still answers first), and the namespace is
   *     not checked to hold only loopback (no engine adds to haven run's);
   *     npm_config_fetch_retries=0, PIP_RETRIES=0 and CARGO_NET_RETRY=0
   *     stay (nothing can succeed, so retrying only waits: offline.c). */
  if (p->net_mode == HV_NET_NONE || p->net_mode == HV_NET_UNSET)
    {
      p->net_mode = HV_NET_ALLOWLIST;
      p->learn_closed = true;
      fprintf (out, "haven: learn: the policy \"%s\" has no network (network.mode: none): this run is an allowlist "
                    "of nothing instead, so that names are recorded: haven's resolver answers every name with a "
                    "sinkhole and asks no server, every connect is refused, the sandbox's only interface is "
                    "loopback (haven's forwarder, never pasta)\n",
               p->name);
    }
  if (p->audit_log == NULL || p->audit_log[0] == '\0')
    {
      free (p->audit_log);
      p->audit_log = xstrdup (HV_LEARN_DEFAULT_TRAIL);
      fprintf (out, "haven: learn: the policy \"%s\" keeps no trail: this run writes its records to %s\n", p->name,
               HV_LEARN_DEFAULT_TRAIL);
    }
  const char *unseen = exec_rules (p) ? hv_audit_landlock_unseen (300) : NULL;
  fprintf (out, "haven: learn: recorded: denied system calls%s%s; the policy is \"%s\" exactly, nothing is "
                "widened\n",
           p->net_mode == HV_NET_ALLOWLIST ? ", refused names and connects" : "",
           exec_rules (p) && unseen == NULL ? ", programs allow_exec/block_shell refuse (Landlock, through the kernel's audit)"
                                                : "", p->name);
  fprintf (out, "haven: learn: not seen, so haven policy suggest cannot learn them: reads of hidden paths "
                "(filesystem.block, the hidden home: they read as empty or missing, nothing is refused) and writes "
                "outside the writable paths (read-only mounts answer EROFS before anything can record it)\n");
  if (exec_rules (p))
    {
      if (unseen)
        fprintf (out, "haven: learn: not seen: programs allow_exec/block_shell refuse (Landlock tells only the "
                      "kernel's audit): %s\n",
                 unseen);
      if (p->block_shell.value)
        fprintf (out, "haven: learn: not seen: a shell block_shell masks (a device node: the kernel refuses it "
                      "before Landlock is asked)\n");
    }
  if (p->net_mode == HV_NET_ALLOWLIST && !allow_reaches_sinkholes (p))
    fprintf (out, "haven: learn: a name the policy does not list resolves to a sinkhole address in 240.0.0.0/8 "
                  "that no connect reaches (refused and recorded with its port)\n");
  else if (p->net_mode == HV_NET_ALLOWLIST)
    fprintf (out, "haven: learn: not seen: the port a refused name would have been reached on (an allow CIDR of "
                  "the policy reaches 240.0.0.0/8, where the sinkholes would be, so refused names fail as usual): "
                  "haven policy suggest allows such a name on TCP 443 and 80 and says so\n");
  return 0;
}
