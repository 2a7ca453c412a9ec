/* Unit tests of the git credential broker (runtime/monitor/
 * git_broker_config.c, git_broker.c): what create accepts and refuses in
 * its annotation and directory, and one request per connection as the
 * monitor serves it: the answer for a listed host (from the token given
 * in memory, or from the host's git credential fill), nothing for
 * anything else, and a trail record for each get that never holds the
 * token; and real git's cache client against it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "container.h"
#include "file_read.h"
#include "git_broker.h"
#include "tmp_tree.h"
#include "unit_skip.h"
#include "utils.h"

#define TOKEN "ghp_secret_token_42"

static const struct hv_service_secret secrets[] = {
  { "git:github.com", "x-access-token", TOKEN },
  { "api:anthropic", NULL, "sk-not-git" },
  { "git:gitlab.example.com", "oauth2", "glpat-2" },
};

/* text with its first "%s" replaced by value (a format would not be a
 * literal here). */
static char *
subst (const char *text, const char *value)
{
  const char *at = strstr (text, "%s");
  if (at == NULL)
    return xstrdup (text);
  return xasprintf ("%.*s%s%s", (int) (at - text), text, value, at + 2);
}

/* A broker for annotation json (its "%s" the directory) over a fresh
 * 0700 directory; NULL with *err when prepare refused. */
static hv_git_broker *
prepare (const char *json_fmt, char **dir, hv_error **err)
{
  *dir = tree_make ("broker");
  chmod (*dir, 0700);
  cleanup_free char *json = subst (json_fmt, *dir);
  oci_kv kv = { (char *) HV_GIT_CREDENTIALS_ANNOTATION, json };
  oci_spec spec = { 0 };
  spec.annotations = (oci_kv_list){ .n = 1, .v = &kv };
  hv_git_broker *b = NULL;
  if (hv_git_broker_prepare (&spec, secrets, N_ELEMENTS (secrets), &b, err) < 0)
    return NULL;
  return b;
}

static void
refused (const char *json_fmt, const char *why)
{
  char *dir = NULL;
  hv_error *err = NULL;
  hv_git_broker *b = prepare (json_fmt, &dir, &err);
  if (b)
    fail_msg ("accepted: %s", json_fmt);
  if (!strstr (err->msg, why))
    fail_msg ("%s: message \"%s\" lacks \"%s\"", json_fmt, err->msg, why);
  hv_error_free (&err);
  tree_remove (dir);
}

static void
test_annotation (void **state)
{
  (void) state;
  oci_spec none = { 0 };
  hv_git_broker *b = (hv_git_broker *) 1;
  hv_error *err = NULL;
  assert_int_equal (hv_git_broker_prepare (&none, NULL, 0, &b, &err), 0);
  assert_null (b);

  refused ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"github.com\",\"from\":\"token\"}],\"x\":1}",
           "annotations[\"run.haven.git-credentials\"].x: unknown field");
  refused ("{\"hosts\":[{\"host\":\"github.com\",\"from\":\"token\"}]} %s", "invalid JSON");
  refused ("{\"hosts\":[{\"host\":\"github.com\",\"from\":\"token\"}],\"y\":\"%s\"}", "unknown field");
  refused ("{\"dir\":\"rel%s\",\"hosts\":[{\"host\":\"github.com\",\"from\":\"token\"}]}", "is not an absolute path");
  refused ("{\"dir\":\"%s\"}", ".hosts: required field is missing");
  refused ("{\"dir\":\"%s\",\"hosts\":[]}", "expected 1 to 64 hosts");
  refused ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"GitHub.com\",\"from\":\"token\"}]}",
           ".hosts[0].host: \"GitHub.com\" is not a lower-case host name");
  refused ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"github.com:443\",\"from\":\"token\"}]}", "without a port");
  refused ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"github.com\",\"path\":\"a/../b\",\"from\":\"token\"}]}",
           ".hosts[0].path: \"a/../b\" is not a repository path");
  refused ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"github.com\",\"path\":\"/a\",\"from\":\"token\"}]}",
           "is not a repository path");
  refused ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"github.com\",\"from\":\"file\"}]}",
           ".hosts[0].from: \"file\" is neither \"token\" nor \"host\"");
  refused ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"github.com\"}]}", ".hosts[0].from: required field is missing");
  refused ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"example.com\",\"from\":\"token\"}]}",
           "no token for example.com was given to create (service \"git:example.com\")");
  /* api: secrets are no git token. */
  refused ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"anthropic\",\"from\":\"token\"}]}", "no token for anthropic");
  refused ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"github.com\",\"from\":\"token\"},{\"host\":\"github.com\","
           "\"from\":\"host\"}]}",
           ".hosts[1].host: github.com is listed twice");
  refused ("{\"dir\":\"%s/missing\",\"hosts\":[{\"host\":\"github.com\",\"from\":\"token\"}]}",
           "annotations[\"run.haven.git-credentials\"].dir");

  /* The directory: reached through no link, ours, no one else's to enter. */
  char *top = tree_make ("broker-dir");
  cleanup_free char *real = xasprintf ("%s/real", top);
  cleanup_free char *link = xasprintf ("%s/link", top);
  assert_int_equal (mkdir (real, 0700), 0);
  assert_int_equal (symlink (real, link), 0);
  cleanup_free char *via_link = xasprintf ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"github.com\",\"from\":\"token\"}]}",
                                           link);
  refused (via_link, "/link: not a directory"); /* the link itself, not followed */
  cleanup_free char *open_dir = xasprintf ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"github.com\",\"from\":\"token\"}]}",
                                           top);
  chmod (top, 0750);
  refused (open_dir, "is not a directory of yours that only you can enter");
  tree_remove (top);
}

