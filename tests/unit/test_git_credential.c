/* Unit tests of git's credential-helper protocol (runtime/guard/
 * git_credential.c, git_credential_fill.c): what the request reader takes
 * and refuses, url expansion, the answer writer, the broker's decision
 * for each kind of request, and the call of `git credential fill` against
 * a temporary HOME whose helper is a test script. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "git_credential.h"
#include "tmp_tree.h"
#include "unit_skip.h"
#include "utils.h"

#define PARSE(text, c, err) hv_git_credential_parse (text, sizeof (text) - 1, c, err)

static void
test_parse (void **state)
{
  (void) state;
  hv_git_credential c = { 0 };
  hv_error *err = NULL;
  const char req[] = "protocol=https\nhost=Example.com:8443\npath=org/repo.git\nusername=al=ice\n"
                     "capability[]=authtype\ncapability[]=state\nwwwauth[]=Basic realm=\"x\"\n"
                     "password_expiry_utc=1\n\n";
  if (PARSE (req, &c, &err) < 0)
    fail_msg ("refused: %s", err->msg);
  assert_string_equal (c.protocol, "https");
  assert_string_equal (c.host, "Example.com:8443");
  assert_string_equal (c.path, "org/repo.git");
  assert_string_equal (c.username, "al=ice"); /* the value runs to the line's end */
  assert_null (c.password);
  assert_int_equal (c.n_capability, 2);
  assert_string_equal (c.capability[1], "state");
  assert_int_equal (c.n_wwwauth, 1);
  assert_string_equal (c.wwwauth[0], "Basic realm=\"x\"");
  hv_git_credential_clear (&c);
  assert_null (c.protocol);

  /* The end of input ends a request as a blank line does, the last line
   * without its newline too. */
  const char eof[] = "protocol=https\nhost=h";
  assert_int_equal (PARSE (eof, &c, &err), 0);
  assert_string_equal (c.host, "h");
  hv_git_credential_clear (&c);
  assert_int_equal (hv_git_credential_parse ("", 0, &c, &err), 0);
  assert_null (c.protocol);
}

static void
test_url (void **state)
{
  (void) state;
  hv_git_credential c = { 0 };
  hv_error *err = NULL;
  const char full[] = "url=https://al%20ice:s%40cret@Example.com:8443/org/repo.git//\n\n";
  if (PARSE (full, &c, &err) < 0)
    fail_msg ("refused: %s", err->msg);
  assert_string_equal (c.protocol, "https");
  assert_string_equal (c.host, "Example.com:8443");
  assert_string_equal (c.username, "al ice");
  assert_string_equal (c.password, "s@cret");
  assert_string_equal (c.path, "org/repo.git");
  hv_git_credential_clear (&c);

  const char bare[] = "url=https://example.com/\n";
  assert_int_equal (PARSE (bare, &c, &err), 0);
  assert_string_equal (c.host, "example.com");
  assert_null (c.path);
  assert_null (c.username);
  hv_git_credential_clear (&c);

  /* userinfo ends before the path: an '@' in the path is the path's. */
  const char *at_path = "url=https://example.com/org@x/repo\n";
  assert_int_equal (hv_git_credential_parse (at_path, strlen (at_path), &c, &err), 0);
  assert_string_equal (c.host, "example.com");
  assert_string_equal (c.path, "org@x/repo");
  assert_null (c.username);
  hv_git_credential_clear (&c);

  const char v6[] = "url=https://[2001:db8::1]:8443/r\n";
  assert_int_equal (PARSE (v6, &c, &err), 0);
  assert_string_equal (c.host, "[2001:db8::1]:8443");
  hv_git_credential_clear (&c);

  /* url next to parts it does not give is fine. */
  const char more[] = "url=https://example.com\npath=a/b\nusername=u\n";
  assert_int_equal (PARSE (more, &c, &err), 0);
  assert_string_equal (c.path, "a/b");
  hv_git_credential_clear (&c);
}

