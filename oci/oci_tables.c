#include "config.h"
#include "oci_tables.h"

#include <linux/capability.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "array_size.h"
#include "oci_spec.h"


static int
lookup (const char *const *names, size_t n, const char *name)
{
  if (name == NULL)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (names[i] && strcmp (names[i], name) == 0)
      return (int) i;
  return -1;
}

static const char *const rlimit_names[] = {
  [RLIMIT_CPU] = "RLIMIT_CPU",         [RLIMIT_FSIZE] = "RLIMIT_FSIZE",
  [RLIMIT_DATA] = "RLIMIT_DATA",       [RLIMIT_STACK] = "RLIMIT_STACK",
  [RLIMIT_CORE] = "RLIMIT_CORE",       [RLIMIT_RSS] = "RLIMIT_RSS",
  [RLIMIT_NPROC] = "RLIMIT_NPROC",     [RLIMIT_NOFILE] = "RLIMIT_NOFILE",
  [RLIMIT_MEMLOCK] = "RLIMIT_MEMLOCK", [RLIMIT_AS] = "RLIMIT_AS",
  [RLIMIT_LOCKS] = "RLIMIT_LOCKS",     [RLIMIT_SIGPENDING] = "RLIMIT_SIGPENDING",
  [RLIMIT_MSGQUEUE] = "RLIMIT_MSGQUEUE", [RLIMIT_NICE] = "RLIMIT_NICE",
  [RLIMIT_RTPRIO] = "RLIMIT_RTPRIO",   [RLIMIT_RTTIME] = "RLIMIT_RTTIME",
};

int
oci_rlimit_from_name (const char *name)
{
  return lookup (rlimit_names, N_ELEMENTS (rlimit_names), name);
}

static const char *const capability_names[] = {
  "CAP_CHOWN",           "CAP_DAC_OVERRIDE",   "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
  "CAP_FSETID",          "CAP_KILL",           "CAP_SETGID",          "CAP_SETUID",
  "CAP_SETPCAP",         "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
  "CAP_NET_ADMIN",       "CAP_NET_RAW",        "CAP_IPC_LOCK",        "CAP_IPC_OWNER",
  "CAP_SYS_MODULE",      "CAP_SYS_RAWIO",      "CAP_SYS_CHROOT",      "CAP_SYS_PTRACE",
  "CAP_SYS_PACCT",       "CAP_SYS_ADMIN",      "CAP_SYS_BOOT",        "CAP_SYS_NICE",
  "CAP_SYS_RESOURCE",    "CAP_SYS_TIME",       "CAP_SYS_TTY_CONFIG",  "CAP_MKNOD",
  "CAP_LEASE",           "CAP_AUDIT_WRITE",    "CAP_AUDIT_CONTROL",   "CAP_SETFCAP",
  "CAP_MAC_OVERRIDE",    "CAP_MAC_ADMIN",      "CAP_SYSLOG",          "CAP_WAKE_ALARM",
  "CAP_BLOCK_SUSPEND",   "CAP_AUDIT_READ",     "CAP_PERFMON",         "CAP_BPF",
  "CAP_CHECKPOINT_RESTORE",
};

int
oci_capability_from_name (const char *name)
{
  return lookup (capability_names, N_ELEMENTS (capability_names), name);
}

const char *
oci_capability_name (int cap)
{
  if (cap < 0 || (size_t) cap >= N_ELEMENTS (capability_names))
    return NULL;
  return capability_names[cap];
}

int
oci_capability_last (void)
{
  return (int) N_ELEMENTS (capability_names) - 1;
}

static const char *const sched_names[] = {
  "SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH", "SCHED_ISO", "SCHED_IDLE", "SCHED_DEADLINE",
};

int
oci_sched_policy_from_name (const char *name)
{
  return lookup (sched_names, N_ELEMENTS (sched_names), name);
}

static const char *const ioprio_names[] = { NULL, "IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE", "IOPRIO_CLASS_IDLE" };

int
oci_ioprio_class_from_name (const char *name)
{
  return lookup (ioprio_names, N_ELEMENTS (ioprio_names), name);
}

