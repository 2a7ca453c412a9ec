/* Unit tests of the denial explainer (runtime/audit/denial_explain.c):
 * each kind of denial gets the rule that refused it and the policy text
 * that would allow it, or "never" for secrets and haven's own files; and
 * of the run's view (denial_view.c): bounded, whole lines. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "denial_explain.h"
#include "denial_view.h"
#include "utils.h"

static const char *const table
    = "{\"project\": \"/w/proj\", \"home\": \"/home/u\","
      " \"block\": [\"/home/u/.ssh\", \"/etc/shadow\", \"/w/proj/**/.env\", \"/w/proj/**/*.pem\","
      "           \"!/w/proj/**/.env.example\", \"!/w/proj/**/certifi/cacert.pem\"],"
      " \"own\": [\"/home/u/.local/state/haven\", \"/home/u/.config/haven\"],"
      " \"exec\": \"process.allow_exec\", \"block_shell\": true, \"network\": \"allowlist\","
      " \"profile\": \"agent\", \"deny\": [\"bpf\"], \"hide_home\": true, \"view\": \"/run/x/why\"}";

struct want
{
  const char *rule, *allow;
  bool never, caution;
};

static void
check (const hv_denial_rules *r, const struct hv_denial_facts *f, struct want w)
{
  struct hv_denial_explained e;
  hv_denial_explain (r, f, &e);
  assert_string_equal (e.rule, w.rule);
  assert_string_equal (e.allow, w.never ? "" : w.allow);
  assert_int_equal (e.never, w.never);
  if (w.never)
    assert_true (e.why_not && e.why_not[0]);
  else
    assert_null (e.why_not);
  assert_int_equal (e.caution != NULL, w.caution);
  hv_denial_explained_release (&e);
}

static void
file (const hv_denial_rules *r, const char *access, const char *path, struct want w)
{
  struct hv_denial_facts f = { .kind = HV_DENIAL_FILE, .access = access, .path = path };
  check (r, &f, w);
}

static void
test_parse (void **state)
{
  (void) state;
  hv_denial_rules *r = hv_denial_rules_parse (table);
  assert_non_null (r);
  assert_string_equal (r->project, "/w/proj");
  assert_int_equal (r->n_block, 6);
  assert_int_equal (r->n_own, 2);
  assert_true (r->block_shell);
  assert_true (r->hide_home);
  assert_string_equal (r->view, "/run/x/why");
  hv_denial_rules_free (r);
  assert_null (hv_denial_rules_parse (NULL));
  assert_null (hv_denial_rules_parse ("[1]"));
  assert_null (hv_denial_rules_parse ("{\"project\":"));
}