/* The request is refused, *c left empty, and the message says why. */
static void
refused (const char *text, size_t len, const char *why)
{
  hv_git_credential c = { 0 };
  hv_error *err = NULL;
  if (hv_git_credential_parse (text, len, &c, &err) == 0)
    fail_msg ("accepted: %s", text);
  assert_non_null (err);
  if (!strstr (err->msg, why))
    fail_msg ("%s: message \"%s\" lacks \"%s\"", text, err->msg, why);
  hv_error_free (&err);
  assert_null (c.protocol);
  assert_null (c.host);
  assert_null (c.path);
  assert_null (c.username);
  assert_null (c.password);
  assert_int_equal (c.n_capability, 0);
}
#define REFUSED(text, why) refused (text, sizeof (text) - 1, why)

static void
test_refused (void **state)
{
  (void) state;
  REFUSED ("protocol=https\nprotocol=http\n", "\"protocol\" given twice");
  REFUSED ("host=a\nhost=b\n", "\"host\" given twice");
  REFUSED ("path=a\npath=b\n", "\"path\" given twice");
  REFUSED ("username=a\nusername=b\n", "\"username\" given twice");
  REFUSED ("password=a\npassword=b\n", "\"password\" given twice");
  REFUSED ("protocol=https\nurl=https://h\n", "\"protocol\" given twice (once in url)");
  REFUSED ("host=h\nurl=https://h\n", "\"host\" given twice (once in url)");
  REFUSED ("path=p\nurl=https://h/p\n", "\"path\" given twice (once in url)");
  REFUSED ("username=u\nurl=https://u@h\n", "\"username\" given twice (once in url)");
  REFUSED ("password=p\nurl=https://u:p@h\n", "\"password\" given twice (once in url)");
  REFUSED ("url=https://a\nurl=https://a\n", "\"url\" given twice");
  REFUSED ("protocol=https\0\nhost=h\n", "NUL");
  REFUSED ("protocol=https\nhost\n", "without '='");
  REFUSED ("=x\n", "empty key");
  REFUSED ("protocol=https\n\nhost=h\n", "after the blank line");
  REFUSED ("protocol=ht tp\n", "not a URL scheme");
  REFUSED ("protocol=1https\n", "not a URL scheme");
  REFUSED ("protocol=\n", "not a URL scheme");
  REFUSED ("host=example.com/evil\n", "host is not");
  REFUSED ("host=user@example.com\n", "host is not");
  REFUSED ("host=exa mple.com\n", "host is not");
  REFUSED ("host=example.com\r\n", "host is not");
  REFUSED ("host=example.com:0\n", "host is not");
  REFUSED ("host=example.com:65536\n", "host is not");
  REFUSED ("host=example.com:44x\n", "host is not");
  REFUSED ("host=example.com:\n", "host is not");
  REFUSED ("host=[::1\n", "host is not");
  REFUSED ("host=[::1]x\n", "host is not");
  REFUSED ("host=[\n", "host is not");
  REFUSED ("host=[]\n", "host is not");
  REFUSED ("host=[::g]\n", "host is not");
  REFUSED ("host=[::1]]\n", "host is not");
  REFUSED ("host=a]b\n", "host is not");
  REFUSED ("host=a[b\n", "host is not");
  REFUSED ("path=a/../b\n", "segment");
  REFUSED ("path=./a\n", "segment");
  REFUSED ("path=/a\n", "segment");
  REFUSED ("path=a//b\n", "segment");
  REFUSED ("path=a/\n", "segment");
  REFUSED ("path=\n", "segment");
  REFUSED ("url=https://h/a%2f..%2fb\n", "segment");
  REFUSED ("url=example.com\n", "without a protocol");
  REFUSED ("url=://example.com\n", "without a protocol");
  REFUSED ("url=https://h/a?x=1\n", "query or fragment");
  REFUSED ("url=https://h/a#x\n", "query or fragment");
  REFUSED ("url=https://h/a%4\n", "bad percent escape");
  REFUSED ("url=https://h/a%zz\n", "bad percent escape");
  REFUSED ("url=https://u%0a@h\n", "NUL or line break");
  REFUSED ("url=https://u%00@h\n", "NUL or line break");
  REFUSED ("url=https://exa%2fmple.com\n", "host is not");
  REFUSED ("url=https://u@x@example.com\n", "host is not");
  REFUSED ("url=https://example.com%3a0\n", "host is not");

  char many[1024] = "";
  for (int i = 0; i <= HV_GIT_CREDENTIAL_MAX_LIST; i++)
    strcat (many, "capability[]=x\n");
  refused (many, strlen (many), "more than 16 \"capability[]\"");
  many[0] = '\0';
  for (int i = 0; i <= HV_GIT_CREDENTIAL_MAX_LIST; i++)
    strcat (many, "wwwauth[]=x\n");
  refused (many, strlen (many), "more than 16 \"wwwauth[]\"");

  /* The size bound, at its edge: one byte more than the limit is refused,
   * the limit itself is read. */
  char big[HV_GIT_CREDENTIAL_MAX_BYTES + 1];
  memset (big, 'a', sizeof big);
  memcpy (big, "username=", 9);
  big[HV_GIT_CREDENTIAL_MAX_BYTES - 1] = '\n';
  hv_git_credential c = { 0 };
  hv_error *err = NULL;
  assert_int_equal (hv_git_credential_parse (big, HV_GIT_CREDENTIAL_MAX_BYTES, &c, &err), 0);
  assert_int_equal (strlen (c.username), HV_GIT_CREDENTIAL_MAX_BYTES - 10);
  hv_git_credential_clear (&c);
  big[HV_GIT_CREDENTIAL_MAX_BYTES - 1] = 'a';
  big[HV_GIT_CREDENTIAL_MAX_BYTES] = '\n';
  refused (big, sizeof big, "over 8192 bytes");
}

