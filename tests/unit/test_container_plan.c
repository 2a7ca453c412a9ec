/* Unit tests of what a policy's ~ means in an engine's container
 * (policy/container_plan.c): the process user's home, every person's home
 * in the image's /etc/passwd, what is not a home, and the limits. */
#include "config.h"

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

#include "container_plan.h"
#include "policy.h"
#include "policy_parse.h"
#include "utils.h"

struct world
{
  char dir[64];
  char config[128];
};

static void
put_file (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
}

/* A bundle with an image whose /etc/passwd is passwd and a config whose
 * process runs as uid:gid with extra env and linux sections. */
static void
world_make (struct world *w, const char *passwd, unsigned uid, const char *env_json, const char *linux_json)
{
  strcpy (w->dir, "/tmp/hv-plan-XXXXXX");
  assert_non_null (mkdtemp (w->dir));
  cleanup_free char *etc = xasprintf ("%s/rootfs/etc", w->dir);
  cleanup_free char *mk = xasprintf ("mkdir -p %s", etc);
  assert_int_equal (system (mk), 0);
  cleanup_free char *pw = xasprintf ("%s/passwd", etc);
  put_file (pw, passwd);
  snprintf (w->config, sizeof (w->config), "%s/config.json", w->dir);
  cleanup_free char *json
      = xasprintf ("{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"],"
                   "\"user\":{\"uid\":%u,\"gid\":%u},\"env\":[%s]},\"linux\":{%s}}",
                   uid, uid, env_json, linux_json);
  put_file (w->config, json);
}

static void
world_remove (struct world *w)
{
  cleanup_free char *rm = xasprintf ("rm -rf %s", w->dir);
  assert_int_equal (system (rm), 0);
}

static int
plan_for (struct world *w, const char *policy_yaml, struct hv_container_plan *plan, hv_error **err)
{
  hv_policy p = { 0 };
  hv_error *perr = NULL;
  if (hv_policy_parse (policy_yaml, strlen (policy_yaml), "t.yaml", &p, NULL, &perr) < 0)
    fail_msg ("policy: %s", perr->msg);
  oci_spec *spec = NULL;
  hv_error *serr = NULL;
  if (oci_spec_load (w->config, "config.json", &spec, &serr) < 0)
    fail_msg ("config: %s", serr->msg);
  int r = hv_container_plan_make (&p, spec, w->config, plan, err);
  oci_spec_free (spec);
  hv_policy_free_fields (&p);
  return r;
}

static const char *const hide = "filesystem:\n  hide_home: yes\n  block: [~/.ssh]\n";

static void
assert_home (const struct hv_container_plan *plan, size_t i, const char *path, unsigned uid, unsigned gid)
{
  assert_true (i < plan->n_homes);
  assert_string_equal (plan->homes[i].path, path);
  assert_int_equal (plan->homes[i].uid, uid);
  assert_int_equal (plan->homes[i].gid, gid);
  assert_int_not_equal (plan->homes[i].tmpfs_at, SIZE_MAX);
}

/* Init as root, the image's people in /home: every one of their homes is
 * ~ (exec --user runs as them); system accounts' homes are not. */
static void
test_every_persons_home (void **state)
{
  (void) state;
  struct world w;
  world_make (&w,
              "root:x:0:0:root:/root:/bin/sh\n"
              "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
              "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
              "vscode:x:1000:1001::/home/vscode:/bin/bash\n"
              "svc:x:999:999::/var/lib/svc:/bin/false\n"
              "dots:x:1002:1002::/home/..:/bin/sh\n"
              "deep:x:1003:1003::/home/a/b:/bin/sh\n"
              "broken line\n"
              "bad:x:12x:1::/home/bad:/bin/sh\n",
              0, "", "");
  struct hv_container_plan plan;
  hv_error *err = NULL;
  assert_int_equal (plan_for (&w, hide, &plan, &err), 0);
  assert_int_equal (plan.n_homes, 2);
  assert_home (&plan, 0, "/root", 0, 0);
  assert_home (&plan, 1, "/home/vscode", 1000, 1001);
  assert_true (oci_strv_contains (&plan.masked, "/root/.ssh"));
  assert_true (oci_strv_contains (&plan.masked, "/home/vscode/.ssh"));
  hv_container_plan_clear (&plan);
  world_remove (&w);
}

