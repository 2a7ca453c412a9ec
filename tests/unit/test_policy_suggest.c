/* haven policy suggest's builder (cli/policy_suggest.c) on hand-written
 * records: each kind of refusal becomes its entry, what must stay
 * refused is flagged and not suggested, and hostile record text (quotes,
 * line breaks, YAML's own characters in names, paths and program names)
 * neither breaks the YAML nor adds a key: every suggestion is loaded
 * back as a policy and its lists compared exactly. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <yajl/yajl_tree.h>

#include "policy_load.h"
#include "policy_network.h"
#include "policy_suggest.h"
#include "tmp_tree.h"

struct fixture
{
  char *dir;  /* base policies, suggestions */
  char *home; /* a fake $HOME */
  hv_policy *base;
  char *base_file;
};

static struct fixture fx;

static void
load_base (const char *yaml)
{
  hv_policy_free (fx.base);
  fx.base = NULL;
  free (fx.base_file);
  fx.base_file = xasprintf ("%s/base.yaml", fx.dir);
  tree_put (fx.dir, "base.yaml", yaml);
  hv_error *err = NULL;
  if (hv_policy_load (fx.base_file, &fx.base, &err) < 0)
    fail_msg ("base: %s", err->msg);
}

static int
setup (void **state)
{
  (void) state;
  fx.dir = tree_make ("suggest");
  fx.home = xasprintf ("%s/home", fx.dir);
  mkdir (fx.home, 0700);
  setenv ("HOME", fx.home, 1);
  return 0;
}

static int
teardown (void **state)
{
  (void) state;
  hv_policy_free (fx.base);
  tree_remove (fx.dir);
  free (fx.home);
  free (fx.base_file);
  memset (&fx, 0, sizeof (fx));
  return 0;
}

/* Feed records (one JSON text each, NULL-terminated) to a builder. */
static char *
suggest (const char *const *records, hv_suggest **out)
{
  hv_suggest *s = hv_suggest_new (fx.base, fx.base_file, fx.home, NULL);
  for (size_t i = 0; records[i]; i++)
    {
      char why[256];
      yajl_val v = yajl_tree_parse (records[i], why, sizeof (why));
      if (v == NULL)
        fail_msg ("record %zu: %s", i, why);
      hv_error *err = NULL;
      char where[32];
      snprintf (where, sizeof (where), "t:%zu", i + 1);
      if (hv_suggest_add (s, v, where, &err) < 0)
        fail_msg ("record %zu: %s", i, err->msg);
      yajl_tree_free (v);
    }
  char *yaml = hv_suggest_yaml (s, "test");
  if (out)
    *out = s;
  else
    hv_suggest_free (s);
  return yaml;
}

/* The suggestion, loaded as a policy. */
static hv_policy *
load_suggestion (const char *yaml)
{
  tree_put (fx.dir, "suggested.yaml", yaml);
  cleanup_free char *path = xasprintf ("%s/suggested.yaml", fx.dir);
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (path, &p, &err) < 0)
    fail_msg ("the suggestion does not load: %s\n%s", err->msg, yaml);
  return p;
}

/* The network.allow entries as written, each once. */
static void
assert_net (const hv_policy *p, const char *const *want)
{
  cleanup_strv oci_strv got = { 0 };
  for (size_t i = 0; i < p->net_allow.n; i++)
    oci_strv_push_unique (&got, p->net_allow.v[i].entry);
  size_t n = 0;
  for (; want[n]; n++)
    if (!oci_strv_contains (&got, want[n]))
      fail_msg ("network.allow: missing \"%s\"", want[n]);
  assert_int_equal (got.n, n);
}

/* v holds exactly want (NULL-terminated), in any order. */
static void
assert_strv (const oci_strv *v, const char *const *want)
{
  size_t n = 0;
  for (; want[n]; n++)
    if (!oci_strv_contains (v, want[n]))
      fail_msg ("missing \"%s\"", want[n]);
  assert_int_equal (v->n, n);
}

#define START "{\"event\":\"start\",\"policy\":\"base\",\"learn\":true,\"project\":\"/work/app\",\"command\":[\"make\"]}"

