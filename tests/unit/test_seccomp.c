/* Unit tests of the seccomp filter builder, including a filter really
 * loaded into a child process. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "oci_tables.h"
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
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
