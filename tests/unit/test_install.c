/* Unit tests of `haven install`: daemon.json edits (every other key and
 * runtime kept, idempotence, uninstall, malformed files with their
 * messages), the Podman drop-in and the atomic write (on temp files). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine_install.h"
#include "file_read.h"
#include "utils.h"

static const struct hv_install_opts plain = { .name = "haven", .runtime = "/usr/bin/haven-runc" };

static char *
edit_ok (const char *old, const struct hv_install_opts *o, bool remove)
{
  hv_error *err = NULL;
  char *out = NULL;
  if (hv_docker_config_edit (old, "daemon.json", o, remove, &out, &err) < 0)
    fail_msg ("unexpected error: %s", err->msg);
  return out;
}

static void
expect_error (const char *old, const char *message)
{
  hv_error *err = NULL;
  char *out = NULL;
  if (hv_docker_config_edit (old, "daemon.json", &plain, false, &out, &err) == 0)
    fail_msg ("accepted: %s", old);
  if (strcmp (err->msg, message) != 0)
    fail_msg ("expected \"%s\"\n     got \"%s\"", message, err->msg);
  hv_error_free (&err);
}

static void
test_new_file (void **state)
{
  (void) state;
  char *out = edit_ok (NULL, &plain, false);
  assert_string_equal (out, "{\n  \"runtimes\": {\n    \"haven\": {\n      \"path\": \"/usr/bin/haven-runc\"\n    }\n"
                            "  }\n}\n");
  free (out);
  out = edit_ok (" \n", &plain, false);
  assert_non_null (strstr (out, "\"haven\""));
  free (out);
}

static void
test_keeps_everything_else (void **state)
{
  (void) state;
  const char *old = "{\"log-level\": \"warn\", \"mtu\": 1450.50, \"big\": 12345678901234567890,\n"
                    " \"runtimes\": {\"crun\": {\"path\": \"/usr/bin/crun\", \"runtimeArgs\": [\"--debug\"]}},\n"
                    " \"features\": {\"buildkit\": true}, \"none\": null, \"off\": false,\n"
                    " \"labels\": [\"a=\\u00e9\", \"b=\\\"q\\\"\"], \"default-runtime\": \"crun\"}";
  char *out = edit_ok (old, &plain, false);
  /* Order, values and number spellings as they were; ours added last. */
  const char *want = "{\n"
                     "  \"log-level\": \"warn\",\n"
                     "  \"mtu\": 1450.50,\n"
                     "  \"big\": 12345678901234567890,\n"
                     "  \"runtimes\": {\n"
                     "    \"crun\": {\n"
                     "      \"path\": \"/usr/bin/crun\",\n"
                     "      \"runtimeArgs\": [\n"
                     "        \"--debug\"\n"
                     "      ]\n"
                     "    },\n"
                     "    \"haven\": {\n"
                     "      \"path\": \"/usr/bin/haven-runc\"\n"
                     "    }\n"
                     "  },\n"
                     "  \"features\": {\n"
                     "    \"buildkit\": true\n"
                     "  },\n"
                     "  \"none\": null,\n"
                     "  \"off\": false,\n"
                     "  \"labels\": [\n"
                     "    \"a=\xc3\xa9\",\n"
                     "    \"b=\\\"q\\\"\"\n"
                     "  ],\n"
                     "  \"default-runtime\": \"crun\"\n"
                     "}\n";
  assert_string_equal (out, want);
  free (out);
}

static void
test_idempotent_and_replaced_in_place (void **state)
{
  (void) state;
  const char *old = "{\"runtimes\": {\"a\": {\"path\": \"/a\"}, \"haven\": {\"path\": \"/old\"}, \"z\": {\"path\": "
                    "\"/z\"}}}";
  struct hv_install_opts o = plain;
  o.policy = "strict";
  o.policy_lock = true;
  char *once = edit_ok (old, &o, false);
  char *twice = edit_ok (once, &o, false);
  assert_string_equal (once, twice);
  /* Still between a and z, with the new path and arguments. */
  const char *a = strstr (once, "\"a\""), *h = strstr (once, "\"haven\""), *z = strstr (once, "\"z\"");
  assert_true (a && h && z && a < h && h < z);
  assert_null (strstr (once, "/old"));
  assert_non_null (strstr (once, "\"runtimeArgs\": [\n        \"--policy\",\n        \"strict\",\n"
                                  "        \"--policy-lock\"\n      ]"));
  free (once);
  free (twice);
}

static void
test_default_runtime (void **state)
{
  (void) state;
  struct hv_install_opts o = plain;
  o.make_default = true;
  char *out = edit_ok ("{\"default-runtime\": \"runc\", \"debug\": true}", &o, false);
  assert_non_null (strstr (out, "\"default-runtime\": \"haven\",\n  \"debug\": true"));
  free (out);
  out = edit_ok ("{\"debug\": true}", &o, false);
  assert_non_null (strstr (out, "\"default-runtime\": \"haven\"\n}"));
  /* Uninstalling the default runtime gives dockerd its own default back. */
  char *removed = edit_ok (out, &plain, true);
  assert_string_equal (removed, "{\n  \"debug\": true\n}\n");
  free (out);
  free (removed);
  /* Someone else's default stays. */
  removed = edit_ok ("{\"default-runtime\": \"crun\", \"runtimes\": {\"haven\": {\"path\": \"/x\"}}}", &plain, true);
  assert_non_null (strstr (removed, "\"default-runtime\": \"crun\""));
  assert_null (strstr (removed, "haven"));
  free (removed);
}