static void
test_entries (void **state)
{
  (void) state;
  load_base ("extends: none\n"
             "filesystem: {project_writable: false}\n"
             "network: {mode: allowlist, allow: [pypi.org]}\n"
             "process: {allow_exec: [sh, make]}\n");
  const char *rec[] = {
    START,
    "{\"event\":\"landlock-denied\",\"access\":\"fs.execute\",\"path\":\"/usr/bin/gcc\",\"comm\":\"make\","
    "\"rule\":\"process.allow_exec\"}",
    "{\"event\":\"landlock-denied\",\"access\":\"fs.execute\",\"path\":\"/usr/bin/gcc\",\"comm\":\"sh\","
    "\"rule\":\"process.allow_exec\"}",
    "{\"event\":\"landlock-denied\",\"access\":\"fs.make_reg\",\"path\":\"/work/app/build\",\"comm\":\"make\","
    "\"rule\":\"filesystem.read_write\"}",
    "{\"event\":\"landlock-denied\",\"access\":\"fs.write_file\",\"path\":\"/srv/out/log\",\"comm\":\"make\"}",
    "{\"event\":\"dns-refused\",\"name\":\"build.example\",\"type\":\"A\",\"why\":\"not in the policy\"}",
    "{\"event\":\"net-denied\",\"destination\":\"198.18.0.1\",\"port\":8443,\"protocol\":\"tcp\","
    "\"names\":[\"build.example\"]}",
    "{\"event\":\"dns-refused\",\"name\":\"build.example\",\"type\":\"AAAA\",\"why\":\"not in the policy\"}",
    "{\"event\":\"dns-refused\",\"name\":\"cdn.example\",\"type\":\"A\",\"why\":\"not in the policy\"}",
    "{\"event\":\"net-denied\",\"destination\":\"192.0.2.7\",\"port\":22,\"protocol\":\"tcp\",\"names\":[]}",
    "{\"event\":\"denied\",\"syscall\":\"personality\",\"comm\":\"make\"}",
    "{\"event\":\"exit\",\"status\":2}",
    NULL,
  };
  hv_suggest *s = NULL;
  cleanup_free char *yaml = suggest (rec, &s);
  assert_int_equal (hv_suggest_entries (s), 7);
  assert_int_equal (hv_suggest_flags (s), 0);
  hv_suggest_free (s);
  /* Who and how often, in the entry's comment. */
  assert_non_null (strstr (yaml, "\"/usr/bin/gcc\"   # by make, sh; fs.execute, 2 times"));
  assert_non_null (strstr (yaml, "TCP 443 and 80"));
  hv_policy *p = load_suggestion (yaml);
  const char *rw[] = { "{project}/build", "/srv/out/log", NULL };
  assert_strv (&p->read_write, rw);
  const char *ex[] = { "sh", "make", "/usr/bin/gcc", NULL };
  assert_strv (&p->allow_exec, ex);
  const char *sc[] = { "personality", NULL };
  assert_strv (&p->syscall_allow, sc);
  /* pypi.org from the base; the port a connect showed, not 443/80. */
  const char *net[] = { "pypi.org", "build.example:8443", "cdn.example", "192.0.2.7:22", NULL };
  assert_net (p, net);
  assert_non_null (strstr (yaml, "- \"build.example:8443\""));
  assert_null (strstr (yaml, "- \"build.example\" "));
  assert_non_null (strstr (yaml, "- \"cdn.example\" "));
  assert_non_null (strstr (yaml, "- \"192.0.2.7:22\""));
  hv_policy_free (p);
}

