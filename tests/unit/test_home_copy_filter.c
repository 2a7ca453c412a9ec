/* The project's copy of a JSON file holding every project's entries
 * (session/home_copy_filter.c): the sandbox writes it, the next start
 * reads it. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "home_copy_filter.h"
#include "utils.h"

static char *member_list[] = { "projects" };

/* Filter `text` as the copy of /home/u/.claude.json for project /p;
 * the copy's content afterwards. */
static char *
filter (const char *text)
{
  char dir[] = "/tmp/hv-copy-filter-XXXXXX";
  assert_non_null (mkdtemp (dir));
  cleanup_free char *file = xasprintf ("%s/file", dir);
  FILE *f = fopen (file, "w");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
  int efd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true (efd >= 0);
  oci_strv members = { .v = member_list, .n = 1 };
  hv_error *err = NULL;
  assert_int_equal (hv_home_copy_filter (efd, "file", "/home/u/.claude.json", &members, "/p", NULL, &err), 0);
  close (efd);
  f = fopen (file, "r");
  assert_non_null (f);
  char *out = xmalloc0 (4096);
  size_t n = fread (out, 1, 4095, f);
  out[n] = '\0';
  fclose (f);
  unlink (file);
  rmdir (dir);
  return out;
}

static void
test_other_projects_cut (void **state)
{
  (void) state;
  cleanup_free char *out = filter ("{\"projects\":{\"/p\":{\"a\":1},\"/q\":{\"b\":2}},\"x\":[1]}");
  assert_string_equal (out, "{\"projects\":{\"/p\":{\"a\":1}},\"x\":[1]}");
}

/* Nested a million levels deep (2 MB): yajl's tree is built and freed
 * recursively and the next start crashed reading it; 130 levels under
 * another project's key came back as text that is not JSON (yajl_gen
 * stops at 127).  Both now start again empty, as a copy that is not a
 * JSON object does. */
static void
test_nested_deep_emptied (void **state)
{
  (void) state;
  const size_t depths[] = { 1000000, 130 };
  for (size_t d = 0; d < 2; d++)
    {
      size_t depth = depths[d];
      char *text = xmalloc0 (2 * depth + 128), *p = text;
      p += sprintf (p, "{\"projects\":{\"/q\":");
      memset (p, '[', depth);
      p += depth;
      p += sprintf (p, "1");
      memset (p, ']', depth);
      p += depth;
      strcpy (p, ",\"/p\":{}}}");
      cleanup_free char *out = filter (text);
      assert_string_equal (out, "{}\n");
      free (text);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_other_projects_cut),
    cmocka_unit_test (test_nested_deep_emptied),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