static void
test_uninstall_not_registered_is_unchanged (void **state)
{
  (void) state;
  const char *old = "{\"runtimes\":{\"crun\":{\"path\":\"/usr/bin/crun\"}},   \"debug\":true}";
  char *out = edit_ok (old, &plain, true);
  assert_string_equal (out, old);
  free (out);
}

static void
test_duplicate_keys (void **state)
{
  (void) state;
  /* dockerd (Go's encoding/json) reads the last of duplicate keys. */
  char *out = edit_ok ("{\"runtimes\": {\"dead\": {\"path\": \"/d\"}}, \"runtimes\": {\"live\": {\"path\": \"/l\"}}}",
                       &plain, false);
  assert_null (strstr (out, "dead"));
  assert_non_null (strstr (out, "\"live\""));
  assert_non_null (strstr (out, "\"haven\""));
  free (out);
  out = edit_ok ("{\"runtimes\": null}", &plain, false);
  assert_non_null (strstr (out, "\"haven\""));
  free (out);
}

static void
test_malformed (void **state)
{
  (void) state;
  expect_error ("{\"a\": 1,}", "daemon.json:1:9: invalid JSON: parse error: invalid object key (must be a string)");
  expect_error ("{\n  \"a\": 1\n  /* comment */\n}",
                "daemon.json:3:3: invalid JSON: lexical error: probable comment found in input text, comments are "
                "not enabled.");
  expect_error ("{\"a\": ", "daemon.json:1:7: invalid JSON: parse error: premature EOF");
  expect_error ("[1]", "daemon.json: expected a JSON object at the top level");
  expect_error ("{\"runtimes\": [\"haven\"]}", "daemon.json: .runtimes: expected an object");
}

static void
test_podman_conf (void **state)
{
  (void) state;
  char *text = hv_podman_conf_text (&plain);
  assert_non_null (strstr (text, "\n[engine]\n"));
  assert_non_null (
      strstr (text, "\nruntime_supports_json = [\"crun\", \"runc\", \"kata\", \"runsc\", \"krun\", \"haven\", \"haven-runc\"]\n"));
  assert_non_null (strstr (text, "\n[engine.runtimes]\n\"haven\" = [\"/usr/bin/haven-runc\"]\n"));
  assert_null (strstr (text, "\nruntime = "));
  free (text);
  struct hv_install_opts o = { .name = "hv", .runtime = "/opt/we\"ird\\/haven-runc", .make_default = true };
  text = hv_podman_conf_text (&o);
  assert_non_null (strstr (text, "\nruntime = \"hv\"\n"));
  assert_non_null (strstr (text, "\"hv\" = [\"/opt/we\\\"ird\\\\/haven-runc\"]\n"));
  free (text);
}

static int
count_entries (const char *dir)
{
  DIR *d = opendir (dir);
  int n = 0;
  struct dirent *de;
  while (d && (de = readdir (d)))
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      n++;
  if (d)
    closedir (d);
  return n;
}

static void
test_atomic_write (void **state)
{
  (void) state;
  char tmpl[] = "/tmp/hv-install-XXXXXX";
  char *dir = mkdtemp (tmpl);
  assert_non_null (dir);
  hv_error *err = NULL;
  char *path = xasprintf ("%s/etc/docker/daemon.json", dir);
  /* Missing directories are made; a new file is 0644. */
  assert_int_equal (hv_install_write (path, "{}\n", &err), 1);
  struct stat st;
  assert_int_equal (stat (path, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0644);
  /* Same text: not rewritten (same inode). */
  ino_t ino = st.st_ino;
  assert_int_equal (hv_install_write (path, "{}\n", &err), 0);
  assert_int_equal (stat (path, &st), 0);
  assert_int_equal (st.st_ino, ino);
  /* An existing file's mode is kept; no temporary file is left. */
  assert_int_equal (chmod (path, 0600), 0);
  assert_int_equal (hv_install_write (path, "{\"a\": 1}\n", &err), 1);
  assert_int_equal (stat (path, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0600);
  char *etc = xasprintf ("%s/etc/docker", dir);
  assert_int_equal (count_entries (etc), 1);
  /* A symlinked config keeps its link; the target gets the text. */
  char *link = xasprintf ("%s/link.json", dir);
  assert_int_equal (symlink (path, link), 0);
  assert_int_equal (hv_install_write (link, "{\"b\": 2}\n", &err), 1);
  struct stat lst;
  assert_int_equal (lstat (link, &lst), 0);
  assert_true (S_ISLNK (lst.st_mode));
  char *text = NULL;
  assert_int_equal (read_file_at (AT_FDCWD, path, &text, &err), 0);
  assert_string_equal (text, "{\"b\": 2}\n");
  free (text);
  /* A directory in the way is an error with the path. */
  assert_int_equal (hv_install_write (etc, "x", &err), -1);
  assert_non_null (strstr (err->msg, "is not a regular file"));
  hv_error_free (&err);
  unlink (link);
  unlink (path);
  rmdir (etc);
  char *etc_root = xasprintf ("%s/etc", dir);
  rmdir (etc_root);
  rmdir (dir);
  free (etc_root);
  free (link);
  free (etc);
  free (path);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_new_file),
    cmocka_unit_test (test_keeps_everything_else),
    cmocka_unit_test (test_idempotent_and_replaced_in_place),
    cmocka_unit_test (test_default_runtime),
    cmocka_unit_test (test_uninstall_not_registered_is_unchanged),
    cmocka_unit_test (test_duplicate_keys),
    cmocka_unit_test (test_malformed),
    cmocka_unit_test (test_podman_conf),
    cmocka_unit_test (test_atomic_write),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