int
oci_propagation_from_name (const char *name)
{
  static const struct
  {
    const char *name;
    int flags;
  } t[] = {
    { "private", MS_PRIVATE },   { "rprivate", MS_PRIVATE | MS_REC },
    { "slave", MS_SLAVE },       { "rslave", MS_SLAVE | MS_REC },
    { "shared", MS_SHARED },     { "rshared", MS_SHARED | MS_REC },
    { "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
  };
  if (name == NULL)
    return -1;
  for (size_t i = 0; i < N_ELEMENTS (t); i++)
    if (strcmp (t[i].name, name) == 0)
      return t[i].flags;
  return -1;
}

const char *const oci_seccomp_action_names[] = {
  [OCI_SCMP_KILL] = "SCMP_ACT_KILL",   [OCI_SCMP_KILL_PROCESS] = "SCMP_ACT_KILL_PROCESS",
  [OCI_SCMP_KILL_THREAD] = "SCMP_ACT_KILL_THREAD", [OCI_SCMP_TRAP] = "SCMP_ACT_TRAP",
  [OCI_SCMP_ERRNO] = "SCMP_ACT_ERRNO", [OCI_SCMP_TRACE] = "SCMP_ACT_TRACE",
  [OCI_SCMP_ALLOW] = "SCMP_ACT_ALLOW", [OCI_SCMP_LOG] = "SCMP_ACT_LOG",
  [OCI_SCMP_NOTIFY] = "SCMP_ACT_NOTIFY",
};
const size_t oci_seccomp_n_actions = N_ELEMENTS (oci_seccomp_action_names);

int
oci_seccomp_action_from_name (const char *name)
{
  return lookup (oci_seccomp_action_names, N_ELEMENTS (oci_seccomp_action_names), name);
}

const char *const oci_seccomp_operator_names[] = {
  NULL,
  [OCI_SCMP_CMP_NE] = "SCMP_CMP_NE", [OCI_SCMP_CMP_LT] = "SCMP_CMP_LT", [OCI_SCMP_CMP_LE] = "SCMP_CMP_LE",
  [OCI_SCMP_CMP_EQ] = "SCMP_CMP_EQ", [OCI_SCMP_CMP_GE] = "SCMP_CMP_GE", [OCI_SCMP_CMP_GT] = "SCMP_CMP_GT",
  [OCI_SCMP_CMP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ", NULL,
};

int
oci_seccomp_operator_from_name (const char *name)
{
  return lookup (oci_seccomp_operator_names, OCI_SCMP_CMP_MASKED_EQ + 1, name);
}

const char *const oci_seccomp_arch_names[] = {
  "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",   "SCMP_ARCH_X32",      "SCMP_ARCH_ARM",
  "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS",     "SCMP_ARCH_MIPS64",   "SCMP_ARCH_MIPS64N32",
  "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
  "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",  "SCMP_ARCH_S390",     "SCMP_ARCH_S390X",
  "SCMP_ARCH_PARISC",  "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",  "SCMP_ARCH_LOONGARCH64",
  "SCMP_ARCH_M68K",    "SCMP_ARCH_SH",       "SCMP_ARCH_SHEB",     NULL,
};

int
oci_seccomp_arch_known (const char *name)
{
  return lookup (oci_seccomp_arch_names, N_ELEMENTS (oci_seccomp_arch_names) - 1, name);
}

const char *const oci_seccomp_flag_names[] = {
  "SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
  "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", NULL,
};

int
oci_seccomp_flag_from_name (const char *name)
{
  return lookup (oci_seccomp_flag_names, 4, name);
}

static const struct
{
  const char *name;
  int type;
} namespace_table[] = {
  { "pid", CLONE_NEWPID },       { "network", CLONE_NEWNET }, { "mount", CLONE_NEWNS },
  { "ipc", CLONE_NEWIPC },       { "uts", CLONE_NEWUTS },     { "user", CLONE_NEWUSER },
  { "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME },
};

const char *const oci_namespace_names[] = { "pid", "network", "mount", "ipc", "uts", "user", "cgroup", "time", NULL };

int
oci_namespace_type_from_name (const char *name)
{
  for (size_t i = 0; i < N_ELEMENTS (namespace_table); i++)
    if (strcmp (namespace_table[i].name, name) == 0)
      return namespace_table[i].type;
  return -1;
}

const char *
oci_namespace_name (int type)
{
  for (size_t i = 0; i < N_ELEMENTS (namespace_table); i++)
    if (namespace_table[i].type == type)
      return namespace_table[i].name;
  return "unknown";
}