static void
test_files (void **state)
{
  (void) state;
  hv_denial_rules *r = hv_denial_rules_parse (table);
  /* Execute: a program outside the project, named by its path. */
  file (r, "fs.execute", "/usr/bin/make",
        (struct want){ "process.allow_exec", "process: {allow_exec: [/usr/bin/make]}", false, false });
  /* A shell under block_shell: the line, and what it defeats. */
  file (r, "fs.execute", "/usr/bin/bash",
        (struct want){ "process.block_shell", "process: {allow_exec: [/usr/bin/bash]}", false, true });
  /* In the project nothing runs, named or not. */
  file (r, "fs.execute", "/w/proj/build/a.out", (struct want){ "process.allow_exec", NULL, true, false });
  /* Writes: the project's paths as {project}, the home's as ~ (quoted
   * where YAML needs it). */
  file (r, "fs.make_reg", "/srv/shared",
        (struct want){ "filesystem.read_write", "filesystem: {read_write: [/srv/shared]}", false, false });
  file (r, "fs.write_file", "/home/u/.cache/x",
        (struct want){ "filesystem.read_write", "filesystem: {read_write: [~/.cache/x]}", false, false });
  file (r, "fs.write_file", "/tmp/a b\"c",
        (struct want){ "filesystem.read_write", "filesystem: {read_write: [\"/tmp/a b\\\"c\"]}", false, false });
  /* A write refused in the (writable) project is a protected path. */
  file (r, "fs.write_file", "/w/proj/.git/hooks/pre-commit", (struct want){ "filesystem.protect", NULL, true, false });
  /* Reads: the hidden home names home_allow; elsewhere read_only. */
  file (r, "fs.read_file", "/home/u/.config/tool/x",
        (struct want){ "filesystem.hide_home", "filesystem: {home_allow: [~/.config/tool/x]}", false, false });
  file (r, "fs.read_file", "/opt/data",
        (struct want){ "filesystem.read_only", "filesystem: {read_only: [/opt/data]}", false, false });
  /* Secrets: never, whatever the access, below the blocked directory
   * too; the project's globs at any depth, with their exceptions. */
  file (r, "fs.read_file", "/home/u/.ssh/id_ed25519", (struct want){ "filesystem.block: ~/.ssh", NULL, true, false });
  file (r, "fs.write_file", "/home/u/.ssh", (struct want){ "filesystem.block: ~/.ssh", NULL, true, false });
  file (r, "fs.read_file", "/etc/shadow", (struct want){ "filesystem.block: /etc/shadow", NULL, true, false });
  file (r, "fs.read_file", "/w/proj/.env", (struct want){ "filesystem.block: {project}/**/.env", NULL, true, false });
  file (r, "fs.read_file", "/w/proj/a/b/.env",
        (struct want){ "filesystem.block: {project}/**/.env", NULL, true, false });
  file (r, "fs.read_file", "/w/proj/a/key.pem", (struct want){ "filesystem.block: {project}/**/*.pem", NULL, true, false });
  file (r, "fs.read_file", "/w/proj/venv/certifi/cacert.pem",
        (struct want){ "filesystem.read_only", "filesystem: {read_only: [\"{project}/venv/certifi/cacert.pem\"]}", false,
                       false });
  /* "/home/u/.sshx" is not below "/home/u/.ssh". */
  file (r, "fs.read_file", "/home/u/.sshx",
        (struct want){ "filesystem.hide_home", "filesystem: {home_allow: [~/.sshx]}", false, false });
  /* Below means below: "/w/projx" is not in "/w/proj", nor
   * ".../havenx" haven's. */
  file (r, "fs.write_file", "/w/projx/a",
        (struct want){ "filesystem.read_write", "filesystem: {read_write: [/w/projx/a]}", false, false });
  file (r, "fs.write_file", "/home/u/.local/state/havenx",
        (struct want){ "filesystem.read_write", "filesystem: {read_write: [~/.local/state/havenx]}", false, false });
  /* haven's own files: never. */
  file (r, "fs.write_file", "/home/u/.local/state/haven/audit.log", (struct want){ "haven's own files", NULL, true, false });
  file (r, "fs.read_file", "/home/u/.config/haven/approved/p.yaml", (struct want){ "haven's own files", NULL, true, false });
  hv_denial_rules_free (r);
  /* Without a table: the monitor's own hint, then the defaults. */
  struct hv_denial_facts f = { .kind = HV_DENIAL_FILE, .access = "fs.execute", .path = "/bin/sh",
                               .hint = "process.allow_exec" };
  check (NULL, &f, (struct want){ "process.block_shell", "process: {allow_exec: [/bin/sh]}", false, true });
  f.path = "/usr/bin/id";
  check (NULL, &f, (struct want){ "process.allow_exec", "process: {allow_exec: [/usr/bin/id]}", false, false });
}

static void
test_network (void **state)
{
  (void) state;
  hv_denial_rules *r = hv_denial_rules_parse (table);
  struct hv_denial_facts f = { .kind = HV_DENIAL_NET, .name = "x.example", .address = "203.0.113.5", .port = 8443,
                               .protocol = "tcp" };
  check (r, &f, (struct want){ "network.allow", "network: {allow: [\"x.example:8443\"]}", false, false });
  /* 443 and 80 are a bare name's ports. */
  f.port = 443;
  check (r, &f, (struct want){ "network.allow", "network: {allow: [x.example]}", false, false });
  /* No name: the address, IPv6 in brackets. */
  f.name = NULL;
  f.port = 22;
  check (r, &f, (struct want){ "network.allow", "network: {allow: [\"203.0.113.5:22\"]}", false, false });
  f.address = "2001:db8::1";
  check (r, &f, (struct want){ "network.allow", "network: {allow: [\"[2001:db8::1]:22\"]}", false, false });
  /* Only TCP is in the language. */
  f.protocol = "udp";
  check (r, &f, (struct want){ "network.allow (TCP only)", NULL, true, false });
  struct hv_denial_facts d = { .kind = HV_DENIAL_DNS, .name = "evil.example", .why = "not in the policy", .type = "A" };
  check (r, &d, (struct want){ "network.allow", "network: {allow: [evil.example]}", false, false });
  d.why = "denied by the policy";
  check (r, &d, (struct want){ "network.deny: evil.example", NULL, true, false });
  d.why = "type not allowed";
  d.type = "TXT";
  check (r, &d, (struct want){ "network.allow (DNS type TXT)", NULL, true, false });
  /* A name starting with "*" or holding odd bytes is quoted. */
  d.why = "not in the policy";
  d.name = "a\"b\x01.example";
  check (r, &d, (struct want){ "network.allow", "network: {allow: [\"a\\\"b\\x01.example\"]}", false, false });
  hv_denial_rules_free (r);
}

