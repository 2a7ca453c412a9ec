/* System call arguments compared the way the kernel reads them.
 *
 * A system call receives six 64-bit registers and libseccomp compares all
 * 64 bits, but the kernel converts each argument to its declared type
 * first: ioctl's request is an unsigned int, a mode is a umode_t.  A rule
 * "ioctl request == TIOCSTI" therefore misses ioctl(fd, 0x100005412),
 * which the kernel runs as TIOCSTI.  Every comparison of a narrow argument
 * is rewritten here into masked comparisons of the bits the kernel reads,
 * and the rule's constant is truncated the same way (a sign-extended
 * constant means its low bits, as the kernel would read it). */
#include "config.h"

#include <string.h>

#include "seccomp_args.h"
#include "utils.h"

#define A(i) (1u << (i))

/* Arguments narrower than 64 bits on the 64-bit ABIs: bit i of int32 set
 * when argument i is an int, unsigned int, pid_t, uid_t, gid_t, clockid_t
 * or dev_t as the kernel declares it; of mode16 when it is a umode_t.
 * From the SYSCALL_DEFINE lines of the kernel; clone's flags are an
 * unsigned long, but kernel_clone only reads lower_32_bits(clone_flags). */
static const struct
{
  const char *name;
  unsigned char int32, mode16;
} narrow_args[] = {
  { "accept4", A (0) | A (3), 0 },
  { "bind", A (0), 0 },
  { "bpf", A (0) | A (2), 0 },
  { "chmod", 0, A (1) },
  { "chown", A (1) | A (2), 0 },
  { "clock_adjtime", A (0), 0 },
  { "clock_settime", A (0), 0 },
  { "clone", A (0), 0 },
  { "close", A (0), 0 },
  { "connect", A (0), 0 },
  { "creat", 0, A (1) },
  { "dup", A (0), 0 },
  { "dup2", A (0) | A (1), 0 },
  { "dup3", A (0) | A (1) | A (2), 0 },
  { "execveat", A (0) | A (4), 0 },
  { "faccessat", A (0) | A (2), 0 },
  { "faccessat2", A (0) | A (2) | A (3), 0 },
  { "fchmod", A (0), A (1) },
  { "fchmodat", A (0), A (2) },
  { "fchmodat2", A (0) | A (3), A (2) },
  { "fchown", A (0) | A (1) | A (2), 0 },
  { "fchownat", A (0) | A (2) | A (3) | A (4), 0 },
  { "fcntl", A (0) | A (1), 0 },
  { "flock", A (0) | A (1), 0 },
  { "getrandom", A (2), 0 },
  { "getsockopt", A (0) | A (1) | A (2), 0 },
  { "ioctl", A (0) | A (1), 0 },
  { "ioprio_set", A (0) | A (1) | A (2), 0 },
  { "kcmp", A (0) | A (1) | A (2), 0 },
  { "keyctl", A (0), 0 },
  { "kill", A (0) | A (1), 0 },
  { "lchown", A (1) | A (2), 0 },
  { "listen", A (0) | A (1), 0 },
  { "madvise", A (2), 0 },
  { "memfd_create", A (1), 0 },
  { "mkdir", 0, A (1) },
  { "mkdirat", A (0), A (2) },
  { "mknod", A (2), A (1) },
  { "mknodat", A (0) | A (3), A (2) },
  { "open", A (1), A (2) },
  { "open_by_handle_at", A (0) | A (2), 0 },
  { "openat", A (0) | A (2), A (3) },
  { "perf_event_open", A (1) | A (2) | A (3), 0 },
  { "personality", A (0), 0 },
  { "pidfd_open", A (0) | A (1), 0 },
  { "pidfd_send_signal", A (0) | A (1) | A (3), 0 },
  { "pkey_mprotect", A (3), 0 },
  { "prctl", A (0), 0 },
  { "quotactl", A (0), 0 },
  { "reboot", A (0) | A (1) | A (2), 0 },
  { "recvfrom", A (0) | A (3), 0 },
  { "recvmsg", A (0) | A (2), 0 },
  { "sched_setscheduler", A (0) | A (1), 0 },
  { "seccomp", A (0) | A (1), 0 },
  { "sendmsg", A (0) | A (2), 0 },
  { "sendto", A (0) | A (3), 0 },
  { "set_mempolicy", A (0), 0 },
  { "setfsgid", A (0), 0 },
  { "setfsuid", A (0), 0 },
  { "setgid", A (0), 0 },
  { "setns", A (0) | A (1), 0 },
  { "setregid", A (0) | A (1), 0 },
  { "setresgid", A (0) | A (1) | A (2), 0 },
  { "setresuid", A (0) | A (1) | A (2), 0 },
  { "setreuid", A (0) | A (1), 0 },
  { "setsockopt", A (0) | A (1) | A (2) | A (4), 0 },
  { "setuid", A (0), 0 },
  { "socket", A (0) | A (1) | A (2), 0 },
  { "socketpair", A (0) | A (1) | A (2), 0 },
  { "statx", A (0) | A (2) | A (3), 0 },
  { "syslog", A (0), 0 },
  { "tgkill", A (0) | A (1) | A (2), 0 },
  { "tkill", A (0) | A (1), 0 },
  { "umask", A (0), 0 },
  { "userfaultfd", A (0), 0 },
};

