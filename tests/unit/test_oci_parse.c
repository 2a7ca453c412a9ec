/* Unit tests of the config.json / process.json parser: accepted documents
 * land in the structs, rejected ones fail with the exact message (the
 * message is part of the interface: engines and users read it).
 *
 * JSON in this file is written with single quotes for readability; J()
 * turns them into double quotes before parsing.  Expected messages are
 * written verbatim. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "file_read.h"
#include "json_merge.h"
#include "json_walk.h"
#include "oci_spec.h"
#include "oci_tables.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

#define BASE "'ociVersion': '1.0.2', 'root': {'path': 'rootfs'}"

/* Single-quoted JSON -> real JSON (caller frees). */
static char *
J (const char *sq)
{
  char *s = xstrdup (sq);
  for (char *p = s; *p; p++)
    if (*p == '\'')
      *p = '"';
  return s;
}

static oci_spec *
parse_ok (const char *sq)
{
  char *json = J (sq);
  oci_spec *s = NULL;
  hv_error *err = NULL;
  int r = oci_spec_parse (json, strlen (json), "config.json", &s, &err);
  free (json);
  if (r < 0)
    {
      char msg[1024];
      snprintf (msg, sizeof (msg), "%s", err ? err->msg : "(no error set)");
      hv_error_free (&err);
      fail_msg ("unexpected error: %s", msg);
    }
  assert_int_equal (r, 0);
  assert_null (err);
  assert_non_null (s);
  return s;
}

/* Parse raw bytes (not necessarily NUL-terminated at len) and return the
 * error, asserting that the parse failed cleanly. */
static hv_error *
parse_fail_raw (const char *json, size_t len, const char *name)
{
  oci_spec *s = NULL;
  hv_error *err = NULL;
  int r = oci_spec_parse (json, len, name, &s, &err);
  if (r == 0)
    {
      oci_spec_free (s);
      fail_msg ("accepted: %.*s", (int) len, json);
    }
  assert_int_equal (r, -1);
  assert_null (s);
  assert_non_null (err);
  assert_non_null (err->msg);
  assert_int_equal (err->errno_code, 0);
  return err;
}

static void
check_message (hv_error **err, const char *expected)
{
  if (strcmp ((*err)->msg, expected) != 0)
    {
      char got[1024];
      snprintf (got, sizeof (got), "%s", (*err)->msg);
      hv_error_free (err);
      fail_msg ("expected \"%s\"\n          got \"%s\"", expected, got);
    }
  hv_error_free (err);
}

static void
expect_error (const char *sq, const char *message)
{
  char *json = J (sq);
  hv_error *err = parse_fail_raw (json, strlen (json), "config.json");
  free (json);
  check_message (&err, message);
}

static void
expect_error_prefix (const char *raw_json, const char *prefix)
{
  hv_error *err = parse_fail_raw (raw_json, strlen (raw_json), "config.json");
  if (strncmp (err->msg, prefix, strlen (prefix)) != 0)
    {
      char got[1024];
      snprintf (got, sizeof (got), "%s", err->msg);
      hv_error_free (&err);
      fail_msg ("expected a message starting with \"%s\"\n          got \"%s\"", prefix, got);
    }
  /* yajl draws a multi-line arrow; the message must stay on one line. */
  assert_null (strchr (err->msg, '\n'));
  hv_error_free (&err);
}

/* "{BASE, <fields>}" */
static char *
top_doc (const char *fields)
{
  return xasprintf ("{" BASE "%s%s}", fields[0] ? ", " : "", fields);
}

static oci_spec *
parse_top_ok (const char *fields)
{
  char *doc = top_doc (fields);
  oci_spec *s = parse_ok (doc);
  free (doc);
  return s;
}

static void
expect_top_error (const char *fields, const char *message)
{
  char *doc = top_doc (fields);
  expect_error (doc, message);
  free (doc);
}

/* A process with cwd and args, then <fields> (later duplicate keys win, so
 * fields may override cwd/args). */
static char *
process_doc (const char *fields)
{
  return xasprintf ("{" BASE ", 'process': {'cwd': '/', 'args': ['sh']%s%s}}", fields[0] ? ", " : "", fields);
}

static oci_spec *
parse_process_ok (const char *fields)
{
  char *doc = process_doc (fields);
  oci_spec *s = parse_ok (doc);
  free (doc);
  return s;
}

static void
expect_process_error (const char *fields, const char *message)
{
  char *doc = process_doc (fields);
  expect_error (doc, message);
  free (doc);
}

static char *
linux_doc (const char *fields)
{
  return xasprintf ("{" BASE ", 'linux': {%s}}", fields);
}

static oci_spec *
parse_linux_ok (const char *fields)
{
  char *doc = linux_doc (fields);
  oci_spec *s = parse_ok (doc);
  free (doc);
  return s;
}

static void
expect_linux_error (const char *fields, const char *message)
{
  char *doc = linux_doc (fields);
  expect_error (doc, message);
  free (doc);
}

static void
expect_resources_error (const char *fields, const char *message)
{
  char *body = xasprintf ("'resources': {%s}", fields);
  expect_linux_error (body, message);
  free (body);
}

/* A seccomp object with an allow default action, then <fields>. */
static void
expect_seccomp_error (const char *fields, const char *message)
{
  char *body = xasprintf ("'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', %s}", fields);
  expect_linux_error (body, message);
  free (body);
}

static void
expect_hook_error (const char *fields, const char *message)
{
  char *body = xasprintf ("'hooks': {%s}", fields);
  expect_top_error (body, message);
  free (body);
}

static oci_process *
exec_ok (const char *sq)
{
  char *json = J (sq);
  oci_process *p = NULL;
  hv_error *err = NULL;
  int r = oci_process_parse (json, strlen (json), "process.json", &p, &err);
  free (json);
  if (r < 0)
    {
      char msg[1024];
      snprintf (msg, sizeof (msg), "%s", err->msg);
      hv_error_free (&err);
      fail_msg ("unexpected error: %s", msg);
    }
  assert_null (err);
  assert_non_null (p);
  return p;
}

static void
expect_exec_error (const char *sq, const char *message)
{
  char *json = J (sq);
  oci_process *p = NULL;
  hv_error *err = NULL;
  int r = oci_process_parse (json, strlen (json), "process.json", &p, &err);
  free (json);
  if (r == 0)
    {
      oci_process_free (p);
      fail_msg ("accepted: %s (expected \"%s\")", sq, message);
    }
  assert_int_equal (r, -1);
  assert_null (p);
  assert_non_null (err);
  check_message (&err, message);
}

/* ------------------------------------------------------------------ */
/* Accepted documents                                                  */
/* ------------------------------------------------------------------ */

/* `runc spec` (runc 1.1.5), verbatim apart from the quotes. */
static const char RUNC_SPEC[]
    = "{'ociVersion': '1.0.2-dev',"
      " 'process': {'terminal': true, 'user': {'uid': 0, 'gid': 0}, 'args': ['sh'],"
      "   'env': ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'TERM=xterm'],"
      "   'cwd': '/',"
      "   'capabilities': {"
      "     'bounding': ['CAP_AUDIT_WRITE', 'CAP_KILL', 'CAP_NET_BIND_SERVICE'],"
      "     'effective': ['CAP_AUDIT_WRITE', 'CAP_KILL', 'CAP_NET_BIND_SERVICE'],"
      "     'permitted': ['CAP_AUDIT_WRITE', 'CAP_KILL', 'CAP_NET_BIND_SERVICE'],"
      "     'ambient': ['CAP_AUDIT_WRITE', 'CAP_KILL', 'CAP_NET_BIND_SERVICE']},"
      "   'rlimits': [{'type': 'RLIMIT_NOFILE', 'hard': 1024, 'soft': 1024}],"
      "   'noNewPrivileges': true},"
      " 'root': {'path': 'rootfs', 'readonly': true},"
      " 'hostname': 'runc',"
      " 'mounts': ["
      "   {'destination': '/proc', 'type': 'proc', 'source': 'proc'},"
      "   {'destination': '/dev', 'type': 'tmpfs', 'source': 'tmpfs',"
      "    'options': ['nosuid', 'strictatime', 'mode=755', 'size=65536k']},"
      "   {'destination': '/dev/pts', 'type': 'devpts', 'source': 'devpts',"
      "    'options': ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5']},"
      "   {'destination': '/dev/shm', 'type': 'tmpfs', 'source': 'shm',"
      "    'options': ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k']},"
      "   {'destination': '/dev/mqueue', 'type': 'mqueue', 'source': 'mqueue',"
      "    'options': ['nosuid', 'noexec', 'nodev']},"
      "   {'destination': '/sys', 'type': 'sysfs', 'source': 'sysfs', 'options': ['nosuid', 'noexec', 'nodev', 'ro']},"
      "   {'destination': '/sys/fs/cgroup', 'type': 'cgroup', 'source': 'cgroup',"
      "    'options': ['nosuid', 'noexec', 'nodev', 'relatime', 'ro']}],"
      " 'linux': {"
      "   'resources': {'devices': [{'allow': false, 'access': 'rwm'}]},"
      "   'namespaces': [{'type': 'pid'}, {'type': 'network'}, {'type': 'ipc'}, {'type': 'uts'}, {'type': 'mount'}],"
      "   'maskedPaths': ['/proc/acpi', '/proc/asound', '/proc/kcore', '/proc/keys', '/proc/latency_stats',"
      "     '/proc/timer_list', '/proc/timer_stats', '/proc/sched_debug', '/sys/firmware', '/proc/scsi'],"
      "   'readonlyPaths': ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger']}}";

static void
test_runc_spec_default (void **state)
{
  (void) state;
  oci_spec *s = parse_ok (RUNC_SPEC);
  assert_string_equal (s->oci_version, "1.0.2-dev");
  assert_string_equal (s->root.path, "rootfs");
  assert_true (s->root.readonly);
  assert_true (s->has_process);
  assert_true (s->process.terminal);
  assert_false (s->process.has_console_size);
  assert_int_equal (s->process.user.uid, 0);
  assert_false (s->process.user.umask.set);
  assert_int_equal (s->process.args.n, 1);
  assert_string_equal (s->process.args.v[0], "sh");
  assert_null (s->process.args.v[1]); /* NULL-terminated for execve */
  assert_int_equal (s->process.env.n, 2);
  assert_string_equal (s->process.env.v[1], "TERM=xterm");
  assert_true (s->process.capabilities.present);
  assert_int_equal (s->process.capabilities.bounding.n, 3);
  assert_int_equal (s->process.capabilities.inheritable.n, 0);
  assert_string_equal (s->process.capabilities.ambient.v[2], "CAP_NET_BIND_SERVICE");
  assert_int_equal (s->process.n_rlimits, 1);
  assert_int_equal (s->process.rlimits[0].resource, RLIMIT_NOFILE);
  assert_string_equal (s->process.rlimits[0].type, "RLIMIT_NOFILE");
  assert_true (s->process.rlimits[0].hard == 1024 && s->process.rlimits[0].soft == 1024);
  assert_true (s->process.no_new_privileges);
  assert_false (s->process.oom_score_adj.set);
  assert_false (s->process.scheduler.present);
  assert_false (s->process.io_priority.present);
  assert_string_equal (s->hostname, "runc");
  assert_null (s->domainname);
  assert_int_equal (s->n_mounts, 7);
  assert_string_equal (s->mounts[6].destination, "/sys/fs/cgroup");
  assert_string_equal (s->mounts[2].options.v[3], "ptmxmode=0666");
  assert_int_equal (s->mounts[0].options.n, 0);
  assert_int_equal (s->hooks.prestart.n, 0);
  assert_int_equal (s->annotations.n, 0);
  assert_true (s->linux_cfg.present);
  assert_int_equal (s->linux_cfg.n_namespaces, 5);
  assert_int_equal (s->linux_cfg.namespaces[4].type, CLONE_NEWNS);
  assert_null (s->linux_cfg.namespaces[0].path);
  assert_non_null (oci_spec_find_namespace (s, CLONE_NEWUTS));
  assert_null (oci_spec_find_namespace (s, CLONE_NEWUSER));
  assert_true (s->linux_cfg.resources.present);
  assert_false (s->linux_cfg.resources.memory.present);
  assert_int_equal (s->linux_cfg.resources.n_devices, 1);
  assert_false (s->linux_cfg.resources.devices[0].allow);
  assert_null (s->linux_cfg.resources.devices[0].type);
  assert_string_equal (s->linux_cfg.resources.devices[0].access, "rwm");
  assert_true (s->linux_cfg.has_masked_paths);
  assert_int_equal (s->linux_cfg.masked_paths.n, 10);
  assert_string_equal (s->linux_cfg.masked_paths.v[9], "/proc/scsi");
  assert_int_equal (s->linux_cfg.readonly_paths.n, 5);
  assert_false (s->linux_cfg.seccomp.present);
  assert_false (s->linux_cfg.personality.present);
  oci_spec_free (s);
}

/* runc spec plus every section the runtime knows, and unknown fields at
 * every level. */
