/* Unit tests of `haven audit`'s reading of trails (cli/audit_view.c):
 * --since values, record times, records that are not records (skipped,
 * never a crash), the filters, and the line for people (control
 * characters escaped).  TZ is UTC here, so local times are predictable. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <linux/audit.h>
#include <sys/mman.h>
#include <unistd.h>

#include "audit_trail.h"
#include "audit_view.h"
#include "utils.h"

/* 2026-11-23T10:00:00Z */
#define T0 ((time_t) 1795428000)

static time_t
since_ok (const char *s)
{
  hv_error *err = NULL;
  time_t t = 0;
  if (hv_audit_parse_since (s, T0, &t, &err) < 0)
    fail_msg ("--since %s: %s", s, err->msg);
  return t;
}

static void
test_since (void **state)
{
  (void) state;
  assert_int_equal (since_ok ("10s"), T0 - 10);
  assert_int_equal (since_ok ("10m"), T0 - 600);
  assert_int_equal (since_ok ("2h"), T0 - 7200);
  assert_int_equal (since_ok ("3d"), T0 - 3 * 86400);
  assert_int_equal (since_ok ("2026-11-23T10:00Z"), T0);
  assert_int_equal (since_ok ("2026-11-23T10:00:30Z"), T0 + 30);
  assert_int_equal (since_ok ("2026-11-23 09:59Z"), T0 - 60);
  assert_int_equal (since_ok ("2026-11-23Z"), T0 - 10 * 3600);
  /* Local time without Z: UTC in this test. */
  assert_int_equal (since_ok ("2026-11-23T10:00"), T0);
  assert_int_equal (since_ok ("2026-11-23"), T0 - 10 * 3600);
  static const char *const bad[] = { "", "10", "m", "10x", "-5m", "10mm", "1e3s", "99999999999999999999d",
                                     "2026-11-23T", "2026-11-23T10", "2026-11-23T10:00+", "2026-02-31",
                                     "2026-11-23T10:00Zjunk", "yesterday" };
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    {
      hv_error *err = NULL;
      time_t t = 0;
      if (hv_audit_parse_since (bad[i], T0, &t, &err) == 0)
        fail_msg ("--since \"%s\" accepted", bad[i]);
      assert_non_null (strstr (err->msg, "--since \""));
      hv_error_free (&err);
    }
}

static void
test_record_time (void **state)
{
  (void) state;
  time_t s;
  long ns;
  assert_int_equal (hv_audit_parse_time ("2026-11-23T10:00:01.123456789Z", &s, &ns), 0);
  assert_int_equal (s, T0 + 1);
  assert_int_equal (ns, 123456789);
  assert_int_equal (hv_audit_parse_time ("2026-11-23T10:00:01Z", &s, &ns), 0);
  assert_int_equal (ns, 0);
  assert_int_equal (hv_audit_parse_time ("2026-11-23T10:00:01.5Z", &s, &ns), 0);
  assert_int_equal (ns, 500000000);
  assert_int_equal (hv_audit_parse_time ("2026-11-23T10:00:01", &s, &ns), -1);
  assert_int_equal (hv_audit_parse_time ("2026-11-23T10:00:01.Z", &s, &ns), -1);
  assert_int_equal (hv_audit_parse_time ("2026-11-23T10:00:01Zx", &s, &ns), -1);
  assert_int_equal (hv_audit_parse_time ("now", &s, &ns), -1);
}

static void
test_not_records (void **state)
{
  (void) state;
  struct hv_audit_record r;
  static const char *const bad[] = {
    "",
    "not json",
    "[1,2]",
    "\"time\"",
    "{\"time\":\"2026-11-23T10:00:01Z\"",                        /* cut short */
    "{\"event\":\"denied\"}",                                    /* no time */
    "{\"time\":\"2026-11-23T10:00:01Z\"}",                       /* no event */
    "{\"time\":\"2026-11-23T10:00:01Z\",\"event\":\"\"}",        /* empty event */
    "{\"time\":17,\"event\":\"denied\"}",                        /* time not a string */
    "{\"time\":\"yesterday\",\"event\":\"denied\"}",             /* not a time */
    "{\"time\":\"2026-11-23T10:00:01Z\",\"event\":[\"denied\"]}", /* event not a string */
    /* A key twice: readers disagree on which one counts. */
    "{\"time\":\"2026-11-23T10:00:01Z\",\"event\":\"denied\",\"event\":\"start\"}",
    "{\"time\":\"2026-11-23T10:00:01Z\",\"event\":\"x\",\"a\":[{\"k\":1,\"j\":2,\"k\":3}]}",
  };
  for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
    if (hv_audit_record_parse (bad[i], &r) == 0)
      fail_msg ("accepted as a record: %s", bad[i]);
  /* Deep nesting is refused before yajl builds (and recursively frees)
   * a tree of it. */
  size_t depth = 100000;
  char *deep = xmalloc0 (2 * depth + 64);
  strcpy (deep, "{\"time\":\"2026-11-23T10:00:01Z\",\"event\":\"x\",\"a\":");
  size_t l = strlen (deep);
  memset (deep + l, '[', depth);
  memset (deep + l + depth, ']', depth);
  strcpy (deep + l + 2 * depth, "}");
  assert_int_equal (hv_audit_record_parse (deep, &r), -1);
  free (deep);
  /* Brackets inside strings are not nesting. */
  assert_int_equal (hv_audit_record_parse ("{\"time\":\"2026-11-23T10:00:01Z\",\"event\":\"x\",\"comm\":\"[[[[[[[[[[[[[["
                                           "[[[[[[[[[[[[[[[[[[[[[[\\\"[[[[\"}",
                                           &r),
                    0);
  hv_audit_record_release (&r);
}