/* git's cache client's message (what `git credential-cache --socket S
 * ACTION` sends, checked against git 2.39): the action and timeout lines,
 * then the request. */
static void
test_cache_framing (void **state)
{
  (void) state;
  hv_git_credential c = { 0 };
  hv_error *err = NULL;
  char *action = NULL;
  const char get[] = "action=get\ntimeout=900\nprotocol=https\nhost=example.com\npath=a/b.git\n\n";
  if (hv_git_credential_parse_cache (get, sizeof get - 1, &action, &c, &err) < 0)
    fail_msg ("refused: %s", err->msg);
  assert_string_equal (action, "get");
  assert_string_equal (c.protocol, "https");
  assert_string_equal (c.host, "example.com");
  assert_string_equal (c.path, "a/b.git");
  free (action);
  hv_git_credential_clear (&c);
  /* exit carries no credential; no timeout is fine too. */
  const char ex[] = "action=exit\ntimeout=900\n";
  assert_int_equal (hv_git_credential_parse_cache (ex, sizeof ex - 1, &action, &c, &err), 0);
  assert_string_equal (action, "exit");
  assert_null (c.protocol);
  free (action);
  const char bare[] = "action=store\nprotocol=https\nhost=h\nusername=u\npassword=p\n\n";
  assert_int_equal (hv_git_credential_parse_cache (bare, sizeof bare - 1, &action, &c, &err), 0);
  assert_string_equal (action, "store");
  assert_string_equal (c.password, "p");
  free (action);
  hv_git_credential_clear (&c);

  static const struct
  {
    const char *text;
    const char *why;
  } bad[] = {
    { "", "no \"action=\" line first" },
    { "protocol=https\naction=get\n", "no \"action=\" line first" },
    { "action=get", "no \"action=\" line first" }, /* no newline */
    { "action=\nprotocol=https\n", "no \"action=\" line first" },
    { "action=Get\n", "not a word" },
    { "action=g t\n", "not a word" },
    { "action=getgetgetgetgetgetget\n", "no \"action=\" line first" },
    { "action=get\ntimeout=\n", "timeout is not a number" },
    { "action=get\ntimeout=-1\n", "timeout is not a number" },
    { "action=get\ntimeout=12345678901\n", "timeout is not a number" },
    { "action=get\ntimeout=9\nhost=a\nhost=b\n", "\"host\" given twice" },
    { "action=get\ntimeout=9\nprotocol=https\n\naction=get\n", "bytes after the blank line" },
    { "action=get\ntimeout=9\ntimeout=9\nhost=h\n", NULL }, /* a second timeout is a key git skips */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      int r = hv_git_credential_parse_cache (bad[i].text, strlen (bad[i].text), &action, &c, &err);
      if (bad[i].why == NULL)
        {
          assert_int_equal (r, 0);
          free (action);
          hv_git_credential_clear (&c);
          continue;
        }
      if (r == 0)
        fail_msg ("accepted: %s", bad[i].text);
      assert_null (action);
      assert_null (c.host);
      if (!strstr (err->msg, bad[i].why))
        fail_msg ("%s: message \"%s\" lacks \"%s\"", bad[i].text, err->msg, bad[i].why);
      hv_error_free (&err);
    }

  /* Bounded: the header plus a request of the reader's bound at most. */
  size_t big = HV_GIT_CREDENTIAL_CACHE_MAX_BYTES + 1;
  cleanup_free char *buf = xmalloc0 (big + 1);
  memcpy (buf, "action=get\nhost=", 16);
  memset (buf + 16, 'a', big - 16);
  assert_int_equal (hv_git_credential_parse_cache (buf, big, &action, &c, &err), -1);
  assert_non_null (strstr (err->msg, "over"));
  hv_error_free (&err);
  /* ... and the request after the header the reader's own bound. */
  assert_int_equal (hv_git_credential_parse_cache (buf, big - 1, &action, &c, &err), -1);
  assert_non_null (strstr (err->msg, "over"));
  hv_error_free (&err);
}