static void
test_flags (void **state)
{
  (void) state;
  cleanup_free char *base = xasprintf ("extends: none\n"
                                       "filesystem: {block: [~/.ssh, /srv/secret.txt], hide_home: false}\n"
                                       "process: {block_shell: true}\n"
                                       "syscalls: {deny: [memfd_create]}\n"
                                       "network: {mode: allowlist, deny: [evil.example]}\n");
  load_base (base);
  cleanup_free char *ssh = xasprintf ("{\"event\":\"landlock-denied\",\"access\":\"fs.write_file\","
                                      "\"path\":\"%s/.ssh/id_rsa\",\"comm\":\"cat\"}",
                                      fx.home);
  cleanup_free char *bashrc = xasprintf ("{\"event\":\"landlock-denied\",\"access\":\"fs.write_file\","
                                         "\"path\":\"%s/.bashrc\",\"comm\":\"sh\"}",
                                         fx.home);
  cleanup_free char *localbin = xasprintf ("{\"event\":\"landlock-denied\",\"access\":\"fs.make_reg\","
                                           "\"path\":\"%s/.local/bin\",\"comm\":\"pip\"}",
                                           fx.home);
  const char *rec[] = {
    START,
    ssh,
    bashrc,
    localbin,
    "{\"event\":\"landlock-denied\",\"access\":\"fs.write_file\",\"path\":\"/srv/secret.txt\",\"comm\":\"x\"}",
    "{\"event\":\"landlock-denied\",\"access\":\"fs.write_file\",\"path\":\"/run/docker.sock\",\"comm\":\"x\"}",
    "{\"event\":\"landlock-denied\",\"access\":\"fs.execute\",\"path\":\"/usr/bin/bash\",\"comm\":\"x\","
    "\"rule\":\"process.block_shell\"}",
    "{\"event\":\"landlock-denied\",\"access\":\"fs.execute\",\"path\":\"/work/app/tool\",\"comm\":\"x\"}",
    "{\"event\":\"landlock-denied\",\"access\":\"fs.write_file\",\"path\":\"/srv/app/.env\",\"comm\":\"x\"}",
    "{\"event\":\"denied\",\"syscall\":\"memfd_create\",\"comm\":\"x\"}",
    "{\"event\":\"denied\",\"syscall\":\"ioctl\",\"comm\":\"x\"}",
    "{\"event\":\"net-denied\",\"destination\":\"240.0.0.7\",\"port\":443,\"protocol\":\"tcp\",\"names\":[]}",
    "{\"event\":\"dns-refused\",\"name\":\"evil.example\",\"type\":\"A\",\"why\":\"denied by the policy\"}",
    "{\"event\":\"net-denied\",\"destination\":\"192.0.2.1\",\"port\":53,\"protocol\":\"udp\",\"names\":[]}",
    NULL,
  };
  hv_suggest *s = NULL;
  cleanup_free char *yaml = suggest (rec, &s);
  assert_int_equal (hv_suggest_entries (s), 0);
  assert_int_equal (hv_suggest_flags (s), 13);
  hv_suggest_free (s);
  assert_non_null (strstr (yaml, "/.ssh/id_rsa: a secret"));
  assert_non_null (strstr (yaml, "/.bashrc: a home file the host user later executes or sources"));
  assert_non_null (strstr (yaml, "/.local/bin: a home file"));
  assert_non_null (strstr (yaml, "/srv/secret.txt: a secret: the base policy hides"));
  assert_non_null (strstr (yaml, "/run/docker.sock: a container engine's socket"));
  assert_non_null (strstr (yaml, "/usr/bin/bash: a shell"));
  assert_non_null (strstr (yaml, "/work/app/tool: a program in the project"));
  assert_non_null (strstr (yaml, "/srv/app/.env: a secret"));
  assert_non_null (strstr (yaml, "memfd_create: the base policy denies it"));
  assert_non_null (strstr (yaml, "ioctl: denied for its arguments"));
  assert_non_null (strstr (yaml, "evil.example: the base policy denies it"));
  assert_non_null (strstr (yaml, "TCP only"));
  assert_non_null (strstr (yaml, "240.0.0.7: a learn-mode sinkhole"));
  hv_policy *p = load_suggestion (yaml);
  assert_int_equal (p->read_write.n, 0);
  assert_int_equal (p->allow_exec.n, 0);
  assert_int_equal (p->syscall_allow.n, 0);
  assert_int_equal (p->net_allow.n, 0);
  hv_policy_free (p);
}

/* Names, paths and program names chosen by the sandbox: nothing they
 * hold may end a value or a comment. */
