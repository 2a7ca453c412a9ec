/* System-call filters of a sandbox without namespaces.  The host's
 * network namespace is the sandbox's, so the socket families it may open
 * are its wall: only TCP (which Landlock's network rules then hold to
 * the plan's ports), netlink, and Unix or UDP sockets where the plan
 * allows them.  Everything else fails with EACCES. */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "direct_run_priv.h"
#include "haven_annotations.h"
#include "oci_tables.h"
#include "seccomp_arch.h"
#include "seccomp_filter.h"
#include "utils.h"

#define MAX_RULES 256
#define SOCK_TYPE_MASK_NR 0xfULL
#define INT_MASK 0xffffffffULL
/* Families the kernel knows are below this (AF_MAX is 46 today). */
#define FAMILY_LIMIT 64
#define MFD_EXEC_FLAG 0x10ULL
#define MFD_NOEXEC_SEAL_FLAG 0x8ULL

struct filter
{
  oci_seccomp sc;
  oci_seccomp_syscall rules[MAX_RULES];
  struct oci_seccomp_arg args[MAX_RULES][3];
  char *names[MAX_RULES][1];
};

static void
deny (struct filter *f, const char *name, int e, size_t n_args, const struct oci_seccomp_arg *args)
{
  if (f->sc.n_syscalls >= MAX_RULES)
    abort (); /* a programming error: the table below is fixed */
  size_t i = f->sc.n_syscalls++;
  f->names[i][0] = (char *) name;
  if (n_args > 0) /* args may be NULL then, which memcpy may not be given */
    memcpy (f->args[i], args, n_args * sizeof (*args));
  f->rules[i] = (oci_seccomp_syscall){ .n = 1,
                                       .names = f->names[i],
                                       .action = OCI_SCMP_ERRNO,
                                       .action_name = (char *) "SCMP_ACT_ERRNO",
                                       .errno_ret = { .set = true, .value = (uint64_t) e },
                                       .n_args = n_args,
                                       .args = f->args[i] };
}

static struct oci_seccomp_arg
masked (unsigned index, uint64_t mask, uint64_t bits)
{
  return (struct oci_seccomp_arg){ .index = index, .value = mask, .value_two = bits, .op = SCMP_CMP_MASKED_EQ };
}

static struct oci_seccomp_arg
cmp (unsigned index, int op, uint64_t value)
{
  return (struct oci_seccomp_arg){ .index = index, .value = value, .op = op };
}

/* Under family, type: only the listed types, and each only with
 * protocol 0 or its own (TCP for a stream, UDP for a datagram). */
static void
deny_types (struct filter *f, uint64_t family, bool udp)
{
  for (uint64_t t = 0; t <= SOCK_TYPE_MASK_NR; t++)
    {
      if (t == SOCK_STREAM || (udp && t == SOCK_DGRAM))
        continue;
      struct oci_seccomp_arg a[] = { masked (0, INT_MASK, family), masked (1, SOCK_TYPE_MASK_NR, t) };
      deny (f, "socket", EACCES, 2, a);
    }
  struct
  {
    uint64_t type, proto;
    bool on;
  } kinds[] = { { SOCK_STREAM, IPPROTO_TCP, true }, { SOCK_DGRAM, IPPROTO_UDP, udp } };
  for (size_t k = 0; k < N_ELEMENTS (kinds); k++)
    {
      if (!kinds[k].on)
        continue;
      struct oci_seccomp_arg above[] = { masked (0, INT_MASK, family), masked (1, SOCK_TYPE_MASK_NR, kinds[k].type),
                                         cmp (2, SCMP_CMP_GT, kinds[k].proto) };
      deny (f, "socket", EACCES, 3, above);
      for (uint64_t p = 1; p < kinds[k].proto; p++)
        {
          struct oci_seccomp_arg a[] = { masked (0, INT_MASK, family), masked (1, SOCK_TYPE_MASK_NR, kinds[k].type),
                                         masked (2, INT_MASK, p) };
          deny (f, "socket", EACCES, 3, a);
        }
    }
}

/* Exec rules hold only for files Landlock sees: a memory file that may
 * be executed is outside them.  The namespaced sandbox relies on a
 * sysctl of its own pid namespace for that (as root); here there is
 * none, so the filter refuses such memory files whenever the spec's
 * profile shows exec rules (it filters memfd_create then). */
static bool
spec_filters_memfds (const oci_spec *spec)
{
  const oci_seccomp *sc = &spec->linux_cfg.seccomp;
  for (size_t i = 0; sc->present && i < sc->n_syscalls; i++)
    for (size_t j = 0; j < sc->syscalls[i].n; j++)
      if (strcmp (sc->syscalls[i].names[j], "memfd_create") == 0)
        return true;
  return false;
}