static const char FULL_CONFIG[]
    = "{'ociVersion': '1.2.0',"
      " 'futureTopLevel': {'nested': [1, 'two', null, {'x': true}]},"
      " 'process': {"
      "   'terminal': true, 'consoleSize': {'height': 24, 'width': 80},"
      "   'user': {'uid': 1000, 'gid': 1001, 'umask': 18, 'additionalGids': [5, 6, 4294967295],"
      "            'username': 'alice', 'futureUserField': 1},"
      "   'args': ['sh', '-c', 'echo hi'],"
      "   'env': ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'TERM=xterm', 'EMPTY='],"
      "   'cwd': '/home/alice',"
      "   'capabilities': {"
      "     'bounding': ['CAP_AUDIT_WRITE', 'CAP_KILL', 'CAP_NET_BIND_SERVICE'],"
      "     'effective': ['CAP_AUDIT_WRITE', 'CAP_KILL', 'CAP_NET_BIND_SERVICE'],"
      "     'inheritable': [],"
      "     'permitted': ['CAP_AUDIT_WRITE', 'CAP_KILL', 'CAP_NET_BIND_SERVICE', 'CAP_CHECKPOINT_RESTORE'],"
      "     'ambient': ['CAP_KILL']},"
      "   'rlimits': [{'type': 'RLIMIT_NOFILE', 'hard': 1024, 'soft': 1024},"
      "     {'type': 'RLIMIT_CORE', 'hard': 18446744073709551615, 'soft': 18446744073709551615},"
      "     {'type': 'RLIMIT_AS', 'hard': 18446744073709551615, 'soft': 0}],"
      "   'noNewPrivileges': true,"
      "   'apparmorProfile': 'haven-default',"
      "   'selinuxLabel': 'system_u:system_r:container_t:s0',"
      "   'oomScoreAdj': -1000,"
      "   'scheduler': {'policy': 'SCHED_DEADLINE', 'nice': -5, 'priority': 0, 'flags': ['SCHED_FLAG_RESET_ON_FORK'],"
      "                 'runtime': 10000000, 'deadline': 20000000, 'period': 30000000},"
      "   'ioPriority': {'class': 'IOPRIO_CLASS_RT', 'priority': 7},"
      "   'execCPUAffinity': {'initial': '0', 'final': '0-3'},"
      "   'futureProcessField': 'x'},"
      " 'root': {'path': 'rootfs', 'readonly': true},"
      " 'hostname': 'runc', 'domainname': 'example.org',"
      " 'mounts': ["
      "   {'destination': '/proc', 'type': 'proc', 'source': 'proc'},"
      "   {'destination': '/dev', 'type': 'tmpfs', 'source': 'tmpfs',"
      "    'options': ['nosuid', 'strictatime', 'mode=755', 'size=65536k']},"
      "   {'destination': '/data', 'type': 'bind', 'source': '/srv/data', 'options': ['rbind', 'ro', 'idmap'],"
      "    'uidMappings': [{'containerID': 0, 'hostID': 100000, 'size': 65536}],"
      "    'gidMappings': [{'containerID': 0, 'hostID': 200000, 'size': 1000}], 'futureMountField': 1}],"
      " 'hooks': {"
      "   'prestart': [{'path': '/usr/bin/prestart', 'args': ['prestart', '--flag'], 'env': ['A=1'], 'timeout': 5}],"
      "   'createRuntime': [{'path': '/usr/bin/cr', 'timeout': 1}, {'path': '/usr/bin/cr2'}],"
      "   'createContainer': [{'path': '/usr/bin/cc', 'timeout': 2}],"
      "   'startContainer': [{'path': '/usr/bin/sc', 'timeout': 3}],"
      "   'poststart': [{'path': '/usr/bin/ps', 'timeout': 4}],"
      "   'poststop': [{'path': '/usr/bin/pst', 'args': ['pst'], 'timeout': 9223372036854775807}],"
      "   'futureHook': [{'path': 'relative-but-unknown'}]},"
      " 'annotations': {'org.example.key': 'value', 'run.haven.cgroup': 'if-limited'},"
      " 'linux': {"
      "   'namespaces': [{'type': 'pid'}, {'type': 'network', 'path': '/var/run/netns/blue'}, {'type': 'ipc'},"
      "     {'type': 'uts'}, {'type': 'mount'}, {'type': 'user'}, {'type': 'cgroup'}, {'type': 'time'}],"
      "   'uidMappings': [{'containerID': 0, 'hostID': 100000, 'size': 65536}],"
      "   'gidMappings': [{'containerID': 0, 'hostID': 200000, 'size': 65536},"
      "     {'containerID': 65536, 'hostID': 4294967295, 'size': 1}],"
      "   'timeOffsets': {'monotonic': {'secs': 86400, 'nanosecs': 500}, 'boottime': {'secs': -3600, 'nanosecs': 0}},"
      "   'devices': [{'path': '/dev/fuse', 'type': 'c', 'major': 10, 'minor': 229, 'fileMode': 438, 'uid': 0,"
      "     'gid': 5}, {'path': '/dev/sda', 'type': 'b', 'major': 8, 'minor': 0},"
      "     {'path': '/dev/fifo', 'type': 'p'}, {'path': '/dev/ttyX', 'type': 'u', 'major': 4, 'minor': 64}],"
      "   'cgroupsPath': '/haven/ctr1',"
      "   'resources': {"
      "     'devices': [{'allow': false, 'access': 'rwm'},"
      "       {'allow': true, 'type': 'c', 'major': 10, 'minor': 229, 'access': 'rwm'},"
      "       {'allow': true, 'type': 'a', 'major': -1, 'minor': -1, 'access': 'r'}],"
      "     'memory': {'limit': 536870912, 'reservation': 268435456, 'swap': -1, 'kernel': 0, 'kernelTCP': 1048576,"
      "       'swappiness': 18446744073709551615, 'disableOOMKiller': false, 'useHierarchy': true,"
      "       'checkBeforeUpdate': true},"
      "     'cpu': {'shares': 1024, 'quota': -1, 'burst': 1000, 'period': 100000, 'realtimeRuntime': 950000,"
      "       'realtimePeriod': 1000000, 'cpus': '0-3', 'mems': '0', 'idle': 1},"
      "     'pids': {'limit': -1},"
      "     'blockIO': {'weight': 500, 'leafWeight': 300,"
      "       'weightDevice': [{'major': 8, 'minor': 0, 'weight': 700, 'leafWeight': 100}],"
      "       'throttleReadBpsDevice': [{'major': 8, 'minor': 0, 'rate': 18446744073709551615}],"
      "       'throttleWriteBpsDevice': [{'major': 8, 'minor': 16, 'rate': 1048576}],"
      "       'throttleReadIOPSDevice': [{'major': 8, 'minor': 0, 'rate': 1000}],"
      "       'throttleWriteIOPSDevice': [{'major': 8, 'minor': 0, 'rate': 500}]},"
      "     'hugepageLimits': [{'pageSize': '2MB', 'limit': 209715200},"
      "       {'pageSize': '1GB', 'limit': 18446744073709551615}],"
      "     'network': {'classID': 1048577, 'priorities': [{'name': 'eth0', 'priority': 500},"
      "       {'name': 'eth1', 'priority': 1000}]},"
      "     'rdma': {'mlx5_1': {'hcaHandles': 3, 'hcaObjects': 10000}},"
      "     'unified': {'memory.high': 'max', 'io.weight': 'default 100'},"
      "     'futureResource': {'anything': [true]}},"
      "   'rootfsPropagation': 'rslave',"
      "   'seccomp': {"
      "     'defaultAction': 'SCMP_ACT_ERRNO', 'defaultErrnoRet': 1,"
      "     'architectures': ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_AARCH64'],"
      "     'flags': ['SECCOMP_FILTER_FLAG_LOG', 'SECCOMP_FILTER_FLAG_SPEC_ALLOW'],"
      "     'listenerPath': '/run/seccomp-agent.sock', 'listenerMetadata': 'meta',"
      "     'syscalls': ["
      "       {'names': ['read', 'write', 'exit_group'], 'action': 'SCMP_ACT_ALLOW'},"
      "       {'names': ['personality'], 'action': 'SCMP_ACT_ALLOW', 'args': ["
      "         {'index': 0, 'value': 0, 'op': 'SCMP_CMP_EQ'},"
      "         {'index': 5, 'value': 18446744073709551615, 'valueTwo': 4294967295, 'op': 'SCMP_CMP_MASKED_EQ'}]},"
      "       {'names': ['mkdir'], 'action': 'SCMP_ACT_ERRNO', 'errnoRet': 38},"
      "       {'names': ['mount'], 'action': 'SCMP_ACT_NOTIFY'},"
      "       {'names': ['ptrace'], 'action': 'SCMP_ACT_KILL_PROCESS', 'futureSyscallField': 1}]},"
      "   'sysctl': {'net.ipv4.ip_forward': '1', 'kernel.shm_rmid_forced': '1'},"
      "   'maskedPaths': ['/proc/acpi', '/proc/kcore'],"
      "   'readonlyPaths': [],"
      "   'mountLabel': 'system_u:object_r:container_file_t:s0',"
      "   'personality': {'domain': 'LINUX32', 'flags': []},"
      "   'futureLinuxField': [1, 2, 3]}}";

static int
setup_full (void **state)
{
  *state = parse_ok (FULL_CONFIG);
  return 0;
}

static int
teardown_full (void **state)
{
  oci_spec_free (*state);
  return 0;
}

static void
test_full_top_level (void **state)
{
  const oci_spec *s = *state;
  assert_string_equal (s->oci_version, "1.2.0");
  assert_string_equal (s->root.path, "rootfs");
  assert_true (s->root.readonly);
  assert_string_equal (s->hostname, "runc");
  assert_string_equal (s->domainname, "example.org");
  assert_int_equal (s->annotations.n, 2);
  assert_string_equal (oci_kv_get (&s->annotations, "org.example.key"), "value");
  assert_string_equal (oci_kv_get (&s->annotations, "run.haven.cgroup"), "if-limited");
  assert_null (oci_kv_get (&s->annotations, "missing"));
}

static void
test_full_process (void **state)
{
  const oci_spec *s = *state;
  const oci_process *p = &s->process;
  assert_true (s->has_process);
  assert_true (p->terminal);
  assert_true (p->has_console_size);
  assert_int_equal (p->console_height, 24);
  assert_int_equal (p->console_width, 80);
  assert_int_equal (p->user.uid, 1000);
  assert_int_equal (p->user.gid, 1001);
  assert_true (p->user.umask.set);
  assert_int_equal (p->user.umask.value, 022);
  assert_int_equal (p->user.n_additional_gids, 3);
  assert_int_equal (p->user.additional_gids[0], 5);
  assert_true (p->user.additional_gids[2] == UINT32_MAX);
  assert_string_equal (p->user.username, "alice");
  assert_int_equal (p->args.n, 3);
  assert_string_equal (p->args.v[2], "echo hi");
  assert_int_equal (p->env.n, 3);
  assert_string_equal (p->env.v[2], "EMPTY=");
  assert_string_equal (p->cwd, "/home/alice");
  assert_true (p->capabilities.present);
  assert_int_equal (p->capabilities.inheritable.n, 0);
  assert_int_equal (p->capabilities.permitted.n, 4);
  assert_string_equal (p->capabilities.permitted.v[3], "CAP_CHECKPOINT_RESTORE");
  assert_int_equal (p->capabilities.ambient.n, 1);
  assert_int_equal (p->n_rlimits, 3);
  assert_int_equal (p->rlimits[1].resource, RLIMIT_CORE);
  assert_true (p->rlimits[1].hard == UINT64_MAX);
  assert_true (p->rlimits[1].soft == UINT64_MAX);
  assert_int_equal (p->rlimits[2].resource, RLIMIT_AS);
  assert_true (p->rlimits[2].hard == UINT64_MAX);
  assert_true (p->rlimits[2].soft == 0);
  assert_true (p->no_new_privileges);
  assert_string_equal (p->apparmor_profile, "haven-default");
  assert_string_equal (p->selinux_label, "system_u:system_r:container_t:s0");
  assert_true (p->oom_score_adj.set);
  assert_int_equal (p->oom_score_adj.value, -1000);
  assert_true (p->scheduler.present);
  assert_int_equal (p->scheduler.policy, 6); /* SCHED_DEADLINE */
  assert_int_equal (p->scheduler.nice, -5);
  assert_int_equal (p->scheduler.priority, 0);
  assert_string_equal (p->scheduler.flags.v[0], "SCHED_FLAG_RESET_ON_FORK");
  assert_true (p->scheduler.runtime == 10000000);
  assert_true (p->scheduler.deadline == 20000000);
  assert_true (p->scheduler.period == 30000000);
  assert_true (p->io_priority.present);
  assert_int_equal (p->io_priority.klass, 1); /* IOPRIO_CLASS_RT */
  assert_int_equal (p->io_priority.priority, 7);
  assert_string_equal (p->exec_cpu_affinity_initial, "0");
  assert_string_equal (p->exec_cpu_affinity_final, "0-3");
}

static void
test_full_mounts (void **state)
{
  const oci_spec *s = *state;
  assert_int_equal (s->n_mounts, 3);
  assert_string_equal (s->mounts[0].destination, "/proc");
  assert_string_equal (s->mounts[0].type, "proc");
  assert_string_equal (s->mounts[0].source, "proc");
  assert_int_equal (s->mounts[1].options.n, 4);
  assert_string_equal (s->mounts[1].options.v[3], "size=65536k");
  const oci_mount *m = &s->mounts[2];
  assert_string_equal (m->source, "/srv/data");
  assert_string_equal (m->options.v[2], "idmap");
  assert_int_equal (m->uid_mappings.n, 1);
  assert_int_equal (m->uid_mappings.v[0].host_id, 100000);
  assert_int_equal (m->uid_mappings.v[0].size, 65536);
  assert_int_equal (m->gid_mappings.v[0].size, 1000);
}

static void
test_full_hooks (void **state)
{
  const oci_hooks *h = &((const oci_spec *) *state)->hooks;
  assert_int_equal (h->prestart.n, 1);
  assert_string_equal (h->prestart.v[0].path, "/usr/bin/prestart");
  assert_int_equal (h->prestart.v[0].args.n, 2);
  assert_string_equal (h->prestart.v[0].args.v[1], "--flag");
  assert_string_equal (h->prestart.v[0].env.v[0], "A=1");
  assert_true (h->prestart.v[0].timeout.set);
  assert_int_equal (h->prestart.v[0].timeout.value, 5);
  assert_int_equal (h->create_runtime.n, 2);
  assert_int_equal (h->create_runtime.v[0].timeout.value, 1);
  assert_false (h->create_runtime.v[1].timeout.set);
  assert_string_equal (h->create_runtime.v[1].path, "/usr/bin/cr2");
  assert_int_equal (h->create_runtime.v[1].args.n, 0);
  assert_int_equal (h->create_container.v[0].timeout.value, 2);
  assert_string_equal (h->start_container.v[0].path, "/usr/bin/sc");
  assert_int_equal (h->start_container.v[0].timeout.value, 3);
  assert_int_equal (h->poststart.v[0].timeout.value, 4);
  assert_true (h->poststop.v[0].timeout.value == INT64_MAX);
  assert_string_equal (h->poststop.v[0].args.v[0], "pst");
}

static void
test_full_linux_namespaces_ids_devices (void **state)
{
  const oci_linux *l = &((const oci_spec *) *state)->linux_cfg;
  static const int types[] = { CLONE_NEWPID,  CLONE_NEWNET,  CLONE_NEWIPC,    CLONE_NEWUTS,
                               CLONE_NEWNS,   CLONE_NEWUSER, CLONE_NEWCGROUP, CLONE_NEWTIME };
  assert_true (l->present);
  assert_int_equal (l->n_namespaces, 8);
  for (size_t i = 0; i < 8; i++)
    assert_int_equal (l->namespaces[i].type, types[i]);
  assert_string_equal (l->namespaces[1].path, "/var/run/netns/blue");
  assert_null (l->namespaces[0].path);
  assert_int_equal (l->uid_mappings.n, 1);
  assert_int_equal (l->uid_mappings.v[0].container_id, 0);
  assert_int_equal (l->uid_mappings.v[0].host_id, 100000);
  assert_int_equal (l->uid_mappings.v[0].size, 65536);
  assert_int_equal (l->gid_mappings.n, 2);
  assert_int_equal (l->gid_mappings.v[1].container_id, 65536);
  assert_true (l->gid_mappings.v[1].host_id == UINT32_MAX);
  assert_true (l->has_time_monotonic);
  assert_int_equal (l->time_monotonic.secs, 86400);
  assert_int_equal (l->time_monotonic.nanosecs, 500);
  assert_true (l->has_time_boottime);
  assert_int_equal (l->time_boottime.secs, -3600);
  assert_int_equal (l->n_devices, 4);
  assert_string_equal (l->devices[0].path, "/dev/fuse");
  assert_int_equal (l->devices[0].type, 'c');
  assert_int_equal (l->devices[0].major, 10);
  assert_int_equal (l->devices[0].minor, 229);
  assert_true (l->devices[0].file_mode.set);
  assert_int_equal (l->devices[0].file_mode.value, 0666);
  assert_true (l->devices[0].uid.set);
  assert_int_equal (l->devices[0].gid.value, 5);
  assert_int_equal (l->devices[1].type, 'b');
  assert_false (l->devices[1].file_mode.set);
  assert_int_equal (l->devices[2].type, 'p');
  assert_int_equal (l->devices[3].type, 'u');
  assert_int_equal (l->devices[3].minor, 64);
  assert_string_equal (l->cgroups_path, "/haven/ctr1");
  assert_string_equal (l->rootfs_propagation, "rslave");
}

