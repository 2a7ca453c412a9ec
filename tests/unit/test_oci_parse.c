/* Unit tests of the config.json / process.json parser: accepted documents
 * land in the structs, rejected ones fail with the exact message. */
#include "config.h"

#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "oci_spec.h"
#include "oci_tables.h"

#define MINIMAL "\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"}"
#define PROCESS "\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]}"

static oci_spec *
parse_ok (const char *json)
{
  oci_spec *s = NULL;
  hv_error *err = NULL;
  int r = oci_spec_parse (json, strlen (json), "config.json", &s, &err);
  if (r < 0)
    fail_msg ("unexpected error: %s", err->msg);
  assert_non_null (s);
  return s;
}

static void
expect_error (const char *json, const char *message)
{
  oci_spec *s = NULL;
  hv_error *err = NULL;
  if (oci_spec_parse (json, strlen (json), "config.json", &s, &err) == 0)
    {
      oci_spec_free (s);
      fail_msg ("accepted: %s (expected \"%s\")", json, message);
    }
  assert_null (s);
  assert_non_null (err);
  if (strcmp (err->msg, message) != 0)
    fail_msg ("expected \"%s\"\n     got \"%s\"", message, err->msg);
  hv_error_free (&err);
}

/* Wrap a "linux" object body into a whole document. */
static void
expect_linux_error (const char *linux_body, const char *message)
{
  char buf[4096];
  snprintf (buf, sizeof (buf), "{" MINIMAL ", \"linux\": {%s}}", linux_body);
  expect_error (buf, message);
}

static void
expect_process_error (const char *process_body, const char *message)
{
  char buf[4096];
  snprintf (buf, sizeof (buf), "{" MINIMAL ", \"process\": {%s}}", process_body);
  expect_error (buf, message);
}