static int
load_socket_rules (const oci_spec *spec, const hv_direct_plan *plan, hv_error **err)
{
  cleanup_free struct filter *f = xmalloc0 (sizeof (*f));
  const char *native = hv_seccomp_arch_native (err);
  if (native == NULL)
    return -1;
  char *archs[] = { (char *) native, NULL };
  f->sc = (oci_seccomp){ .present = true,
                         .default_action = OCI_SCMP_ALLOW,
                         .default_action_name = (char *) "SCMP_ACT_ALLOW",
                         .architectures = { .n = 1, .v = archs },
                         .syscalls = f->rules };
  for (uint64_t fam = 0; fam < FAMILY_LIMIT; fam++)
    {
      if (fam == AF_INET || fam == AF_INET6 || fam == AF_NETLINK || (fam == AF_UNIX && plan->unix_sockets))
        continue;
      struct oci_seccomp_arg a[] = { masked (0, INT_MASK, fam) };
      deny (f, "socket", EACCES, 1, a);
    }
  struct oci_seccomp_arg beyond[] = { cmp (0, SCMP_CMP_GE, FAMILY_LIMIT) };
  deny (f, "socket", EACCES, 1, beyond);
  deny_types (f, AF_INET, plan->udp);
  deny_types (f, AF_INET6, plan->udp);
  /* io_uring opens and connects sockets without socket(2) or connect(2):
   * it would walk past this filter. */
  static const char *const rings[] = { "io_uring_setup", "io_uring_enter", "io_uring_register" };
  for (size_t i = 0; i < N_ELEMENTS (rings); i++)
    deny (f, rings[i], EPERM, 0, NULL);
  if (spec_filters_memfds (spec))
    {
      struct oci_seccomp_arg exec[] = { masked (1, MFD_EXEC_FLAG, MFD_EXEC_FLAG) };
      deny (f, "memfd_create", EPERM, 1, exec);
      struct oci_seccomp_arg unsealed[] = { masked (1, MFD_NOEXEC_SEAL_FLAG, 0) };
      deny (f, "memfd_create", EPERM, 1, unsealed);
    }
  int none = -1;
  if (hv_seccomp_load (&f->sc, &none, err) < 0)
    return hv_error_wrap (err, "the socket rules");
  return 0;
}

/* A profile with every NOTIFY answered EPERM, as the monitor would have
 * answered it, and no listener: direct mode has no monitor to ask. */
static int
load_without_listener (const oci_seccomp *sc, const char *what, hv_error **err)
{
  oci_seccomp copy = *sc;
  cleanup_free oci_seccomp_syscall *rules = xmalloc0 ((sc->n_syscalls + 1) * sizeof (*rules));
  static const oci_opt_u64 eperm = { .set = true, .value = EPERM };
  copy.listener_path = NULL;
  copy.listener_metadata = NULL;
  if (copy.default_action == OCI_SCMP_NOTIFY)
    {
      copy.default_action = OCI_SCMP_ERRNO;
      copy.default_errno_ret = eperm;
    }
  for (size_t i = 0; i < sc->n_syscalls; i++)
    {
      rules[i] = sc->syscalls[i];
      if (rules[i].action == OCI_SCMP_NOTIFY)
        {
          rules[i].action = OCI_SCMP_ERRNO;
          rules[i].errno_ret = eperm;
        }
    }
  copy.syscalls = rules;
  int none = -1;
  if (hv_seccomp_load (&copy, &none, err) < 0)
    return hv_error_wrap (err, "%s", what);
  return 0;
}

/* The profile as it is, its notify fd handed to the run's audit
 * listener (which records each denied call and answers EPERM). */
static int
load_with_listener (const oci_seccomp *sc, int listener, hv_error **err)
{
  int notify_fd = -1;
  if (hv_seccomp_load (sc, &notify_fd, err) < 0)
    return hv_error_wrap (err, "the policy's system-call profile");
  if (notify_fd < 0)
    return 0;
  int r = hv_seccomp_send_notify_fd (sc, listener, NULL, getpid (), notify_fd, err);
  close (notify_fd);
  return r < 0 ? hv_error_wrap (err, "the audit listener") : 0;
}

int
hv_direct_seccomp_load (const oci_spec *spec, const hv_direct_plan *plan, int listener, hv_error **err)
{
  if (load_socket_rules (spec, plan, err) < 0)
    return -1;
  const char *extra = oci_kv_get (&spec->annotations, HV_SECCOMP_ANNOTATION);
  if (extra)
    {
      oci_seccomp *parsed = NULL;
      if (oci_seccomp_parse (extra, strlen (extra), "annotation " HV_SECCOMP_ANNOTATION, &parsed, err) < 0)
        return -1;
      int r = load_without_listener (parsed, "annotation " HV_SECCOMP_ANNOTATION, err);
      oci_seccomp_free (parsed);
      if (r < 0)
        return -1;
    }
  /* The spec's profile last: it may refuse seccomp(2) itself. */
  if (spec->linux_cfg.seccomp.present && listener >= 0)
    return load_with_listener (&spec->linux_cfg.seccomp, listener, err);
  if (spec->linux_cfg.seccomp.present
      && load_without_listener (&spec->linux_cfg.seccomp, "the policy's system-call profile", err) < 0)
    return -1;
  return 0;
}