static char *
format_line (const char *line)
{
  struct hv_audit_record r;
  if (hv_audit_record_parse (line, &r) < 0)
    fail_msg ("not a record: %s", line);
  char *text = hv_audit_record_format (&r);
  hv_audit_record_release (&r);
  return text;
}

static void
test_format (void **state)
{
  (void) state;
  char *s = format_line ("{\"time\":\"2026-11-23T10:00:01.5Z\",\"event\":\"denied\",\"policy\":\"strict\","
                         "\"syscall\":\"ptrace\",\"pid\":4250,\"comm\":\"python3\",\"args\":[\"0x10\"]}");
  assert_string_equal (s, "2026-11-23 10:00:01  haven-run (strict)  denied  ptrace by pid 4250 (python3)");
  free (s);
  s = format_line ("{\"time\":\"2026-11-23T10:00:02Z\",\"event\":\"denied\",\"policy\":\"ci\",\"container\":"
                   "\"4370e25a2eda33a7053e\",\"process\":\"exec\",\"syscall\":\"mount\",\"pid\":7,\"comm\":\"sh\"}");
  assert_string_equal (s, "2026-11-23 10:00:02  4370e25a2eda (ci)  denied  mount by pid 7 (sh), exec");
  free (s);
  s = format_line ("{\"time\":\"2026-11-23T10:00:03Z\",\"event\":\"net-denied\",\"policy\":\"codex\","
                   "\"destination\":\"198.51.100.10\",\"port\":81,\"protocol\":\"tcp\",\"names\":[\"example.test\"]}");
  assert_string_equal (s, "2026-11-23 10:00:03  haven-run (codex)  net-denied  tcp to 198.51.100.10 port 81 (example.test)");
  free (s);
  s = format_line ("{\"time\":\"2026-11-23T10:00:04Z\",\"event\":\"exit\",\"policy\":\"strict\",\"status\":0,"
                   "\"seconds\":1.5}");
  assert_string_equal (s, "2026-11-23 10:00:04  haven-run (strict)  exit  status=0 seconds=1.5");
  free (s);
  s = format_line ("{\"time\":\"2026-11-23T10:00:05Z\",\"event\":\"dropped\",\"policy\":\"strict\",\"count\":3,"
                   "\"reason\":\"rate limit\",\"syscalls\":{\"ptrace\":2,\"bpf\":1}}");
  assert_string_equal (s, "2026-11-23 10:00:05  haven-run (strict)  dropped  3 denials not recorded (rate limit): "
                          "ptrace 2, bpf 1");
  free (s);
  /* The process names itself: an escape sequence (and a C1 CSI, and a
   * newline) prints as text, never reaches the terminal as such. */
  s = format_line ("{\"time\":\"2026-11-23T10:00:06Z\",\"event\":\"denied\",\"policy\":\"p\",\"syscall\":\"bpf\","
                   "\"pid\":1,\"comm\":\"\\u001b]0;owned\\u0007x\\u009b2J\\n\"}");
  assert_string_equal (s, "2026-11-23 10:00:06  haven-run (p)  denied  bpf by pid 1 (\\x1b]0;owned\\x07x\\u009b2J\\x0a)");
  free (s);
  /* An event this version does not know: all its members. */
  s = format_line ("{\"time\":\"2026-11-23T10:00:07Z\",\"event\":\"hidden-write\",\"policy\":\"p\",\"path\":\"/x\","
                   "\"rule\":\"protect\"}");
  assert_string_equal (s, "2026-11-23 10:00:07  haven-run (p)  hidden-write  path=/x rule=protect");
  free (s);
}

static bool
matches (const char *line, const struct hv_audit_filter *f)
{
  struct hv_audit_record r;
  if (hv_audit_record_parse (line, &r) < 0)
    fail_msg ("not a record: %s", line);
  bool m = hv_audit_record_matches (&r, f);
  hv_audit_record_release (&r);
  return m;
}

