/* `haven doctor`'s report in words and in JSON (doctor_report.h). */
#include "config.h"
#include "doctor_report.h"

#include <stdlib.h>
#include <string.h>

#include "json_gen.h"
#include "utils.h"

static const char *const mech_names[HV_DOCTOR_N_MECH] = {
  [HV_DOCTOR_NAMESPACES] = "namespaces", [HV_DOCTOR_USERNS] = "user namespaces",
  [HV_DOCTOR_MOUNT] = "mount",           [HV_DOCTOR_LANDLOCK] = "Landlock",
  [HV_DOCTOR_SECCOMP] = "seccomp",       [HV_DOCTOR_CGROUPS] = "cgroups",
  [HV_DOCTOR_NFTABLES] = "nftables",     [HV_DOCTOR_TUN] = "/dev/net/tun",
  [HV_DOCTOR_PASTA] = "pasta",
};

static const char *const mech_keys[HV_DOCTOR_N_MECH] = {
  [HV_DOCTOR_NAMESPACES] = "namespaces", [HV_DOCTOR_USERNS] = "user_namespaces",
  [HV_DOCTOR_MOUNT] = "mount",           [HV_DOCTOR_LANDLOCK] = "landlock",
  [HV_DOCTOR_SECCOMP] = "seccomp",       [HV_DOCTOR_CGROUPS] = "cgroups",
  [HV_DOCTOR_NFTABLES] = "nftables",     [HV_DOCTOR_TUN] = "tun",
  [HV_DOCTOR_PASTA] = "pasta",
};

const char *
hv_doctor_mech_name (enum hv_doctor_mech m)
{
  return mech_names[m];
}

const char *
hv_doctor_mech_key (enum hv_doctor_mech m)
{
  return mech_keys[m];
}

/* Landlock's parts by the ABI that brought them. */
static const char *const landlock_parts[] = {
  "files",                                       /* 1 */
  "refer (moving files between directories)",    /* 2 */
  "truncate",                                    /* 3 */
  "network (TCP bind and connect)",              /* 4 */
  "device ioctl",                                /* 5 */
  "scopes (abstract Unix sockets and signals)",  /* 6 */
  "audit logging of denials",                    /* 7 */
};
#define N_LANDLOCK_PARTS ((int) (sizeof (landlock_parts) / sizeof (landlock_parts[0])))

void
hv_doctor_landlock_probe (int abi, hv_probe *out)
{
  out->ok = abi >= 1;
  if (abi < 1)
    {
      snprintf (out->why, sizeof (out->why),
                "the kernel has no Landlock, or it is not enabled (lsm=), or a seccomp profile refuses it");
      return;
    }
  size_t len = (size_t) snprintf (out->why, sizeof (out->why), "ABI %d:", abi);
  for (int i = 0; i < N_LANDLOCK_PARTS && i < abi && len < sizeof (out->why); i++)
    len += (size_t) snprintf (out->why + len, sizeof (out->why) - len, "%s %s", i ? "," : "", landlock_parts[i]);
  for (int i = abi; i < N_LANDLOCK_PARTS && len < sizeof (out->why); i++)
    len += (size_t) snprintf (out->why + len, sizeof (out->why) - len, "%s%s (ABI %d)",
                              i == abi ? "; missing: " : ", ", landlock_parts[i], i + 1);
}

void
hv_doctor_rules_add (struct hv_doctor_rule **v, size_t *n, const char *rule, const char *how)
{
  *v = xrealloc (*v, (*n + 1) * sizeof (**v));
  (*v)[*n].rule = xstrdup (rule ? rule : "");
  (*v)[*n].how = xstrdup (how ? how : "");
  (*n)++;
}

static void
rules_free (struct hv_doctor_rule *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (v[i].rule);
      free (v[i].how);
    }
  free (v);
}

void
hv_doctor_policy_release (struct hv_doctor_policy *p)
{
  free (p->name);
  free (p->file);
  free (p->error);
  rules_free (p->weaker, p->n_weaker);
  rules_free (p->refused, p->n_refused);
  memset (p, 0, sizeof (*p));
}

static const char *
container_words (const char *c)
{
  if (c == NULL)
    return "the host (no container found)";
  if (strcmp (c, "docker") == 0)
    return "a Docker container";
  if (strcmp (c, "podman") == 0)
    return "a Podman container";
  if (strcmp (c, "kubernetes") == 0)
    return "a Kubernetes pod";
  if (strcmp (c, "devcontainer") == 0)
    return "a devcontainer";
  return "a container";
}