/* The request's answer, as the cache client reads it: everything the
 * broker writes before it closes the connection. */
static char *
ask (hv_git_broker *b, const char *request)
{
  int sv[2];
  assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  assert_int_equal (write_all (sv[0], request, strlen (request)), 0);
  shutdown (sv[0], SHUT_WR);
  hv_git_broker_serve (sv[1], b);
  close (sv[1]);
  char buf[4096];
  size_t n = 0;
  ssize_t got;
  while ((got = read (sv[0], buf + n, sizeof buf - 1 - n)) > 0)
    n += (size_t) got;
  close (sv[0]);
  buf[n] = '\0';
  return xstrdup (buf);
}

static void
assert_answer (hv_git_broker *b, const char *request, const char *want)
{
  cleanup_free char *got = ask (b, request);
  if (strcmp (got, want) != 0)
    fail_msg ("%s: answered \"%s\", not \"%s\"", request, got, want);
}

static void
test_serve (void **state)
{
  (void) state;
  char *dir = NULL;
  hv_error *err = NULL;
  hv_git_broker *b = prepare ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"github.com\",\"path\":\"org/repo.git\","
                              "\"from\":\"token\"},{\"host\":\"gitlab.example.com\",\"from\":\"token\"}]}",
                              &dir, &err);
  if (b == NULL)
    fail_msg ("refused: %s", err->msg);
  struct stat st;
  cleanup_free char *sock = xasprintf ("%s/%s", dir, HV_GIT_BROKER_SOCKET);
  assert_int_equal (lstat (sock, &st), 0);
  assert_true (S_ISSOCK (st.st_mode));
  cleanup_free char *trail_path = xasprintf ("%s/trail", dir);
  int trail_fd = open (trail_path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  assert_true (trail_fd >= 0);
  struct hv_audit_trail trail;
  hv_audit_trail_init (&trail, trail_fd, "pol", NULL);
  b->trail = &trail;

  assert_answer (b, "action=get\ntimeout=900\nprotocol=https\nhost=github.com\npath=org/repo.git\n\n",
                 "username=x-access-token\npassword=" TOKEN "\n");
  /* Deeper in the prefix, the host in capitals, port 443 said. */
  assert_answer (b, "action=get\ntimeout=900\nprotocol=https\nhost=GitHub.com:443\npath=org/repo.git/info/lfs\n\n",
                 "username=x-access-token\npassword=" TOKEN "\n");
  assert_answer (b, "action=get\ntimeout=900\nprotocol=https\nhost=gitlab.example.com\n\n",
                 "username=oauth2\npassword=glpat-2\n");
  /* Nothing for: another repository, no path, another host, http,
   * another port, a store, erase or exit, a malformed request. */
  assert_answer (b, "action=get\ntimeout=900\nprotocol=https\nhost=github.com\npath=org/repository.git\n\n", "");
  assert_answer (b, "action=get\ntimeout=900\nprotocol=https\nhost=github.com\n\n", "");
  assert_answer (b, "action=get\ntimeout=900\nprotocol=https\nhost=evil.example.com\n\n", "");
  assert_answer (b, "action=get\ntimeout=900\nprotocol=http\nhost=gitlab.example.com\n\n", "");
  assert_answer (b, "action=get\ntimeout=900\nprotocol=https\nhost=gitlab.example.com:8443\n\n", "");
  assert_answer (b, "action=store\ntimeout=900\nprotocol=https\nhost=gitlab.example.com\nusername=u\npassword=p\n\n",
                 "");
  assert_answer (b, "action=erase\ntimeout=900\nprotocol=https\nhost=gitlab.example.com\n\n", "");
  assert_answer (b, "action=exit\ntimeout=900\n", "");
  assert_answer (b, "protocol=https\nhost=gitlab.example.com\n\n", "");
  assert_answer (b, "action=get\ntimeout=900\nprotocol=https\nhost=gitlab.example.com\nhost=github.com\n\n", "");

  /* A record per get and per unreadable request, none for store, erase
   * or exit, and never the token. */
  cleanup_free char *text = NULL;
  assert_int_equal (read_file_at (AT_FDCWD, trail_path, &text, NULL), 0);
  assert_null (strstr (text, TOKEN));
  assert_null (strstr (text, "glpat-2"));
  size_t lines = 0;
  for (const char *p = text; (p = strchr (p, '\n')); p++)
    lines++;
  assert_int_equal (lines, 10);
  assert_non_null (strstr (text, "\"event\":\"git-credential\",\"policy\":\"pol\",\"decision\":\"answered\",\"protocol\":\"https\","
                                 "\"host\":\"github.com\",\"path\":\"org/repo.git\",\"source\":\"token\""));
  assert_non_null (strstr (text, "\"decision\":\"refused\",\"protocol\":\"https\",\"host\":\"github.com\","
                                 "\"path\":\"org/repository.git\",\"reason\":\"path not under the listed prefix\""));
  assert_non_null (strstr (text, "\"host\":\"evil.example.com\",\"reason\":\"host not listed\""));
  assert_non_null (strstr (text, "\"reason\":\"only https is answered\""));
  assert_non_null (strstr (text, "\"reason\":\"credential request: no \\\"action=\\\" line first\""));
  assert_null (strstr (text, "\"action\":\"store\""));
  hv_audit_trail_release (&trail);
  close (trail_fd);
  hv_git_broker_free (b);
  tree_remove (dir);
}