static void
test_full_config (void **state)
{
  (void) state;
  const char *json = "{" MINIMAL ", \"hostname\": \"box\", \"domainname\": \"example.org\","
                     "\"unknownTopLevel\": {\"ignored\": [1, 2]},"
                     "\"annotations\": {\"a\": \"1\", \"b\": \"2\"},"
                     "\"process\": {\"terminal\": true, \"consoleSize\": {\"height\": 24, \"width\": 80},"
                     "  \"user\": {\"uid\": 1000, \"gid\": 1001, \"umask\": 18, \"additionalGids\": [5, 6]},"
                     "  \"args\": [\"sh\", \"-c\", \"true\"], \"env\": [\"A=b\"], \"cwd\": \"/work\","
                     "  \"capabilities\": {\"bounding\": [\"CAP_KILL\"], \"effective\": [\"CAP_KILL\"],"
                     "     \"permitted\": [\"CAP_KILL\"], \"inheritable\": [], \"ambient\": [\"CAP_KILL\"]},"
                     "  \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 18446744073709551615,"
                     "     \"soft\": 18446744073709551615}],"
                     "  \"noNewPrivileges\": true, \"apparmorProfile\": \"p\", \"oomScoreAdj\": -500,"
                     "  \"scheduler\": {\"policy\": \"SCHED_BATCH\", \"nice\": 3},"
                     "  \"ioPriority\": {\"class\": \"IOPRIO_CLASS_BE\", \"priority\": 4}},"
                     "\"mounts\": [{\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"},"
                     "  {\"destination\": \"/data\", \"type\": \"bind\", \"source\": \"/srv\", \"options\": [\"rbind\", \"ro\"]}],"
                     "\"hooks\": {\"prestart\": [{\"path\": \"/bin/a\", \"args\": [\"a\", \"x\"], \"env\": [\"E=1\"],"
                     "    \"timeout\": 5}], \"poststop\": [{\"path\": \"/bin/b\"}]},"
                     "\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"network\", \"path\": \"/run/netns/x\"},"
                     "    {\"type\": \"time\"}],"
                     "  \"uidMappings\": [{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}],"
                     "  \"timeOffsets\": {\"boottime\": {\"secs\": -5, \"nanosecs\": 7}},"
                     "  \"devices\": [{\"path\": \"/dev/fuse\", \"type\": \"c\", \"major\": 10, \"minor\": 229,"
                     "    \"fileMode\": 438, \"uid\": 0, \"gid\": 0}],"
                     "  \"cgroupsPath\": \"/x/y\", \"rootfsPropagation\": \"rslave\","
                     "  \"resources\": {\"memory\": {\"limit\": 1048576, \"swap\": -1, \"disableOOMKiller\": true},"
                     "    \"cpu\": {\"shares\": 512, \"quota\": 50000, \"period\": 100000, \"cpus\": \"0-1\"},"
                     "    \"pids\": {\"limit\": 100}, \"blockIO\": {\"weight\": 10, \"throttleReadBpsDevice\":"
                     "      [{\"major\": 8, \"minor\": 0, \"rate\": 1000}]},"
                     "    \"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 0}],"
                     "    \"unified\": {\"memory.high\": \"max\"},"
                     "    \"devices\": [{\"allow\": false, \"access\": \"rwm\"}, {\"allow\": true, \"type\": \"c\","
                     "      \"major\": 1, \"minor\": 3, \"access\": \"rw\"}]},"
                     "  \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 38,"
                     "    \"architectures\": [\"SCMP_ARCH_X86_64\"], \"flags\": [\"SECCOMP_FILTER_FLAG_LOG\"],"
                     "    \"listenerPath\": \"/run/l.sock\", \"listenerMetadata\": \"m\","
                     "    \"syscalls\": [{\"names\": [\"read\", \"write\"], \"action\": \"SCMP_ACT_ALLOW\"},"
                     "      {\"names\": [\"personality\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 0,"
                     "        \"value\": 8, \"valueTwo\": 0, \"op\": \"SCMP_CMP_EQ\"}]}]},"
                     "  \"sysctl\": {\"net.ipv4.ip_forward\": \"1\"},"
                     "  \"maskedPaths\": [\"/proc/kcore\"], \"readonlyPaths\": [\"/proc/sys\"],"
                     "  \"personality\": {\"domain\": \"LINUX32\"}, \"futureField\": 1}}";
  oci_spec *s = parse_ok (json);
  assert_string_equal (s->hostname, "box");
  assert_string_equal (s->domainname, "example.org");
  assert_string_equal (oci_kv_get (&s->annotations, "b"), "2");
  assert_true (s->process.terminal);
  assert_int_equal (s->process.console_width, 80);
  assert_int_equal (s->process.user.uid, 1000);
  assert_int_equal (s->process.user.gid, 1001);
  assert_int_equal (s->process.user.umask.value, 18);
  assert_int_equal (s->process.user.n_additional_gids, 2);
  assert_int_equal (s->process.user.additional_gids[1], 6);
  assert_int_equal (s->process.args.n, 3);
  assert_string_equal (s->process.cwd, "/work");
  assert_string_equal (s->process.capabilities.ambient.v[0], "CAP_KILL");
  assert_int_equal (s->process.capabilities.inheritable.n, 0);
  assert_int_equal (s->process.rlimits[0].resource, RLIMIT_NOFILE);
  assert_true (s->process.rlimits[0].hard == UINT64_MAX);
  assert_true (s->process.no_new_privileges);
  assert_int_equal (s->process.oom_score_adj.value, -500);
  assert_int_equal (s->process.scheduler.policy, 3);
  assert_int_equal (s->process.io_priority.priority, 4);
  assert_int_equal (s->n_mounts, 2);
  assert_string_equal (s->mounts[1].options.v[1], "ro");
  assert_int_equal (s->hooks.prestart.v[0].timeout.value, 5);
  assert_string_equal (s->hooks.prestart.v[0].args.v[1], "x");
  assert_string_equal (s->hooks.poststop.v[0].path, "/bin/b");
  const oci_linux *l = &s->linux_cfg;
  assert_int_equal (l->n_namespaces, 3);
  assert_int_equal (l->namespaces[1].type, CLONE_NEWNET);
  assert_string_equal (l->namespaces[1].path, "/run/netns/x");
  assert_int_equal (l->uid_mappings.v[0].host_id, 100000);
  assert_true (l->has_time_boottime);
  assert_int_equal (l->time_boottime.secs, -5);
  assert_int_equal (l->devices[0].minor, 229);
  assert_int_equal (l->devices[0].file_mode.value, 438);
  assert_int_equal (l->resources.memory.limit.value, 1048576);
  assert_int_equal (l->resources.memory.swap.value, -1);
  assert_true (l->resources.memory.disable_oom_killer.value);
  assert_string_equal (l->resources.cpu.cpus, "0-1");
  assert_int_equal (l->resources.pids.limit.value, 100);
  assert_int_equal (l->resources.block_io.throttle_read_bps.v[0].rate, 1000);
  assert_string_equal (oci_kv_get (&l->resources.unified, "memory.high"), "max");
  assert_false (l->resources.devices[0].allow);
  assert_int_equal (l->resources.devices[1].minor.value, 3);
  assert_int_equal (l->seccomp.default_action, OCI_SCMP_ERRNO);
  assert_int_equal (l->seccomp.default_errno_ret.value, 38);
  assert_int_equal (l->seccomp.syscalls[1].args[0].op, OCI_SCMP_CMP_EQ);
  assert_int_equal (l->seccomp.syscalls[1].args[0].value, 8);
  assert_string_equal (oci_kv_get (&l->sysctl, "net.ipv4.ip_forward"), "1");
  assert_string_equal (l->masked_paths.v[0], "/proc/kcore");
  assert_string_equal (l->personality.domain, "LINUX32");
  oci_spec_free (s);
}

