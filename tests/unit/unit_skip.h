/* A unit test that cannot run on this host says why and is skipped,
 * never passed: SKIP_BECAUSE prints the reason into the test's log and
 * calls cmocka's skip().  cmocka counts skipped tests as not failed, so
 * main returns unit_tests_status (): 77 when every test was skipped,
 * which the automake test driver reports as SKIP; a program with some
 * tests run reports their result, its log naming those skipped and why.
 * Include after cmocka.h. */
#ifndef HAVEN_TESTS_UNIT_SKIP_H
#define HAVEN_TESTS_UNIT_SKIP_H

#include <stddef.h>

static size_t unit_skipped;

#define SKIP_BECAUSE(...)                                                                                           \
  do                                                                                                                \
    {                                                                                                               \
      print_message ("SKIP: ");                                                                                     \
      print_message (__VA_ARGS__);                                                                                  \
      print_message ("\n");                                                                                         \
      unit_skipped++;                                                                                               \
      skip ();                                                                                                      \
    }                                                                                                               \
  while (0)

/* What main returns after cmocka_run_group_tests (failed) of n tests. */
static inline int
unit_tests_status (int failed, size_t n)
{
  if (failed == 0 && n > 0 && unit_skipped == n)
    return 77;
  return failed;
}
#endif
