/* What `haven doctor` found (doctor_cmd.c gathers it), and its two
 * forms: lines for a person, one per item, and a JSON document for
 * scripts.  Writing them reads nothing but the report (the unit test
 * builds reports by hand). */
#ifndef HAVEN_DOCTOR_REPORT_H
#define HAVEN_DOCTOR_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "host_probe.h"

enum hv_doctor_verdict
{
  HV_DOCTOR_RUNS,    /* every rule enforced */
  HV_DOCTOR_WEAKER,  /* runs, some rules in the weaker form the policy accepts */
  HV_DOCTOR_REFUSED, /* haven run refuses to start: rules named */
  HV_DOCTOR_INVALID, /* the policy does not load or compile */
};

/* One rule of a policy that is not enforced as written here. */
struct hv_doctor_rule
{
  char *rule; /* the policy's words ("filesystem.tmpfs /tmp") */
  char *how;  /* the weaker form, or why it is refused */
};

struct hv_doctor_policy
{
  char *name;
  char *file;            /* NULL when it did not load */
  bool namespaces;       /* the isolation the verdict is for */
  enum hv_doctor_verdict verdict;
  char *error;           /* INVALID: the load or compile error */
  struct hv_doctor_rule *weaker, *refused;
  size_t n_weaker, n_refused;
  const char *egress;    /* an allowlist's way out ("pasta", "forwarder"); NULL otherwise */
};

/* The mechanisms, in the order they are printed. */
enum hv_doctor_mech
{
  HV_DOCTOR_NAMESPACES,
  HV_DOCTOR_USERNS,
  HV_DOCTOR_MOUNT,
  HV_DOCTOR_LANDLOCK,
  HV_DOCTOR_SECCOMP,
  HV_DOCTOR_CGROUPS,
  HV_DOCTOR_NFTABLES,
  HV_DOCTOR_TUN,
  HV_DOCTOR_PASTA,
  HV_DOCTOR_N_MECH,
};

struct hv_doctor_report
{
  const char *container; /* hv_probe_container's answer; NULL: a host */
  uid_t uid;
  hv_probe mech[HV_DOCTOR_N_MECH]; /* LANDLOCK's is made from landlock_abi */
  int landlock_abi;                /* -1: none */
  bool namespaces;                 /* the isolation haven run uses here */
  char isolation_why[256];
  const char *egress; /* "pasta" or "forwarder"; NULL: the way could not be told */
  char egress_why[256];
  const char *project; /* the project the policies were compiled for */
  char *project_note;  /* why that is not the current directory, or NULL */
  struct hv_doctor_policy *policies;
  size_t n_policies;
};

/* The mechanism's name as printed and as its JSON key. */
const char *hv_doctor_mech_name (enum hv_doctor_mech m);
const char *hv_doctor_mech_key (enum hv_doctor_mech m);
/* The Landlock line's probe from an ABI: which parts the kernel has
 * (files ABI 1, refer 2, truncate 3, network 4, device ioctl 5, scopes 6,
 * audit logging 7) and which it lacks. */
void hv_doctor_landlock_probe (int abi, hv_probe *out);

void hv_doctor_print (FILE *out, const struct hv_doctor_report *r);
/* The report as one JSON object (a new string). */
char *hv_doctor_json (const struct hv_doctor_report *r);

void hv_doctor_policy_release (struct hv_doctor_policy *p);
void hv_doctor_rules_add (struct hv_doctor_rule **v, size_t *n, const char *rule, const char *how);
#endif