static void
test_full_resources (void **state)
{
  const oci_resources *r = &((const oci_spec *) *state)->linux_cfg.resources;
  assert_true (r->present);
  assert_int_equal (r->n_devices, 3);
  assert_false (r->devices[0].allow);
  assert_true (r->devices[1].allow);
  assert_string_equal (r->devices[1].type, "c");
  assert_int_equal (r->devices[1].major.value, 10);
  assert_int_equal (r->devices[1].minor.value, 229);
  assert_false (r->devices[0].major.set);
  assert_int_equal (r->devices[2].major.value, -1);
  assert_string_equal (r->devices[2].access, "r");

  assert_true (r->memory.present);
  assert_int_equal (r->memory.limit.value, 536870912);
  assert_int_equal (r->memory.reservation.value, 268435456);
  assert_true (r->memory.swap.set);
  assert_int_equal (r->memory.swap.value, -1);
  assert_true (r->memory.kernel.set);
  assert_int_equal (r->memory.kernel.value, 0);
  assert_int_equal (r->memory.kernel_tcp.value, 1048576);
  assert_true (r->memory.swappiness.value == UINT64_MAX);
  assert_true (r->memory.disable_oom_killer.set);
  assert_false (r->memory.disable_oom_killer.value);
  assert_true (r->memory.use_hierarchy.value);
  assert_true (r->memory.check_before_update.value);

  assert_true (r->cpu.present);
  assert_int_equal (r->cpu.shares.value, 1024);
  assert_int_equal (r->cpu.quota.value, -1);
  assert_int_equal (r->cpu.burst.value, 1000);
  assert_int_equal (r->cpu.period.value, 100000);
  assert_int_equal (r->cpu.realtime_runtime.value, 950000);
  assert_int_equal (r->cpu.realtime_period.value, 1000000);
  assert_string_equal (r->cpu.cpus, "0-3");
  assert_string_equal (r->cpu.mems, "0");
  assert_int_equal (r->cpu.idle.value, 1);

  assert_true (r->pids.present);
  assert_int_equal (r->pids.limit.value, -1);

  assert_true (r->block_io.present);
  assert_int_equal (r->block_io.weight.value, 500);
  assert_int_equal (r->block_io.leaf_weight.value, 300);
  assert_int_equal (r->block_io.weight_device.n, 1);
  assert_int_equal (r->block_io.weight_device.v[0].weight.value, 700);
  assert_int_equal (r->block_io.weight_device.v[0].leaf_weight.value, 100);
  assert_true (r->block_io.throttle_read_bps.v[0].rate == UINT64_MAX);
  assert_int_equal (r->block_io.throttle_write_bps.v[0].minor, 16);
  assert_int_equal (r->block_io.throttle_write_bps.v[0].rate, 1048576);
  assert_int_equal (r->block_io.throttle_read_iops.v[0].rate, 1000);
  assert_int_equal (r->block_io.throttle_write_iops.v[0].rate, 500);

  assert_int_equal (r->n_hugepage_limits, 2);
  assert_string_equal (r->hugepage_limits[0].page_size, "2MB");
  assert_int_equal (r->hugepage_limits[0].limit, 209715200);
  assert_true (r->hugepage_limits[1].limit == UINT64_MAX);

  assert_true (r->network.present);
  assert_int_equal (r->network.class_id.value, 1048577);
  assert_int_equal (r->network.n_priorities, 2);
  assert_string_equal (r->network.priorities[1].name, "eth1");
  assert_int_equal (r->network.priorities[1].priority, 1000);

  assert_int_equal (r->n_rdma, 1);
  assert_string_equal (r->rdma[0].device, "mlx5_1");
  assert_int_equal (r->rdma[0].hca_handles.value, 3);
  assert_int_equal (r->rdma[0].hca_objects.value, 10000);

  assert_int_equal (r->unified.n, 2);
  assert_string_equal (oci_kv_get (&r->unified, "io.weight"), "default 100");
}

static void
test_full_seccomp (void **state)
{
  const oci_seccomp *sc = &((const oci_spec *) *state)->linux_cfg.seccomp;
  assert_true (sc->present);
  assert_int_equal (sc->default_action, OCI_SCMP_ERRNO);
  assert_string_equal (sc->default_action_name, "SCMP_ACT_ERRNO");
  assert_true (sc->default_errno_ret.set);
  assert_int_equal (sc->default_errno_ret.value, 1);
  assert_int_equal (sc->architectures.n, 3);
  assert_string_equal (sc->architectures.v[2], "SCMP_ARCH_AARCH64");
  assert_int_equal (sc->flags.n, 2);
  assert_string_equal (sc->flags.v[1], "SECCOMP_FILTER_FLAG_SPEC_ALLOW");
  assert_string_equal (sc->listener_path, "/run/seccomp-agent.sock");
  assert_string_equal (sc->listener_metadata, "meta");
  assert_int_equal (sc->n_syscalls, 5);
  assert_int_equal (sc->syscalls[0].n, 3);
  assert_string_equal (sc->syscalls[0].names[2], "exit_group");
  assert_int_equal (sc->syscalls[0].action, OCI_SCMP_ALLOW);
  assert_int_equal (sc->syscalls[0].n_args, 0);
  assert_false (sc->syscalls[0].errno_ret.set);
  const oci_seccomp_syscall *pers = &sc->syscalls[1];
  assert_int_equal (pers->n_args, 2);
  assert_int_equal (pers->args[0].index, 0);
  assert_int_equal (pers->args[0].op, OCI_SCMP_CMP_EQ);
  assert_int_equal (pers->args[1].index, 5);
  assert_true (pers->args[1].value == UINT64_MAX);
  assert_true (pers->args[1].value_two == UINT32_MAX);
  assert_int_equal (pers->args[1].op, OCI_SCMP_CMP_MASKED_EQ);
  assert_int_equal (sc->syscalls[2].action, OCI_SCMP_ERRNO);
  assert_true (sc->syscalls[2].errno_ret.set);
  assert_int_equal (sc->syscalls[2].errno_ret.value, 38);
  assert_int_equal (sc->syscalls[3].action, OCI_SCMP_NOTIFY);
  assert_int_equal (sc->syscalls[4].action, OCI_SCMP_KILL_PROCESS);
  assert_string_equal (sc->syscalls[4].action_name, "SCMP_ACT_KILL_PROCESS");
}

static void
test_full_linux_misc (void **state)
{
  const oci_linux *l = &((const oci_spec *) *state)->linux_cfg;
  assert_int_equal (l->sysctl.n, 2);
  assert_string_equal (oci_kv_get (&l->sysctl, "net.ipv4.ip_forward"), "1");
  assert_string_equal (oci_kv_get (&l->sysctl, "kernel.shm_rmid_forced"), "1");
  assert_true (l->has_masked_paths);
  assert_int_equal (l->masked_paths.n, 2);
  assert_string_equal (l->masked_paths.v[1], "/proc/kcore");
  /* An empty list is present (mask nothing), not absent (use defaults). */
  assert_true (l->has_readonly_paths);
  assert_int_equal (l->readonly_paths.n, 0);
  assert_string_equal (l->mount_label, "system_u:object_r:container_file_t:s0");
  assert_true (l->personality.present);
  assert_string_equal (l->personality.domain, "LINUX32");
  assert_int_equal (l->personality.flags.n, 0);
  assert_false (l->intel_rdt.present);
  assert_int_equal (l->net_devices.n, 0);
}

static void
test_minimal_document (void **state)
{
  (void) state;
  oci_spec *s = parse_ok ("{'ociVersion': '1.0.0'}");
  assert_string_equal (s->oci_version, "1.0.0");
  assert_null (s->root.path);
  assert_false (s->has_process);
  assert_null (s->process.cwd);
  assert_int_equal (s->n_mounts, 0);
  assert_null (s->hostname);
  assert_int_equal (s->annotations.n, 0);
  assert_false (s->linux_cfg.present);
  assert_false (s->linux_cfg.has_masked_paths);
  assert_false (s->linux_cfg.has_readonly_paths);
  oci_spec_free (s);

  /* A config.json process may leave args to `exec`/the engine. */
  s = parse_top_ok ("'process': {'cwd': '/'}, 'linux': {}");
  assert_true (s->has_process);
  assert_int_equal (s->process.args.n, 0);
  assert_true (s->linux_cfg.present);
  assert_int_equal (s->linux_cfg.n_namespaces, 0);
  oci_spec_free (s);
}

static void
test_oci_versions (void **state)
{
  (void) state;
  static const char *const ok[] = { "1.0.0", "1.0.2-dev", "1.1.0", "1.2.0", "1.2.1", "1.3.0-rc.1" };
  for (size_t i = 0; i < sizeof (ok) / sizeof (ok[0]); i++)
    {
      char *doc = xasprintf ("{'ociVersion': '%s'}", ok[i]);
      oci_spec *s = parse_ok (doc);
      assert_string_equal (s->oci_version, ok[i]);
      oci_spec_free (s);
      free (doc);
    }
  expect_error ("{'root': {'path': 'rootfs'}}", "config.json: .ociVersion: required field is missing");
  expect_error ("{'ociVersion': null}", "config.json: .ociVersion: required field is missing");
  expect_error ("{'ociVersion': '2.0.0'}",
                "config.json: .ociVersion: unsupported version \"2.0.0\" (this runtime implements 1.x)");
  expect_error ("{'ociVersion': '0.6.0'}",
                "config.json: .ociVersion: unsupported version \"0.6.0\" (this runtime implements 1.x)");
  expect_error ("{'ociVersion': ''}",
                "config.json: .ociVersion: unsupported version \"\" (this runtime implements 1.x)");
  expect_error ("{'ociVersion': 1.0}", "config.json: .ociVersion: expected a string");
}

static void
test_null_is_absent (void **state)
{
  (void) state;
  oci_spec *s = parse_top_ok ("'hostname': null, 'domainname': null, 'mounts': null, 'hooks': null,"
                              "'annotations': null, 'process': null,"
                              "'linux': {'seccomp': null, 'resources': null, 'namespaces': null,"
                              "  'maskedPaths': null, 'readonlyPaths': null, 'personality': null,"
                              "  'uidMappings': null, 'devices': null, 'sysctl': null, 'timeOffsets': null,"
                              "  'rootfsPropagation': null, 'cgroupsPath': null}");
  assert_null (s->hostname);
  assert_null (s->domainname);
  assert_int_equal (s->n_mounts, 0);
  assert_false (s->has_process);
  assert_true (s->linux_cfg.present);
  assert_false (s->linux_cfg.seccomp.present);
  assert_false (s->linux_cfg.resources.present);
  assert_int_equal (s->linux_cfg.n_namespaces, 0);
  assert_false (s->linux_cfg.has_masked_paths);
  assert_false (s->linux_cfg.has_readonly_paths);
  assert_false (s->linux_cfg.personality.present);
  assert_null (s->linux_cfg.rootfs_propagation);
  assert_null (s->linux_cfg.cgroups_path);
  oci_spec_free (s);

  /* Nested nulls too: Go encoders emit them for nil pointers. */
  s = parse_top_ok ("'process': {'cwd': '/', 'args': ['sh'], 'user': {'uid': 7, 'umask': null,"
                    "  'additionalGids': null}, 'rlimits': null, 'capabilities': null, 'oomScoreAdj': null,"
                    "  'scheduler': null, 'ioPriority': null, 'consoleSize': null, 'terminal': null},"
                    "'linux': {'resources': {'memory': {'limit': null, 'swap': 5}, 'cpu': null, 'pids': null,"
                    "  'devices': null}, 'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', 'syscalls': null,"
                    "  'architectures': null, 'defaultErrnoRet': null}},"
                    "'hooks': {'prestart': null, 'poststop': [{'path': '/bin/true', 'timeout': null}]}");
  assert_int_equal (s->process.user.uid, 7);
  assert_false (s->process.user.umask.set);
  assert_int_equal (s->process.n_rlimits, 0);
  assert_false (s->process.capabilities.present);
  assert_false (s->process.oom_score_adj.set);
  assert_false (s->process.scheduler.present);
  assert_false (s->process.has_console_size);
  assert_false (s->process.terminal);
  assert_true (s->linux_cfg.resources.memory.present);
  assert_false (s->linux_cfg.resources.memory.limit.set);
  assert_true (s->linux_cfg.resources.memory.swap.set);
  assert_false (s->linux_cfg.resources.cpu.present);
  assert_true (s->linux_cfg.seccomp.present);
  assert_int_equal (s->linux_cfg.seccomp.n_syscalls, 0);
  assert_false (s->linux_cfg.seccomp.default_errno_ret.set);
  assert_false (s->hooks.poststop.v[0].timeout.set);
  oci_spec_free (s);
}

static void
test_unknown_fields_ignored (void **state)
{
  (void) state;
  /* Unknown properties must be ignored, whatever their type. */
  oci_spec *s = parse_top_ok ("'vm': {'hypervisor': {'path': 42}}, 'windows': [1], 'solaris': null,"
                              "'process': {'cwd': '/', 'args': ['sh'], 'unknownThing': {'a': [null, 1.5e3]},"
                              "  'user': {'uid': 1, 'extra': 'x'}, 'capabilities': {'unknownSet': 7}},"
                              "'mounts': [{'destination': '/x', 'unknown': false}],"
                              "'hooks': {'preStart': 'not checked', 'unknownHookKind': {}},"
                              "'linux': {'unknown': 1, 'resources': {'memory': {'unknown': 'x'}, 'future': 1},"
                              "  'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', 'unknown': []},"
                              "  'namespaces': [{'type': 'pid', 'unknown': {}}]}");
  assert_int_equal (s->process.user.uid, 1);
  assert_true (s->process.capabilities.present);
  assert_int_equal (s->process.capabilities.bounding.n, 0);
  assert_int_equal (s->n_mounts, 1);
  assert_null (s->mounts[0].type);
  assert_int_equal (s->hooks.prestart.n, 0);
  assert_int_equal (s->linux_cfg.n_namespaces, 1);
  oci_spec_free (s);
}

