/* Unit tests of the seccomp filter builder, including a filter really
 * loaded into a child process. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define N_CONSTS(a) (sizeof (a) / sizeof ((a)[0]))

#include "oci_tables.h"
#include "seccomp_args.h"
#include "seccomp_filter.h"

static oci_seccomp_syscall
rule (char **names, size_t n, int action, int errno_ret)
{
  oci_seccomp_syscall s = { .n = n, .names = names, .action = action,
                            .action_name = (char *) oci_seccomp_action_names[action] };
  if (errno_ret >= 0)
    s.errno_ret = (oci_opt_u64) { true, (uint64_t) errno_ret };
  return s;
}

static void
test_unknown_syscalls_are_skipped (void **state)
{
  (void) state;
  char *names[] = { (char *) "getcwd", (char *) "no_such_syscall_anywhere" };
  oci_seccomp_syscall rules[] = { rule (names, 2, OCI_SCMP_ERRNO, 1) };
  oci_seccomp sc = { .present = true, .default_action = OCI_SCMP_ALLOW, .default_action_name = (char *) "SCMP_ACT_ALLOW",
                     .n_syscalls = 1, .syscalls = rules };
  scmp_filter_ctx ctx = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_seccomp_build (&sc, &ctx, &err), 0);
  assert_non_null (ctx);
  seccomp_release (ctx);
}

static void
test_rule_equal_to_default_is_skipped (void **state)
{
  (void) state;
  char *names[] = { (char *) "read" };
  oci_seccomp_syscall rules[] = { rule (names, 1, OCI_SCMP_ALLOW, -1) };
  oci_seccomp sc = { .present = true, .default_action = OCI_SCMP_ALLOW, .default_action_name = (char *) "SCMP_ACT_ALLOW",
                     .n_syscalls = 1, .syscalls = rules };
  scmp_filter_ctx ctx = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_seccomp_build (&sc, &ctx, &err), 0);
  seccomp_release (ctx);
}

static void
test_repeated_argument_index_means_or (void **state)
{
  (void) state;
  char *names[] = { (char *) "personality" };
  struct oci_seccomp_arg args[] = { { .index = 0, .value = 0, .op = OCI_SCMP_CMP_EQ },
                                    { .index = 0, .value = 8, .op = OCI_SCMP_CMP_EQ } };
  oci_seccomp_syscall rules[] = { rule (names, 1, OCI_SCMP_ALLOW, -1) };
  rules[0].n_args = 2;
  rules[0].args = args;
  oci_seccomp sc = { .present = true, .default_action = OCI_SCMP_ERRNO, .default_action_name = (char *) "SCMP_ACT_ERRNO",
                     .n_syscalls = 1, .syscalls = rules };
  scmp_filter_ctx ctx = NULL;
  hv_error *err = NULL;
  /* libseccomp alone refuses two comparisons of one argument in a rule. */
  if (hv_seccomp_build (&sc, &ctx, &err) < 0)
    fail_msg ("%s", err->msg);
  seccomp_release (ctx);
}

static void
test_unsupported_flag_is_an_error (void **state)
{
  (void) state;
  char *flags[] = { (char *) "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV" };
  oci_seccomp sc = { .present = true, .default_action = OCI_SCMP_ALLOW, .default_action_name = (char *) "SCMP_ACT_ALLOW",
                     .flags = { 1, flags } };
  scmp_filter_ctx ctx = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_seccomp_build (&sc, &ctx, &err), -1);
  assert_non_null (strstr (err->msg, "seccomp: flag SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"));
  hv_error_free (&err);
}

/* The filter really denies: a child loads it and reports getcwd's errno. */
static void
test_filter_enforced_in_child (void **state)
{
  (void) state;
  char *names[] = { (char *) "getcwd" };
  oci_seccomp_syscall rules[] = { rule (names, 1, OCI_SCMP_ERRNO, 42) };
  oci_seccomp sc = { .present = true, .default_action = OCI_SCMP_ALLOW, .default_action_name = (char *) "SCMP_ACT_ALLOW",
                     .n_syscalls = 1, .syscalls = rules };
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      hv_error *err = NULL;
      int notify_fd;
      char buf[256];
      prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      if (hv_seccomp_load (&sc, &notify_fd, &err) < 0)
        _exit (100);
      _exit (getcwd (buf, sizeof (buf)) == NULL ? errno : 0);
    }
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 42);
}

/* Seven comparisons of one argument (OR): every one of them must hold,
 * none may be dropped (a dropped one leaves the rule more permissive). */
static void
test_many_comparisons_of_one_argument (void **state)
{
  (void) state;
  char *names[] = { (char *) "dup" };
  struct oci_seccomp_arg args[7];
  for (int i = 0; i < 7; i++)
    args[i] = (struct oci_seccomp_arg) { .index = 0, .value = (uint64_t) (100 + i), .op = OCI_SCMP_CMP_EQ };
  oci_seccomp_syscall rules[] = { rule (names, 1, OCI_SCMP_ERRNO, 77) };
  rules[0].n_args = 7;
  rules[0].args = args;
  oci_seccomp sc = { .present = true, .default_action = OCI_SCMP_ALLOW, .default_action_name = (char *) "SCMP_ACT_ALLOW",
                     .n_syscalls = 1, .syscalls = rules };
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      hv_error *err = NULL;
      int notify_fd;
      prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      if (hv_seccomp_load (&sc, &notify_fd, &err) < 0)
        _exit (100);
      /* fd 106 (the seventh value) must be refused with errno 77. */
      _exit (dup (106) < 0 && errno == 77 ? 0 : 1);
    }
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}