static void
test_filters (void **state)
{
  (void) state;
  const char *denied = "{\"time\":\"2026-11-23T10:00:00Z\",\"event\":\"denied\",\"policy\":\"ci\","
                       "\"container\":\"abc123\",\"syscall\":\"ptrace\"}";
  const char *run = "{\"time\":\"2026-11-23T09:00:00Z\",\"event\":\"start\",\"policy\":\"strict\"}";
  struct hv_audit_filter f = { 0 };
  assert_true (matches (denied, &f) && matches (run, &f));
  f.has_since = true;
  f.since = T0 - 60;
  assert_true (matches (denied, &f));
  assert_false (matches (run, &f));
  f.since = T0;
  assert_true (matches (denied, &f));
  f.since = T0 + 1;
  assert_false (matches (denied, &f));
  f.has_since = false;
  oci_strv_push (&f.events, "ptrace");
  assert_true (matches (denied, &f));
  assert_false (matches (run, &f));
  oci_strv_push (&f.events, "start");
  assert_true (matches (run, &f));
  oci_strv_free (&f.events);
  oci_strv_push (&f.containers, "abc");
  assert_true (matches (denied, &f));
  assert_false (matches (run, &f));
  oci_strv_free (&f.containers);
  oci_strv_push (&f.containers, "abd");
  assert_false (matches (denied, &f));
  oci_strv_push (&f.containers, "strict");
  assert_true (matches (run, &f));
  /* A policy name is matched whole, not as a prefix. */
  oci_strv_free (&f.containers);
  oci_strv_push (&f.containers, "stri");
  assert_false (matches (run, &f));
  oci_strv_free (&f.containers);
}

/* The writer's summary of dropped denials counts per architecture and
 * number but names by name: open on x86_64 and on i386 are one key with
 * the sum, so the record stays one that haven audit (which refuses a key
 * named twice) reads. */
static void
test_dropped_summary_names_once (void **state)
{
  (void) state;
  int fd = memfd_create ("trail", MFD_CLOEXEC);
  assert_true (fd >= 0);
  struct hv_audit_trail t;
  hv_audit_trail_init (&t, fd, "test", NULL);
  t.kinds[0] = (struct hv_audit_dropped_kind) { AUDIT_ARCH_X86_64, 2, 3 }; /* open */
  t.kinds[1] = (struct hv_audit_dropped_kind) { AUDIT_ARCH_I386, 5, 4 };   /* open */
  t.kinds[2] = (struct hv_audit_dropped_kind) { AUDIT_ARCH_X86_64, 101, 1 }; /* ptrace */
  t.kinds[3] = (struct hv_audit_dropped_kind) { AUDIT_ARCH_X86_64, 99999, 2 };
  t.kinds[4] = (struct hv_audit_dropped_kind) { AUDIT_ARCH_I386, 99999, 5 };
  t.n_kinds = 5;
  t.dropped = 15;
  hv_audit_trail_summarize (&t, false);
  char line[4096] = "";
  ssize_t n = pread (fd, line, sizeof (line) - 1, 0);
  assert_true (n > 0);
  line[n] = '\0';
  line[strcspn (line, "\n")] = '\0';
  struct hv_audit_record r;
  if (hv_audit_record_parse (line, &r) < 0)
    fail_msg ("haven audit does not read the summary: %s", line);
  assert_string_equal (r.event, "dropped");
  hv_audit_record_release (&r);
  assert_non_null (strstr (line, "\"syscalls\":{\"open\":7,\"ptrace\":1,\"99999\":7}"));
  hv_audit_trail_release (&t);
  close (fd);
}

/* A pod's records (the writer's "pod" object): found by NAMESPACE/POD
 * (the sandbox's and every container's) and NAMESPACE/POD/CONTAINER,
 * each part whole; the id prefix and policy still work. */
