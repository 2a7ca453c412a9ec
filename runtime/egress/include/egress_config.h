/* The `run.haven.egress` annotation: a sandbox's egress rules as the
 * policy layer hands them to the runtime (which knows no policies), one
 * JSON object:
 *
 *   {"policy": "NAME", "connect": "engine" | "pasta",
 *    "allow": [{"cidr": "192.0.2.0/24", "ports": "443" | "1000-2000" | "any"}, ...],
 *    "deny": [same],
 *    "names": [{"name": "api.github.com", "subdomains": false, "ports": "443"}, ...],
 *    "deny_names": [same],
 *    "ask_names": [same], "ask_all": true, "ask_timeout_ms": 30000}
 *
 * The ask members only when the policy asks (network.ask, mode: ask): a
 * name no allow rule covers that an ask rule covers (or any, ask_all)
 * is held by the resolver until someone answers (egress_ask.h);
 * ask_timeout_ms is then 1000-600000.
 *
 * One entry per port range: a bare name in a policy (TCP 443 and 80)
 * is two entries.  "connect" says who gives the namespace its way out:
 * the engine (Docker, Podman made the netns and its interfaces) or pasta
 * (`haven run`, started once the table is in place).  Every field is
 * checked: unknown keys, a CIDR with host bits, a name that is not lower
 * case without a trailing dot are errors naming the JSON path
 * (`config.json: .annotations["run.haven.egress"].allow[2].cidr: ...`),
 * never skipped: a rule that cannot be read must not be dropped. */
#ifndef HAVEN_EGRESS_CONFIG_H
#define HAVEN_EGRESS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "egress_ranges.h"
#include "error.h"

/* The table every sandbox gets, and the values the resolver shares with
 * it (docs/egress.md, "The table"). */
#define HV_EGRESS_TABLE_NAME "haven"
#define HV_EGRESS_RESOLVER_MARK 0x6876u /* "hv" */
/* The sandbox's own packets, marked by the table (egress_table.h). */
#define HV_EGRESS_SANDBOX_MARK 0x6877u
#define HV_EGRESS_NFLOG_GROUP 4207

/* egress_resolver.h; not included here, so that the policy layer's
 * files that name only the annotation do not get <sys/socket.h>. */
struct hv_egress_name_rule;

typedef enum hv_egress_connect
{
  HV_EGRESS_CONNECT_ENGINE,
  HV_EGRESS_CONNECT_PASTA,
} hv_egress_connect;

typedef struct hv_egress_config
{
  char *policy;
  hv_egress_connect connect;
  hv_egress_cidr *allow, *deny;
  size_t n_allow, n_deny;
  /* Names are owned (hv_egress_config_free frees them). */
  struct hv_egress_name_rule *names, *deny_names;
  size_t n_names, n_deny_names;
  struct hv_egress_name_rule *ask_names;
  size_t n_ask_names;
  bool ask_all;
  unsigned ask_timeout_ms; /* 0: nothing asks */
} hv_egress_config;

/* doc names the document in errors ("config.json"). */
int hv_egress_config_parse (const char *json, const char *doc, hv_egress_config **out, hv_error **err);
void hv_egress_config_free (hv_egress_config *c);
/* The annotation's text (a new string); parses back to the same config. */
char *hv_egress_config_generate (const hv_egress_config *c);
/* Append one rule (copies name); for builders of a config. */
void hv_egress_config_add_cidr (hv_egress_cidr **v, size_t *n, const hv_egress_cidr *c);
void hv_egress_config_add_name (struct hv_egress_name_rule **v, size_t *n, const char *name, bool subdomains,
                                uint16_t port_min, uint16_t port_max);
const char *hv_egress_connect_name (hv_egress_connect c);
#endif