static void
test_answer (void **state)
{
  (void) state;
  char *out = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_git_credential_answer ("x-access-token", "t0k=n", &out, &err), 0);
  assert_string_equal (out, "username=x-access-token\npassword=t0k=n\n\n");
  free (out);
  out = NULL;
  assert_int_equal (hv_git_credential_answer ("u", "tok\nhost=evil", &out, &err), -1);
  assert_non_null (strstr (err->msg, "line break"));
  assert_null (out);
  hv_error_free (&err);
  assert_int_equal (hv_git_credential_answer ("u\r", "tok", &out, &err), -1);
  hv_error_free (&err);
}

static const hv_git_credential_host hosts[] = {
  { .host = "github.com", .path_prefix = "acme/widget" },
  { .host = "git.example.com", .port = 8443 },
  { .host = "gitlab.com" },
  /* An empty prefix is a mistake, not "any path": it allows nothing. */
  { .host = "empty.example.com", .path_prefix = "" },
};

/* decide on the request text: the entry's index, or -1 with a reason
 * containing `why`. */
static void
decides (const char *action, const char *text, int expected, const char *why)
{
  hv_git_credential c = { 0 };
  hv_error *err = NULL;
  if (hv_git_credential_parse (text, strlen (text), &c, &err) < 0)
    fail_msg ("refused: %s", err->msg);
  const char *reason = "unset";
  int r = hv_git_credential_decide (action, &c, hosts, sizeof hosts / sizeof hosts[0], &reason);
  hv_git_credential_clear (&c);
  if (r != expected)
    fail_msg ("%s %s: %d, expected %d (%s)", action, text, r, expected, reason ? reason : "");
  if (expected < 0 && (!reason || !strstr (reason, why)))
    fail_msg ("%s %s: reason \"%s\" lacks \"%s\"", action, text, reason ? reason : "(null)", why);
}