uint64_t
hv_seccomp_arg_width_mask (const char *name, unsigned arg)
{
  if (arg > 5)
    return ~0ULL;
  for (size_t i = 0; i < N_ELEMENTS (narrow_args); i++)
    if (strcmp (narrow_args[i].name, name) == 0)
      {
        if (narrow_args[i].mode16 & A (arg))
          return 0xffffULL;
        if (narrow_args[i].int32 & A (arg))
          return 0xffffffffULL;
        break;
      }
  return ~0ULL;
}

struct alternatives
{
  struct scmp_arg_cmp *v;
  size_t n;
  unsigned arg;
};

/* One alternative: (argument & M) == V. */
static void
push (struct alternatives *a, uint64_t m, uint64_t v)
{
  a->v[a->n++] = (struct scmp_arg_cmp) { .arg = a->arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = m, .datum_b = v };
}

/* x < v for the kernel's value x = argument & mask (mask: low bits all
 * set), v <= mask: x < v exactly when, for some bit i set in v, x agrees
 * with v above i and has bit i clear.  One masked comparison per such i. */
static void
less_than (struct alternatives *a, uint64_t mask, uint64_t v)
{
  for (unsigned i = 0; i < 64 && (1ULL << i) <= mask; i++)
    if (v & (1ULL << i))
      {
        uint64_t from_i = mask & ~((1ULL << i) - 1);
        push (a, from_i, v & from_i & ~(1ULL << i));
      }
}

/* x > v, v < mask: for some bit i clear in v, x agrees with v above i
 * and has bit i set. */
static void
greater_than (struct alternatives *a, uint64_t mask, uint64_t v)
{
  for (unsigned i = 0; i < 64 && (1ULL << i) <= mask; i++)
    if (!(v & (1ULL << i)))
      {
        uint64_t from_i = mask & ~((1ULL << i) - 1);
        push (a, from_i, (v & from_i) | (1ULL << i));
      }
}

size_t
hv_seccomp_narrow_cmp (const struct scmp_arg_cmp *cmp, uint64_t mask,
                       struct scmp_arg_cmp alt[HV_SCMP_MAX_ALTERNATIVES])
{
  struct alternatives a = { .v = alt, .n = 0, .arg = cmp->arg };
  if (mask == ~0ULL)
    {
      alt[0] = *cmp;
      return 1;
    }
  uint64_t v = cmp->datum_a & mask;
  switch (cmp->op)
    {
    case SCMP_CMP_EQ:
      push (&a, mask, v);
      break;
    case SCMP_CMP_MASKED_EQ:
      push (&a, cmp->datum_a & mask, cmp->datum_b & mask);
      break;
    case SCMP_CMP_NE:
      /* Differs from v in at least one of the bits the kernel reads. */
      for (unsigned i = 0; i < 64 && (1ULL << i) <= mask; i++)
        push (&a, 1ULL << i, ~v & (1ULL << i));
      break;
    case SCMP_CMP_LT:
      if (cmp->datum_a > mask)
        push (&a, 0, 0); /* always: every value the kernel reads is smaller */
      else
        less_than (&a, mask, v);
      break;
    case SCMP_CMP_LE:
      if (cmp->datum_a >= mask)
        push (&a, 0, 0);
      else
        less_than (&a, mask, v + 1);
      break;
    case SCMP_CMP_GT:
      if (cmp->datum_a < mask)
        greater_than (&a, mask, v);
      break; /* else never */
    case SCMP_CMP_GE:
      if (cmp->datum_a == 0)
        push (&a, 0, 0);
      else if (cmp->datum_a <= mask)
        greater_than (&a, mask, v - 1);
      break;
    default:
      alt[0] = *cmp;
      return 1;
    }
  return a.n;
}
