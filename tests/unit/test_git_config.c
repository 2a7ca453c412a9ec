/* Unit tests of the git config reader (runtime/guard/git_config.c): the
 * keys and values it hands out for each part of git's format, the files
 * it refuses as git would, and which settings it counts as making git
 * run a program. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "git_config.h"
#include "utils.h"

/* Every entry as "key=value" ("key" alone for a bare key), one per line. */
static int
collect (const char *key, const char *value, void *data)
{
  char **all = data;
  char *more = xasprintf ("%s%s%s%s\n", *all ? *all : "", key, value ? "=" : "", value ? value : "");
  free (*all);
  *all = more;
  return 0;
}

static void
parses_to (const char *text, size_t len, const char *expected)
{
  char *all = NULL;
  hv_error *err = NULL;
  if (hv_git_config_parse (text, len, collect, &all, &err) < 0)
    fail_msg ("refused: %s", err->msg);
  assert_string_equal (all ? all : "", expected);
  free (all);
}

#define PARSES_TO(text, expected) parses_to (text, sizeof (text) - 1, expected)

static void
refused (const char *text, size_t len, const char *message)
{
  char *all = NULL;
  hv_error *err = NULL;
  if (hv_git_config_parse (text, len, collect, &all, &err) == 0)
    fail_msg ("accepted: %s", text);
  assert_string_equal (err->msg, message);
  hv_error_free (&err);
  free (all);
}

#define REFUSED(text, message) refused (text, sizeof (text) - 1, message)

static void
test_sections_and_case (void **state)
{
  (void) state;
  /* Section and key lowercased, the subsection's case kept. */
  PARSES_TO ("[Core]\n\tHooksPath = h\n[Remote \"Origin\"]\n\tURL = u\n",
             "core.hookspath=h\nremote.Origin.url=u\n");
  /* The old [section.sub] form is lowercased whole, as git does. */
  PARSES_TO ("[Remote.Origin]\nurl = u\n", "remote.origin.url=u\n");
  /* Spaces and tabs before the quoted subsection; a key on the header's
   * line; the key's characters. */
  PARSES_TO ("[diff \t \"a.b c\"] textConv = x\n[x-y]\na-1b=2\n", "diff.a.b c.textconv=x\nx-y.a-1b=2\n");
  /* Escapes in a subsection: a backslash keeps the next character. */
  PARSES_TO ("[a \"q\\\"x\\\\y\\z\"]\nk = v\n", "a.q\"x\\yz.k=v\n");
  /* An empty subsection. */
  PARSES_TO ("[a \"\"]\nk\n", "a..k\n");
}

static void
test_values (void **state)
{
  (void) state;
  /* A bare key is true (no value); an empty value is "". */
  PARSES_TO ("[core]\n\tbare\n\tempty =\n", "core.bare\ncore.empty=\n");
  /* Spaces around the value dropped, inside it kept. */
  PARSES_TO ("[a]\nk =   one  two   \n", "a.k=one  two\n");
  /* Quotes keep spaces and comment characters; they may be partial. */
  PARSES_TO ("[a]\nk = \" x ; y # \"z\n", "a.k= x ; y # z\n");
  /* Comments after a value and on their own lines. */
  PARSES_TO ("# top\n; also\n[a] ; c\nk = v ; c\nl = w#c\n  # indented\n", "a.k=v\na.l=w\n");
  /* The escapes git knows. */
  PARSES_TO ("[a]\nk = x\\ty\\nz\\b\\\\\\\"\n", "a.k=x\ty\nz\b\\\"\n");
  /* A backslash-newline joins lines (the next line's spaces inside the
   * value kept), inside quotes too. */
  PARSES_TO ("[a]\nk = one\\\n  two\nl = \"p\\\nq\"\n", "a.k=one  two\na.l=pq\n");
  /* CRLF read as LF; a byte order mark skipped; no final newline. */
  PARSES_TO ("\xef\xbb\xbf[a]\r\nk = v\r\nl = w", "a.k=v\na.l=w\n");
  /* Repeated keys are each handed out, in order. */
  PARSES_TO ("[a]\nk = 1\n[b]\nx\n[a]\nk = 2\n", "a.k=1\nb.x\na.k=2\n");
  /* Nothing at all. */
  PARSES_TO ("", "");
  PARSES_TO ("\n\n  \n", "");
}