/* What comparison CMP says of the value X the kernel reads. */
static bool
holds (enum scmp_compare op, uint64_t x, uint64_t a, uint64_t b)
{
  switch (op)
    {
    case SCMP_CMP_NE:
      return x != a;
    case SCMP_CMP_LT:
      return x < a;
    case SCMP_CMP_LE:
      return x <= a;
    case SCMP_CMP_EQ:
      return x == a;
    case SCMP_CMP_GE:
      return x >= a;
    case SCMP_CMP_GT:
      return x > a;
    default:
      return (x & a) == b;
    }
}

/* The rewritten comparisons hold for a register value exactly when the
 * original comparison holds for the bits the kernel reads, whatever the
 * high bits of the register. */
static void
test_narrow_comparisons_match_kernel_reading (void **state)
{
  (void) state;
  static const uint64_t masks[] = { 0xffff, 0xffffffff };
  static const uint64_t consts[] = { 0, 1, 2, 40, 0x5412, 0x7fff, 0xffff, 0x10000, 0x80000000, 0xfffffffe, 0xffffffff };
  static const uint64_t highs[] = { 0, 0x100000000ULL, 0xffffffff00000000ULL };
  uint64_t seed = 88172645463325252ULL;
  for (size_t m = 0; m < 2; m++)
    for (int op = SCMP_CMP_NE; op <= SCMP_CMP_MASKED_EQ; op++)
      for (size_t c = 0; c < N_CONSTS (consts); c++)
        {
          uint64_t a = op == SCMP_CMP_MASKED_EQ ? 0x5412 | consts[c] : consts[c];
          uint64_t b = op == SCMP_CMP_MASKED_EQ ? consts[c] & a : 0;
          if (a > masks[m] && op != SCMP_CMP_MASKED_EQ)
            continue;
          struct scmp_arg_cmp cmp = { .arg = 1, .op = (enum scmp_compare) op, .datum_a = a, .datum_b = b };
          struct scmp_arg_cmp alt[HV_SCMP_MAX_ALTERNATIVES];
          size_t n = hv_seccomp_narrow_cmp (&cmp, masks[m], alt);
          assert_true (n <= HV_SCMP_MAX_ALTERNATIVES);
          for (int k = 0; k < 3000; k++)
            {
              seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
              uint64_t low = k < (int) N_CONSTS (consts) ? consts[k] : seed;
              low = (low + (uint64_t) (k % 3) - 1) & masks[m];
              uint64_t reg = low | (highs[k % 3] & ~masks[m]);
              bool any = false;
              for (size_t i = 0; i < n; i++)
                {
                  assert_int_equal (alt[i].op, SCMP_CMP_MASKED_EQ);
                  any = any || (reg & alt[i].datum_a) == alt[i].datum_b;
                }
              if (any != holds ((enum scmp_compare) op, low, a & masks[m], b & masks[m]))
                fail_msg ("op %d const %#llx mask %#llx reg %#llx: %d", op, (unsigned long long) a,
                          (unsigned long long) masks[m], (unsigned long long) reg, any);
            }
        }
}

/* A config's plain rules, enforced the way the kernel reads the argument:
 * ioctl(fd, 0x100005412) is TIOCSTI, socket(0x100000001, ...) is AF_UNIX. */
static void
test_narrow_arguments_enforced_in_child (void **state)
{
  (void) state;
  char *ioctl_names[] = { (char *) "ioctl" };
  char *socket_names[] = { (char *) "socket" };
  struct oci_seccomp_arg ioctl_args[] = { { .index = 1, .value = 0x5412, .op = OCI_SCMP_CMP_EQ } };
  struct oci_seccomp_arg socket_args[] = { { .index = 0, .value = 1, .op = OCI_SCMP_CMP_NE } };
  oci_seccomp_syscall rules[] = { rule (ioctl_names, 1, OCI_SCMP_ERRNO, 77), rule (socket_names, 1, OCI_SCMP_ERRNO, 78) };
  rules[0].n_args = 1;
  rules[0].args = ioctl_args;
  rules[1].n_args = 1;
  rules[1].args = socket_args;
  oci_seccomp sc = { .present = true, .default_action = OCI_SCMP_ALLOW, .default_action_name = (char *) "SCMP_ACT_ALLOW",
                     .n_syscalls = 2, .syscalls = rules };
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      hv_error *err = NULL;
      int notify_fd;
      prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      if (hv_seccomp_load (&sc, &notify_fd, &err) < 0)
        _exit (100);
      int bad = 0;
      if (!(syscall (SYS_ioctl, -1, 0x100005412UL, 0) < 0 && errno == 77))
        bad |= 1;
      if (!(syscall (SYS_ioctl, -1, 0x5413UL, 0) < 0 && errno == EBADF))
        bad |= 2;
      long fd = syscall (SYS_socket, 0x100000001UL, 1UL /* SOCK_STREAM */, 0UL);
      if (fd < 0)
        bad |= 4;
      if (!(syscall (SYS_socket, 2UL, 1UL, 0UL) < 0 && errno == 78))
        bad |= 8;
      _exit (bad);
    }
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_unknown_syscalls_are_skipped),
    cmocka_unit_test (test_rule_equal_to_default_is_skipped),
    cmocka_unit_test (test_repeated_argument_index_means_or),
    cmocka_unit_test (test_unsupported_flag_is_an_error),
    cmocka_unit_test (test_filter_enforced_in_child),
    cmocka_unit_test (test_many_comparisons_of_one_argument),
    cmocka_unit_test (test_narrow_comparisons_match_kernel_reading),
    cmocka_unit_test (test_narrow_arguments_enforced_in_child),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