static void
test_decide (void **state)
{
  (void) state;
  decides ("get", "protocol=https\nhost=gitlab.com\n", 2, NULL);
  decides ("get", "protocol=https\nhost=GitLab.COM\n", 2, NULL);
  decides ("get", "protocol=https\nhost=gitlab.com:443\n", 2, NULL);
  decides ("get", "url=https://gitlab.com/any/repo.git\n", 2, NULL);
  decides ("get", "protocol=https\nhost=git.example.com:8443\n", 1, NULL);
  decides ("get", "protocol=https\nhost=github.com\npath=acme/widget\n", 0, NULL);
  decides ("get", "protocol=https\nhost=github.com\npath=acme/widget/x.git\n", 0, NULL);

  decides ("store", "protocol=https\nhost=gitlab.com\npassword=p\n", -1, "may not store or erase");
  decides ("erase", "protocol=https\nhost=gitlab.com\n", -1, "may not store or erase");
  decides ("fill", "protocol=https\nhost=gitlab.com\n", -1, "unknown action");
  decides ("", "protocol=https\nhost=gitlab.com\n", -1, "unknown action");
  decides ("GET", "protocol=https\nhost=gitlab.com\n", -1, "unknown action");
  decides ("get", "protocol=http\nhost=gitlab.com\n", -1, "only https");
  decides ("get", "protocol=gopher\nhost=gitlab.com\n", -1, "only https");
  decides ("get", "protocol=HTTPS\nhost=gitlab.com\n", -1, "only https");
  decides ("get", "host=gitlab.com\n", -1, "only https");
  decides ("get", "protocol=https\n", -1, "no valid host");
  decides ("get", "url=https:///x\n", -1, "no valid host");
  decides ("get", "protocol=https\nhost=gitlab.com.evil.net\n", -1, "not listed");
  decides ("get", "protocol=https\nhost=evilgitlab.com\n", -1, "not listed");
  decides ("get", "protocol=https\nhost=gitlab.co\n", -1, "not listed");
  decides ("get", "protocol=https\nhost=gitlab.com:8443\n", -1, "not listed");
  decides ("get", "protocol=https\nhost=git.example.com\n", -1, "not listed");
  decides ("get", "protocol=https\nhost=git.example.com:443\n", -1, "not listed");
  decides ("get", "protocol=https\nhost=github.com\n", -1, "needs a path");
  decides ("get", "protocol=https\nhost=github.com\npath=acme/widgets\n", -1, "not under");
  decides ("get", "protocol=https\nhost=github.com\npath=acme\n", -1, "not under");
  decides ("get", "protocol=https\nhost=github.com\npath=other/widget\n", -1, "not under");
  decides ("get", "protocol=https\nhost=empty.example.com\npath=a\n", -1, "not under");
}

/* ---- git credential fill against a test helper -------------------- */

static char *home;

static void
set_home (const char *helper_script)
{
  if (system ("git --version >/dev/null 2>&1") != 0)
    SKIP_BECAUSE ("no git on PATH to run `git credential fill`");
  home = tree_make ("gitcred");
  /* git hands a helper the path only with useHttpPath. */
  char *cfg = xasprintf ("[credential]\n\thelper = %s/helper\n\tuseHttpPath = true\n[core]\n\taskPass = %s/askpass\n", home, home);
  tree_put (home, ".gitconfig", cfg);
  free (cfg);
  tree_put (home, "helper", helper_script);
  /* An askpass that would answer: the fill call must not run it. */
  char *ask = xasprintf ("#!/bin/sh\necho asked > %s/asked\necho leaked\n", home);
  tree_put (home, "askpass", ask);
  free (ask);
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/helper", home);
  assert_int_equal (chmod (path, 0755), 0);
  snprintf (path, sizeof path, "%s/askpass", home);
  assert_int_equal (chmod (path, 0755), 0);
  assert_int_equal (setenv ("HOME", home, 1), 0);
  unsetenv ("XDG_CONFIG_HOME");
}

static int
teardown_home (void **state)
{
  (void) state;
  tree_remove (home);
  home = NULL;
  return 0;
}

static const char request_text[] = "protocol=https\nhost=git.example.com:8443\npath=acme/widget.git\n";

