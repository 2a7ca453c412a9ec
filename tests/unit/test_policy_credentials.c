/* Unit tests of what a policy hands the sandbox on purpose: variables
 * named in env.pass (the credential globs block only globs), the
 * schema of env.set_from_file/set_from_env and credentials:, their
 * errors, the environment of a run, and `explain`'s Environment. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy.h"
#include "policy_env.h"
#include "policy_load.h"
#include "policy_parse.h"
#include "utils.h"
#include "policy_parse_check.h"

static char *host_env[] = { (char *) "PATH=/usr/bin",          (char *) "ANTHROPIC_API_KEY=sk-ant",
                            (char *) "ANTHROPIC_BASE_URL=http://x", (char *) "GITHUB_TOKEN=ghp",
                            (char *) "AWS_SECRET_ACCESS_KEY=aws",   (char *) "MY_PASSWORD=pw",
                            (char *) "SSH_AUTH_SOCK=/tmp/agent",    (char *) "OTHER=1",
                            NULL };

static char *
filter (const char *yaml)
{
  hv_policy p;
  parse_ok (yaml, &p);
  char *out = joined (hv_policy_filter_env (&p, host_env));
  hv_policy_free_fields (&p);
  return out;
}

/* A name written out passes whatever the credential globs say; a glob
 * never passes a credential-looking name; env.deny beats both. */
static void
test_named_credentials_pass_globs_do_not (void **state)
{
  (void) state;
  cleanup_free char *all = filter ("env: {pass: ['*']}\n");
  assert_string_equal (all, "PATH=/usr/bin ANTHROPIC_BASE_URL=http://x OTHER=1 ");
  cleanup_free char *prefix = filter ("env: {pass: ['ANTHROPIC_*']}\n");
  assert_string_equal (prefix, "ANTHROPIC_BASE_URL=http://x ");
  cleanup_free char *named = filter ("env: {pass: ['ANTHROPIC_*', ANTHROPIC_API_KEY, GITHUB_TOKEN]}\n");
  assert_string_equal (named, "ANTHROPIC_API_KEY=sk-ant ANTHROPIC_BASE_URL=http://x GITHUB_TOKEN=ghp ");
  cleanup_free char *denied = filter ("env: {pass: [GITHUB_TOKEN, MY_PASSWORD, OTHER], deny: ['GITHUB_*']}\n");
  assert_string_equal (denied, "MY_PASSWORD=pw OTHER=1 ");
  /* A bracket or ? is a glob too. */
  cleanup_free char *bracket = filter ("env: {pass: ['GITHUB_TOKE[N]', 'MY_PASSWOR?']}\n");
  assert_string_equal (bracket, "");
}

/* Through extends: a child naming a variable its base passes by glob
 * only; a child's source for a variable replaces the base's. */
