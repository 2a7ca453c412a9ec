/* Parse a policy text in a unit test: it must parse (parse_ok), or fail
 * with exactly this message (expect_error); and the small helpers the
 * policy tests share: a policy file written (write_text), an environment
 * as one string (joined), generated JSON without its indentation
 * (compact).  Include after cmocka.h and policy_parse.h
 * (and utils.h for joined).  A test uses what it needs (hence unused). */
#ifndef HAVEN_TESTS_POLICY_PARSE_CHECK_H
#define HAVEN_TESTS_POLICY_PARSE_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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

/* TEXT written to PATH (a policy or key file of the test's own). */
__attribute__ ((unused)) static void
write_text (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
}

/* The environment ENV (freed, its strings too) as one string "A=1 B=2 ". */
__attribute__ ((unused)) static char *
joined (char **env)
{
  size_t len = 1;
  for (char **e = env; *e; e++)
    len += strlen (*e) + 1;
  char *out = xmalloc0 (len);
  for (char **e = env; *e; e++)
    {
      strcat (out, *e);
      strcat (out, " ");
      free (*e);
    }
  free (env);
  return out;
}
/* text without blanks outside strings (the generator's indentation). */
__attribute__ ((unused)) static void
compact (char *text)
{
  char *to = text;
  bool in_string = false;
  for (char *c = text; *c; c++)
    {
      if (*c == '"' && (c == text || c[-1] != '\\'))
        in_string = !in_string;
      if (in_string || (*c != ' ' && *c != '\n'))
        *to++ = *c;
    }
  *to = '\0';
}

#endif
