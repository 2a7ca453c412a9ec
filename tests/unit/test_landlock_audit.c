/* Unit tests of the Landlock audit record fields (landlock_audit.c): the
 * kernel's quoting and hex encoding of untrusted strings, and keys that
 * end other keys ("pid" in "ppid"). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "landlock_audit.h"

static void
expect_field (const char *text, const char *key, const char *want)
{
  char *got = hv_landlock_audit_field (text, key);
  if (want == NULL)
    assert_null (got);
  else
    assert_string_equal (got, want);
  free (got);
}

static void
test_fields (void **state)
{
  (void) state;
  const char *access = "domain=1caadd671 blockers=fs.make_reg path=\"/tmp/llprobe\" dev=\"vda\" ino=10961036";
  expect_field (access, "domain", "1caadd671");
  expect_field (access, "blockers", "fs.make_reg");
  expect_field (access, "path", "/tmp/llprobe");
  expect_field (access, "name", NULL);
  /* A path with a space is hex; an unquoted number is not decoded. */
  expect_field ("domain=1 blockers=fs.execute path=2F746D702F6120620A ino=12", "path", "/tmp/a b\n");
  expect_field ("domain=1 blockers=fs.execute path=2F746D702F6120620A ino=12", "ino", "12");
  const char *sys = "arch=c000003e syscall=59 success=no exit=-13 ppid=7 pid=8 comm=\"python3\" exe=\"/usr/bin/python3.11\"";
  expect_field (sys, "pid", "8");
  expect_field (sys, "comm", "python3");
  expect_field (sys, "arch", "c000003e");
  expect_field ("status=allocated pid=300 comm=2266", "comm", "\"f");
  /* A quote that never closes: nothing. */
  expect_field ("path=\"/tmp/x", "path", NULL);
}

int
main (void)
{
  const struct CMUnitTest tests[] = { cmocka_unit_test (test_fields) };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
