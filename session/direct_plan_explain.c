#include "config.h"
#include "direct_plan_explain.h"

#include <string.h>

#include "direct_plan.h"
#include "host_probe.h"
#include "run_context.h"
#include "utils.h"

static const char *
verdict_word (enum hv_direct_verdict v)
{
  switch (v)
    {
    case HV_DIRECT_ENFORCED:
      return "enforced";
    case HV_DIRECT_WEAKER:
      return "weaker";
    case HV_DIRECT_REFUSED:
      return "refused";
    }
  return "?";
}

/* The plan for this directory, compiled as `haven policy compile` does. */
static int
plan_here (const hv_policy *p, int abi, hv_direct_plan *plan, char **project, hv_error **err)
{
  static char *cmd[] = { (char *) "sh", NULL };
  cleanup_run_context struct hv_run_context rc = { 0 };
  cleanup_free char *json = NULL;
  cleanup_spec oci_spec *spec = NULL;
  if (hv_run_context_init (NULL, cmd, &rc, err) < 0)
    return -1;
  rc.ctx.rootfs = "rootfs";
  if (hv_policy_compile (p, &rc.ctx, &json, err) < 0
      || oci_spec_parse (json, strlen (json), "config.json", &spec, err) < 0
      || hv_direct_plan_build (p, &rc.ctx, spec, abi, plan, err) < 0)
    return -1;
  *project = xstrdup (rc.project);
  return 0;
}

void
hv_direct_plan_explain (const hv_policy *p, FILE *out)
{
  int abi = hv_probe_landlock_abi ();
  fprintf (out, "\nWithout namespaces (haven run --isolation landlock, or where namespaces cannot be made)\n");
  cleanup_direct_plan hv_direct_plan plan = { 0 };
  cleanup_free char *project = NULL;
  cleanup_error hv_error *err = NULL;
  if (plan_here (p, abi, &plan, &project, &err) < 0)
    {
      fprintf (out, "  Not planned for this directory: %s\n", err->msg);
      return;
    }
  if (abi >= 1)
    fprintf (out, "  On this host (Landlock ABI %d), with %s as the project:\n", abi, project);
  else
    fprintf (out, "  On this host (no Landlock), with %s as the project:\n", project);
  for (size_t i = 0; i < p->best_effort.n; i++)
    {
      const char *what = hv_policy_best_effort_what (p->best_effort.v[i]);
      fprintf (out, "  best_effort %s: %s\n", p->best_effort.v[i], what ? what : "?");
    }
  for (size_t i = 0; i < plan.n_rules; i++)
    fprintf (out, "  %-8s  %s: %s\n", verdict_word (plan.rules[i].verdict), plan.rules[i].rule, plan.rules[i].how);
  if (plan.n_refused)
    fprintf (out, "  It would not start: %zu rule%s refused (best_effort lists what a policy may accept instead; "
                  "haven doctor says what this host offers).\n",
             plan.n_refused, plan.n_refused == 1 ? "" : "s");
  else if (plan.n_weaker)
    fprintf (out, "  It would start, %zu rule%s weaker as said above.\n", plan.n_weaker, plan.n_weaker == 1 ? "" : "s");
  else
    fprintf (out, "  It would start with every rule enforced as said above.\n");
}