static void
test_duplicate_keys_last_wins (void **state)
{
  (void) state;
  /* As Go's encoding/json: the engine that wrote the config and this
   * runtime must read the same value. */
  oci_spec *s = parse_top_ok ("'hostname': 'first', 'hostname': 'second',"
                              "'process': {'cwd': '/a', 'args': ['one'], 'cwd': '/b', 'args': ['two']},"
                              "'annotations': {'run.haven.policy': 'strict', 'k': 'v', 'run.haven.policy': 'none'},"
                              "'linux': {'sysctl': {'kernel.msgmax': '1', 'kernel.msgmax': '2'}}");
  assert_string_equal (s->hostname, "second");
  assert_string_equal (s->process.cwd, "/b");
  assert_string_equal (s->process.args.v[0], "two");
  assert_string_equal (oci_kv_get (&s->annotations, "run.haven.policy"), "none");
  assert_string_equal (oci_kv_get (&s->linux_cfg.sysctl, "kernel.msgmax"), "2");
  /* The map holds each key once, so iterating it agrees with lookups. */
  assert_int_equal (s->annotations.n, 2);
  assert_int_equal (s->linux_cfg.sysctl.n, 1);
  oci_spec_free (s);

  /* The shadowed value is not validated ... */
  s = parse_top_ok ("'hostname': 5, 'hostname': 'ok'");
  assert_string_equal (s->hostname, "ok");
  oci_spec_free (s);
  /* ... but the winning one is. */
  expect_top_error ("'hostname': 'ok', 'hostname': 5", "config.json: .hostname: expected a string");
}

static void
test_integer_bounds (void **state)
{
  (void) state;
  oci_spec *s = parse_linux_ok ("'resources': {'memory': {'limit': 9223372036854775807,"
                                "  'reservation': -9223372036854775808, 'swappiness': 0},"
                                "  'cpu': {'shares': 18446744073709551615}}");
  assert_true (s->linux_cfg.resources.memory.limit.value == INT64_MAX);
  assert_true (s->linux_cfg.resources.memory.reservation.value == INT64_MIN);
  assert_true (s->linux_cfg.resources.memory.swappiness.set);
  assert_true (s->linux_cfg.resources.memory.swappiness.value == 0);
  assert_true (s->linux_cfg.resources.cpu.shares.value == UINT64_MAX);
  oci_spec_free (s);

  expect_process_error ("'rlimits': [{'type': 'RLIMIT_CPU', 'hard': 18446744073709551616, 'soft': 1}]",
                        "config.json: .process.rlimits[0].hard: integer 18446744073709551616 out of range");
  expect_linux_error ("'resources': {'memory': {'limit': 9223372036854775808}}",
                      "config.json: .linux.resources.memory.limit: integer 9223372036854775808 out of range");
  expect_linux_error ("'resources': {'memory': {'limit': -9223372036854775809}}",
                      "config.json: .linux.resources.memory.limit: integer -9223372036854775809 out of range");
  expect_process_error ("'user': {'uid': 4294967296}",
                        "config.json: .process.user.uid: integer 4294967296 out of range for 32 bits");
  expect_process_error ("'consoleSize': {'height': 4294967296, 'width': 1}",
                        "config.json: .process.consoleSize.height: integer 4294967296 out of range for 32 bits");
  expect_linux_error ("'gidMappings': [{'containerID': 0, 'hostID': 0, 'size': 4294967296}]",
                      "config.json: .linux.gidMappings[0].size: integer 4294967296 out of range for 32 bits");
}

static void
test_non_integer_numbers (void **state)
{
  (void) state;
  expect_process_error ("'rlimits': [{'type': 'RLIMIT_CPU', 'hard': 1.5, 'soft': 1}]",
                        "config.json: .process.rlimits[0].hard: expected an unsigned integer");
  expect_process_error ("'rlimits': [{'type': 'RLIMIT_CPU', 'hard': 1e3, 'soft': 1}]",
                        "config.json: .process.rlimits[0].hard: expected an unsigned integer");
  expect_process_error ("'rlimits': [{'type': 'RLIMIT_CPU', 'hard': 1.0, 'soft': 1}]",
                        "config.json: .process.rlimits[0].hard: expected an unsigned integer");
  expect_linux_error ("'resources': {'pids': {'limit': 2.5}}",
                      "config.json: .linux.resources.pids.limit: expected an integer");
  expect_linux_error ("'resources': {'pids': {'limit': true}}",
                      "config.json: .linux.resources.pids.limit: expected an integer");
  expect_linux_error ("'resources': {'memory': {'limit': '1G'}}",
                      "config.json: .linux.resources.memory.limit: expected an integer");
}

/* ------------------------------------------------------------------ */
/* Rejections: type errors                                             */
/* ------------------------------------------------------------------ */

static void
test_rlimit_wrong_type_third (void **state)
{
  (void) state;
  /* The example from the documentation of the message format. */
  expect_process_error ("'rlimits': [{'type': 'RLIMIT_NOFILE', 'hard': 1024, 'soft': 1024},"
                        "  {'type': 'RLIMIT_CORE', 'hard': 0, 'soft': 0},"
                        "  {'type': 'RLIMIT_NPROC', 'hard': '4096', 'soft': 4096}]",
                        "config.json: .process.rlimits[2].hard: expected an unsigned integer");
  expect_process_error ("'rlimits': [{'type': 'RLIMIT_NOFILE', 'hard': 1024, 'soft': 1024},"
                        "  {'type': 'RLIMIT_CORE', 'hard': 0, 'soft': 0},"
                        "  {'type': 'RLIMIT_NPROC', 'hard': 4096, 'soft': null}]",
                        "config.json: .process.rlimits[2]: rlimit needs both \"soft\" and \"hard\"");
}

static void
test_negative_unsigned (void **state)
{
  (void) state;
  expect_process_error ("'rlimits': [{'type': 'RLIMIT_CORE', 'hard': -1, 'soft': 0}]",
                        "config.json: .process.rlimits[0].hard: expected an unsigned integer");
  expect_process_error ("'user': {'uid': -1}", "config.json: .process.user.uid: expected an unsigned integer");
  expect_process_error ("'user': {'gid': -5}", "config.json: .process.user.gid: expected an unsigned integer");
  expect_process_error ("'user': {'additionalGids': [1, -2]}",
                        "config.json: .process.user.additionalGids[1]: expected an unsigned integer");
  expect_process_error ("'user': {'umask': -1}", "config.json: .process.user.umask: expected an unsigned integer");
  expect_linux_error ("'uidMappings': [{'containerID': 0, 'hostID': -100000, 'size': 1}]",
                      "config.json: .linux.uidMappings[0].hostID: expected an unsigned integer");
  expect_resources_error ("'cpu': {'shares': -1024}",
                          "config.json: .linux.resources.cpu.shares: expected an unsigned integer");
  expect_resources_error ("'blockIO': {'throttleReadBpsDevice': [{'major': 8, 'minor': 0, 'rate': -1}]}",
                          "config.json: .linux.resources.blockIO.throttleReadBpsDevice[0].rate: expected an unsigned "
                          "integer");
  expect_resources_error ("'hugepageLimits': [{'pageSize': '2MB', 'limit': -1}]",
                          "config.json: .linux.resources.hugepageLimits[0].limit: expected an unsigned integer");
  expect_seccomp_error ("'defaultErrnoRet': -1",
                        "config.json: .linux.seccomp.defaultErrnoRet: expected an unsigned integer");
  expect_seccomp_error ("'syscalls': [{'names': ['read'], 'action': 'SCMP_ACT_ALLOW',"
                        "  'args': [{'index': 0, 'value': -1, 'op': 'SCMP_CMP_EQ'}]}]",
                        "config.json: .linux.seccomp.syscalls[0].args[0].value: expected an unsigned integer");
  expect_linux_error ("'timeOffsets': {'monotonic': {'secs': 1, 'nanosecs': -1}}",
                      "config.json: .linux.timeOffsets.monotonic.nanosecs: expected an unsigned integer");
  expect_linux_error ("'devices': [{'path': '/dev/x', 'type': 'c', 'major': 1, 'minor': 1, 'fileMode': -1}]",
                      "config.json: .linux.devices[0].fileMode: expected an unsigned integer");
}

static void
test_wrong_type_objects (void **state)
{
  (void) state;
  expect_error ("[1, 2]", "config.json: .: expected an object");
  expect_error ("'just a string'", "config.json: .: expected an object");
  expect_error ("null", "config.json: .: expected an object");
  expect_top_error ("'process': []", "config.json: .process: expected an object");
  expect_top_error ("'root': 'rootfs'", "config.json: .root: expected an object");
  expect_top_error ("'linux': true", "config.json: .linux: expected an object");
  expect_top_error ("'hooks': []", "config.json: .hooks: expected an object");
  expect_top_error ("'annotations': ['a=b']", "config.json: .annotations: expected an object");
  expect_top_error ("'mounts': ['/proc']", "config.json: .mounts[0]: expected an object");
  expect_process_error ("'user': 0", "config.json: .process.user: expected an object");
  expect_process_error ("'capabilities': ['CAP_KILL']", "config.json: .process.capabilities: expected an object");
  expect_process_error ("'rlimits': ['RLIMIT_CORE']", "config.json: .process.rlimits[0]: expected an object");
  expect_process_error ("'consoleSize': [24, 80]", "config.json: .process.consoleSize: expected an object");
  expect_linux_error ("'resources': {'memory': []}", "config.json: .linux.resources.memory: expected an object");
  expect_linux_error ("'seccomp': 'unconfined'", "config.json: .linux.seccomp: expected an object");
  expect_linux_error ("'namespaces': ['pid']", "config.json: .linux.namespaces[0]: expected an object");
  expect_linux_error ("'sysctl': []", "config.json: .linux.sysctl: expected an object");
  expect_linux_error ("'timeOffsets': {'boottime': 5}", "config.json: .linux.timeOffsets.boottime: expected an object");
  expect_resources_error ("'rdma': {'mlx5_1': 3}", "config.json: .linux.resources.rdma.mlx5_1: expected an object");
  expect_hook_error ("'poststop': ['/bin/true']", "config.json: .hooks.poststop[0]: expected an object");
}

static void
test_wrong_type_arrays (void **state)
{
  (void) state;
  expect_top_error ("'mounts': {}", "config.json: .mounts: expected an array");
  expect_process_error ("'args': 'sh -c true'", "config.json: .process.args: expected an array");
  expect_process_error ("'env': {'A': 'b'}", "config.json: .process.env: expected an array");
  expect_process_error ("'rlimits': {'RLIMIT_CORE': 1}", "config.json: .process.rlimits: expected an array");
  expect_process_error ("'capabilities': {'bounding': 'CAP_KILL'}",
                        "config.json: .process.capabilities.bounding: expected an array");
  expect_process_error ("'user': {'additionalGids': 5}",
                        "config.json: .process.user.additionalGids: expected an array");
  expect_linux_error ("'namespaces': {'pid': {}}", "config.json: .linux.namespaces: expected an array");
  expect_linux_error ("'maskedPaths': '/proc/kcore'", "config.json: .linux.maskedPaths: expected an array");
  expect_linux_error ("'devices': {}", "config.json: .linux.devices: expected an array");
  expect_seccomp_error ("'syscalls': {}", "config.json: .linux.seccomp.syscalls: expected an array");
  expect_seccomp_error ("'syscalls': [{'names': 'read', 'action': 'SCMP_ACT_ALLOW'}]",
                        "config.json: .linux.seccomp.syscalls[0].names: expected an array");
  expect_hook_error ("'prestart': {'path': '/bin/true'}", "config.json: .hooks.prestart: expected an array");
  expect_top_error ("'mounts': [{'destination': '/x', 'options': 'ro'}]",
                    "config.json: .mounts[0].options: expected an array");
}

static void
test_wrong_type_strings (void **state)
{
  (void) state;
  expect_top_error ("'hostname': 5", "config.json: .hostname: expected a string");
  expect_top_error ("'domainname': ['a']", "config.json: .domainname: expected a string");
  expect_error ("{'ociVersion': '1.0.2', 'root': {'path': true}}", "config.json: .root.path: expected a string");
  expect_process_error ("'args': ['sh', 1]", "config.json: .process.args[1]: expected a string");
  expect_process_error ("'cwd': 7", "config.json: .process.cwd: expected a string");
  expect_process_error ("'env': ['A=1', null]", "config.json: .process.env[1]: expected a string");
  expect_process_error ("'capabilities': {'ambient': [12]}",
                        "config.json: .process.capabilities.ambient[0]: expected a string");
  expect_top_error ("'annotations': {'a': 1}", "config.json: .annotations.a: expected a string");
  expect_top_error ("'mounts': [{'destination': '/x', 'options': ['ro', false]}]",
                    "config.json: .mounts[0].options[1]: expected a string");
  expect_linux_error ("'sysctl': {'net.ipv4.ip_forward': 1}",
                      "config.json: .linux.sysctl.net.ipv4.ip_forward: expected a string");
  expect_linux_error ("'cgroupsPath': {}", "config.json: .linux.cgroupsPath: expected a string");
  expect_resources_error ("'unified': {'memory.max': 100}",
                          "config.json: .linux.resources.unified.memory.max: expected a string");
  expect_seccomp_error ("'syscalls': [{'names': ['read', 0], 'action': 'SCMP_ACT_ALLOW'}]",
                        "config.json: .linux.seccomp.syscalls[0].names[1]: expected a string");
  expect_hook_error ("'prestart': [{'path': '/bin/x', 'args': ['x', 1]}]",
                     "config.json: .hooks.prestart[0].args[1]: expected a string");
}

static void
test_wrong_type_booleans (void **state)
{
  (void) state;
  expect_error ("{'ociVersion': '1.0.2', 'root': {'path': 'r', 'readonly': 'yes'}}",
                "config.json: .root.readonly: expected a boolean");
  expect_process_error ("'terminal': 1", "config.json: .process.terminal: expected a boolean");
  expect_process_error ("'noNewPrivileges': 'true'", "config.json: .process.noNewPrivileges: expected a boolean");
  expect_resources_error ("'memory': {'disableOOMKiller': 0}",
                          "config.json: .linux.resources.memory.disableOOMKiller: expected a boolean");
  expect_resources_error ("'devices': [{'allow': 'yes', 'access': 'r'}]",
                          "config.json: .linux.resources.devices[0].allow: expected a boolean");
  expect_linux_error ("'intelRdt': {'enableCMT': 'on'}", "config.json: .linux.intelRdt.enableCMT: expected a boolean");
}

/* ------------------------------------------------------------------ */
/* Rejections: process                                                 */
/* ------------------------------------------------------------------ */

static void
test_process_cwd (void **state)
{
  (void) state;
  expect_top_error ("'process': {'args': ['sh']}", "config.json: .process.cwd: required field is missing");
  expect_process_error ("'cwd': null", "config.json: .process.cwd: required field is missing");
  expect_process_error ("'cwd': 'work'", "config.json: .process.cwd: \"work\" is not an absolute path");
  expect_process_error ("'cwd': ''", "config.json: .process.cwd: \"\" is not an absolute path");
}