static void
test_null_is_absent (void **state)
{
  (void) state;
  oci_spec *s = parse_ok ("{" MINIMAL ", \"hostname\": null, \"linux\": {\"seccomp\": null, \"resources\": null}}");
  assert_null (s->hostname);
  assert_false (s->linux_cfg.seccomp.present);
  assert_false (s->linux_cfg.resources.present);
  oci_spec_free (s);
}

static void
test_rejected_documents (void **state)
{
  (void) state;
  expect_error ("{" MINIMAL ", \"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"rlimits\": ["
                "{\"type\": \"RLIMIT_NOFILE\", \"hard\": 1, \"soft\": 1}, {\"type\": \"RLIMIT_CORE\", \"hard\": 1, \"soft\": 1},"
                "{\"type\": \"RLIMIT_NPROC\", \"hard\": \"10\", \"soft\": 1}]}}",
                "config.json: .process.rlimits[2].hard: expected an unsigned integer");
  expect_error ("{\"root\": {\"path\": \"r\"}}", "config.json: .ociVersion: required field is missing");
  expect_error ("{\"ociVersion\": \"2.0.0\"}",
                "config.json: .ociVersion: unsupported version \"2.0.0\" (this runtime implements 1.x)");
  expect_error ("[1, 2]", "config.json: .: expected an object");
  expect_error ("{" MINIMAL ", \"hostname\": 5}", "config.json: .hostname: expected a string");
  expect_error ("{" MINIMAL ", \"mounts\": {}}", "config.json: .mounts: expected an array");
  expect_error ("{" MINIMAL ", \"mounts\": [{\"type\": \"tmpfs\"}]}",
                "config.json: .mounts[0].destination: required field is missing");
  expect_error ("{" MINIMAL ", \"mounts\": [{\"destination\": \"tmp\"}]}",
                "config.json: .mounts[0].destination: \"tmp\" is not an absolute path");
  expect_error ("{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"r\", \"readonly\": \"yes\"}}",
                "config.json: .root.readonly: expected a boolean");
  expect_error ("{" MINIMAL ", \"hooks\": {\"prestart\": [{\"args\": []}]}}",
                "config.json: .hooks.prestart[0].path: required field is missing");
  expect_error ("{" MINIMAL ", \"hooks\": {\"poststart\": [{\"path\": \"hook\"}]}}",
                "config.json: .hooks.poststart[0].path: \"hook\" is not an absolute path");
  expect_error ("{" MINIMAL ", \"hooks\": {\"createRuntime\": [{\"path\": \"/h\", \"timeout\": 0}]}}",
                "config.json: .hooks.createRuntime[0].timeout: timeout must be greater than zero");
  expect_error ("{" MINIMAL ", \"annotations\": {\"a\": 1}}", "config.json: .annotations.a: expected a string");
}

