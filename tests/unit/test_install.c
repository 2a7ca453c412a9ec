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

#include "engine_api_key.h"
#include "engine_install.h"
#include "install_cmd.h"
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


/* --api-key PROVIDER=FILE as haven-runc and `haven install` read it:
 * strict, each part's error said. */
static void
expect_api_key_error (const char *arg, const char *message)
{
  const char *files[HV_GW_N_PROVIDERS] = { NULL };
  hv_error *err = NULL;
  if (hv_api_key_arg ("--api-key", arg, files, &err) == 0)
    fail_msg ("accepted: %s", arg);
  if (strstr (err->msg, message) == NULL)
    fail_msg ("expected \"%s\"\n     in \"%s\"", message, err->msg);
  hv_error_free (&err);
}

static void
test_api_key_arg (void **state)
{
  (void) state;
  const char *files[HV_GW_N_PROVIDERS] = { NULL };
  hv_error *err = NULL;
  assert_int_equal (hv_api_key_arg ("--api-key", "anthropic=/etc/haven/a.key", files, &err), 0);
  assert_int_equal (hv_api_key_arg ("--api-key", "gemini=/k", files, &err), 0);
  assert_string_equal (files[HV_GW_ANTHROPIC], "/etc/haven/a.key");
  assert_string_equal (files[HV_GW_GEMINI], "/k");
  assert_null (files[HV_GW_OPENAI]);
  assert_int_equal (hv_api_key_arg ("--api-key", "anthropic=/other", files, &err), -1);
  assert_string_equal (err->msg, "--api-key anthropic given twice (/etc/haven/a.key and /other)");
  hv_error_free (&err);
  expect_api_key_error ("anthropic", "expected PROVIDER=FILE");
  expect_api_key_error ("claude=/k", "unknown provider \"claude\"");
  expect_api_key_error ("=/k", "unknown provider \"\"");
  expect_api_key_error ("openai=k", "must be an absolute path");
  expect_api_key_error ("openai=", "must be an absolute path");
  expect_api_key_error ("openai=/etc/../k", "must be an absolute path");
  expect_api_key_error ("openai=/etc/./k", "must be an absolute path");
  expect_api_key_error ("openai=/etc//k", "must be an absolute path");
  expect_api_key_error ("openai=/etc/", "must be an absolute path");
}

static void
expect_file_error (const char *path, uid_t uid, const char *message)
{
  hv_error *err = NULL;
  if (hv_api_key_file_check (path, uid, &err) == 0)
    fail_msg ("accepted: %s", path);
  if (strstr (err->msg, message) == NULL)
    fail_msg ("expected \"%s\"\n     in \"%s\"", message, err->msg);
  hv_error_free (&err);
}

/* The registration's check of the key file: only a file no one else can
 * read or swap passes. */
static void
test_api_key_file_check (void **state)
{
  (void) state;
  char dir[] = "/tmp/hv-apikey-XXXXXX";
  assert_non_null (mkdtemp (dir));
  cleanup_free char *real_dir = realpath (dir, NULL);
  cleanup_free char *key = xasprintf ("%s/key", real_dir);
  cleanup_free char *link = xasprintf ("%s/link", real_dir);
  cleanup_free char *sub = xasprintf ("%s/sub", real_dir);
  cleanup_free char *via = xasprintf ("%s/sub/key", real_dir);
  cleanup_free char *empty = xasprintf ("%s/empty", real_dir);
  int fd = open (key, O_WRONLY | O_CREAT | O_EXCL, 0600);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, "sk-test\n", 8), 8);
  close (fd);
  hv_error *err = NULL;
  if (hv_api_key_file_check (key, getuid (), &err) < 0)
    fail_msg ("%s", err->msg);
  /* Owned by someone who is neither root nor the caller. */
  if (getuid () != 0)
    expect_file_error (key, getuid () + 1, "not by root or you");
  else
    {
      assert_int_equal (chown (key, 12345, 12345), 0);
      expect_file_error (key, 0, "owned by uid 12345, not by root or you (uid 0)");
      assert_int_equal (chown (key, 0, 0), 0);
    }
  assert_int_equal (chmod (key, 0640), 0);
  expect_file_error (key, getuid (), "mode 0640 lets its group or others at it");
  assert_int_equal (chmod (key, 0602), 0);
  expect_file_error (key, getuid (), "mode 0602");
  assert_int_equal (chmod (key, 0400), 0);
  assert_int_equal (hv_api_key_file_check (key, getuid (), &err), 0);
  assert_int_equal (symlink (key, link), 0);
  expect_file_error (link, getuid (), "reached through a symbolic link");
  assert_int_equal (symlink (real_dir, sub), 0);
  expect_file_error (via, getuid (), "reached through a symbolic link");
  expect_file_error (real_dir, getuid (), "not a regular file");
  fd = open (empty, O_WRONLY | O_CREAT | O_EXCL, 0600);
  assert_true (fd >= 0);
  close (fd);
  expect_file_error (empty, getuid (), "empty");
  /* What create would refuse: a key no header can carry, a file larger
   * than create reads. */
  fd = open (empty, O_WRONLY | O_TRUNC);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, "sk two words\n", 13), 13);
  close (fd);
  expect_file_error (empty, getuid (), "a character a header cannot carry");
  cleanup_free char *big = xmalloc0 (9000);
  memset (big, 'k', 8999);
  fd = open (empty, O_WRONLY | O_TRUNC);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, big, 8999), 8999);
  close (fd);
  expect_file_error (empty, getuid (), "larger than 8192 bytes");
  cleanup_free char *missing = xasprintf ("%s/missing", real_dir);
  expect_file_error (missing, getuid (), "no such file or directory");
  cleanup_free char *rm = xasprintf ("rm -rf %s", real_dir);
  assert_int_equal (system (rm), 0);
}