static void
test_syscalls (void **state)
{
  (void) state;
  hv_denial_rules *r = hv_denial_rules_parse (table);
  struct hv_denial_facts f = { .kind = HV_DENIAL_SYSCALL, .syscall = "ptrace" };
  check (r, &f, (struct want){ "syscalls.profile: agent", "syscalls: {allow: [ptrace]}", false, true });
  f.syscall = "bpf";
  check (r, &f, (struct want){ "syscalls.deny: bpf", NULL, true, false });
  f.syscall = "clone";
  check (r, &f, (struct want){ "syscalls.profile: agent (clone with arguments for a new user namespace)", NULL, true,
                               false });
  hv_denial_rules_free (r);
}

static void
test_put (void **state)
{
  (void) state;
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  struct hv_denial_facts f = { .kind = HV_DENIAL_FILE, .access = "fs.read_file", .path = "/etc/shadow" };
  hv_denial_rules *r = hv_denial_rules_parse (table);
  hv_denial_explain_put (g, r, &f);
  yajl_gen_map_close (g);
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (g, &buf, &len);
  assert_string_equal ((const char *) buf,
                       "{\"rule\":\"filesystem.block: /etc/shadow\",\"allow\":\"\",\"never\":true,\"why_not\":\"/etc/shadow "
                       "is a secret this policy hides: a line that shows it would hand it to the agent; copy what the "
                       "task needs yourself, or lend it through credentials: (ssh_agent, git, api), which never show "
                       "it\"}");
  yajl_gen_free (g);
  hv_denial_rules_free (r);
}

/* The view: whole lines appended; past its bound only the last ones,
 * within half the bound, in a file renamed into place. */
static void
test_view (void **state)
{
  (void) state;
  char dir[] = "/tmp/hv-why-XXXXXX";
  assert_non_null (mkdtemp (dir));
  hv_denial_view *v = hv_denial_view_open (dir);
  assert_non_null (v);
  char line[1100];
  for (int i = 0; i < 400; i++)
    {
      int n = snprintf (line, sizeof (line), "{\"n\":%d,\"pad\":\"%0*d\"}", i, 900, 0);
      hv_denial_view_add (v, line, (size_t) n);
    }
  /* Too long for the view: left out. */
  char *big = xmalloc0 (HV_DENIAL_VIEW_LINE_MAX + 2);
  memset (big, 'x', HV_DENIAL_VIEW_LINE_MAX + 1);
  hv_denial_view_add (v, big, HV_DENIAL_VIEW_LINE_MAX + 1);
  free (big);
  hv_denial_view_free (v);
  char *path = xasprintf ("%s/%s", dir, HV_WHY_FILE);
  FILE *fp = fopen (path, "r");
  assert_non_null (fp);
  char buf[2048];
  int last = -1, lines = 0;
  long size = 0;
  while (fgets (buf, sizeof (buf), fp))
    {
      size += (long) strlen (buf);
      assert_int_equal (buf[strlen (buf) - 1], '\n');
      assert_int_equal (sscanf (buf, "{\"n\":%d,", &last), 1);
      lines++;
    }
  fclose (fp);
  assert_int_equal (last, 399);
  assert_true (lines <= HV_DENIAL_VIEW_KEEP);
  assert_true (lines > 50);
  assert_true (size <= HV_DENIAL_VIEW_MAX_BYTES + 1100);
  struct stat st;
  assert_int_equal (stat (path, &st), 0);
  assert_int_equal (st.st_mode & 0777, 0644);
  unlink (path);
  free (path);
  /* A directory others may write is none of the run's: no view. */
  assert_int_equal (chmod (dir, 0777), 0);
  assert_null (hv_denial_view_open (dir));
  assert_null (hv_denial_view_open ("/nonexistent-hv-why"));
  rmdir (dir);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_parse),    cmocka_unit_test (test_files), cmocka_unit_test (test_network),
    cmocka_unit_test (test_syscalls), cmocka_unit_test (test_put),   cmocka_unit_test (test_view),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
