/* `haven doctor [--json] [--policy NAME|FILE]... [--project DIR]`: each
 * mechanism probed as a start would use it (host_probe.h), the isolation
 * and way out haven run picks here, and each policy's verdict, computed
 * by the code haven run uses: the policy compiled for the project, then,
 * without namespaces, the direct plan of its rules (direct_plan.h). */
#include "config.h"
#include "doctor_cmd.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "direct_plan.h"
#include "direct_run.h"
#include "doctor_report.h"
#include "egress_way.h"
#include "haven_help.h"
#include "host_probe.h"
#include "oci_spec.h"
#include "policy.h"
#include "policy_compile.h"
#include "policy_load.h"
#include "run_context.h"
#include "utils.h"

#define ISOLATION_ENV HV_ISOLATION_ENV

/* Text into one of the report's fixed buffers, cut to fit (a probe's
 * answer inside a longer sentence may not fit whole). */
static void
set_text (char *dst, size_t size, char *text)
{
  size_t n = strlen (text);
  if (n >= size)
    n = size - 1;
  memcpy (dst, text, n);
  dst[n] = '\0';
  free (text);
}

/* The mount line: hv_probe_namespaces mounts a tmpfs and a proc in the
 * namespaces it makes, so its answer tells whether mounts can be made:
 * its failed step when that was a mount, else no mount namespace. */
static void
mount_probe (const hv_probe *ns, hv_probe *out)
{
  out->ok = ns->ok;
  if (ns->ok)
    snprintf (out->why, sizeof (out->why), "a tmpfs and a proc mounted in new namespaces");
  else if (str_has_prefix (ns->why, "mount ") || str_has_prefix (ns->why, "make the mounts"))
    set_text (out->why, sizeof (out->why), xstrdup (ns->why));
  else
    snprintf (out->why, sizeof (out->why), "no mount namespace for the sandbox (see namespaces)");
}

static void
choose_isolation (struct hv_doctor_report *r)
{
  const char *v = getenv (ISOLATION_ENV);
  const hv_probe *ns = &r->mech[HV_DOCTOR_NAMESPACES];
  /* As haven run reads it (unset or empty: auto). */
  enum hv_isolation asked = HV_ISOLATION_AUTO;
  bool bad = v && v[0] && hv_isolation_parse (v, &asked) < 0;
  if (asked == HV_ISOLATION_LANDLOCK)
    {
      r->namespaces = false;
      snprintf (r->isolation_why, sizeof (r->isolation_why), ISOLATION_ENV "=landlock");
    }
  else if (asked == HV_ISOLATION_NAMESPACES)
    {
      r->namespaces = true;
      set_text (r->isolation_why, sizeof (r->isolation_why),
                xasprintf (ISOLATION_ENV "=namespaces%s%s",
                           ns->ok ? "" : ", but they cannot be made here, so haven run fails: ", ns->ok ? "" : ns->why));
    }
  else
    {
      r->namespaces = ns->ok;
      set_text (r->isolation_why, sizeof (r->isolation_why),
                xasprintf ("%s%s%s%s", ns->ok ? "they can be made here" : "namespaces cannot be made here: ",
                           ns->ok ? "" : ns->why, bad ? "; and haven run refuses " ISOLATION_ENV "=" : "",
                           bad ? v : ""));
    }
}

static void
choose_egress (struct hv_doctor_report *r)
{
  if (!r->namespaces)
    {
      /* Both ways out start in the sandbox's network namespace. */
      r->egress = NULL;
      snprintf (r->egress_why, sizeof (r->egress_why),
                "none without namespaces: an allowlist runs only in the weaker form best_effort network_ports "
                "accepts (TCP to its ports at any address)");
      return;
    }
  hv_egress_way w;
  cleanup_error hv_error *err = NULL;
  if (hv_egress_way_choose (getenv (HV_EGRESS_WAY_ENV), &w, r->egress_why, sizeof (r->egress_why), &err) < 0)
    {
      r->egress = NULL;
      set_text (r->egress_why, sizeof (r->egress_why), xstrdup (err->msg));
      return;
    }
  r->egress = hv_egress_way_name (w);
}

/* The limits a policy sets that need the sandbox's cgroup, in its words
 * ("resources.memory, resources.pids"), or NULL (resources.nofile is an
 * rlimit, resources.timeout haven's own timer). */
static char *
cgroup_limits (const hv_policy *p)
{
  char text[64] = "";
  if (p->memory.set)
    strcat (text, ", resources.memory");
  if (p->cpus_milli.set)
    strcat (text, ", resources.cpus");
  if (p->pids.set)
    strcat (text, ", resources.pids");
  return text[0] ? xstrdup (text + 2) : NULL;
}