static void
test_process_env (void **state)
{
  (void) state;
  expect_process_error ("'env': ['A=1', 'NOEQUALS']",
                        "config.json: .process.env[1]: \"NOEQUALS\" is not of the form KEY=value");
  expect_process_error ("'env': ['']", "config.json: .process.env[0]: \"\" is not of the form KEY=value");
  oci_spec *s = parse_process_ok ("'env': ['A=', '=b', 'C=d=e']");
  assert_int_equal (s->process.env.n, 3);
  assert_string_equal (s->process.env.v[2], "C=d=e");
  oci_spec_free (s);
}

static void
test_process_capabilities (void **state)
{
  (void) state;
  expect_process_error ("'capabilities': {'effective': ['CAP_KILL', 'CAP_FLY']}",
                        "config.json: .process.capabilities.effective[1]: unknown capability \"CAP_FLY\"");
  expect_process_error ("'capabilities': {'bounding': ['cap_kill']}",
                        "config.json: .process.capabilities.bounding[0]: unknown capability \"cap_kill\"");
  expect_process_error ("'capabilities': {'ambient': ['KILL']}",
                        "config.json: .process.capabilities.ambient[0]: unknown capability \"KILL\"");
  expect_process_error ("'capabilities': {'inheritable': ['CAP_SYS_ADMIN', 'CAP_CHOWN', 'CAP_BOGUS']}",
                        "config.json: .process.capabilities.inheritable[2]: unknown capability \"CAP_BOGUS\"");
  expect_process_error ("'capabilities': {'permitted': ['']}",
                        "config.json: .process.capabilities.permitted[0]: unknown capability \"\"");
  /* Every capability the kernel headers know is accepted. */
  for (int cap = 0; cap <= oci_capability_last (); cap++)
    {
      char *fields = xasprintf ("'capabilities': {'bounding': ['%s']}", oci_capability_name (cap));
      oci_spec *s = parse_process_ok (fields);
      assert_int_equal (oci_capability_from_name (s->process.capabilities.bounding.v[0]), cap);
      oci_spec_free (s);
      free (fields);
    }
}

static void
test_process_rlimits (void **state)
{
  (void) state;
  expect_process_error ("'rlimits': [{'type': 'RLIMIT_FOO', 'hard': 1, 'soft': 1}]",
                        "config.json: .process.rlimits[0].type: unknown rlimit \"RLIMIT_FOO\"");
  expect_process_error ("'rlimits': [{'type': 'nofile', 'hard': 1, 'soft': 1}]",
                        "config.json: .process.rlimits[0].type: unknown rlimit \"nofile\"");
  expect_process_error ("'rlimits': [{'hard': 1, 'soft': 1}]",
                        "config.json: .process.rlimits[0].type: required field is missing");
  expect_process_error ("'rlimits': [{'type': 'RLIMIT_CORE', 'hard': 1, 'soft': 2}]",
                        "config.json: .process.rlimits[0]: soft limit 2 is above hard limit 1");
  expect_process_error ("'rlimits': [{'type': 'RLIMIT_CORE', 'hard': 1024,"
                        "  'soft': 18446744073709551615}]",
                        "config.json: .process.rlimits[0]: soft limit 18446744073709551615 is above hard limit 1024");
  expect_process_error ("'rlimits': [{'type': 'RLIMIT_CORE', 'hard': 1, 'soft': 1},"
                        "{'type': 'RLIMIT_CORE', 'hard': 1, 'soft': 1}]",
                        "config.json: .process.rlimits[1]: duplicate rlimit \"RLIMIT_CORE\"");
  expect_process_error ("'rlimits': [{'type': 'RLIMIT_CORE', 'hard': 1}]",
                        "config.json: .process.rlimits[0]: rlimit needs both \"soft\" and \"hard\"");
  /* Every name in runtime-spec is known. */
  static const char *const names[]
      = { "RLIMIT_AS",      "RLIMIT_CORE",   "RLIMIT_CPU",    "RLIMIT_DATA",    "RLIMIT_FSIZE",  "RLIMIT_LOCKS",
          "RLIMIT_MEMLOCK", "RLIMIT_MSGQUEUE", "RLIMIT_NICE", "RLIMIT_NOFILE",  "RLIMIT_NPROC",  "RLIMIT_RSS",
          "RLIMIT_RTPRIO",  "RLIMIT_RTTIME", "RLIMIT_SIGPENDING", "RLIMIT_STACK" };
  for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
    {
      char *fields = xasprintf ("'rlimits': [{'type': '%s', 'hard': 5, 'soft': 5}]", names[i]);
      oci_spec *s = parse_process_ok (fields);
      assert_true (s->process.rlimits[0].resource >= 0);
      assert_string_equal (s->process.rlimits[0].type, names[i]);
      oci_spec_free (s);
      free (fields);
    }
}

static void
test_process_user (void **state)
{
  (void) state;
  oci_spec *s = parse_process_ok ("'user': {'uid': 4294967295, 'gid': 0, 'umask': 511}");
  assert_true (s->process.user.uid == UINT32_MAX);
  assert_int_equal (s->process.user.umask.value, 0777);
  oci_spec_free (s);
  s = parse_process_ok ("'user': {'umask': 0}");
  assert_true (s->process.user.umask.set);
  assert_int_equal (s->process.user.umask.value, 0);
  oci_spec_free (s);
  expect_process_error ("'user': {'umask': 512}",
                        "config.json: .process.user.umask: umask 1000 is not a file mode mask");
  expect_process_error ("'user': {'umask': 1000}",
                        "config.json: .process.user.umask: umask 1750 is not a file mode mask");
  expect_process_error ("'user': {'uid': '0'}", "config.json: .process.user.uid: expected an unsigned integer");
  expect_process_error ("'user': {'username': 0}", "config.json: .process.user.username: expected a string");
}

static void
test_process_oom_score_adj (void **state)
{
  (void) state;
  oci_spec *s = parse_process_ok ("'oomScoreAdj': 1000");
  assert_int_equal (s->process.oom_score_adj.value, 1000);
  oci_spec_free (s);
  s = parse_process_ok ("'oomScoreAdj': 0");
  assert_true (s->process.oom_score_adj.set);
  assert_int_equal (s->process.oom_score_adj.value, 0);
  oci_spec_free (s);
  expect_process_error ("'oomScoreAdj': 1001", "config.json: .process.oomScoreAdj: 1001 is outside -1000..1000");
  expect_process_error ("'oomScoreAdj': -1001", "config.json: .process.oomScoreAdj: -1001 is outside -1000..1000");
  expect_process_error ("'oomScoreAdj': 9223372036854775807",
                        "config.json: .process.oomScoreAdj: 9223372036854775807 is outside -1000..1000");
  expect_process_error ("'oomScoreAdj': '5'", "config.json: .process.oomScoreAdj: expected an integer");
}

static void
test_process_scheduler (void **state)
{
  (void) state;
  oci_spec *s = parse_process_ok ("'scheduler': {'policy': 'SCHED_BATCH', 'nice': 19}");
  assert_int_equal (s->process.scheduler.policy, SCHED_BATCH);
  assert_int_equal (s->process.scheduler.nice, 19);
  oci_spec_free (s);
  s = parse_process_ok ("'scheduler': {'policy': 'SCHED_FIFO', 'priority': 99}");
  assert_int_equal (s->process.scheduler.policy, SCHED_FIFO);
  assert_int_equal (s->process.scheduler.priority, 99);
  oci_spec_free (s);
  expect_process_error ("'scheduler': {'policy': 'SCHED_FAST'}",
                        "config.json: .process.scheduler.policy: unknown scheduler policy \"SCHED_FAST\"");
  expect_process_error ("'scheduler': {'nice': 1}",
                        "config.json: .process.scheduler.policy: required field is missing");
  expect_process_error ("'scheduler': {'policy': 'SCHED_OTHER', 'nice': 'low'}",
                        "config.json: .process.scheduler.nice: expected an integer");
  /* int32 fields must not wrap around: 4294967277 is not -19. */
  expect_process_error ("'scheduler': {'policy': 'SCHED_OTHER', 'nice': 4294967277}",
                        "config.json: .process.scheduler.nice: integer 4294967277 out of range for 32 bits");
  expect_process_error ("'scheduler': {'policy': 'SCHED_RR', 'priority': -4294967295}",
                        "config.json: .process.scheduler.priority: integer -4294967295 out of range for 32 bits");
}

static void
test_process_io_priority (void **state)
{
  (void) state;
  oci_spec *s = parse_process_ok ("'ioPriority': {'class': 'IOPRIO_CLASS_IDLE'}");
  assert_true (s->process.io_priority.present);
  assert_int_equal (s->process.io_priority.klass, 3);
  assert_int_equal (s->process.io_priority.priority, 0);
  oci_spec_free (s);
  expect_process_error ("'ioPriority': {'class': 'IOPRIO_CLASS_FAST', 'priority': 1}",
                        "config.json: .process.ioPriority.class: unknown I/O priority class \"IOPRIO_CLASS_FAST\"");
  expect_process_error ("'ioPriority': {'priority': 1}",
                        "config.json: .process.ioPriority.class: required field is missing");
  expect_process_error ("'ioPriority': {'class': 'IOPRIO_CLASS_BE', 'priority': 8}",
                        "config.json: .process.ioPriority.priority: I/O priority 8 is outside 0..7");
  expect_process_error ("'ioPriority': {'class': 'IOPRIO_CLASS_BE', 'priority': -1}",
                        "config.json: .process.ioPriority.priority: I/O priority -1 is outside 0..7");
}

/* ------------------------------------------------------------------ */
/* Rejections: mounts and hooks                                        */
/* ------------------------------------------------------------------ */

static void
test_mounts (void **state)
{
  (void) state;
  expect_top_error ("'mounts': [{'type': 'tmpfs', 'source': 'tmpfs'}]",
                    "config.json: .mounts[0].destination: required field is missing");
  expect_top_error ("'mounts': [{'destination': '/proc'}, {'destination': null}]",
                    "config.json: .mounts[1].destination: required field is missing");
  expect_top_error ("'mounts': [{'destination': 'tmp'}]",
                    "config.json: .mounts[0].destination: \"tmp\" is not an absolute path");
  expect_top_error ("'mounts': [{'destination': '/a'}, {'destination': ''}]",
                    "config.json: .mounts[1].destination: \"\" is not an absolute path");
  expect_top_error ("'mounts': [{'destination': '/a', 'uidMappings': [{'containerID': 0, 'hostID': 'x', 'size': 1}]}]",
                    "config.json: .mounts[0].uidMappings[0].hostID: expected an unsigned integer");
  oci_spec *s = parse_top_ok ("'mounts': []");
  assert_int_equal (s->n_mounts, 0);
  oci_spec_free (s);
}

static void
test_hooks (void **state)
{
  (void) state;
  static const char *const kinds[]
      = { "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop" };
  for (size_t i = 0; i < sizeof (kinds) / sizeof (kinds[0]); i++)
    {
      char *fields = xasprintf ("'%s': [{'path': '/ok'}, {'args': ['x']}]", kinds[i]);
      char *msg = xasprintf ("config.json: .hooks.%s[1].path: required field is missing", kinds[i]);
      expect_hook_error (fields, msg);
      free (fields);
      free (msg);
      fields = xasprintf ("'%s': [{'path': 'hook'}]", kinds[i]);
      msg = xasprintf ("config.json: .hooks.%s[0].path: \"hook\" is not an absolute path", kinds[i]);
      expect_hook_error (fields, msg);
      free (fields);
      free (msg);
      fields = xasprintf ("'%s': [{'path': '/h', 'timeout': 0}]", kinds[i]);
      msg = xasprintf ("config.json: .hooks.%s[0].timeout: timeout must be greater than zero", kinds[i]);
      expect_hook_error (fields, msg);
      free (fields);
      free (msg);
    }
  expect_hook_error ("'poststop': [{'path': '/h', 'timeout': -3}]",
                     "config.json: .hooks.poststop[0].timeout: timeout must be greater than zero");
  expect_hook_error ("'poststop': [{'path': '/h', 'timeout': '5s'}]",
                     "config.json: .hooks.poststop[0].timeout: expected an integer");
  expect_hook_error ("'poststop': [{'path': '/h', 'timeout': 1.5}]",
                     "config.json: .hooks.poststop[0].timeout: expected an integer");
  expect_hook_error ("'prestart': [{'path': '/h', 'env': 'A=1'}]",
                     "config.json: .hooks.prestart[0].env: expected an array");
}

/* ------------------------------------------------------------------ */
/* Rejections: linux                                                   */
/* ------------------------------------------------------------------ */

static void
test_namespaces (void **state)
{
  (void) state;
  expect_linux_error ("'namespaces': [{'type': 'pid'}, {'type': 'bogus'}]",
                      "config.json: .linux.namespaces[1].type: unknown namespace type \"bogus\"");
  expect_linux_error ("'namespaces': [{'type': 'net'}]",
                      "config.json: .linux.namespaces[0].type: unknown namespace type \"net\"");
  expect_linux_error ("'namespaces': [{'type': 'pid'}, {'type': 'pid'}]",
                      "config.json: .linux.namespaces[1]: duplicate namespace \"pid\"");
  expect_linux_error ("'namespaces': [{'type': 'network'}, {'type': 'uts'}, {'type': 'network', 'path': '/x'}]",
                      "config.json: .linux.namespaces[2]: duplicate namespace \"network\"");
  expect_linux_error ("'namespaces': [{'type': 'network', 'path': 'netns'}]",
                      "config.json: .linux.namespaces[0].path: \"netns\" is not an absolute path");
  expect_linux_error ("'namespaces': [{'path': '/proc/1/ns/pid'}]",
                      "config.json: .linux.namespaces[0].type: required field is missing");
  expect_linux_error ("'namespaces': [{'type': 1}]", "config.json: .linux.namespaces[0].type: expected a string");
  for (const char *const *n = oci_namespace_names; *n; n++)
    {
      char *fields = xasprintf ("'namespaces': [{'type': '%s', 'path': '/proc/1/ns/x'}]", *n);
      oci_spec *s = parse_linux_ok (fields);
      assert_string_equal (oci_namespace_name (s->linux_cfg.namespaces[0].type), *n);
      assert_string_equal (s->linux_cfg.namespaces[0].path, "/proc/1/ns/x");
      oci_spec_free (s);
      free (fields);
    }
}