/* `haven install docker --api-key`: the file is checked, and the
 * registration passes it to haven-runc as a runtime argument (never the
 * key); Podman, which passes none, refuses it. */
static void
test_install_api_key (void **state)
{
  (void) state;
  char dir[] = "/tmp/hv-apikey-XXXXXX";
  assert_non_null (mkdtemp (dir));
  cleanup_free char *real_dir = realpath (dir, NULL);
  cleanup_free char *key = xasprintf ("%s/key", real_dir);
  cleanup_free char *json = xasprintf ("%s/daemon.json", real_dir);
  cleanup_free char *conf = xasprintf ("%s/haven.conf", real_dir);
  cleanup_free char *arg = xasprintf ("anthropic=%s", key);
  int fd = open (key, O_WRONLY | O_CREAT | O_EXCL, 0644);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, "sk-secret-value\n", 16), 16);
  close (fd);
  hv_error *err = NULL;
  char *docker[] = { "install", "docker", "--daemon-json", json, "--api-key", arg, NULL };
  assert_int_equal (hv_cmd_install (6, docker, false, &err), -1);
  assert_non_null (strstr (err->msg, "install docker: --api-key anthropic: key file"));
  assert_non_null (strstr (err->msg, "mode 0644"));
  hv_error_free (&err);
  assert_int_equal (access (json, F_OK), -1);
  assert_int_equal (chmod (key, 0600), 0);
  if (hv_cmd_install (6, docker, false, &err) < 0)
    fail_msg ("%s", err->msg);
  cleanup_free char *text = NULL;
  assert_int_equal (read_file_at (AT_FDCWD, json, &text, &err), 0);
  cleanup_free char *want = xasprintf ("\"runtimeArgs\": [\n        \"--api-key\",\n        \"anthropic=%s\"\n      ]",
                                       key);
  if (strstr (text, want) == NULL)
    fail_msg ("no %s in %s", want, text);
  assert_null (strstr (text, "sk-secret"));
  char *podman[] = { "install", "podman", "--conf", conf, "--api-key", arg, NULL };
  assert_int_equal (hv_cmd_install (6, podman, false, &err), -1);
  assert_non_null (strstr (err->msg, "--api-key is for Docker only"));
  hv_error_free (&err);
  assert_int_equal (access (conf, F_OK), -1);
  char *uninstall[] = { "uninstall", "docker", "--daemon-json", json, "--api-key", arg, NULL };
  assert_int_equal (hv_cmd_install (6, uninstall, true, &err), -1);
  assert_non_null (strstr (err->msg, "option --api-key does not apply here"));
  hv_error_free (&err);
  cleanup_free char *rm = xasprintf ("rm -rf %s", real_dir);
  assert_int_equal (system (rm), 0);
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
    cmocka_unit_test (test_api_key_arg),
    cmocka_unit_test (test_api_key_file_check),
    cmocka_unit_test (test_install_api_key),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