static int
fill (int timeout_ms, char **user, char **pass, hv_error **err)
{
  hv_git_credential req = { 0 };
  hv_error *perr = NULL;
  assert_int_equal (hv_git_credential_parse (request_text, sizeof request_text - 1, &req, &perr), 0);
  int r = hv_git_credential_fill (NULL, &req, timeout_ms, user, pass, err);
  hv_git_credential_clear (&req);
  return r;
}

static void
test_fill (void **state)
{
  (void) state;
  /* The helper records what it was given, and its environment. */
  set_home ("#!/bin/sh\n"
            "echo \"$1\" > \"$HOME/action\"\npwd > \"$HOME/cwd\"\ncat > \"$HOME/input\"\nenv > \"$HOME/env\"\n"
            "echo username=x-access-token\necho password=t0ken-42\n");
  assert_int_equal (setenv ("HV_TEST_SECRET", "outside", 1), 0);
  assert_int_equal (setenv ("GIT_CONFIG_PARAMETERS", "'credential.helper'=''", 1), 0);
  char *user = NULL, *pass = NULL;
  hv_error *err = NULL;
  if (fill (10000, &user, &pass, &err) < 0)
    fail_msg ("fill: %s", err->msg);
  unsetenv ("HV_TEST_SECRET");
  unsetenv ("GIT_CONFIG_PARAMETERS");
  assert_string_equal (user, "x-access-token");
  assert_string_equal (pass, "t0ken-42");
  free (user);
  free (pass);
  char *text = tree_read (home, "action");
  assert_string_equal (text, "get\n");
  free (text);
  text = tree_read (home, "input");
  assert_non_null (strstr (text, "protocol=https\n"));
  assert_non_null (strstr (text, "host=git.example.com:8443\n"));
  assert_non_null (strstr (text, "path=acme/widget.git\n"));
  free (text);
  text = tree_read (home, "env");
  assert_non_null (strstr (text, "GIT_TERMINAL_PROMPT=0\n"));
  assert_non_null (strstr (text, "GIT_ASKPASS=\n"));
  assert_null (strstr (text, "HV_TEST_SECRET"));
  free (text);
  /* Run from "/", where no repository's config can be read. */
  text = tree_read (home, "cwd");
  assert_string_equal (text, "/\n");
  free (text);
}

static void
test_fill_no_credential (void **state)
{
  (void) state;
  /* The helper knows nothing: git would ask the user, and must not. */
  set_home ("#!/bin/sh\ncat >/dev/null\n");
  char *user = NULL, *pass = NULL;
  hv_error *err = NULL;
  assert_int_equal (fill (10000, &user, &pass, &err), -1);
  assert_non_null (strstr (err->msg, "git found no credential"));
  hv_error_free (&err);
  assert_null (user);
  assert_null (pass);
  assert_false (tree_exists (home, "asked"));
}

static void
test_fill_timeout (void **state)
{
  (void) state;
  char *script = xasprintf ("#!/bin/sh\necho $$ > \"$HOME/pid\"\nsleep 30\necho password=late\n");
  set_home (script);
  free (script);
  char *user = NULL, *pass = NULL;
  hv_error *err = NULL;
  struct timespec a, b;
  clock_gettime (CLOCK_MONOTONIC, &a);
  assert_int_equal (fill (500, &user, &pass, &err), -1);
  clock_gettime (CLOCK_MONOTONIC, &b);
  assert_int_equal (err->errno_code, ETIMEDOUT);
  hv_error_free (&err);
  assert_null (pass);
  long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
  assert_true (ms >= 400 && ms < 5000);
  /* The helper git started is gone too (or a zombie waiting for init). */
  char *pid_text = tree_read (home, "pid");
  int pid = atoi (pid_text);
  free (pid_text);
  assert_true (pid > 0);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; i++)
    {
      char stat_path[64], st[512] = "";
      snprintf (stat_path, sizeof stat_path, "/proc/%d/stat", pid);
      FILE *f = fopen (stat_path, "r");
      if (!f)
        gone = true;
      else
        {
          size_t n = fread (st, 1, sizeof st - 1, f);
          st[n] = '\0';
          fclose (f);
          const char *close_paren = strrchr (st, ')');
          gone = close_paren && (close_paren[2] == 'Z' || close_paren[2] == 'X');
        }
      if (!gone)
        usleep (10000);
    }
  assert_true (gone);
}