static void
test_rejected_process (void **state)
{
  (void) state;
  expect_process_error ("\"args\": [\"sh\"]", "config.json: .process.cwd: required field is missing");
  expect_process_error ("\"cwd\": \"work\"", "config.json: .process.cwd: \"work\" is not an absolute path");
  expect_process_error ("\"cwd\": \"/\", \"env\": [\"A=1\", \"NOEQUALS\"]",
                        "config.json: .process.env[1]: \"NOEQUALS\" is not of the form KEY=value");
  expect_process_error ("\"cwd\": \"/\", \"user\": {\"uid\": -1}", "config.json: .process.user.uid: expected an unsigned integer");
  expect_process_error ("\"cwd\": \"/\", \"user\": {\"uid\": 4294967296}",
                        "config.json: .process.user.uid: integer 4294967296 out of range for 32 bits");
  expect_process_error ("\"cwd\": \"/\", \"user\": {\"umask\": 1000}",
                        "config.json: .process.user.umask: umask 1750 is not a file mode mask");
  expect_process_error ("\"cwd\": \"/\", \"capabilities\": {\"effective\": [\"CAP_KILL\", \"CAP_FLY\"]}",
                        "config.json: .process.capabilities.effective[1]: unknown capability \"CAP_FLY\"");
  expect_process_error ("\"cwd\": \"/\", \"rlimits\": [{\"type\": \"RLIMIT_FOO\", \"hard\": 1, \"soft\": 1}]",
                        "config.json: .process.rlimits[0].type: unknown rlimit \"RLIMIT_FOO\"");
  expect_process_error ("\"cwd\": \"/\", \"rlimits\": [{\"type\": \"RLIMIT_CORE\", \"hard\": 1, \"soft\": 2}]",
                        "config.json: .process.rlimits[0]: soft limit 2 is above hard limit 1");
  expect_process_error ("\"cwd\": \"/\", \"rlimits\": [{\"type\": \"RLIMIT_CORE\", \"hard\": 1, \"soft\": 1},"
                        "{\"type\": \"RLIMIT_CORE\", \"hard\": 1, \"soft\": 1}]",
                        "config.json: .process.rlimits[1]: duplicate rlimit \"RLIMIT_CORE\"");
  expect_process_error ("\"cwd\": \"/\", \"oomScoreAdj\": 1001",
                        "config.json: .process.oomScoreAdj: 1001 is outside -1000..1000");
  expect_process_error ("\"cwd\": \"/\", \"terminal\": 1", "config.json: .process.terminal: expected a boolean");
  expect_process_error ("\"cwd\": \"/\", \"scheduler\": {\"policy\": \"SCHED_FAST\"}",
                        "config.json: .process.scheduler.policy: unknown scheduler policy \"SCHED_FAST\"");
}