static void
test_pod_filters (void **state)
{
  (void) state;
  const char *box = "{\"time\":\"2026-11-23T10:00:00Z\",\"event\":\"denied\",\"policy\":\"default\","
                    "\"container\":\"c0ffee12\",\"pod\":{\"namespace\":\"hvt\",\"name\":\"agent\","
                    "\"uid\":\"u-1\",\"container\":\"box\"},\"syscall\":\"ptrace\"}";
  const char *sandbox = "{\"time\":\"2026-11-23T10:00:00Z\",\"event\":\"start\",\"policy\":\"default\","
                        "\"container\":\"beef3456\",\"pod\":{\"namespace\":\"hvt\",\"name\":\"agent\","
                        "\"uid\":\"u-1\"}}";
  const char *other = "{\"time\":\"2026-11-23T10:00:00Z\",\"event\":\"start\",\"policy\":\"default\","
                      "\"container\":\"dead7890\",\"pod\":{\"namespace\":\"hvt\",\"name\":\"agent-2\","
                      "\"uid\":\"u-2\",\"container\":\"box\"}}";
  const char *engine = "{\"time\":\"2026-11-23T10:00:00Z\",\"event\":\"start\",\"policy\":\"default\","
                       "\"container\":\"hvt\"}";
  struct hv_audit_filter f = { 0 };
  oci_strv_push (&f.containers, "hvt/agent");
  assert_true (matches (box, &f) && matches (sandbox, &f));
  assert_false (matches (other, &f) || matches (engine, &f));
  oci_strv_free (&f.containers);
  oci_strv_push (&f.containers, "hvt/agent/box");
  assert_true (matches (box, &f));
  assert_false (matches (sandbox, &f) || matches (other, &f) || matches (engine, &f));
  oci_strv_free (&f.containers);
  /* Whole parts: no prefix of a namespace, a pod or a container. */
  static const char *const misses[] = { "hv/agent", "hvt/agen", "hvt/agent/bo", "hvt/agent/box/", "hvt/", "/agent",
                                        "hvt/agent/box/x", "hvtx/agent" };
  for (size_t i = 0; i < sizeof (misses) / sizeof (misses[0]); i++)
    {
      oci_strv_push (&f.containers, misses[i]);
      if (matches (box, &f))
        fail_msg ("--container %s matched hvt/agent/box", misses[i]);
      oci_strv_free (&f.containers);
    }
  oci_strv_push (&f.containers, "c0ff");
  assert_true (matches (box, &f));
  assert_false (matches (sandbox, &f));
  oci_strv_free (&f.containers);
  /* A pod that is not an object names nothing. */
  oci_strv_push (&f.containers, "hvt/agent");
  assert_false (matches ("{\"time\":\"2026-11-23T10:00:00Z\",\"event\":\"start\",\"pod\":\"hvt/agent\"}", &f));
  oci_strv_free (&f.containers);
  char *s = format_line (box);
  assert_string_equal (s, "2026-11-23 10:00:00  c0ffee12 hvt/agent/box (default)  denied  ptrace");
  free (s);
  s = format_line (sandbox);
  assert_string_equal (s, "2026-11-23 10:00:00  beef3456 hvt/agent (default)  start");
  free (s);
}

/* The writer: with a pod, every record carries it (container left out
 * for the sandbox); without, no "pod" member. */
static void
test_trail_names_pod (void **state)
{
  (void) state;
  int fd = memfd_create ("trail", MFD_CLOEXEC);
  assert_true (fd >= 0);
  struct hv_audit_trail t;
  hv_audit_trail_init (&t, fd, "default", "c0ffee12");
  struct hv_audit_pod pod = { .pod_namespace = "hvt", .name = "agent", .uid = "u-1", .container = "box" };
  t.pod = &pod;
  hv_audit_trail_emit (&t, hv_audit_trail_record (&t, "start"));
  pod.container = NULL;
  hv_audit_trail_emit (&t, hv_audit_trail_record (&t, "exit"));
  t.pod = NULL;
  hv_audit_trail_emit (&t, hv_audit_trail_record (&t, "exit"));
  char text[4096] = "";
  ssize_t n = pread (fd, text, sizeof (text) - 1, 0);
  assert_true (n > 0);
  text[n] = '\0';
  char *second = strchr (text, '\n') + 1, *third = strchr (second, '\n') + 1;
  second[-1] = third[-1] = '\0';
  assert_non_null (strstr (text, "\"container\":\"c0ffee12\",\"pod\":{\"namespace\":\"hvt\",\"name\":\"agent\","
                                 "\"uid\":\"u-1\",\"container\":\"box\"}"));
  assert_non_null (strstr (second, "\"pod\":{\"namespace\":\"hvt\",\"name\":\"agent\",\"uid\":\"u-1\"}"));
  assert_null (strstr (third, "\"pod\""));
  struct hv_audit_record r;
  if (hv_audit_record_parse (text, &r) < 0)
    fail_msg ("haven audit does not read %s", text);
  assert_string_equal (r.pod_namespace, "hvt");
  assert_string_equal (r.pod_name, "agent");
  assert_string_equal (r.pod_container, "box");
  hv_audit_record_release (&r);
  hv_audit_trail_release (&t);
  close (fd);
}

int
main (void)
{
  setenv ("TZ", "UTC", 1);
  tzset ();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_since),   cmocka_unit_test (test_record_time), cmocka_unit_test (test_not_records),
    cmocka_unit_test (test_format),  cmocka_unit_test (test_filters),
    cmocka_unit_test (test_dropped_summary_names_once),
    cmocka_unit_test (test_pod_filters), cmocka_unit_test (test_trail_names_pod),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