static void
test_hostile_text (void **state)
{
  (void) state;
  load_base ("extends: none\nnetwork: {mode: allowlist}\nprocess: {allow_exec: [sh]}\n");
  const char *rec[] = {
    START,
    /* YAML's own characters in a path: quoted, kept exactly. */
    "{\"event\":\"landlock-denied\",\"access\":\"fs.write_file\",\"path\":\"/srv/a\\\"b: c #d - e, f'g\","
    "\"comm\":\"x\"}",
    /* A line break in a path: not written. */
    "{\"event\":\"landlock-denied\",\"access\":\"fs.write_file\",\"path\":\"/srv/x\\nnetwork: {allow: [evil]}\","
    "\"comm\":\"x\"}",
    /* A line break and a key in a program name (a comment). */
    "{\"event\":\"landlock-denied\",\"access\":\"fs.execute\",\"path\":\"/usr/bin/gcc\","
    "\"comm\":\"cc\\nsyscalls: {profile: none}\\r\\u2028x\"}",
    /* Unicode line separators and a non-ASCII path. */
    "{\"event\":\"landlock-denied\",\"access\":\"fs.write_file\",\"path\":\"/srv/\\u00e9\\u2029x\",\"comm\":\"x\"}",
    /* Globs and variables in a path. */
    "{\"event\":\"landlock-denied\",\"access\":\"fs.write_file\",\"path\":\"/srv/*\",\"comm\":\"x\"}",
    "{\"event\":\"landlock-denied\",\"access\":\"fs.write_file\",\"path\":\"/srv/$HOME\",\"comm\":\"x\"}",
    /* Names that are not names. */
    "{\"event\":\"dns-refused\",\"name\":\"a\\\"]\\nprocess: {block_shell: false}\",\"type\":\"A\"}",
    "{\"event\":\"dns-refused\",\"name\":\"*.example\",\"type\":\"A\"}",
    "{\"event\":\"net-denied\",\"destination\":\"198.18.0.9\",\"port\":443,\"protocol\":\"tcp\","
    "\"names\":[\"ok.example\",\"bad name\\n\"]}",
    /* A system call name that is not one. */
    "{\"event\":\"denied\",\"syscall\":\"x\\\"\\ny: z\",\"comm\":\"x\"}",
    NULL,
  };
  cleanup_free char *yaml = suggest (rec, NULL);
  /* No line of the output but ours starts a key. */
  for (const char *line = yaml; line && *line; line = strchr (line, '\n') ? strchr (line, '\n') + 1 : NULL)
    if (line[0] != '#' && line[0] != ' ' && line[0] != '\n')
      assert_true (strncmp (line, "extends:", 8) == 0 || strncmp (line, "filesystem:", 11) == 0
                   || strncmp (line, "network:", 8) == 0 || strncmp (line, "process:", 8) == 0);
  for (const char *c = yaml; *c; c++)
    assert_true (*c == '\n' || ((unsigned char) *c >= 0x20 && (unsigned char) *c <= 0x7e));
  hv_policy *p = load_suggestion (yaml);
  const char *rw[] = { "/srv/a\"b: c #d - e, f'g", NULL };
  assert_strv (&p->read_write, rw);
  const char *ex[] = { "sh", "/usr/bin/gcc", NULL };
  assert_strv (&p->allow_exec, ex);
  const char *net[] = { "ok.example:443", NULL };
  assert_net (p, net);
  assert_int_equal (p->syscall_allow.n, 0);
  assert_false (p->block_shell.set);
  assert_null (p->syscall_profile);
  hv_policy_free (p);
}

static void
test_bad_base_ref (void **state)
{
  (void) state;
  load_base ("extends: none\n");
  hv_error *err = NULL;
  assert_null (hv_suggest_new (fx.base, "/srv/a\nb", fx.home, &err));
  assert_non_null (strstr (err->msg, "control or non-ASCII"));
  hv_error_free (&err);
}

static void
test_bad_records (void **state)
{
  (void) state;
  load_base ("extends: none\n");
  hv_suggest *s = hv_suggest_new (fx.base, fx.base_file, fx.home, NULL);
  const char *bad[] = {
    "{\"event\":\"landlock-denied\",\"access\":\"fs.execute\"}",
    "{\"event\":\"net-denied\",\"destination\":\"192.0.2.1\",\"protocol\":\"tcp\"}",
    "{\"event\":\"dns-refused\"}",
    "{\"event\":\"denied\"}",
    "{\"no\":\"event\"}",
    "[1]",
    NULL,
  };
  for (size_t i = 0; bad[i]; i++)
    {
      yajl_val v = yajl_tree_parse (bad[i], NULL, 0);
      assert_non_null (v);
      hv_error *err = NULL;
      assert_int_equal (hv_suggest_add (s, v, "trail.log:7", &err), -1);
      assert_non_null (strstr (err->msg, "trail.log:7: "));
      hv_error_free (&err);
      yajl_tree_free (v);
    }
  hv_suggest_free (s);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_entries, setup, teardown),
    cmocka_unit_test_setup_teardown (test_flags, setup, teardown),
    cmocka_unit_test_setup_teardown (test_hostile_text, setup, teardown),
    cmocka_unit_test_setup_teardown (test_bad_records, setup, teardown),
    cmocka_unit_test_setup_teardown (test_bad_base_ref, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