/* The process's HOME comes first, whatever passwd says; a HOME that is a
 * system directory or has dot components is not hidden, and says so. */
static void
test_process_home_first (void **state)
{
  (void) state;
  struct world w;
  world_make (&w, "root:x:0:0:root:/root:/bin/sh\ndev:x:1001:1001::/home/dev:/bin/sh\n", 1001,
              "\"HOME=/work/home\"", "");
  struct hv_container_plan plan;
  hv_error *err = NULL;
  assert_int_equal (plan_for (&w, hide, &plan, &err), 0);
  assert_int_equal (plan.n_homes, 3);
  assert_home (&plan, 0, "/work/home", 1001, 1001);
  assert_home (&plan, 1, "/root", 0, 0);
  assert_home (&plan, 2, "/home/dev", 1001, 1001);
  hv_container_plan_clear (&plan);
  world_remove (&w);

  static const char *const unhideable[] = { "\"HOME=/\"", "\"HOME=/usr\"", "\"HOME=/home/dev/..\"",
                                            "\"HOME=/home/./dev\"", "\"HOME=home\"" };
  for (size_t i = 0; i < sizeof (unhideable) / sizeof (unhideable[0]); i++)
    {
      world_make (&w, "dev:x:1001:1001::/home/dev:/bin/sh\n", 1001, unhideable[i], "");
      assert_int_equal (plan_for (&w, hide, &plan, &err), 0);
      assert_int_equal (plan.n_homes, 1);
      assert_string_equal (plan.homes[0].path, "/home/dev");
      assert_int_equal (plan.notes.n, 1);
      assert_non_null (strstr (plan.notes.v[0], "home is not hidden"));
      hv_container_plan_clear (&plan);
      world_remove (&w);
    }
}

/* In a user namespace, a home whose owner is not mapped cannot get a
 * tmpfs owned by it: a note says it is not hidden. */
static void
test_unmapped_owner (void **state)
{
  (void) state;
  struct world w;
  world_make (&w, "root:x:0:0:root:/root:/bin/sh\nvscode:x:1000:1000::/home/vscode:/bin/bash\n", 0, "",
              "\"namespaces\":[{\"type\":\"user\"}],"
              "\"uidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":1}],"
              "\"gidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":1}]");
  struct hv_container_plan plan;
  hv_error *err = NULL;
  assert_int_equal (plan_for (&w, hide, &plan, &err), 0);
  assert_int_equal (plan.n_homes, 1);
  assert_string_equal (plan.homes[0].path, "/root");
  assert_int_equal (plan.notes.n, 1);
  assert_non_null (strstr (plan.notes.v[0], "the home of vscode (/home/vscode) is not hidden"));
  hv_container_plan_clear (&plan);
  world_remove (&w);
}

/* More homes than haven hides: create fails, naming the field. */
static void
test_too_many_homes (void **state)
{
  (void) state;
  size_t cap = 300 * 64;
  char *passwd = xmalloc0 (cap);
  size_t len = 0;
  for (int i = 0; i < 300; i++)
    len += (size_t) snprintf (passwd + len, cap - len, "u%d:x:%d:%d::/home/u%d:/bin/sh\n", i, 2000 + i, 2000 + i, i);
  struct world w;
  world_make (&w, passwd, 0, "", "");
  free (passwd);
  struct hv_container_plan plan;
  hv_error *err = NULL;
  assert_int_equal (plan_for (&w, hide, &plan, &err), -1);
  assert_non_null (strstr (err->msg, "filesystem.hide_home: the image's /etc/passwd names more than 256 homes"));
  hv_error_free (&err);
  world_remove (&w);
}