static void
print_policy (FILE *out, const struct hv_doctor_report *r, const struct hv_doctor_policy *p)
{
  const char *n = p->name;
  switch (p->verdict)
    {
    case HV_DOCTOR_INVALID:
      fprintf (out, "  %s: cannot be used: %s\n", n, p->error ? p->error : "");
      return;
    case HV_DOCTOR_REFUSED:
      /* One line per refused rule: each is something to act on. */
      for (size_t i = 0; i < p->n_refused; i++)
        fprintf (out, "  %s: refused here: %s: %s\n", n, p->refused[i].rule, p->refused[i].how);
      return;
    case HV_DOCTOR_WEAKER:
      fprintf (out, "  %s: runs without namespaces, %zu rule%s in a weaker form:", n, p->n_weaker,
               p->n_weaker == 1 ? "" : "s");
      for (size_t i = 0; i < p->n_weaker; i++)
        fprintf (out, "%s %s", i ? "," : "", p->weaker[i].rule);
      fprintf (out, "\n");
      for (size_t i = 0; i < p->n_weaker; i++)
        fprintf (out, "    %s: %s\n", p->weaker[i].rule, p->weaker[i].how);
      break;
    case HV_DOCTOR_RUNS:
      fprintf (out, "  %s: runs %s\n", n, p->namespaces ? "(namespaces)" : "without namespaces, every rule enforced");
      break;
    }
  if (p->egress)
    fprintf (out, "    its allowlist goes out through %s\n", p->egress);
  (void) r;
}

void
hv_doctor_print (FILE *out, const struct hv_doctor_report *r)
{
  fprintf (out, "haven doctor: uid %u in %s\n", (unsigned) r->uid, container_words (r->container));
  fprintf (out, "What this %s offers:\n", r->container ? "container" : "host");
  for (int m = 0; m < HV_DOCTOR_N_MECH; m++)
    {
      const hv_probe *p = &r->mech[m];
      fprintf (out, "  %-16s %s%s%s\n", mech_names[m], p->ok ? "ok" : "missing", p->why[0] ? ": " : "", p->why);
    }
  fprintf (out, "haven run uses: %s%s%s\n", r->namespaces ? "namespaces" : "Landlock and seccomp only (no namespaces)",
           r->isolation_why[0] ? ": " : "", r->isolation_why);
  if (r->egress)
    fprintf (out, "Allowlists go out through: %s%s%s\n", r->egress, r->egress_why[0] ? ": " : "", r->egress_why);
  else
    fprintf (out, "Allowlists go out through: %s\n", r->egress_why);
  fprintf (out, "Policies, for the project %s%s%s%s:\n", r->project ? r->project : "(none)",
           r->project_note ? " (" : "", r->project_note ? r->project_note : "", r->project_note ? ")" : "");
  for (size_t i = 0; i < r->n_policies; i++)
    print_policy (out, r, &r->policies[i]);
}

static const char *const verdict_keys[] = {
  [HV_DOCTOR_RUNS] = "runs",
  [HV_DOCTOR_WEAKER] = "weaker",
  [HV_DOCTOR_REFUSED] = "refused",
  [HV_DOCTOR_INVALID] = "invalid",
};

static void
gen_nullable (yajl_gen g, const char *key, const char *value)
{
  jg_str (g, key);
  if (value)
    jg_utf8 (g, value);
  else
    yajl_gen_null (g);
}

static void
gen_rules (yajl_gen g, const char *key, const struct hv_doctor_rule *v, size_t n)
{
  jg_str (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (g);
      jg_kv_utf8 (g, "rule", v[i].rule);
      jg_kv_utf8 (g, "how", v[i].how);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static void
gen_policy (yajl_gen g, const struct hv_doctor_policy *p)
{
  yajl_gen_map_open (g);
  jg_kv_utf8 (g, "name", p->name);
  gen_nullable (g, "file", p->file);
  jg_kv (g, "verdict", verdict_keys[p->verdict]);
  jg_kv (g, "isolation", p->namespaces ? "namespaces" : "landlock");
  gen_nullable (g, "error", p->error);
  gen_rules (g, "weaker", p->weaker, p->n_weaker);
  gen_rules (g, "refused", p->refused, p->n_refused);
  gen_nullable (g, "egress", p->egress);
  yajl_gen_map_close (g);
}

char *
hv_doctor_json (const struct hv_doctor_report *r)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    abort ();
  yajl_gen_map_open (g);
  jg_str (g, "uid");
  yajl_gen_integer (g, (long long) r->uid);
  gen_nullable (g, "container", r->container);
  jg_str (g, "mechanisms");
  yajl_gen_map_open (g);
  for (int m = 0; m < HV_DOCTOR_N_MECH; m++)
    {
      jg_str (g, mech_keys[m]);
      yajl_gen_map_open (g);
      jg_str (g, "ok");
      yajl_gen_bool (g, r->mech[m].ok);
      jg_kv_utf8 (g, "why", r->mech[m].why);
      if (m == HV_DOCTOR_LANDLOCK)
        {
          jg_str (g, "abi");
          yajl_gen_integer (g, r->landlock_abi);
        }
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
  jg_kv (g, "isolation", r->namespaces ? "namespaces" : "landlock");
  jg_kv_utf8 (g, "isolation_why", r->isolation_why);
  gen_nullable (g, "egress", r->egress);
  jg_kv_utf8 (g, "egress_why", r->egress_why);
  gen_nullable (g, "project", r->project);
  gen_nullable (g, "project_note", r->project_note);
  jg_str (g, "policies");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < r->n_policies; i++)
    gen_policy (g, &r->policies[i]);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  return jg_finish (g);
}
