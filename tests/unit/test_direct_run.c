/* The runner of a sandbox without namespaces (session/direct_run.c),
 * under plans built here by hand: the command's exit status, 127, the
 * Landlock file and TCP rules, the socket families, the processes it
 * leaves and its time limit.  Each check has its counterpart that the
 * same command passes when the rule is lifted: a runner that refused
 * everything would fail those. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "direct_run.h"
#include "host_probe.h"
#include "utils.h"

static char tmp[] = "/tmp/h-direct-run-XXXXXX";
static char *root_list[] = { (char *) "/", NULL };

static void
make_plan (hv_direct_plan *plan, oci_strv *write)
{
  /* The plans here use Landlock's network rules and scopes. */
  if (hv_probe_landlock_abi () < 6)
    skip ();
  memset (plan, 0, sizeof (*plan));
  plan->read = (oci_strv){ .v = root_list, .n = 1 };
  plan->exec = (oci_strv){ .v = root_list, .n = 1 };
  write->v = xmalloc0 (2 * sizeof (char *));
  write->v[0] = xstrdup (tmp);
  write->n = 1;
  plan->write = *write;
  plan->tcp_handled = true;
  plan->scope_abstract_unix = true;
  plan->scope_signal = true;
}

/* sh -c SCRIPT under plan; the exit status, or -1 with *err. */
static int
run (const hv_direct_plan *plan, unsigned timeout_s, const char *script, hv_error **err)
{
  cleanup_free char *json
      = xasprintf ("{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},\"process\":{\"cwd\":\"%s\","
                   "\"env\":[\"PATH=/usr/bin:/bin\",\"T=%s\"],\"args\":[\"/bin/sh\",\"-c\",\"%s\"]}}",
                   tmp, tmp, script);
  oci_spec *spec = NULL;
  if (oci_spec_parse (json, strlen (json), "test", &spec, err) < 0)
    fail_msg ("%s", (*err)->msg);
  int status = 0;
  int r = hv_direct_run (spec, plan, timeout_s, NULL, &status, err);
  oci_spec_free (spec);
  return r < 0 ? -1 : status;
}

static int
setup (void **state)
{
  (void) state;
  if (mkdtemp (tmp) == NULL)
    return -1;
  return 0;
}

static int
teardown (void **state)
{
  (void) state;
  cleanup_free char *cmd = xasprintf ("rm -rf %s", tmp);
  return system (cmd) == 0 ? 0 : -1;
}

static void
test_status_and_not_found (void **state)
{
  (void) state;
  hv_direct_plan plan;
  cleanup_strv oci_strv write = { 0 };
  make_plan (&plan, &write);
  hv_error *err = NULL;
  assert_int_equal (run (&plan, 0, "exit 3", &err), 3);
  assert_int_equal (run (&plan, 0, "kill -TERM $$", &err), 128 + SIGTERM);
  cleanup_free char *json = xstrdup ("{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},\"process\":{\"cwd\":\"/\","
                                     "\"args\":[\"haven-no-such-command\"],\"env\":[\"PATH=/usr/bin\"]}}");
  oci_spec *spec = NULL;
  assert_int_equal (oci_spec_parse (json, strlen (json), "test", &spec, &err), 0);
  int status = 0;
  assert_int_equal (hv_direct_run (spec, &plan, 0, NULL, &status, &err), -1);
  assert_int_equal (err->exit_status, 127);
  hv_error_free (&err);
  oci_spec_free (spec);
}

/* Writes only under the write list; the same write there works. */
static void
test_files (void **state)
{
  (void) state;
  hv_direct_plan plan;
  cleanup_strv oci_strv write = { 0 };
  make_plan (&plan, &write);
  hv_error *err = NULL;
  assert_int_equal (run (&plan, 0, "echo x > $T/ok", &err), 0);
  assert_int_not_equal (run (&plan, 0, "echo x > /var/tmp/h-direct-run-no", &err), 0);
  assert_int_equal (access ("/var/tmp/h-direct-run-no", F_OK), -1);
  plan.write.n = 0;
  assert_int_not_equal (run (&plan, 0, "echo x > $T/no", &err), 0);
}

/* TCP connect only to the plan's ports; no UDP unless plan.udp. */
static void
test_network (void **state)
{
  (void) state;
  hv_direct_plan plan;
  cleanup_strv oci_strv write = { 0 };
  make_plan (&plan, &write);
  hv_error *err = NULL;
  int l = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof (a);
  assert_int_equal (bind (l, (struct sockaddr *) &a, sizeof (a)), 0);
  assert_int_equal (listen (l, 8), 0);
  assert_int_equal (getsockname (l, (struct sockaddr *) &a, &len), 0);
  uint16_t port = ntohs (a.sin_port);
  cleanup_free char *tcp = xasprintf ("exec 3<>/dev/tcp/127.0.0.1/%u", (unsigned) port);
  if (access ("/bin/bash", X_OK) == 0)
    {
      cleanup_free char *script = xasprintf ("/bin/bash -c '%s'", tcp);
      assert_int_not_equal (run (&plan, 0, script, &err), 0);
      plan.tcp_connect_ports = &port;
      plan.n_tcp_connect_ports = 1;
      assert_int_equal (run (&plan, 0, script, &err), 0);
      cleanup_free char *udp = xstrdup ("/bin/bash -c 'exec 3<>/dev/udp/127.0.0.1/53'");
      assert_int_not_equal (run (&plan, 0, udp, &err), 0);
      plan.udp = true;
      assert_int_equal (run (&plan, 0, udp, &err), 0);
    }
  close (l);
}

/* A process that left the command's session is killed at the end. */
static void
test_left_processes_killed (void **state)
{
  (void) state;
  hv_direct_plan plan;
  cleanup_strv oci_strv write = { 0 };
  make_plan (&plan, &write);
  hv_error *err = NULL;
  assert_int_equal (run (&plan, 0, "setsid sleep 100 & echo $! > $T/pid", &err), 0);
  cleanup_free char *path = xasprintf ("%s/pid", tmp);
  FILE *f = fopen (path, "r");
  assert_non_null (f);
  int pid = 0;
  assert_int_equal (fscanf (f, "%d", &pid), 1);
  fclose (f);
  assert_true (pid > 0);
  assert_int_equal (kill (pid, 0), -1);
  assert_int_equal (errno, ESRCH);
}

static void
test_timeout (void **state)
{
  (void) state;
  hv_direct_plan plan;
  cleanup_strv oci_strv write = { 0 };
  make_plan (&plan, &write);
  hv_error *err = NULL;
  /* First: the time limit, once hit, is hit for the process (signals.h). */
  assert_int_equal (run (&plan, 5, "exit 0", &err), 0);
  assert_int_equal (run (&plan, 1, "sleep 30", &err), 124);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_status_and_not_found), cmocka_unit_test (test_files), cmocka_unit_test (test_network),
    cmocka_unit_test (test_left_processes_killed), cmocka_unit_test (test_timeout),
  };
  return cmocka_run_group_tests (tests, setup, teardown);
}