static void
test_devices (void **state)
{
  (void) state;
  expect_linux_error ("'devices': [{'path': '/dev/x', 'type': 'x', 'major': 1, 'minor': 1}]",
                      "config.json: .linux.devices[0].type: device type \"x\" is not one of c, u, b, p");
  expect_linux_error ("'devices': [{'path': '/dev/x', 'type': 'cc', 'major': 1, 'minor': 1}]",
                      "config.json: .linux.devices[0].type: device type \"cc\" is not one of c, u, b, p");
  expect_linux_error ("'devices': [{'path': '/dev/x', 'type': '', 'major': 1, 'minor': 1}]",
                      "config.json: .linux.devices[0].type: device type \"\" is not one of c, u, b, p");
  expect_linux_error ("'devices': [{'path': '/dev/x', 'major': 1, 'minor': 1}]",
                      "config.json: .linux.devices[0].type: required field is missing");
  expect_linux_error ("'devices': [{'type': 'c', 'major': 1, 'minor': 1}]",
                      "config.json: .linux.devices[0].path: required field is missing");
  expect_linux_error ("'devices': [{'path': '/dev/x', 'type': 'c'}]",
                      "config.json: .linux.devices[0]: device \"/dev/x\" needs major and minor numbers");
  expect_linux_error ("'devices': [{'path': '/dev/x', 'type': 'b', 'major': 8}]",
                      "config.json: .linux.devices[0]: device \"/dev/x\" needs major and minor numbers");
  expect_linux_error ("'devices': [{'path': 'dev/x', 'type': 'c', 'major': 1, 'minor': 3}]",
                      "config.json: .linux.devices[0]: device path \"dev/x\" is not absolute");
  expect_linux_error ("'devices': [{'path': '/dev/x', 'type': 'c', 'major': '1', 'minor': 3}]",
                      "config.json: .linux.devices[0].major: expected an integer");
}

static void
test_resources (void **state)
{
  (void) state;
  expect_resources_error ("'devices': [{'allow': true, 'access': 'rwx'}]",
                          "config.json: .linux.resources.devices[0]: device access \"rwx\" may only contain r, w, m");
  expect_resources_error ("'devices': [{'allow': true, 'type': 'p', 'access': 'r'}]",
                          "config.json: .linux.resources.devices[0]: device rule type \"p\" is not one of a, c, b");
  expect_resources_error ("'blockIO': {'weightDevice': [{'major': 8, 'weight': 10}]}",
                          "config.json: .linux.resources.blockIO.weightDevice[0]: major and minor are required");
  expect_resources_error ("'hugepageLimits': [{'limit': 1}]",
                          "config.json: .linux.resources.hugepageLimits[0].pageSize: required field is missing");
  expect_resources_error ("'network': {'priorities': [{'priority': 1}]}",
                          "config.json: .linux.resources.network.priorities[0].name: required field is missing");
  expect_resources_error ("'network': {'classID': 'x'}",
                          "config.json: .linux.resources.network.classID: expected an unsigned integer");
  expect_resources_error ("'rdma': {'mlx5_1': {'hcaHandles': -1}}",
                          "config.json: .linux.resources.rdma.mlx5_1.hcaHandles: expected an unsigned integer");
  expect_resources_error ("'cpu': {'cpus': 3}", "config.json: .linux.resources.cpu.cpus: expected a string");
  expect_resources_error ("'pids': []", "config.json: .linux.resources.pids: expected an object");
  oci_spec *s = parse_linux_ok ("'resources': {}");
  assert_true (s->linux_cfg.resources.present);
  assert_false (s->linux_cfg.resources.pids.present);
  oci_spec_free (s);
}

static void
test_seccomp_actions (void **state)
{
  (void) state;
  expect_linux_error ("'seccomp': {'defaultAction': 'SCMP_ACT_MAYBE'}",
                      "config.json: .linux.seccomp.defaultAction: unknown seccomp action \"SCMP_ACT_MAYBE\"");
  expect_linux_error ("'seccomp': {'syscalls': []}",
                      "config.json: .linux.seccomp.defaultAction: required field is missing");
  expect_seccomp_error ("'syscalls': [{'names': ['read'], 'action': 'SCMP_ACT_ALLOW'},"
                        "  {'names': ['write'], 'action': 'allow'}]",
                        "config.json: .linux.seccomp.syscalls[1].action: unknown seccomp action \"allow\"");
  expect_seccomp_error ("'syscalls': [{'names': ['read']}]",
                        "config.json: .linux.seccomp.syscalls[0].action: required field is missing");
  for (size_t i = 0; i < oci_seccomp_n_actions; i++)
    {
      char *body = xasprintf ("'seccomp': {'defaultAction': '%s', 'syscalls': [{'names': ['read'], 'action': '%s'}]}",
                              oci_seccomp_action_names[i], oci_seccomp_action_names[i]);
      oci_spec *s = parse_linux_ok (body);
      assert_int_equal (s->linux_cfg.seccomp.default_action, (int) i);
      assert_int_equal (s->linux_cfg.seccomp.syscalls[0].action, (int) i);
      oci_spec_free (s);
      free (body);
    }
}

static void
test_seccomp_args (void **state)
{
  (void) state;
  expect_seccomp_error ("'syscalls': [{'names': ['read'], 'action': 'SCMP_ACT_ERRNO',"
                        "  'args': [{'index': 0, 'value': 1, 'op': 'SCMP_CMP_SOMETIMES'}]}]",
                        "config.json: .linux.seccomp.syscalls[0].args[0].op: unknown seccomp operator "
                        "\"SCMP_CMP_SOMETIMES\"");
  expect_seccomp_error ("'syscalls': [{'names': ['read'], 'action': 'SCMP_ACT_ERRNO',"
                        "  'args': [{'index': 0, 'value': 1}]}]",
                        "config.json: .linux.seccomp.syscalls[0].args[0].op: required field is missing");
  expect_seccomp_error ("'syscalls': [{'names': ['read'], 'action': 'SCMP_ACT_ERRNO',"
                        "  'args': [{'index': 0, 'value': 1, 'op': 'SCMP_CMP_EQ'}, {'index': 6, 'value': 1, 'op': "
                        "'SCMP_CMP_EQ'}]}]",
                        "config.json: .linux.seccomp.syscalls[0].args[1]: argument index 6 is above 5");
  expect_seccomp_error ("'syscalls': [{'names': ['read'], 'action': 'SCMP_ACT_ERRNO',"
                        "  'args': [{'index': 4294967295, 'value': 1, 'op': 'SCMP_CMP_EQ'}]}]",
                        "config.json: .linux.seccomp.syscalls[0].args[0]: argument index 4294967295 is above 5");
  expect_seccomp_error ("'syscalls': [{'names': ['read'], 'action': 'SCMP_ACT_ERRNO',"
                        "  'args': [{'index': -1, 'value': 1, 'op': 'SCMP_CMP_EQ'}]}]",
                        "config.json: .linux.seccomp.syscalls[0].args[0].index: expected an unsigned integer");
  expect_seccomp_error ("'syscalls': [{'names': ['read'], 'action': 'SCMP_ACT_ERRNO', 'errnoRet': 'EPERM'}]",
                        "config.json: .linux.seccomp.syscalls[0].errnoRet: expected an unsigned integer");
  /* Every operator name, index 0..5. */
  for (int op = OCI_SCMP_CMP_NE; op <= OCI_SCMP_CMP_MASKED_EQ; op++)
    {
      char *body = xasprintf ("'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', 'syscalls': [{'names': ['read'],"
                              " 'action': 'SCMP_ACT_ERRNO', 'args': [{'index': %d, 'value': 3, 'op': '%s'}]}]}",
                              op - 1 < 6 ? op - 1 : 5, oci_seccomp_operator_names[op]);
      oci_spec *s = parse_linux_ok (body);
      assert_int_equal (s->linux_cfg.seccomp.syscalls[0].args[0].op, op);
      assert_int_equal (s->linux_cfg.seccomp.syscalls[0].args[0].value, 3);
      assert_int_equal (s->linux_cfg.seccomp.syscalls[0].args[0].value_two, 0);
      oci_spec_free (s);
      free (body);
    }
}

static void
test_seccomp_arch_flags (void **state)
{
  (void) state;
  expect_seccomp_error ("'architectures': ['SCMP_ARCH_X86_64', 'SCMP_ARCH_Z80']",
                        "config.json: .linux.seccomp.architectures[1]: unknown seccomp architecture \"SCMP_ARCH_Z80\"");
  expect_seccomp_error ("'architectures': ['x86_64']",
                        "config.json: .linux.seccomp.architectures[0]: unknown seccomp architecture \"x86_64\"");
  expect_seccomp_error ("'flags': ['SECCOMP_FILTER_FLAG_X']",
                        "config.json: .linux.seccomp.flags[0]: unknown seccomp flag \"SECCOMP_FILTER_FLAG_X\"");
  expect_seccomp_error ("'flags': ['SECCOMP_FILTER_FLAG_TSYNC', 'SECCOMP_FILTER_FLAG_NEW_LISTENER']",
                        "config.json: .linux.seccomp.flags[1]: unknown seccomp flag "
                        "\"SECCOMP_FILTER_FLAG_NEW_LISTENER\"");
  expect_seccomp_error ("'listenerPath': 5", "config.json: .linux.seccomp.listenerPath: expected a string");
  for (const char *const *a = oci_seccomp_arch_names; *a; a++)
    {
      char *body = xasprintf ("'seccomp': {'defaultAction': 'SCMP_ACT_LOG', 'architectures': ['%s']}", *a);
      oci_spec *s = parse_linux_ok (body);
      assert_string_equal (s->linux_cfg.seccomp.architectures.v[0], *a);
      oci_spec_free (s);
      free (body);
    }
  for (const char *const *f = oci_seccomp_flag_names; *f; f++)
    {
      char *body = xasprintf ("'seccomp': {'defaultAction': 'SCMP_ACT_LOG', 'flags': ['%s']}", *f);
      oci_spec *s = parse_linux_ok (body);
      assert_string_equal (s->linux_cfg.seccomp.flags.v[0], *f);
      oci_spec_free (s);
      free (body);
    }
}