/* Without hide_home the homes are found (block still reaches into each)
 * but none gets a tmpfs. */
static void
test_homes_not_hidden (void **state)
{
  (void) state;
  struct world w;
  world_make (&w, "root:x:0:0:root:/root:/bin/sh\nvscode:x:1000:1000::/home/vscode:/bin/bash\n", 0, "", "");
  struct hv_container_plan plan;
  hv_error *err = NULL;
  assert_int_equal (plan_for (&w, "filesystem:\n  hide_home: no\n  block: [~/.aws]\n", &plan, &err), 0);
  assert_int_equal (plan.n_homes, 2);
  for (size_t i = 0; i < plan.n_homes; i++)
    assert_int_equal (plan.homes[i].tmpfs_at, SIZE_MAX);
  assert_true (oci_strv_contains (&plan.masked, "/root/.aws"));
  assert_true (oci_strv_contains (&plan.masked, "/home/vscode/.aws"));
  hv_container_plan_clear (&plan);
  world_remove (&w);
}

/* Hidden project files: every directory on the way from the project's
 * mount to one is pinned (bound onto itself at create, so nothing in the
 * container can rename it while another container looks for the file),
 * parents first, each once; not a directory that another engine mount
 * covers (its own content may lack it), and a nested project's own
 * directories from its own mount. */
static void
test_pins_of_hidden_project_files (void **state)
{
  (void) state;
  struct world w;
  world_make (&w, "root:x:0:0:root:/root:/bin/sh\n", 0, "", "");
  cleanup_free char *mk = xasprintf ("mkdir -p %s/p/sub/dir %s/p/cache/y %s/p/vol/x %s/p/empty", w.dir, w.dir, w.dir,
                                     w.dir);
  assert_int_equal (system (mk), 0);
  const char *const files[] = { "p/.env", "p/sub/.env", "p/sub/dir/.env", "p/cache/y/.env", "p/vol/x/.env", NULL };
  for (size_t i = 0; files[i]; i++)
    {
      cleanup_free char *f = xasprintf ("%s/%s", w.dir, files[i]);
      put_file (f, "S=1\n");
    }
  cleanup_free char *json = xasprintf (
      "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"],"
      "\"user\":{\"uid\":0,\"gid\":0}},\"mounts\":["
      "{\"destination\":\"/workspace\",\"type\":\"bind\",\"source\":\"%s/p\",\"options\":[\"rbind\",\"rw\"]},"
      "{\"destination\":\"/workspace/cache\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[]},"
      "{\"destination\":\"/workspace/vol\",\"type\":\"bind\",\"source\":\"%s/p/vol\",\"options\":[\"rbind\",\"rw\"]}"
      "],\"linux\":{}}",
      w.dir, w.dir);
  put_file (w.config, json);
  struct hv_container_plan plan;
  hv_error *err = NULL;
  assert_int_equal (plan_for (&w, "filesystem:\n  block: [\"{project}/**/.env\"]\n", &plan, &err), 0);
  assert_true (oci_strv_contains (&plan.masked, "/workspace/sub/dir/.env"));
  assert_true (oci_strv_contains (&plan.masked, "/workspace/vol/x/.env"));
  const char *const want[] = { "/workspace/sub", "/workspace/sub/dir", "/workspace/vol/x", NULL };
  assert_int_equal (plan.pins.n, 3);
  for (size_t i = 0; want[i]; i++)
    assert_string_equal (plan.pins.v[i], want[i]);
  hv_container_plan_clear (&plan);
  world_remove (&w);
}

/* A config binding a workspace writable at /w and a directory
 * read-only at /ro (container_git.c). */