static void
test_refused (void **state)
{
  (void) state;
  REFUSED ("k = v\n", "line 1: a key outside any section (git would refuse this file)");
  REFUSED ("[a]\n1k = v\n", "line 2: a key must start with a letter (git would refuse this file)");
  REFUSED ("[a]\nk_x = v\n", "line 2: bad key name (git would refuse this file)");
  REFUSED ("[a]\nk v\n", "line 2: bad key name (git would refuse this file)");
  REFUSED ("[a\nk = v\n", "line 2: unterminated section header (git would refuse this file)");
  REFUSED ("[]\n", "line 1: empty section name (git would refuse this file)");
  REFUSED ("[a_b]\n", "line 1: bad character in a section name (git would refuse this file)");
  REFUSED ("[a b]\n", "line 1: bad section header (git would refuse this file)");
  REFUSED ("[a \"b\" ]\n", "line 1: bad section header (git would refuse this file)");
  REFUSED ("[a \"b\n", "line 2: unterminated subsection name (git would refuse this file)");
  REFUSED ("[a]\nk = \"open\n", "line 3: unterminated quote (git would refuse this file)");
  REFUSED ("[a]\nk = \\q\n", "line 2: bad escape in a value (git would refuse this file)");
  REFUSED ("[a]\nk = v\0w\n", "line 2: NUL byte in a value (git would refuse this file)");
  REFUSED ("[a \"b\0\"]\n", "line 1: NUL byte in a subsection name (git would refuse this file)");
}

static int
stop_at_second (const char *key, const char *value, void *data)
{
  (void) key;
  (void) value;
  int *n = data;
  return ++*n == 2 ? -1 : 0;
}

/* A callback's refusal stops the walk and is the parse's result. */
static void
test_callback_stops (void **state)
{
  (void) state;
  int n = 0;
  hv_error *err = NULL;
  const char text[] = "[a]\nx\ny\nz\n";
  assert_int_equal (hv_git_config_parse (text, sizeof (text) - 1, stop_at_second, &n, &err), -1);
  assert_int_equal (n, 2);
  assert_null (err);
}

static void
test_key_executes (void **state)
{
  (void) state;
  static const char *const yes[] = {
    "core.hookspath", "core.fsmonitor", "core.sshcommand", "core.pager", "core.editor", "core.worktree",
    "alias.st", "hook.pre-commit.command", "filter.lfs.smudge", "include.path", "includeif.gitdir:x.path",
    "url.ext::sh.insteadof", "protocol.ext.allow", "credential.helper", "diff.X.textconv", "diff.a.b.command",
    "merge.m.driver", "remote.origin.uploadpack", "remote.a.b.receivepack", "submodule.s.update",
    "extensions.worktreeconfig", "sequence.editor", "gpg.ssh.program", "lfs.customtransfer.x.path", NULL,
  };
  static const char *const no[] = {
    "core.bare", "core.repositoryformatversion", "user.name", "remote.origin.url", "remote.origin.fetch",
    "branch.main.merge", "diff.textconv", "diff.renames", "merge.ff", "submodule.s.url",
    "core.hookspathx", "aliases.x", "corehookspath", NULL,
  };
  for (size_t i = 0; yes[i]; i++)
    if (!hv_git_config_key_executes (yes[i]))
      fail_msg ("%s should count as running a program", yes[i]);
  for (size_t i = 0; no[i]; i++)
    if (hv_git_config_key_executes (no[i]))
      fail_msg ("%s should not count as running a program", no[i]);
}

static void
test_exec_entries_and_get (void **state)
{
  (void) state;
  const char text[] = "[core]\n\tbare = false\n\tHooksPath = .githooks\n[Alias]\n\tst\n"
                      "[remote \"o\"]\n\turl = u\n\tuploadpack = evil\n[core]\n\tbare = true\n";
  oci_strv out = { 0 };
  hv_error *err = NULL;
  assert_int_equal (hv_git_config_exec_entries (text, sizeof (text) - 1, &out, &err), 0);
  assert_int_equal (out.n, 3);
  assert_string_equal (out.v[0], "core.hookspath=.githooks");
  assert_string_equal (out.v[1], "alias.st=(true)");
  assert_string_equal (out.v[2], "remote.o.uploadpack=evil");
  oci_strv_free (&out);
  const char bad[] = "[core]\nhooksPath = \"x\n";
  assert_int_equal (hv_git_config_exec_entries (bad, sizeof (bad) - 1, &out, &err), -1);
  assert_non_null (strstr (err->msg, "unterminated quote"));
  hv_error_free (&err);
  oci_strv_free (&out);

  char *v = hv_git_config_get (text, sizeof (text) - 1, "core.bare");
  assert_string_equal (v, "true");
  free (v);
  v = hv_git_config_get (text, sizeof (text) - 1, "remote.o.url");
  assert_string_equal (v, "u");
  free (v);
  assert_null (hv_git_config_get (text, sizeof (text) - 1, "core.editor"));
  assert_null (hv_git_config_get (bad, sizeof (bad) - 1, "core.hookspath"));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_sections_and_case), cmocka_unit_test (test_values),
    cmocka_unit_test (test_refused),           cmocka_unit_test (test_callback_stops),
    cmocka_unit_test (test_key_executes),      cmocka_unit_test (test_exec_entries_and_get),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