static void
test_rootfs_propagation (void **state)
{
  (void) state;
  static const struct
  {
    const char *name;
    int flags;
  } ok[] = {
    { "private", MS_PRIVATE },       { "rprivate", MS_PRIVATE | MS_REC },
    { "slave", MS_SLAVE },           { "rslave", MS_SLAVE | MS_REC },
    { "shared", MS_SHARED },         { "rshared", MS_SHARED | MS_REC },
    { "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
  };
  for (size_t i = 0; i < sizeof (ok) / sizeof (ok[0]); i++)
    {
      char *body = xasprintf ("'rootfsPropagation': '%s'", ok[i].name);
      oci_spec *s = parse_linux_ok (body);
      assert_int_equal (oci_propagation_from_name (s->linux_cfg.rootfs_propagation), ok[i].flags);
      oci_spec_free (s);
      free (body);
    }
  expect_linux_error ("'rootfsPropagation': 'sideways'",
                      "config.json: .linux.rootfsPropagation: unknown propagation \"sideways\"");
  expect_linux_error ("'rootfsPropagation': 'RPRIVATE'",
                      "config.json: .linux.rootfsPropagation: unknown propagation \"RPRIVATE\"");
  expect_linux_error ("'rootfsPropagation': ''", "config.json: .linux.rootfsPropagation: unknown propagation \"\"");
}

static void
test_personality (void **state)
{
  (void) state;
  oci_spec *s = parse_linux_ok ("'personality': {'domain': 'LINUX', 'flags': ['ADDR_NO_RANDOMIZE']}");
  assert_true (s->linux_cfg.personality.present);
  assert_string_equal (s->linux_cfg.personality.domain, "LINUX");
  assert_string_equal (s->linux_cfg.personality.flags.v[0], "ADDR_NO_RANDOMIZE");
  oci_spec_free (s);
  expect_linux_error ("'personality': {'domain': 'WINDOWS'}",
                      "config.json: .linux.personality.domain: unknown personality domain \"WINDOWS\"");
  expect_linux_error ("'personality': {'domain': 'linux32'}",
                      "config.json: .linux.personality.domain: unknown personality domain \"linux32\"");
  expect_linux_error ("'personality': {'flags': []}",
                      "config.json: .linux.personality.domain: required field is missing");
  expect_linux_error ("'personality': 'LINUX'", "config.json: .linux.personality: expected an object");
}

static void
test_id_mappings_and_time_offsets (void **state)
{
  (void) state;
  expect_linux_error ("'uidMappings': [{'containerID': 0, 'hostID': 'x', 'size': 1}]",
                      "config.json: .linux.uidMappings[0].hostID: expected an unsigned integer");
  expect_linux_error ("'gidMappings': {'containerID': 0}", "config.json: .linux.gidMappings: expected an array");
  expect_linux_error ("'uidMappings': [{'containerID': 0, 'hostID': 1, 'size': 1}, 7]",
                      "config.json: .linux.uidMappings[1]: expected an object");
  expect_linux_error ("'timeOffsets': {'boottime': {'secs': '1'}}",
                      "config.json: .linux.timeOffsets.boottime.secs: expected an integer");
  expect_linux_error ("'timeOffsets': []", "config.json: .linux.timeOffsets: expected an object");
  oci_spec *s = parse_linux_ok ("'timeOffsets': {'monotonic': {'secs': -9223372036854775808}}");
  assert_true (s->linux_cfg.has_time_monotonic);
  assert_false (s->linux_cfg.has_time_boottime);
  assert_true (s->linux_cfg.time_monotonic.secs == INT64_MIN);
  assert_int_equal (s->linux_cfg.time_monotonic.nanosecs, 0);
  oci_spec_free (s);
}

static void
test_sysctl_and_paths (void **state)
{
  (void) state;
  expect_linux_error ("'sysctl': {'a': 1}", "config.json: .linux.sysctl.a: expected a string");
  expect_linux_error ("'maskedPaths': ['/proc/kcore', 3]", "config.json: .linux.maskedPaths[1]: expected a string");
  expect_linux_error ("'readonlyPaths': [{}]", "config.json: .linux.readonlyPaths[0]: expected a string");
  oci_spec *s = parse_linux_ok ("'sysctl': {}, 'maskedPaths': []");
  assert_int_equal (s->linux_cfg.sysctl.n, 0);
  assert_true (s->linux_cfg.has_masked_paths);
  assert_false (s->linux_cfg.has_readonly_paths);
  oci_spec_free (s);
}

static void
test_intel_rdt_and_net_devices (void **state)
{
  (void) state;
  /* Parsed (the runtime refuses them later, with its own message). */
  oci_spec *s = parse_linux_ok ("'intelRdt': {'closID': 'g1', 'l3CacheSchema': 'L3:0=ff', 'memBwSchema': 'MB:0=50',"
                                "  'enableCMT': true, 'enableMBM': false},"
                                "'netDevices': {'eth1': {'name': 'ctr0'}, 'eth2': {}}");
  assert_true (s->linux_cfg.intel_rdt.present);
  assert_string_equal (s->linux_cfg.intel_rdt.clos_id, "g1");
  assert_string_equal (s->linux_cfg.intel_rdt.mem_bw_schema, "MB:0=50");
  assert_true (s->linux_cfg.intel_rdt.enable_cmt);
  assert_int_equal (s->linux_cfg.net_devices.n, 2);
  assert_string_equal (s->linux_cfg.net_devices.v[0].host_name, "eth1");
  assert_string_equal (s->linux_cfg.net_devices.v[0].name, "ctr0");
  assert_null (s->linux_cfg.net_devices.v[1].name);
  oci_spec_free (s);
  expect_linux_error ("'netDevices': {'eth1': {'name': 5}}",
                      "config.json: .linux.netDevices.eth1.name: expected a string");
  expect_linux_error ("'netDevices': {'eth1': 'ctr0'}", "config.json: .linux.netDevices.eth1: expected an object");
}

/* ------------------------------------------------------------------ */
/* Malformed JSON and document names                                   */
/* ------------------------------------------------------------------ */

static void
test_malformed_json (void **state)
{
  (void) state;
  expect_error_prefix ("{\"ociVersion\": \"1.0.0\", \"process\": {", "config.json: invalid JSON: ");
  expect_error_prefix ("{\"ociVersion\": \"1.0.0\",}", "config.json: invalid JSON: ");
  expect_error_prefix ("{'ociVersion': '1.0.0'}", "config.json: invalid JSON: ");
  expect_error_prefix ("{\"ociVersion\": \"1.0.0\"} trailing", "config.json: invalid JSON: ");
  expect_error_prefix ("{\"ociVersion\": \"1.0.0\"}{}", "config.json: invalid JSON: ");
  expect_error_prefix ("", "config.json: invalid JSON: ");
  expect_error_prefix ("   ", "config.json: invalid JSON: ");
  expect_error_prefix ("{\"a\": tru}", "config.json: invalid JSON: ");
  expect_error_prefix ("{\"a\": \"\\x\"}", "config.json: invalid JSON: ");
  expect_error_prefix ("{\"a\": 01}", "config.json: invalid JSON: ");
}

static void
test_embedded_nul_and_length (void **state)
{
  (void) state;
  /* The length is authoritative: a NUL byte inside it is not the end of
   * the document (Go's encoding/json rejects it; so must we). */
  static const char with_nul[] = "{\"ociVersion\": \"1.0.0\"}\0{\"ignored\": 1}";
  hv_error *err = parse_fail_raw (with_nul, sizeof (with_nul) - 1, "config.json");
  assert_true (strncmp (err->msg, "config.json: invalid JSON: ", 27) == 0);
  hv_error_free (&err);

  /* Bytes after len are not part of the document (and need not be NUL). */
  static const char longer[] = "{\"ociVersion\": \"1.0.0\"}GARBAGE";
  oci_spec *s = NULL;
  assert_int_equal (oci_spec_parse (longer, sizeof (longer) - 1 - strlen ("GARBAGE"), "config.json", &s, &err), 0);
  assert_null (err);
  assert_string_equal (s->oci_version, "1.0.0");
  oci_spec_free (s);

  oci_process *p = NULL;
  static const char proc[] = "{\"cwd\": \"/\", \"args\": [\"ls\"]}\0";
  assert_int_equal (oci_process_parse (proc, sizeof (proc) - 1, "process.json", &p, &err), -1);
  assert_null (p);
  assert_true (strncmp (err->msg, "process.json: invalid JSON: ", 28) == 0);
  hv_error_free (&err);
}

static void
test_document_name_in_messages (void **state)
{
  (void) state;
  const char *json = "{\"ociVersion\": \"1.0.0\", \"hostname\": 1}";
  hv_error *err = parse_fail_raw (json, strlen (json), "/run/bundles/x/config.json");
  check_message (&err, "/run/bundles/x/config.json: .hostname: expected a string");
  err = parse_fail_raw ("{", 1, "/b/config.json");
  assert_true (strncmp (err->msg, "/b/config.json: invalid JSON: ", 30) == 0);
  hv_error_free (&err);
}

/* ------------------------------------------------------------------ */
/* process.json (exec --process)                                       */
/* ------------------------------------------------------------------ */

static void
test_exec_process_valid (void **state)
{
  (void) state;
  oci_process *p = exec_ok ("{'terminal': false, 'user': {'uid': 33, 'gid': 33, 'additionalGids': [4]},"
                            " 'args': ['ls', '-l'], 'env': ['PATH=/bin'], 'cwd': '/var/www',"
                            " 'capabilities': {'bounding': ['CAP_KILL'], 'effective': []},"
                            " 'rlimits': [{'type': 'RLIMIT_NOFILE', 'hard': 18446744073709551615, 'soft': 1024}],"
                            " 'noNewPrivileges': true, 'apparmorProfile': 'p', 'oomScoreAdj': 10,"
                            " 'scheduler': {'policy': 'SCHED_IDLE'},"
                            " 'ioPriority': {'class': 'IOPRIO_CLASS_BE', 'priority': 2},"
                            " 'consoleSize': {'height': 50, 'width': 132}, 'unknown': {}}");
  assert_false (p->terminal);
  assert_int_equal (p->user.uid, 33);
  assert_int_equal (p->user.additional_gids[0], 4);
  assert_int_equal (p->args.n, 2);
  assert_string_equal (p->args.v[1], "-l");
  assert_null (p->args.v[2]);
  assert_string_equal (p->env.v[0], "PATH=/bin");
  assert_string_equal (p->cwd, "/var/www");
  assert_true (p->capabilities.present);
  assert_int_equal (p->capabilities.effective.n, 0);
  assert_true (p->rlimits[0].hard == UINT64_MAX);
  assert_int_equal (p->rlimits[0].soft, 1024);
  assert_true (p->no_new_privileges);
  assert_int_equal (p->oom_score_adj.value, 10);
  assert_int_equal (p->scheduler.policy, SCHED_IDLE);
  assert_int_equal (p->io_priority.klass, 2);
  assert_int_equal (p->console_width, 132);
  oci_process_free (p);

  /* commandLine (Windows-style) stands in for args. */
  p = exec_ok ("{'cwd': '/', 'commandLine': 'ls -l'}");
  assert_string_equal (p->command_line, "ls -l");
  assert_int_equal (p->args.n, 0);
  oci_process_free (p);
}

static void
test_exec_process_rejected (void **state)
{
  (void) state;
  expect_exec_error ("{'cwd': '/'}", "process.json: .args: at least one argument is required");
  expect_exec_error ("{'cwd': '/', 'args': []}", "process.json: .args: at least one argument is required");
  expect_exec_error ("{'cwd': '/', 'args': null}", "process.json: .args: at least one argument is required");
  expect_exec_error ("{'args': ['ls']}", "process.json: .cwd: required field is missing");
  expect_exec_error ("{'cwd': 'tmp', 'args': ['ls']}", "process.json: .cwd: \"tmp\" is not an absolute path");
  expect_exec_error ("{'cwd': '/', 'args': ['ls'], 'env': ['X']}",
                     "process.json: .env[0]: \"X\" is not of the form KEY=value");
  expect_exec_error ("{'cwd': '/', 'args': ['ls'], 'rlimits': [{'type': 'RLIMIT_NOFILE', 'hard': 1, 'soft': 1},"
                     " {'type': 'RLIMIT_CORE', 'hard': 1, 'soft': 1}, {'type': 'RLIMIT_AS', 'hard': -1, 'soft': 1}]}",
                     "process.json: .rlimits[2].hard: expected an unsigned integer");
  expect_exec_error ("{'cwd': '/', 'args': ['ls'], 'capabilities': {'permitted': ['CAP_NOPE']}}",
                     "process.json: .capabilities.permitted[0]: unknown capability \"CAP_NOPE\"");
  expect_exec_error ("['ls']", "process.json: .: expected an object");
  expect_exec_error ("{'cwd': '/', 'args': 'ls'}", "process.json: .args: expected an array");

  /* The name is whatever the caller passes. */
  const char *json = "{\"cwd\": \"/\"}";
  oci_process *p = NULL;
  hv_error *err = NULL;
  assert_int_equal (oci_process_parse (json, strlen (json), "/tmp/p.json", &p, &err), -1);
  check_message (&err, "/tmp/p.json: .args: at least one argument is required");

  json = "{\"cwd\": \"/\", ";
  assert_int_equal (oci_process_parse (json, strlen (json), "process.json", &p, &err), -1);
  assert_null (p);
  assert_true (strncmp (err->msg, "process.json: invalid JSON: ", 28) == 0);
  hv_error_free (&err);
}

static void
test_errors_after_partial_parse_are_freed (void **state)
{
  (void) state;
  /* Failures deep inside arrays, after earlier elements were allocated:
   * under ASan these catch leaks and double frees on the error paths. */
  expect_top_error ("'process': {'cwd': '/', 'args': ['a', 'b'], 'env': ['A=1'],"
                    "  'capabilities': {'bounding': ['CAP_KILL'], 'effective': ['CAP_KILL', 'CAP_X']}},"
                    "'mounts': [{'destination': '/a', 'options': ['ro']}]",
                    "config.json: .process.capabilities.effective[1]: unknown capability \"CAP_X\"");
  expect_top_error ("'mounts': [{'destination': '/a', 'source': 's', 'options': ['ro'],"
                    "  'uidMappings': [{'containerID': 0, 'hostID': 1, 'size': 1}]}, {'destination': 'b'}]",
                    "config.json: .mounts[1].destination: \"b\" is not an absolute path");
  expect_top_error ("'hooks': {'prestart': [{'path': '/a', 'args': ['a'], 'env': ['E=1']}],"
                    "  'poststop': [{'path': '/b', 'args': ['b', 2]}]}",
                    "config.json: .hooks.poststop[0].args[1]: expected a string");
  expect_seccomp_error ("'architectures': ['SCMP_ARCH_X86_64'], 'syscalls': ["
                        "  {'names': ['read'], 'action': 'SCMP_ACT_ALLOW',"
                        "   'args': [{'index': 0, 'value': 1, 'op': 'SCMP_CMP_EQ'}]},"
                        "  {'names': ['write', 'open', 7], 'action': 'SCMP_ACT_ALLOW'}]",
                        "config.json: .linux.seccomp.syscalls[1].names[2]: expected a string");
  expect_seccomp_error ("'syscalls': [{'names': ['a', 'b'], 'action': 'SCMP_ACT_NOPE'}]",
                        "config.json: .linux.seccomp.syscalls[0].action: unknown seccomp action \"SCMP_ACT_NOPE\"");
  expect_top_error ("'annotations': {'a': 'b', 'c': 'd', 'e': []}", "config.json: .annotations.e: expected a string");
  expect_top_error ("'annotations': {'a': 'b', 'a': 'c', 'e': 1}", "config.json: .annotations.e: expected a string");
  expect_resources_error ("'hugepageLimits': [{'pageSize': '2MB', 'limit': 1}, {'pageSize': 1}],"
                          " 'unified': {'a': 'b'}",
                          "config.json: .linux.resources.hugepageLimits[1].pageSize: expected a string");
  expect_resources_error ("'rdma': {'a': {}, 'b': 1}", "config.json: .linux.resources.rdma.b: expected an object");
  expect_resources_error ("'network': {'priorities': [{'name': 'eth0', 'priority': 1},"
                          "  {'name': 'eth1', 'priority': -1}]}",
                          "config.json: .linux.resources.network.priorities[1].priority: expected an unsigned integer");
  expect_linux_error ("'devices': [{'path': '/dev/a', 'type': 'c', 'major': 1, 'minor': 1},"
                      "  {'path': '/dev/b', 'type': 'z'}]",
                      "config.json: .linux.devices[1].type: device type \"z\" is not one of c, u, b, p");
  expect_linux_error ("'namespaces': [{'type': 'pid', 'path': '/p'}, {'type': 'uts', 'path': 5}]",
                      "config.json: .linux.namespaces[1].path: expected a string");
  expect_linux_error ("'personality': {'domain': 'BSD', 'flags': ['x']}",
                      "config.json: .linux.personality.domain: unknown personality domain \"BSD\"");
  expect_process_error ("'scheduler': {'policy': 'SCHED_NOPE', 'flags': ['a']}",
                        "config.json: .process.scheduler.policy: unknown scheduler policy \"SCHED_NOPE\"");
}


/* ------------------------------------------------------------------ */
/* update: a bare LinuxResources object, and merging it into a config  */
/* ------------------------------------------------------------------ */

static void
test_resources_parse_alone (void **state)
{
  (void) state;
  char *json = J ("{'memory': {'limit': 1048576, 'swap': -1}, 'cpu': {'shares': 512, 'cpus': '0-1'},"
                  " 'pids': {'limit': 10}, 'blockIO': {'weight': 300, 'throttleReadBpsDevice':"
                  " [{'major': 8, 'minor': 0, 'rate': 100}]}, 'unified': {'memory.high': '1m'},"
                  " 'devices': [{'allow': false, 'access': 'rwm'}]}");
  oci_resources *r = NULL;
  hv_error *err = NULL;
  assert_int_equal (oci_resources_parse (json, strlen (json), "stdin", &r, &err), 0);
  free (json);
  assert_true (r->present);
  assert_true (r->memory.limit.set);
  assert_int_equal (r->memory.limit.value, 1048576);
  assert_int_equal (r->memory.swap.value, -1);
  assert_int_equal (r->cpu.shares.value, 512);
  assert_string_equal (r->cpu.cpus, "0-1");
  assert_int_equal (r->pids.limit.value, 10);
  assert_int_equal (r->block_io.weight.value, 300);
  assert_int_equal (r->block_io.throttle_read_bps.n, 1);
  assert_int_equal (r->block_io.throttle_read_bps.v[0].rate, 100);
  assert_string_equal (oci_kv_get (&r->unified, "memory.high"), "1m");
  assert_int_equal (r->n_devices, 1);
  oci_resources_free (r);
}

static void
expect_update_error (const char *sq, const char *message)
{
  char *json = J (sq);
  oci_resources *r = NULL;
  hv_error *err = NULL;
  int rc = oci_resources_parse (json, strlen (json), "stdin", &r, &err);
  free (json);
  if (rc == 0)
    {
      oci_resources_free (r);
      fail_msg ("accepted: %s", sq);
    }
  assert_null (r);
  check_message (&err, message);
}

static void
test_resources_parse_errors (void **state)
{
  (void) state;
  expect_update_error ("{'memory': {'limit': 'lots'}}", "stdin: .memory.limit: expected an integer");
  expect_update_error ("{'cpu': {'shares': -1}}", "stdin: .cpu.shares: expected an unsigned integer");
  expect_update_error ("{'blockIO': {'weightDevice': [{'major': 8}]}}",
                          "stdin: .blockIO.weightDevice[0]: major and minor are required");
  expect_update_error ("{'devices': [{'allow': true, 'type': 'x'}]}",
                          "stdin: .devices[0]: device rule type \"x\" is not one of a, c, b");
  expect_update_error ("[1]", "stdin: .: expected an object");
  expect_update_error ("{'pids': {'limit': 1.5}}", "stdin: .pids.limit: expected an integer");
}

/* Merge `patch` into `doc` at linux.resources and compare (compact JSON). */
static void
expect_merge (const char *doc, const char *patch, const char *expected)
{
  static const char *const at[] = { "linux", "resources" };
  char *d = J (doc), *p = J (patch), *e = J (expected), *out = NULL;
  hv_error *err = NULL;
  int rc = jm_merge_at (d, "config.json", at, 2, p, "stdin", &out, &err);
  if (rc < 0)
    fail_msg ("merge failed: %s", err->msg);
  if (strcmp (out, e) != 0)
    fail_msg ("merge of %s\n   expected %s\n        got %s", patch, e, out);
  free (d);
  free (p);
  free (e);
  free (out);
}

static void
test_resources_merge (void **state)
{
  (void) state;
  /* Scalars replace, objects merge, the rest of the document stays. */
  expect_merge ("{'ociVersion':'1.0.2','linux':{'resources':{'memory':{'limit':1,'swap':2},'pids':{'limit':3}},"
                "'namespaces':[]}}",
                "{'memory':{'limit':5},'cpu':{'quota':7}}",
                "{'ociVersion':'1.0.2','linux':{'resources':{'memory':{'limit':5,'swap':2},'pids':{'limit':3},"
                "'cpu':{'quota':7}},'namespaces':[]}}");
  /* Missing linux and resources are created. */
  expect_merge ("{'ociVersion':'1.0.2'}", "{'pids':{'limit':9}}",
                "{'ociVersion':'1.0.2','linux':{'resources':{'pids':{'limit':9}}}}");
  /* null removes; nulls in new members are dropped. */
  expect_merge ("{'linux':{'resources':{'memory':{'limit':1},'unified':{'a.b':'1','c.d':'2'}}}}",
                "{'memory':null,'unified':{'a.b':null,'e.f':'3'},'cpu':{'cpus':null,'mems':'0'}}",
                "{'linux':{'resources':{'unified':{'c.d':'2','e.f':'3'},'cpu':{'mems':'0'}}}}");
  /* Arrays replace, except blockIO's device lists: by major:minor. */
  expect_merge ("{'linux':{'resources':{'devices':[{'allow':false}],'hugepageLimits':[{'pageSize':'2MB','limit':1}],"
                "'blockIO':{'weight':10,'throttleReadBpsDevice':[{'major':8,'minor':0,'rate':1},"
                "{'major':8,'minor':16,'rate':2}],'weightDevice':[{'major':8,'minor':0,'weight':10,'leafWeight':20}]}}}}",
                "{'devices':[{'allow':true}],'hugepageLimits':[],'blockIO':{'throttleReadBpsDevice':"
                "[{'major':8,'minor':16,'rate':5},{'major':7,'minor':0,'rate':6}],'weightDevice':[{'major':8,'minor':0,"
                "'weight':30}]}}",
                "{'linux':{'resources':{'devices':[{'allow':true}],'hugepageLimits':[],"
                "'blockIO':{'weight':10,'throttleReadBpsDevice':[{'major':8,'minor':0,'rate':1},"
                "{'major':8,'minor':16,'rate':5},{'major':7,'minor':0,'rate':6}],'weightDevice':[{'major':8,'minor':0,"
                "'weight':30,'leafWeight':20}]}}}}");
  /* Numbers keep their text; strings are re-escaped. */
  expect_merge ("{'linux':{'resources':{'memory':{'limit':18446744073709551615}}},'x':'a\\u0001b'}", "{}",
                "{'linux':{'resources':{'memory':{'limit':18446744073709551615}}},'x':'a\\u0001b'}");
}

static void
test_resources_merge_errors (void **state)
{
  (void) state;
  static const char *const at[] = { "linux", "resources" };
  char *out = NULL;
  hv_error *err = NULL;
  assert_int_equal (jm_merge_at ("{", "config.json", at, 2, "{}", "stdin", &out, &err), -1);
  assert_non_null (strstr (err->msg, "config.json: invalid JSON"));
  hv_error_free (&err);
  assert_int_equal (jm_merge_at ("{}", "config.json", at, 2, "{]", "stdin", &out, &err), -1);
  assert_non_null (strstr (err->msg, "stdin: invalid JSON"));
  hv_error_free (&err);
  assert_null (out);
}

/* oci_strv_dedup keeps what one oci_strv_push_unique per item keeps, in
 * the same order, for lists with and without copies. */
static void
test_strv_dedup (void **state)
{
  (void) state;
  const char *cases[][8] = {
    { NULL },
    { "a", NULL },
    { "a", "a", NULL },
    { "b", "a", "b", "c", "a", "b", NULL },
    { "/usr/bin/x", "/usr/bin", "/usr/bin/x", "", "", "/usr", NULL },
  };
  for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++)
    {
      oci_strv all = { 0 }, unique = { 0 };
      for (size_t i = 0; cases[c][i]; i++)
        {
          oci_strv_push (&all, cases[c][i]);
          oci_strv_push_unique (&unique, cases[c][i]);
        }
      oci_strv_dedup (&all);
      assert_int_equal (all.n, unique.n);
      for (size_t i = 0; i < unique.n; i++)
        assert_string_equal (all.v[i], unique.v[i]);
      if (all.v)
        assert_null (all.v[all.n]);
      oci_strv_free (&all);
      oci_strv_free (&unique);
    }
}

