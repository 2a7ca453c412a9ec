/* Parse a policy text in a unit test: it must parse (parse_ok), or fail
 * with exactly this message (expect_error).  Include after cmocka.h and
 * policy_parse.h.  A test may use either or both (hence unused). */
#ifndef HAVEN_TESTS_POLICY_PARSE_CHECK_H
#define HAVEN_TESTS_POLICY_PARSE_CHECK_H

#include <string.h>

__attribute__ ((unused)) static void
parse_ok (const char *yaml, hv_policy *p)
{
  hv_error *err = NULL;
  memset (p, 0, sizeof (*p));
  if (hv_policy_parse (yaml, strlen (yaml), "t.yaml", p, NULL, &err) < 0)
    fail_msg ("unexpected error: %s", err->msg);
}

__attribute__ ((unused)) static void
expect_error (const char *yaml, const char *message)
{
  hv_policy p = { 0 };
  hv_error *err = NULL;
  int r = hv_policy_parse (yaml, strlen (yaml), "t.yaml", &p, NULL, &err);
  hv_policy_free_fields (&p);
  if (r == 0)
    fail_msg ("accepted: %s", yaml);
  if (strcmp (err->msg, message) != 0)
    fail_msg ("expected \"%s\"\n     got \"%s\"", message, err->msg);
  hv_error_free (&err);
}
#endif
