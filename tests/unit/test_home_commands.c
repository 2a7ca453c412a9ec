/* The host agents' settings a run checks (session/home_commands.c):
 * text the sandbox may have rewritten in an earlier run. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "home_commands.h"
#include "utils.h"

static char *key_list[] = { "command", "args" };

static int
check (const char *name, const char *text, hv_error **err)
{
  hv_policy p = { 0 };
  struct hv_run_ctx ctx = { 0 };
  ctx.project = "/nonexistent-haven-test/project";
  ctx.home = "/nonexistent-haven-test/home";
  oci_strv keys = { .v = key_list, .n = 2 };
  return hv_home_commands_check_text (&p, &ctx, name, text, &keys, err);
}

/* A command under the project (writable by default) is refused, one
 * outside it is not: the check below is not refusing everything. */
static void
test_project_command_refused (void **state)
{
  (void) state;
  hv_error *err = NULL;
  assert_int_equal (check ("settings.json", "{\"x\":{\"command\":\"/usr/bin/env\"}}", &err), 0);
  assert_int_equal (check ("settings.json", "{\"x\":[{\"command\":\"$CLAUDE_PROJECT_DIR/run.sh\"}]}", &err), -1);
  assert_non_null (strstr (err->msg, "settings.json: .x[0].command runs /nonexistent-haven-test/project/run.sh"));
  hv_error_free (&err);
}

/* Settings nested a million levels deep (2 MB, under the 64 MiB read
 * limit): yajl's tree and walk_json recursed once a level and the
 * stack overflowed; now the file is refused unread, naming it. */
static void
test_nested_deep_refused (void **state)
{
  (void) state;
  const size_t depth = 1000000;
  char *text = xmalloc0 (2 * depth + 64), *p = text;
  p += sprintf (p, "{\"command\":");
  memset (p, '[', depth);
  p += depth;
  p += sprintf (p, "\"x\"");
  memset (p, ']', depth);
  p += depth;
  strcpy (p, "}");
  hv_error *err = NULL;
  assert_int_equal (check ("settings.json", text, &err), -1);
  assert_string_equal (err->msg,
                       "settings.json: nested deeper than 64 levels: cannot check the commands it names");
  hv_error_free (&err);
  /* 64 levels are read (deeper than any agent's settings need). */
  strcpy (text, "{\"command\":");
  p = text + strlen (text);
  memset (p, '[', 63);
  strcpy (p + 63, "\"/usr/bin/env\"");
  p += 63 + strlen ("\"/usr/bin/env\"");
  memset (p, ']', 63);
  strcpy (p + 63, "}");
  assert_int_equal (check ("settings.json", text, &err), 0);
  free (text);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_project_command_refused),
    cmocka_unit_test (test_nested_deep_refused),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