static void
test_rejected_linux (void **state)
{
  (void) state;
  expect_linux_error ("\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"bogus\"}]",
                      "config.json: .linux.namespaces[1].type: unknown namespace type \"bogus\"");
  expect_linux_error ("\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"pid\"}]",
                      "config.json: .linux.namespaces[1]: duplicate namespace \"pid\"");
  expect_linux_error ("\"namespaces\": [{\"type\": \"network\", \"path\": \"netns\"}]",
                      "config.json: .linux.namespaces[0].path: \"netns\" is not an absolute path");
  expect_linux_error ("\"devices\": [{\"path\": \"/dev/x\", \"type\": \"x\", \"major\": 1, \"minor\": 1}]",
                      "config.json: .linux.devices[0].type: device type \"x\" is not one of c, u, b, p");
  expect_linux_error ("\"devices\": [{\"path\": \"/dev/x\", \"type\": \"c\"}]",
                      "config.json: .linux.devices[0]: device \"/dev/x\" needs major and minor numbers");
  expect_linux_error ("\"seccomp\": {\"defaultAction\": \"SCMP_ACT_MAYBE\"}",
                      "config.json: .linux.seccomp.defaultAction: unknown seccomp action \"SCMP_ACT_MAYBE\"");
  expect_linux_error ("\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"SCMP_ARCH_Z80\"]}",
                      "config.json: .linux.seccomp.architectures[0]: unknown seccomp architecture \"SCMP_ARCH_Z80\"");
  expect_linux_error ("\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_X\"]}",
                      "config.json: .linux.seccomp.flags[0]: unknown seccomp flag \"SECCOMP_FILTER_FLAG_X\"");
  expect_linux_error ("\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"],"
                      "\"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_SOMETIMES\"}]}]}",
                      "config.json: .linux.seccomp.syscalls[0].args[0].op: unknown seccomp operator \"SCMP_CMP_SOMETIMES\"");
  expect_linux_error ("\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"],"
                      "\"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 6, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}",
                      "config.json: .linux.seccomp.syscalls[0].args[0]: argument index 6 is above 5");
  expect_linux_error ("\"rootfsPropagation\": \"sideways\"",
                      "config.json: .linux.rootfsPropagation: unknown propagation \"sideways\"");
  expect_linux_error ("\"personality\": {\"domain\": \"WINDOWS\"}",
                      "config.json: .linux.personality.domain: unknown personality domain \"WINDOWS\"");
  expect_linux_error ("\"resources\": {\"memory\": {\"limit\": \"1G\"}}",
                      "config.json: .linux.resources.memory.limit: expected an integer");
  expect_linux_error ("\"resources\": {\"devices\": [{\"allow\": true, \"access\": \"rwx\"}]}",
                      "config.json: .linux.resources.devices[0]: device access \"rwx\" may only contain r, w, m");
  expect_linux_error ("\"sysctl\": {\"a\": 1}", "config.json: .linux.sysctl.a: expected a string");
  expect_linux_error ("\"uidMappings\": [{\"containerID\": 0, \"hostID\": \"x\", \"size\": 1}]",
                      "config.json: .linux.uidMappings[0].hostID: expected an unsigned integer");
}

static void
test_duplicate_keys_last_wins (void **state)
{
  (void) state;
  oci_spec *s = parse_ok ("{" MINIMAL ", \"hostname\": \"first\", \"hostname\": \"second\"}");
  assert_string_equal (s->hostname, "second");
  oci_spec_free (s);
}

static void
test_malformed_json (void **state)
{
  (void) state;
  oci_spec *s = NULL;
  hv_error *err = NULL;
  const char *json = "{\"ociVersion\": \"1.0.0\", \"process\": {";
  assert_int_equal (oci_spec_parse (json, strlen (json), "config.json", &s, &err), -1);
  assert_true (strncmp (err->msg, "config.json: invalid JSON: ", 27) == 0);
  assert_null (strchr (err->msg, '\n'));
  hv_error_free (&err);
}

static void
test_process_json (void **state)
{
  (void) state;
  oci_process *p = NULL;
  hv_error *err = NULL;
  const char *ok = "{\"cwd\": \"/\", \"args\": [\"ls\", \"-l\"], \"env\": [\"PATH=/bin\"], \"terminal\": false}";
  assert_int_equal (oci_process_parse (ok, strlen (ok), "process.json", &p, &err), 0);
  assert_string_equal (p->args.v[1], "-l");
  oci_process_free (p);
  p = NULL;
  const char *bad = "{\"cwd\": \"/\", \"args\": []}";
  assert_int_equal (oci_process_parse (bad, strlen (bad), "process.json", &p, &err), -1);
  assert_string_equal (err->msg, "process.json: .args: at least one argument is required");
  hv_error_free (&err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_full_config),      cmocka_unit_test (test_null_is_absent),
    cmocka_unit_test (test_rejected_documents), cmocka_unit_test (test_rejected_process),
    cmocka_unit_test (test_rejected_linux),   cmocka_unit_test (test_malformed_json),
    cmocka_unit_test (test_process_json),       cmocka_unit_test (test_duplicate_keys_last_wins),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