static void
world_with_workspace (struct world *w, char **ws)
{
  world_make (w, "root:x:0:0:root:/root:/bin/sh\n", 0, "", "");
  *ws = xasprintf ("%s/ws", w->dir);
  cleanup_free char *ro = xasprintf ("%s/ro", w->dir);
  cleanup_free char *mk = xasprintf ("mkdir -p %s/.git/hooks %s/.git/modules/lib/hooks %s/.git/modules/lib/objects "
                                     "%s/.git/modules/lib/refs %s/.husky/_ %s/vendor/x/.git/hooks %s/.git",
                                     *ws, *ws, *ws, *ws, *ws, *ws, ro);
  assert_int_equal (system (mk), 0);
  cleanup_free char *json
      = xasprintf ("{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"],"
                   "\"user\":{\"uid\":0,\"gid\":0},\"env\":[]},\"mounts\":["
                   "{\"destination\":\"/w\",\"type\":\"bind\",\"source\":\"%s\",\"options\":[\"rbind\"]},"
                   "{\"destination\":\"/ro\",\"type\":\"bind\",\"source\":\"%s\",\"options\":[\"rbind\",\"ro\"]}],"
                   "\"linux\":{}}",
                   *ws, ro);
  put_file (w->config, json);
}

/* The repositories of a workspace (its top's, a submodule's, a nested
 * one): each git directory pinned with the directories on the way, what
 * git executes read-only (hooks, config), core.hooksPath and the
 * directory above it (husky), a hook manager's file; a read-only mount is
 * neither pinned nor checked at the end. */
static void
test_git_pinned_and_protected (void **state)
{
  (void) state;
  struct world w;
  cleanup_free char *ws = NULL;
  world_with_workspace (&w, &ws);
  cleanup_free char *cfg = xasprintf ("%s/.git/config", ws);
  put_file (cfg, "[core]\n\thooksPath = .husky/_\n");
  cleanup_free char *sub = xasprintf ("%s/.git/modules/lib/config", ws);
  put_file (sub, "[core]\n");
  cleanup_free char *head = xasprintf ("%s/.git/modules/lib/HEAD", ws);
  put_file (head, "ref: refs/heads/main\n");
  cleanup_free char *pc = xasprintf ("%s/.pre-commit-config.yaml", ws);
  put_file (pc, "repos: []\n");
  struct hv_container_plan plan;
  hv_error *err = NULL;
  assert_int_equal (plan_for (&w, "filesystem: {hide_home: no}\n", &plan, &err), 0);
  static const char *const pins[] = { "/w/.git", "/w/.git/modules", "/w/.git/modules/lib", "/w/vendor",
                                      "/w/vendor/x", "/w/vendor/x/.git" };
  for (size_t i = 0; i < sizeof (pins) / sizeof (pins[0]); i++)
    if (!oci_strv_contains (&plan.pins, pins[i]))
      fail_msg ("%s is not pinned", pins[i]);
  assert_string_equal (plan.pins.v[0], "/w/.git"); /* parents first */
  static const char *const ro[] = { "/w/.git/hooks", "/w/.git/config", "/w/.git/modules/lib/hooks",
                                    "/w/.git/modules/lib/config", "/w/.husky/_", "/w/.husky",
                                    "/w/.pre-commit-config.yaml", "/w/vendor/x/.git/hooks" };
  for (size_t i = 0; i < sizeof (ro) / sizeof (ro[0]); i++)
    if (!oci_strv_contains (&plan.pins_ro, ro[i]))
      fail_msg ("%s is not read-only", ro[i]);
  assert_false (oci_strv_contains (&plan.pins_ro, "/w/.git/commondir")); /* absent: nothing to bind */
  assert_false (oci_strv_contains (&plan.pins, "/ro/.git"));
  assert_int_equal (plan.guarded_sources.n, 1);
  assert_string_equal (plan.guarded_sources.v[0], ws);
  hv_container_plan_clear (&plan);
  world_remove (&w);
}

/* A link where git reads hooks (left by an earlier run) fails the plan:
 * a read-only bind would protect its target and leave the link. */