/* A stand-in for git whose answer is `script`'s output. */
static int
fill_with (const char *script, char **user, char **pass, hv_error **err)
{
  home = tree_make ("gitcred");
  tree_put (home, "git", script);
  char *git = xasprintf ("%s/git", home);
  assert_int_equal (chmod (git, 0755), 0);
  hv_git_credential req = { 0 };
  hv_error *perr = NULL;
  assert_int_equal (hv_git_credential_parse (request_text, sizeof request_text - 1, &req, &perr), 0);
  int r = hv_git_credential_fill (git, &req, 10000, user, pass, err);
  hv_git_credential_clear (&req);
  free (git);
  return r;
}

static void
test_fill_bad_answers (void **state)
{
  (void) state;
  char *user = NULL, *pass = NULL;
  hv_error *err = NULL;
  assert_int_equal (fill_with ("#!/bin/sh\ncat >/dev/null\necho username=u\n", &user, &pass, &err), -1);
  assert_non_null (strstr (err->msg, "no username or password"));
  hv_error_free (&err);
  teardown_home (NULL);
  assert_int_equal (fill_with ("#!/bin/sh\ncat >/dev/null\necho password=p\n", &user, &pass, &err), -1);
  assert_non_null (strstr (err->msg, "no username or password"));
  hv_error_free (&err);
  teardown_home (NULL);
  /* An answer that does not end is cut at the request's own bound. */
  assert_int_equal (fill_with ("#!/bin/sh\ncat >/dev/null\nyes username=u\n", &user, &pass, &err), -1);
  assert_non_null (strstr (err->msg, "answer over 8192 bytes"));
  hv_error_free (&err);
  teardown_home (NULL);
  /* An answer the reader refuses says so without repeating it. */
  assert_int_equal (
      fill_with ("#!/bin/sh\ncat >/dev/null\necho username=u\necho password=secret\necho password=x\n", &user,
                 &pass, &err),
      -1);
  assert_non_null (strstr (err->msg, "unreadable answer"));
  assert_null (strstr (err->msg, "secret"));
  hv_error_free (&err);
  assert_null (user);
  assert_null (pass);
  teardown_home (NULL);

  /* A request built by hand cannot add a key to what git reads. */
  const char *git = "/bin/false";
  hv_git_credential req = { .protocol = (char *) "https", .host = (char *) "h" };
  req.host = (char *) "h\nusername=x";
  assert_int_equal (hv_git_credential_fill (git, &req, 1000, &user, &pass, &err), -1);
  assert_non_null (strstr (err->msg, "line break"));
  hv_error_free (&err);
  req.host = (char *) "h";
  req.protocol = (char *) "https\rx";
  assert_int_equal (hv_git_credential_fill (git, &req, 1000, &user, &pass, &err), -1);
  assert_non_null (strstr (err->msg, "line break"));
  hv_error_free (&err);
  req.protocol = (char *) "https";
  req.path = (char *) "a\npassword=x";
  assert_int_equal (hv_git_credential_fill (git, &req, 1000, &user, &pass, &err), -1);
  assert_non_null (strstr (err->msg, "line break"));
  hv_error_free (&err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_parse),
    cmocka_unit_test (test_url),
    cmocka_unit_test (test_refused),
    cmocka_unit_test (test_cache_framing),
    cmocka_unit_test (test_answer),
    cmocka_unit_test (test_decide),
    cmocka_unit_test_teardown (test_fill, teardown_home),
    cmocka_unit_test_teardown (test_fill_no_credential, teardown_home),
    cmocka_unit_test_teardown (test_fill_timeout, teardown_home),
    cmocka_unit_test_teardown (test_fill_bad_answers, teardown_home),
  };
  return unit_tests_status (cmocka_run_group_tests (tests, NULL, NULL), sizeof tests / sizeof tests[0]);
}
