/* The host probes of runtime/host_probe_ns.c and host_probe_kernel.c:
 * each, run in a child under a seccomp filter that refuses the call a
 * container's default profile refuses, says it is not usable and names
 * the step with the kernel's answer; without the filter the same probe
 * says what this host offers. */
#include "config.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "host_probe.h"

/* seccomp: the native call nr answers EPERM, everything else is allowed
 * (nothing here calls through another architecture). */
static void
refuse (long nr)
{
  struct sock_filter f[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (uint32_t) nr, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { .len = sizeof (f) / sizeof (f[0]), .filter = f };
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
    _exit (3);
}

/* The probe run in a child with nr refused (0: nothing refused): its
 * answer back through a pipe. */
static void
probe_in_child (void (*probe) (hv_probe *), long nr, hv_probe *out)
{
  int p[2];
  assert_int_equal (pipe (p), 0);
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      hv_probe r;
      if (nr)
        refuse (nr);
      probe (&r);
      _exit (write (p[1], &r, sizeof (r)) == sizeof (r) ? 0 : 4);
    }
  close (p[1]);
  ssize_t n = read (p[0], out, sizeof (*out));
  close (p[0]);
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 3)
    skip (); /* no seccomp filter to be had here */
  assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  assert_int_equal (n, (ssize_t) sizeof (*out));
}

static void
test_namespaces_refused_by_name (void **state)
{
  (void) state;
  hv_probe r;
  probe_in_child (hv_probe_namespaces, SYS_unshare, &r);
  assert_false (r.ok);
  /* As root the sandbox makes no user namespace: its first step is the others. */
  const char *step = geteuid () == 0 ? "unshare(mount, pid, network, ipc, uts, cgroup namespaces): "
                                     : "clone(CLONE_NEWUSER): ";
  assert_non_null (strstr (r.why, step));
  assert_non_null (strstr (r.why, strerror (EPERM)));
  /* The quick probe (haven run's auto) names the same first step. */
  probe_in_child (hv_probe_namespaces_quick, SYS_unshare, &r);
  assert_false (r.ok);
  assert_non_null (strstr (r.why, step));
  assert_non_null (strstr (r.why, strerror (EPERM)));
  probe_in_child (hv_probe_user_namespace, SYS_unshare, &r);
  assert_false (r.ok);
  assert_string_equal (r.why, "clone(CLONE_NEWUSER): Operation not permitted");
  /* A later step: the loopback's netlink socket. */
  probe_in_child (hv_probe_namespaces, SYS_socket, &r);
  if (r.ok || strstr (r.why, "unshare") || strstr (r.why, "CLONE_NEWUSER") || strstr (r.why, "mount"))
    skip (); /* namespaces are not to be had here at all */
  assert_non_null (strstr (r.why, "netlink socket"));
}

/* Where the host allows them (this one: the probes' own answer, as
 * haven run's auto relies on it), the probes say ok with no why. */
static void
test_host_answers (void **state)
{
  (void) state;
  hv_probe r;
  hv_probe_seccomp (&r);
  assert_true (r.ok);
  assert_string_equal (r.why, "");
  probe_in_child (hv_probe_seccomp, SYS_seccomp, &r);
  assert_false (r.ok);
  assert_string_equal (r.why, "seccomp(SECCOMP_SET_MODE_FILTER): Operation not permitted");
  hv_probe_namespaces (&r);
  if (!r.ok)
    {
      print_message ("namespaces here: %s\n", r.why);
      assert_true (r.why[0] != '\0');
    }
  else
    assert_string_equal (r.why, "");
  /* Where the full probe says yes, so does the quick one. */
  hv_probe q;
  hv_probe_namespaces_quick (&q);
  if (r.ok)
    {
      assert_true (q.ok);
      assert_string_equal (q.why, "");
    }
  int abi = hv_probe_landlock_abi ();
  assert_true (abi == -1 || abi >= 1);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_namespaces_refused_by_name),
    cmocka_unit_test (test_host_answers),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