static void
test_git_link_refused (void **state)
{
  (void) state;
  struct world w;
  cleanup_free char *ws = NULL;
  world_with_workspace (&w, &ws);
  cleanup_free char *ln = xasprintf ("rm -rf %s/.git/hooks && ln -s /tmp %s/.git/hooks", ws, ws);
  assert_int_equal (system (ln), 0);
  struct hv_container_plan plan;
  hv_error *err = NULL;
  assert_int_equal (plan_for (&w, "filesystem: {hide_home: no}\n", &plan, &err), -1);
  assert_non_null (strstr (err->msg, "/w/.git/hooks is or passes through a symbolic link"));
  hv_error_free (&err);
  world_remove (&w);
}

/* A nested `.git` that is a link (Android's repo): not refused, said in
 * a note (the live check watches it). */
static void
test_git_nested_link_noted (void **state)
{
  (void) state;
  struct world w;
  cleanup_free char *ws = NULL;
  world_with_workspace (&w, &ws);
  cleanup_free char *ln = xasprintf ("mkdir -p %s/proj && ln -s ../.git %s/proj/.git", ws, ws);
  assert_int_equal (system (ln), 0);
  struct hv_container_plan plan;
  hv_error *err = NULL;
  assert_int_equal (plan_for (&w, "filesystem: {hide_home: no}\n", &plan, &err), 0);
  bool noted = false;
  for (size_t i = 0; i < plan.notes.n; i++)
    noted |= strstr (plan.notes.v[i], "/w/proj/.git is a symbolic link: not write-protected") != NULL;
  assert_true (noted);
  assert_true (oci_strv_contains (&plan.pins, "/w/.git"));
  hv_container_plan_clear (&plan);
  world_remove (&w);
}

/* A repository below another engine mount of the project (a volume or
 * tmpfs over node_modules): the container sees that mount there, not
 * the project's directory, so nothing of it is pinned or bound (a pin of
 * a path the container does not have would fail create); the rest of the
 * project still is. */
static void
test_git_under_engine_mount_not_pinned (void **state)
{
  (void) state;
  struct world w;
  cleanup_free char *ws = NULL;
  world_with_workspace (&w, &ws);
  cleanup_free char *mk = xasprintf ("mkdir -p %s/node_modules/pkg/.git/hooks", ws);
  assert_int_equal (system (mk), 0);
  cleanup_free char *json
      = xasprintf ("{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"],"
                   "\"user\":{\"uid\":0,\"gid\":0},\"env\":[]},\"mounts\":["
                   "{\"destination\":\"/w\",\"type\":\"bind\",\"source\":\"%s\",\"options\":[\"rbind\"]},"
                   "{\"destination\":\"/w/node_modules\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[]}],"
                   "\"linux\":{}}",
                   ws);
  put_file (w.config, json);
  struct hv_container_plan plan;
  hv_error *err = NULL;
  assert_int_equal (plan_for (&w, "filesystem: {hide_home: no}\n", &plan, &err), 0);
  assert_true (oci_strv_contains (&plan.pins, "/w/.git"));
  assert_true (oci_strv_contains (&plan.pins_ro, "/w/.git/hooks"));
  for (size_t i = 0; i < plan.pins.n; i++)
    if (strncmp (plan.pins.v[i], "/w/node_modules", 15) == 0)
      fail_msg ("%s is pinned: it is the tmpfs's", plan.pins.v[i]);
  for (size_t i = 0; i < plan.pins_ro.n; i++)
    if (strncmp (plan.pins_ro.v[i], "/w/node_modules", 15) == 0)
      fail_msg ("%s is bound read-only: it is the tmpfs's", plan.pins_ro.v[i]);
  hv_container_plan_clear (&plan);
  world_remove (&w);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_every_persons_home), cmocka_unit_test (test_process_home_first),
    cmocka_unit_test (test_unmapped_owner),     cmocka_unit_test (test_too_many_homes),
    cmocka_unit_test (test_homes_not_hidden),   cmocka_unit_test (test_pins_of_hidden_project_files),
    cmocka_unit_test (test_git_pinned_and_protected),
    cmocka_unit_test (test_git_link_refused),   cmocka_unit_test (test_git_nested_link_noted),
    cmocka_unit_test (test_git_under_engine_mount_not_pinned),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