/* from: host: the host's git credential fill answers (here a stand-in
 * git that prints a fixed credential). */
static void
test_serve_from_host (void **state)
{
  (void) state;
  char *dir = NULL;
  hv_error *err = NULL;
  hv_git_broker *b = prepare ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"example.org\",\"from\":\"host\"}]}", &dir, &err);
  if (b == NULL)
    fail_msg ("refused: %s", err->msg);
  cleanup_free char *git = xasprintf ("%s/fake-git", dir);
  tree_put (dir, "fake-git", "#!/bin/sh\ncat > /dev/null\nprintf 'username=host-user\\npassword=host-pass\\n'\n");
  chmod (git, 0700);
  b->git = git;
  assert_answer (b, "action=get\ntimeout=900\nprotocol=https\nhost=example.org\npath=a/b\n\n",
                 "username=host-user\npassword=host-pass\n");
  assert_answer (b, "action=get\ntimeout=900\nprotocol=https\nhost=example.com\n\n", "");
  /* A host git that finds nothing: no answer. */
  tree_put (dir, "fake-git", "#!/bin/sh\ncat > /dev/null\nexit 1\n");
  assert_answer (b, "action=get\ntimeout=900\nprotocol=https\nhost=example.org\n\n", "");
  hv_git_broker_free (b);
  tree_remove (dir);
}

/* git's own cache client (the helper the sandbox's git runs) against the
 * broker's socket: the framing as git writes and reads it. */
static void
test_real_git_client (void **state)
{
  (void) state;
  if (system ("git --version > /dev/null 2>&1") != 0)
    SKIP_BECAUSE ("no git on PATH");
  char *dir = NULL;
  hv_error *err = NULL;
  hv_git_broker *b = prepare ("{\"dir\":\"%s\",\"hosts\":[{\"host\":\"github.com\",\"from\":\"token\"}]}", &dir, &err);
  if (b == NULL)
    fail_msg ("refused: %s", err->msg);
  static const struct
  {
    const char *action, *input, *want;
  } cases[] = {
    { "get", "protocol=https\nhost=github.com\npath=o/r.git\n\n", "username=x-access-token\npassword=" TOKEN "\n" },
    { "get", "protocol=https\nhost=gitlab.com\n\n", "" },
    { "store", "protocol=https\nhost=github.com\nusername=a\npassword=b\n\n", "" },
    { "erase", "protocol=https\nhost=github.com\n\n", "" },
  };
  cleanup_free char *sock = xasprintf ("%s/%s", dir, HV_GIT_BROKER_SOCKET);
  for (size_t i = 0; i < N_ELEMENTS (cases); i++)
    {
      int out[2];
      assert_int_equal (pipe (out), 0);
      pid_t pid = fork ();
      assert_true (pid >= 0);
      if (pid == 0)
        {
          int in[2];
          if (pipe (in) < 0 || write_all (in[1], cases[i].input, strlen (cases[i].input)) < 0)
            _exit (126);
          close (in[1]);
          dup2 (in[0], 0);
          dup2 (out[1], 1);
          execlp ("git", "git", "credential-cache", "--socket", sock, cases[i].action, (char *) NULL);
          _exit (127);
        }
      close (out[1]);
      /* One connection per call of the client. */
      int conn = accept4 (hv_git_broker_fd (b), NULL, NULL, SOCK_CLOEXEC);
      assert_true (conn >= 0);
      hv_git_broker_serve (conn, b);
      close (conn);
      char buf[1024];
      size_t n = 0;
      ssize_t got;
      while ((got = read (out[0], buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t) got;
      buf[n] = '\0';
      close (out[0]);
      int status;
      assert_int_equal (waitpid (pid, &status, 0), pid);
      assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
      if (strcmp (buf, cases[i].want) != 0)
        fail_msg ("git credential-cache %s: printed \"%s\", not \"%s\"", cases[i].action, buf, cases[i].want);
    }
  hv_git_broker_free (b);
  tree_remove (dir);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_annotation),
    cmocka_unit_test (test_serve),
    cmocka_unit_test (test_serve_from_host),
    cmocka_unit_test (test_real_git_client),
  };
  return unit_tests_status (cmocka_run_group_tests (tests, NULL, NULL), N_ELEMENTS (tests));
}