/* With namespaces the rules hold as written; what can still stop a
 * start is the host's side: the cgroup for limits, nf_tables for an
 * allowlist's egress table. */
static void
verdict_namespaces (const struct hv_doctor_report *r, const hv_policy *p, struct hv_doctor_policy *out)
{
  const hv_probe *ns = &r->mech[HV_DOCTOR_NAMESPACES];
  if (!ns->ok)
    {
      /* Asked for (HAVEN_ISOLATION=namespaces) where they cannot be made:
       * haven run fails before any rule. */
      cleanup_free char *how = xasprintf ("they cannot be made here (%s); leave " ISOLATION_ENV
                                          " unset to run with Landlock and seccomp only",
                                          ns->why);
      hv_doctor_rules_add (&out->refused, &out->n_refused, ISOLATION_ENV "=namespaces", how);
    }
  cleanup_free char *limits = cgroup_limits (p);
  if (limits && !r->mech[HV_DOCTOR_CGROUPS].ok)
    {
      cleanup_free char *how = xasprintf ("needs a cgroup, and none can be made here (%s); run haven as root, or "
                                          "use a policy without memory, cpus and pids limits",
                                          r->mech[HV_DOCTOR_CGROUPS].why);
      hv_doctor_rules_add (&out->refused, &out->n_refused, limits, how);
    }
  if (p->net_mode == HV_NET_ALLOWLIST && !r->mech[HV_DOCTOR_NFTABLES].ok)
    {
      cleanup_free char *how = xasprintf ("the egress table needs nf_tables in the sandbox's network namespace (%s)",
                                          r->mech[HV_DOCTOR_NFTABLES].why);
      hv_doctor_rules_add (&out->refused, &out->n_refused, "network.allow", how);
    }
  out->verdict = out->n_refused ? HV_DOCTOR_REFUSED : HV_DOCTOR_RUNS;
}

static int
verdict_direct (const struct hv_doctor_report *r, const hv_policy *p, const struct hv_run_ctx *ctx,
                const oci_spec *spec, struct hv_doctor_policy *out, hv_error **err)
{
  cleanup_direct_plan hv_direct_plan plan = { 0 };
  if (hv_direct_plan_build (p, ctx, spec, r->landlock_abi, &plan, err) < 0)
    return -1;
  for (size_t i = 0; i < plan.n_rules; i++)
    {
      const hv_direct_rule *d = &plan.rules[i];
      if (d->verdict == HV_DIRECT_REFUSED)
        hv_doctor_rules_add (&out->refused, &out->n_refused, d->rule, d->how);
      else if (d->verdict == HV_DIRECT_WEAKER)
        hv_doctor_rules_add (&out->weaker, &out->n_weaker, d->rule, d->how);
    }
  out->verdict = out->n_refused ? HV_DOCTOR_REFUSED : out->n_weaker ? HV_DOCTOR_WEAKER : HV_DOCTOR_RUNS;
  return 0;
}

/* One policy's verdict: INVALID with the error when it does not load or
 * compile for the project. */
static void
check_policy (const struct hv_doctor_report *r, const char *name, struct hv_run_context *rc,
              struct hv_doctor_policy *out)
{
  cleanup_error hv_error *err = NULL;
  cleanup_policy hv_policy *p = NULL;
  cleanup_free char *json = NULL;
  cleanup_spec oci_spec *spec = NULL;
  out->name = xstrdup (name);
  out->namespaces = r->namespaces;
  if (hv_policy_load (name, &p, &err) < 0)
    goto invalid;
  free (out->name);
  out->name = xstrdup (p->name);
  out->file = p->file ? xstrdup (p->file) : NULL;
  if (hv_policy_compile (p, &rc->ctx, &json, &err) < 0
      || oci_spec_parse (json, strlen (json), "the compiled config", &spec, &err) < 0)
    goto invalid;
  if (r->namespaces)
    verdict_namespaces (r, p, out);
  else if (verdict_direct (r, p, &rc->ctx, spec, out, &err) < 0)
    goto invalid;
  /* Without namespaces an allowlist has no way out of its own (its
   * weaker form is ports at any address): only with them. */
  if (p->net_mode == HV_NET_ALLOWLIST && r->namespaces && out->verdict != HV_DOCTOR_REFUSED)
    out->egress = r->egress;
  return;
invalid:
  out->verdict = HV_DOCTOR_INVALID;
  out->error = xstrdup (err ? err->msg : "failed");
}

/* The project the policies are compiled for: --project, or the current
 * directory; where the current directory cannot be one (a home, /), an
 * empty scratch directory, said in the report.  *scratch: the directory
 * to remove afterwards. */