static void
test_extends (void **state)
{
  (void) state;
  char dir[] = "/tmp/haven-creds-test.XXXXXX";
  assert_non_null (mkdtemp (dir));
  cleanup_free char *base = xasprintf ("%s/base.yaml", dir);
  cleanup_free char *child = xasprintf ("%s/child.yaml", dir);
  write_text (base, "extends: none\nenv: {pass: ['*'], set: {A: '1', B: '2'}, set_from_env: {C: HOST_C}}\n"
                    "network: {allow: [github.com, gitlab.com]}\n"
                    "credentials: {git: [{host: github.com, token_env: GH}]}\n");
  write_text (child, "extends: base.yaml\nenv: {pass: [GITHUB_TOKEN], set_from_file: {A: /a}, set: {C: '3'}}\n"
                     "credentials: {ssh_agent: true, git: [{host: github.com, token_file: /gh, username: me}]}\n");
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (child, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  cleanup_free char *env = joined (hv_policy_filter_env (p, host_env));
  assert_string_equal (env, "PATH=/usr/bin ANTHROPIC_BASE_URL=http://x GITHUB_TOKEN=ghp OTHER=1 B=2 C=3 ");
  assert_int_equal (p->n_env_from, 1);
  assert_string_equal (p->env_from[0].name, "A");
  assert_string_equal (p->env_from[0].file, "/a");
  assert_true (p->ssh_agent.value);
  assert_int_equal (p->n_git_creds, 1);
  assert_string_equal (p->git_creds[0].file, "/gh");
  assert_string_equal (p->git_creds[0].username, "me");
  assert_null (p->git_creds[0].host_var);
  hv_policy_free (p);
  p = NULL;

  /* A git token for a host the network does not allow: refused at load,
   * naming the entry's file and line. */
  write_text (child, "extends: base.yaml\ncredentials:\n  git:\n    - {host: example.com, token_env: T}\n");
  assert_int_equal (hv_policy_load (child, &p, &err), -1);
  cleanup_free char *want = xasprintf ("%s:4:7: credentials.git: example.com is not a host network.allow lets the "
                                       "sandbox reach on port 443: haven gives git credentials only for hosts the "
                                       "policy allows",
                                       child);
  assert_string_equal (err->msg, want);
  hv_error_free (&err);
  write_text (child, "extends: none\nnetwork: {mode: none}\ncredentials: {git: [{host: github.com, token_env: T}]}\n");
  assert_int_equal (hv_policy_load (child, &p, &err), -1);
  assert_non_null (strstr (err->msg, "github.com is not a host network.allow lets"));
  hv_error_free (&err);
  /* Allowed only on another port is not allowed. */
  write_text (child, "extends: none\nnetwork: {allow: ['github.com:22']}\n"
                     "credentials: {git: [{host: github.com, token_env: T}]}\n");
  assert_int_equal (hv_policy_load (child, &p, &err), -1);
  hv_error_free (&err);
  /* path and from: host reach the extending policy as the base wrote them. */
  write_text (base, "extends: none\nnetwork: {allow: [github.com, gitlab.com]}\n"
                    "credentials: {git: [{host: gitlab.com, from: host, path: team/app.git}]}\n");
  write_text (child, "extends: base.yaml\ncredentials: {git: [{host: github.com, token_env: T}]}\n");
  if (hv_policy_load (child, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_int_equal (p->n_git_creds, 2);
  assert_string_equal (p->git_creds[0].name, "gitlab.com");
  assert_true (p->git_creds[0].from_host);
  assert_string_equal (p->git_creds[0].path, "team/app.git");
  assert_null (p->git_creds[0].username);
  assert_false (p->git_creds[1].from_host);
  assert_null (p->git_creds[1].path);
  hv_policy_free (p);
  p = NULL;
  unlink (base);
  unlink (child);
  rmdir (dir);
}

static void
test_schema_errors (void **state)
{
  (void) state;
  expect_error ("env: {pass: [PATH, SSH_AUTH_SOCK]}\n",
                "t.yaml:1:20: env.pass: SSH_AUTH_SOCK cannot be passed (its socket is not in the sandbox): write "
                "credentials: {ssh_agent: true} to forward the agent");
  expect_error ("env: {set_from_file: {TOKEN: relative/file}}\n",
                "t.yaml:1:30: env.set_from_file: \"relative/file\": expected an absolute path or ~/...");
  expect_error ("env: {set_from_file: {TOKEN: '~/'}}\n",
                "t.yaml:1:30: env.set_from_file: \"~/\": expected an absolute path or ~/...");
  expect_error ("env: {set_from_file: {TOKEN: '$HOME/t'}}\n",
                "t.yaml:1:30: env.set_from_file: \"$HOME/t\": environment variables are not expanded (write ~/ for "
                "your home, or an absolute path)");
  expect_error ("env: {set_from_file: {'A-B': /t}}\n",
                "t.yaml:1:23: env.set_from_file: \"A-B\" is not a variable name (letters, digits, _)");
  expect_error ("env: {set_from_file: [/t]}\n", "t.yaml:1:22: env.set_from_file: expected a mapping of NAME: path");
  expect_error ("env: {set_from_env: {GH_TOKEN: 'X=Y'}}\n",
                "t.yaml:1:32: env.set_from_env: \"X=Y\" is not a variable name (letters, digits, _)");
  expect_error ("env: {set_from_env: {GH_TOKEN: ''}}\n",
                "t.yaml:1:32: env.set_from_env: GH_TOKEN: expected a host variable name");
  expect_error ("env:\n  set: {T: x}\n  set_from_file: {T: /t}\n",
                "t.yaml:3:19: env: T is in env.set too: give one source");
  expect_error ("env:\n  set_from_env: {T: X}\n  set_from_file: {T: /t}\n",
                "t.yaml:3:19: env: T is in set_from_file and set_from_env: give one source");
  expect_error ("credentials: {ssh_agent: maybe}\n", "t.yaml:1:26: credentials.ssh_agent: expected true or false");
  expect_error ("credentials: {ssh: true}\n",
                "t.yaml:1:15: credentials.ssh: unknown key (expected one of: ssh_agent, git, api)");
  expect_error ("credentials: {git: {host: github.com}}\n",
                "t.yaml:1:20: credentials.git: expected a list of {host, token_file or token_env or from: host, username, "
                "path}");
  expect_error ("credentials: {git: [{token_env: T}]}\n", "t.yaml:1:21: credentials.git: an entry needs host:");
  expect_error ("credentials: {git: [{host: github.com}]}\n",
                "t.yaml:1:21: credentials.git: github.com: give exactly one of token_file, token_env and from: host");
  expect_error ("credentials: {git: [{host: github.com, token_env: T, token_file: /t}]}\n",
                "t.yaml:1:21: credentials.git: github.com: give exactly one of token_file, token_env and from: host");
  expect_error ("credentials: {git: [{host: github.com, from: host, token_env: T}]}\n",
                "t.yaml:1:21: credentials.git: github.com: from: host takes the username and token your git "
                "credential fill gives: no token_file, token_env or username with it");
  expect_error ("credentials: {git: [{host: github.com, from: host, username: u}]}\n",
                "t.yaml:1:21: credentials.git: github.com: from: host takes the username and token your git "
                "credential fill gives: no token_file, token_env or username with it");
  expect_error ("credentials: {git: [{host: github.com, from: keychain}]}\n",
                "t.yaml:1:46: credentials.git: from: \"keychain\": the only source to name is host (your own git "
                "credential fill); a token is named with token_file or token_env");
  expect_error ("credentials: {git: [{host: github.com, token_env: T, path: /org/repo}]}\n",
                "t.yaml:1:60: credentials.git: path: \"/org/repo\" is not a repository path (like org/repo.git: "
                "segments, none empty, \".\" or \"..\", no leading '/', no glob)");
  expect_error ("credentials: {git: [{host: github.com, token_env: T, path: org/../x}]}\n",
                "t.yaml:1:60: credentials.git: path: \"org/../x\" is not a repository path (like org/repo.git: "
                "segments, none empty, \".\" or \"..\", no leading '/', no glob)");
  expect_error ("credentials: {git: [{host: github.com, token_env: T, path: 'org/*'}]}\n",
                "t.yaml:1:60: credentials.git: path: \"org/*\" is not a repository path (like org/repo.git: "
                "segments, none empty, \".\" or \"..\", no leading '/', no glob)");
  expect_error ("credentials: {git: [{host: 'github.com:443', token_env: T}]}\n",
                "t.yaml:1:28: credentials.git: host: \"github.com:443\" is not a host name (lower case, no port, no "
                "glob)");
  expect_error ("credentials: {git: [{host: '*.github.com', token_env: T}]}\n",
                "t.yaml:1:28: credentials.git: host: \"*.github.com\" is not a host name (lower case, no port, no "
                "glob)");
  expect_error ("credentials: {git: [{host: a.com, token_file: t}]}\n",
                "t.yaml:1:47: credentials.git: \"t\": expected an absolute path or ~/...");
  expect_error ("credentials: {git: [{host: a.com, token_env: T, user: x}]}\n",
                "t.yaml:1:49: credentials.git: unknown key \"user\" (expected host, token_file, token_env, from, username, "
                "path)");
  expect_error ("credentials: {git: [{host: a.com, token_env: T, username: \"a\\nb\"}]}\n",
                "t.yaml:1:59: credentials.git: username: control characters are not allowed");
  expect_error ("credentials:\n  git:\n    - {host: a.com, token_env: T}\n    - {host: a.com, token_env: U}\n",
                "t.yaml:4:7: credentials.git: host a.com is listed twice (also at t.yaml:3:7)");
}

/* What `haven run` adds: the values the session read, the agent socket
 * and git's helper configuration, each replacing a passed value. */
static void
test_run_env (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("env: {pass: [PATH, GIT_CONFIG_COUNT, GH_TOKEN]}\n", &p);
  char *host[] = { (char *) "PATH=/bin", (char *) "GIT_CONFIG_COUNT=5", (char *) "GH_TOKEN=host", NULL };
  oci_kv secrets[] = { { (char *) "GH_TOKEN", (char *) "from-file" } };
  oci_kv_list secret_env = { .v = secrets, .n = 1 };
  struct hv_run_ctx ctx = { .host_env = host, .secret_env = &secret_env };
  cleanup_free char *plain = joined (hv_policy_run_env (&p, &ctx));
  assert_string_equal (plain, "PATH=/bin GIT_CONFIG_COUNT=5 GH_TOKEN=from-file ");
  ctx.ssh_agent_socket = "/tmp/ssh-x/agent.1";
  ctx.git_credentials = "/run/haven-1/git-credentials";
  cleanup_free char *all = joined (hv_policy_run_env (&p, &ctx));
  assert_string_equal (all, "PATH=/bin GIT_CONFIG_COUNT=3 GH_TOKEN=from-file SSH_AUTH_SOCK=/run/haven/ssh-agent.sock "
                            "GIT_CONFIG_KEY_0=credential.helper GIT_CONFIG_VALUE_0= "
                            "GIT_CONFIG_KEY_1=credential.helper "
                            "GIT_CONFIG_VALUE_1=cache --socket /run/haven/git-credentials/credential.sock "
                            "GIT_CONFIG_KEY_2=credential.useHttpPath GIT_CONFIG_VALUE_2=true ");
  hv_policy_free_fields (&p);
}

static size_t
count (const char *haystack, const char *needle)
{
  size_t n = 0;
  for (const char *c = strstr (haystack, needle); c; c = strstr (c + 1, needle))
    n++;
  return n;
}

/* Each variable once, with why. */
static void
test_explain (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("env:\n  pass: [PATH, ANTHROPIC_API_KEY, 'LC_*', PATH, MY_TOKEN, GH_TOKEN]\n  deny: ['MY_*']\n"
            "  set: {HAVEN: '1'}\n  set_from_file: {GH_TOKEN: ~/.config/haven/gh}\n  set_from_env: {NPM_TOKEN: X}\n"
            "credentials:\n  ssh_agent: true\n  git: [{host: github.com, token_file: ~/.config/haven/git},\n"
            "        {host: gitlab.com, from: host, path: org/repo.git}]\n",
            &p);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&text, &len);
  hv_env_explain (&p, NULL, out);
  fclose (out);
  assert_int_equal (count (text, "PATH "), 1);
  assert_int_equal (count (text, "ANTHROPIC_API_KEY"), 1);
  assert_non_null (strstr (text, "ANTHROPIC_API_KEY            passed when set: named explicitly (it looks like a "
                                 "credential, *_KEY)\n"));
  assert_non_null (strstr (text, "MY_TOKEN                     not passed: env.deny \"MY_*\" wins\n"));
  assert_non_null (strstr (text, "LC_*                         passed when set, except names that look like "
                                 "credentials or env.deny matches\n"));
  /* GH_TOKEN is set from a file: shown there only. */
  assert_int_equal (count (text, "GH_TOKEN"), 1);
  assert_non_null (strstr (text, "GH_TOKEN                     from the file ~/.config/haven/gh, read at each run"));
  assert_non_null (strstr (text, "NPM_TOKEN                    from the host variable X, read at each run"));
  assert_non_null (strstr (text, "bound at /run/haven/ssh-agent.sock"));
  assert_non_null (strstr (text, "github.com                   user x-access-token, token from the file "
                                 "~/.config/haven/git\n"));
  assert_non_null (strstr (text, "gitlab.com/org/repo.git      user and token from your own git credential fill"));
  assert_non_null (strstr (text, "Any process in the sandbox can ask the broker for these tokens while the run lasts"));
  assert_null (strstr (text, "/run/haven/git/credentials"));
  free (text);
  hv_policy_free_fields (&p);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_named_credentials_pass_globs_do_not),
    cmocka_unit_test (test_extends),
    cmocka_unit_test (test_schema_errors),
    cmocka_unit_test (test_run_env),
    cmocka_unit_test (test_explain),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