/* hv_error_append adds text after the cause (hints), keeps the errno,
 * and, like hv_error_wrap, leaves no error alone. */
static void
test_error_append (void **state)
{
  (void) state;
  hv_error *err = NULL;
  assert_int_equal (hv_error_append (&err, " (hint %d)", 1), -1);
  assert_null (err);
  hv_error_set (&err, EEXIST, "table inet %s", "haven");
  assert_int_equal (hv_error_append (&err, " (hint %d)\nhaven: hint: %s", 2, "more"), -1);
  assert_string_equal (err->msg, "table inet haven: file exists (hint 2)\nhaven: hint: more");
  assert_int_equal (err->errno_code, EEXIST);
  hv_error_free (&err);
}

/* jw_too_deep counts nesting as yajl reads it: brackets in strings
 * (escaped quotes included) and comments do not count. */
static void
test_json_too_deep (void **state)
{
  (void) state;
  assert_false (jw_too_deep ("{\"a\":[[1]]}", 3));
  assert_true (jw_too_deep ("{\"a\":[[[1]]]}", 3));
  assert_false (jw_too_deep ("[[\"[[[[\\\"[[[[\"]]", 2));
  assert_false (jw_too_deep ("[[ // [[[[\n ]] /* [[[[ */ [[]]", 2));
  assert_true (jw_too_deep ("[[ /* ] */ [ ]]]", 2));
  assert_false (jw_too_deep ("]]]][[", 2)); /* yajl refuses it */
  assert_true (jw_too_deep ("]]]][[[", 2));
}

/* The bounded reader of small files: a regular file up to max bytes; a
 * larger one, a FIFO (whose read could block) and a directory are errors
 * that name the file. */
static void
test_read_regular_fd (void **state)
{
  (void) state;
  char dir[] = "/tmp/hv-read-regular-XXXXXX";
  assert_non_null (mkdtemp (dir));
  char file[PATH_MAX], fifo[PATH_MAX];
  snprintf (file, sizeof (file), "%s/f", dir);
  snprintf (fifo, sizeof (fifo), "%s/p", dir);
  FILE *f = fopen (file, "w");
  assert_non_null (f);
  fputs ("12345678", f);
  fclose (f);
  assert_int_equal (mkfifo (fifo, 0600), 0);

  char *text = NULL;
  size_t len = 0;
  hv_error *err = NULL;
  int fd = open (file, O_RDONLY | O_CLOEXEC);
  assert_int_equal (hv_read_regular_fd (fd, "f", 8, &text, &len, &err), 0);
  assert_string_equal (text, "12345678");
  assert_int_equal (len, 8);
  free (text);
  assert_int_equal (hv_read_regular_fd (fd, "f", 7, &text, &len, &err), -1);
  assert_string_equal (err->msg, "f: larger than 7 bytes");
  hv_error_free (&err);
  close (fd);

  fd = open (fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  assert_true (fd >= 0);
  assert_int_equal (hv_read_regular_fd (fd, "p", 8, &text, &len, &err), -1);
  assert_string_equal (err->msg, "p: not a regular file");
  hv_error_free (&err);
  close (fd);

  fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_int_equal (hv_read_regular_fd (fd, "d", 8, &text, &len, &err), -1);
  assert_string_equal (err->msg, "d: not a regular file");
  hv_error_free (&err);
  close (fd);
  unlink (fifo);
  unlink (file);
  rmdir (dir);
}

/* oci_strv_push on a list built by hand (exactly its items and the
 * NULL, cap 0) and on its own growth: every item kept, the room doubling
 * (a few reallocs for many items), never less than the items and NULL. */
static void
test_strv_push_capacity (void **state)
{
  (void) state;
  oci_strv s = { .n = 1, .v = calloc (2, sizeof (char *)) };
  assert_non_null (s.v);
  s.v[0] = strdup ("first");
  size_t grows = 0, cap = s.cap;
  for (int i = 0; i < 1000; i++)
    {
      char item[16];
      snprintf (item, sizeof (item), "%d", i);
      oci_strv_push (&s, item);
      assert_true (s.cap >= s.n + 1);
      assert_null (s.v[s.n]);
      if (s.cap != cap)
        grows++, cap = s.cap;
    }
  assert_int_equal (s.n, 1001);
  assert_string_equal (s.v[0], "first");
  assert_string_equal (s.v[1000], "999");
  assert_true (grows <= 10);
  oci_strv_free (&s);
  assert_int_equal (s.cap, 0);
}

/* The bounded reader: a pipe (no size to hint) read whole past its first
 * buffer, exactly max accepted, one byte more refused or cut. */
static void
test_read_fd_max (void **state)
{
  (void) state;
  char data[10000];
  memset (data, 'x', sizeof (data));
  for (int round = 0; round < 4; round++)
    {
      int p[2];
      assert_int_equal (pipe (p), 0);
      assert_int_equal (write (p[1], data, sizeof (data)), (ssize_t) sizeof (data));
      close (p[1]);
      char *text = NULL;
      size_t len = 0;
      bool more = true;
      switch (round)
        {
        case 0: /* exactly max, from no hint: grown past 4 KB */
          assert_int_equal (hv_read_fd_max (p[0], 0, sizeof (data), &text, &len, NULL), 0);
          assert_int_equal (len, sizeof (data));
          assert_int_equal (strlen (text), sizeof (data));
          break;
        case 1: /* one byte over, refused */
          errno = 0;
          assert_int_equal (hv_read_fd_max (p[0], 0, sizeof (data) - 1, &text, &len, NULL), -1);
          assert_int_equal (errno, EFBIG);
          assert_null (text);
          break;
        case 2: /* one byte over, cut and told */
          assert_int_equal (hv_read_fd_max (p[0], 100, sizeof (data) - 1, &text, &len, &more), 0);
          assert_true (more);
          assert_int_equal (len, sizeof (data) - 1);
          assert_int_equal (strlen (text), sizeof (data) - 1);
          break;
        case 3: /* under the bound, with a hint too small */
          assert_int_equal (hv_read_fd_max (p[0], 10, 1u << 20, &text, &len, &more), 0);
          assert_false (more);
          assert_int_equal (len, sizeof (data));
          break;
        }
      free (text);
      close (p[0]);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_read_fd_max),
    cmocka_unit_test (test_strv_push_capacity),
    cmocka_unit_test (test_read_regular_fd),
    cmocka_unit_test (test_json_too_deep),
    cmocka_unit_test (test_runc_spec_default),
    cmocka_unit_test_setup_teardown (test_full_top_level, setup_full, teardown_full),
    cmocka_unit_test_setup_teardown (test_full_process, setup_full, teardown_full),
    cmocka_unit_test_setup_teardown (test_full_mounts, setup_full, teardown_full),
    cmocka_unit_test_setup_teardown (test_full_hooks, setup_full, teardown_full),
    cmocka_unit_test_setup_teardown (test_full_linux_namespaces_ids_devices, setup_full, teardown_full),
    cmocka_unit_test_setup_teardown (test_full_resources, setup_full, teardown_full),
    cmocka_unit_test_setup_teardown (test_full_seccomp, setup_full, teardown_full),
    cmocka_unit_test_setup_teardown (test_full_linux_misc, setup_full, teardown_full),
    cmocka_unit_test (test_minimal_document),
    cmocka_unit_test (test_oci_versions),
    cmocka_unit_test (test_null_is_absent),
    cmocka_unit_test (test_unknown_fields_ignored),
    cmocka_unit_test (test_duplicate_keys_last_wins),
    cmocka_unit_test (test_integer_bounds),
    cmocka_unit_test (test_non_integer_numbers),
    cmocka_unit_test (test_rlimit_wrong_type_third),
    cmocka_unit_test (test_negative_unsigned),
    cmocka_unit_test (test_wrong_type_objects),
    cmocka_unit_test (test_wrong_type_arrays),
    cmocka_unit_test (test_wrong_type_strings),
    cmocka_unit_test (test_wrong_type_booleans),
    cmocka_unit_test (test_process_cwd),
    cmocka_unit_test (test_process_env),
    cmocka_unit_test (test_process_capabilities),
    cmocka_unit_test (test_process_rlimits),
    cmocka_unit_test (test_process_user),
    cmocka_unit_test (test_process_oom_score_adj),
    cmocka_unit_test (test_process_scheduler),
    cmocka_unit_test (test_process_io_priority),
    cmocka_unit_test (test_mounts),
    cmocka_unit_test (test_hooks),
    cmocka_unit_test (test_namespaces),
    cmocka_unit_test (test_devices),
    cmocka_unit_test (test_resources),
    cmocka_unit_test (test_seccomp_actions),
    cmocka_unit_test (test_seccomp_args),
    cmocka_unit_test (test_seccomp_arch_flags),
    cmocka_unit_test (test_rootfs_propagation),
    cmocka_unit_test (test_personality),
    cmocka_unit_test (test_id_mappings_and_time_offsets),
    cmocka_unit_test (test_sysctl_and_paths),
    cmocka_unit_test (test_intel_rdt_and_net_devices),
    cmocka_unit_test (test_malformed_json),
    cmocka_unit_test (test_embedded_nul_and_length),
    cmocka_unit_test (test_document_name_in_messages),
    cmocka_unit_test (test_exec_process_valid),
    cmocka_unit_test (test_exec_process_rejected),
    cmocka_unit_test (test_errors_after_partial_parse_are_freed),
    cmocka_unit_test (test_resources_parse_alone),
    cmocka_unit_test (test_resources_parse_errors),
    cmocka_unit_test (test_resources_merge),
    cmocka_unit_test (test_resources_merge_errors),
    cmocka_unit_test (test_strv_dedup),
    cmocka_unit_test (test_error_append),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