static int
project_context (const char *project_opt, struct hv_run_context *rc, struct hv_doctor_report *r, char **scratch,
                 hv_error **err)
{
  static char *cmd[] = { (char *) "sh", NULL };
  cleanup_error hv_error *here_err = NULL;
  if (hv_run_context_init (project_opt, cmd, rc, project_opt ? err : &here_err) == 0)
    goto done;
  if (project_opt)
    return hv_error_wrap (err, "--project %s", project_opt);
  hv_run_context_release (rc);
  memset (rc, 0, sizeof (*rc));
  const char *tmp = getenv ("TMPDIR");
  *scratch = xasprintf ("%s/haven-doctor-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
  if (mkdtemp (*scratch) == NULL)
    {
      int e = errno;
      free (steal_pointer (scratch));
      return hv_error_set (err, e, "the current directory cannot be a project (%s), and a scratch one cannot be "
                                   "made", here_err->msg);
    }
  r->project_note = xasprintf ("the current directory cannot be a project: %s; the verdicts are for an empty one",
                               here_err->msg);
  if (hv_run_context_init (*scratch, cmd, rc, err) < 0)
    return -1;
done:
  /* As haven policy compile: the host's root is mounted on the bundle's
   * rootfs, whose place does not change a verdict. */
  rc->ctx.rootfs = "rootfs";
  r->project = rc->project;
  return 0;
}

static void
probe_host (struct hv_doctor_report *r)
{
  r->uid = geteuid ();
  r->container = hv_probe_container ();
  hv_probe_namespaces (&r->mech[HV_DOCTOR_NAMESPACES]);
  hv_probe_user_namespace (&r->mech[HV_DOCTOR_USERNS]);
  mount_probe (&r->mech[HV_DOCTOR_NAMESPACES], &r->mech[HV_DOCTOR_MOUNT]);
  r->landlock_abi = hv_probe_landlock_abi ();
  hv_doctor_landlock_probe (r->landlock_abi, &r->mech[HV_DOCTOR_LANDLOCK]);
  hv_probe_seccomp (&r->mech[HV_DOCTOR_SECCOMP]);
  hv_probe_cgroups (&r->mech[HV_DOCTOR_CGROUPS]);
  hv_probe_nftables (&r->mech[HV_DOCTOR_NFTABLES]);
  hv_probe_tun (&r->mech[HV_DOCTOR_TUN]);
  hv_probe_pasta (&r->mech[HV_DOCTOR_PASTA]);
  choose_isolation (r);
  choose_egress (r);
}

int
hv_cmd_doctor (int argc, char **argv)
{
  static const struct hv_opt opts[] = { { "json", 0, false, 1 },
                                        { "policy", 'p', true, 2 },
                                        { "project", 0, true, 3 },
                                        { "help", 'h', false, 4 },
                                        { NULL, 0, false, 0 } };
  struct hv_opt_iter it = { argc, argv, 1, "haven doctor" };
  cleanup_error hv_error *err = NULL;
  cleanup_strv oci_strv names = { 0 };
  const char *project_opt = NULL;
  bool json = false;
  const char *arg;
  int id;
  while ((id = hv_opt_next (&it, opts, &arg, &err)) > 0)
    if (id == 1)
      json = true;
    else if (id == 2)
      oci_strv_push (&names, arg);
    else if (id == 3)
      project_opt = arg;
    else
      {
        hv_haven_usage (stdout, "doctor");
        return 0;
      }
  if (id < 0 || it.index < argc)
    {
      if (id < 0)
        fprintf (stderr, "%s\n", err ? err->msg : "haven doctor: bad option");
      else
        fprintf (stderr, "haven doctor: unexpected argument \"%s\"\n", argv[it.index]);
      hv_haven_usage (stderr, "doctor");
      return 2;
    }

  struct hv_doctor_report r = { 0 };
  cleanup_run_context struct hv_run_context rc = { 0 };
  cleanup_free char *scratch = NULL;
  if (project_context (project_opt, &rc, &r, &scratch, &err) < 0)
    {
      fprintf (stderr, "haven doctor: %s\n", err->msg);
      if (scratch)
        rmdir (scratch);
      free (r.project_note);
      return 2;
    }
  probe_host (&r);
  if (names.n == 0)
    hv_policy_names (&names);
  r.policies = xmalloc0 ((names.n ? names.n : 1) * sizeof (*r.policies));
  r.n_policies = names.n;
  for (size_t i = 0; i < names.n; i++)
    check_policy (&r, names.v[i], &rc, &r.policies[i]);

  if (json)
    {
      cleanup_free char *text = hv_doctor_json (&r);
      puts (text);
    }
  else
    hv_doctor_print (stdout, &r);
  fflush (stdout);

  for (size_t i = 0; i < r.n_policies; i++)
    hv_doctor_policy_release (&r.policies[i]);
  free (r.policies);
  free (r.project_note);
  if (scratch)
    rmdir (scratch);
  return 0;
}
