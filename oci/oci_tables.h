/* Name <-> number tables for the string enums of runtime-spec. */
#ifndef HAVEN_OCI_TABLES_H
#define HAVEN_OCI_TABLES_H

#include <stddef.h>

int oci_rlimit_from_name (const char *name);
int oci_capability_from_name (const char *name);
const char *oci_capability_name (int cap);
int oci_capability_last (void);
int oci_sched_policy_from_name (const char *name);
int oci_ioprio_class_from_name (const char *name);
int oci_propagation_from_name (const char *name); /* MS_* flags */

/* Seccomp enums are kept as indexes into these tables, independent of
 * libseccomp, so the parser does not need libseccomp. */
enum
{
  OCI_SCMP_KILL,
  OCI_SCMP_KILL_PROCESS,
  OCI_SCMP_KILL_THREAD,
  OCI_SCMP_TRAP,
  OCI_SCMP_ERRNO,
  OCI_SCMP_TRACE,
  OCI_SCMP_ALLOW,
  OCI_SCMP_LOG,
  OCI_SCMP_NOTIFY,
};
int oci_seccomp_action_from_name (const char *name);
extern const char *const oci_seccomp_action_names[];
extern const size_t oci_seccomp_n_actions;

enum
{
  OCI_SCMP_CMP_NE = 1,
  OCI_SCMP_CMP_LT,
  OCI_SCMP_CMP_LE,
  OCI_SCMP_CMP_EQ,
  OCI_SCMP_CMP_GE,
  OCI_SCMP_CMP_GT,
  OCI_SCMP_CMP_MASKED_EQ,
};
int oci_seccomp_operator_from_name (const char *name);
extern const char *const oci_seccomp_operator_names[]; /* index = enum value */

int oci_seccomp_arch_known (const char *name);
extern const char *const oci_seccomp_arch_names[];
int oci_seccomp_flag_from_name (const char *name);
extern const char *const oci_seccomp_flag_names[];

extern const char *const oci_namespace_names[];

#endif
