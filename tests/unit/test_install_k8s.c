/* Unit tests of `haven install containerd|crio`: the handler's block in
 * containerd's config.toml (added, idempotent, other handlers and every
 * other byte kept, taken out again), the files it refuses (FILE:LINE),
 * the CRI-O drop-in, and the policy bound to a handler by its wrapper
 * script.  What is written is also read back by Python's TOML parser
 * (tomllib), the way an engine would read it; without one those checks
 * are skipped, saying so.  Everything on temporary files. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include <cmocka.h>

#include "unit_skip.h"
#include "tmp_tree.h"

#include "config_policy.h"
#include "cri_install.h"
#include "engine_install.h"
#include "install_cmd.h"
#include "haven_annotations.h"
#include "json_walk.h"
#include "oci_spec.h"
#include "file_read.h"
#include "toml_scan.h"
#include "utils.h"

static const struct hv_cri_opts plain = { .name = "haven", .binary = "/usr/local/bin/haven-runc", .annotations = true };

#define CRI "plugins.\"io.containerd.grpc.v1.cri\""

/* A configuration as kubeadm guides and distributions write them, with
 * the constructs a line editor could trip on. */
static const char *const node_config
    = "# node config\n"
      "version = 2\n"
      "root = \"/var/lib/containerd\"\n"
      "disabled_plugins = [\n"
      "  # none\n"
      "]\n"
      "\n"
      "[grpc]\n"
      "  address = '/run/containerd/containerd.sock'\n"
      "\n"
      "[plugins]\n"
      "  [" CRI "]\n"
      "    sandbox_image = \"registry.k8s.io/pause:3.9\"\n"
      "    motd = \"\"\"\n"
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.haven]\n"
      "\"\"\"\n"
      "    [" CRI ".containerd]\n"
      "      default_runtime_name = \"runc\"\n"
      "      [" CRI ".containerd.runtimes.runc]\n"
      "        runtime_type = \"io.containerd.runc.v2\"\n"
      "        [" CRI ".containerd.runtimes.runc.options]\n"
      "          SystemdCgroup = true   # the kubelet's driver\n"
      "    [" CRI ".registry.mirrors.\"docker.io\"]\n"
      "      endpoint = [\"https://mirror.example\", # first\n"
      "                  \"https://registry-1.docker.io\"]\n"
      "      auth = { username = \"u\", password = \"p}]\" }\n";

static char *
edit_ok (const char *old, const struct hv_cri_opts *o, bool remove)
{
  hv_error *err = NULL;
  char *out = NULL, *note = NULL;
  if (hv_containerd_config_edit (old, "config.toml", o, remove, &out, &note, &err) < 0)
    fail_msg ("unexpected error: %s", err->msg);
  free (note);
  return out;
}

static void
expect_error (const char *old, const struct hv_cri_opts *o, bool remove, const char *message)
{
  hv_error *err = NULL;
  char *out = NULL, *note = NULL;
  if (hv_containerd_config_edit (old, "config.toml", o, remove, &out, &note, &err) == 0)
    fail_msg ("accepted:\n%s\n---\n%s", old, out);
  if (strstr (err->msg, message) == NULL)
    fail_msg ("expected \"%s\"\n     got \"%s\"", message, err->msg);
  hv_error_free (&err);
}

/* Python's TOML parser on text: the JSON of the value at path (dotted,
 * '|' between keys), or NULL when the text is not valid TOML.  *skip:
 * no python3 with tomllib here. */
static char *
toml_get (const char *text, const char *path, bool *skip)
{
  *skip = system ("python3 -c 'import tomllib' >/dev/null 2>&1") != 0;
  if (*skip)
    return NULL;
  char file[] = "/tmp/hv-toml-XXXXXX";
  int fd = mkstemp (file);
  assert_true (fd >= 0);
  assert_int_equal (write_all (fd, text, strlen (text)), 0);
  close (fd);
  cleanup_free char *cmd = xasprintf ("python3 -c 'import sys, tomllib, json\n"
                                      "d = tomllib.load(open(sys.argv[1], \"rb\"))\n"
                                      "for k in sys.argv[2].split(\"|\") if sys.argv[2] else []:\n"
                                      "    d = d[k]\n"
                                      "print(json.dumps(d, sort_keys=True))' %s '%s' 2>/dev/null",
                                      file, path);
  FILE *p = popen (cmd, "r");
  assert_non_null (p);
  char buf[8192] = "";
  size_t n = fread (buf, 1, sizeof (buf) - 1, p);
  buf[n] = '\0';
  int status = pclose (p);
  unlink (file);
  if (status != 0)
    return NULL;
  if (n && buf[n - 1] == '\n')
    buf[n - 1] = '\0';
  return xstrdup (buf);
}

static void
expect_toml (const char *text, const char *path, const char *json)
{
  bool skip;
  cleanup_free char *got = toml_get (text, path, &skip);
  if (skip)
    SKIP_BECAUSE ("no python3 with tomllib to read the TOML written");
  if (got == NULL)
    fail_msg ("not valid TOML, or no %s:\n%s", path, text);
  if (strcmp (got, json) != 0)
    fail_msg ("%s: expected %s, got %s", path, json, got);
}

#define HANDLER "plugins|io.containerd.grpc.v1.cri|containerd|runtimes|"

static void
test_new_file (void **state)
{
  (void) state;
  cleanup_free char *out = edit_ok (NULL, &plain, false);
  assert_true (str_has_prefix (out, "# Written by `haven install containerd` (there was no configuration)"));
  assert_non_null (strstr (out, "\nversion = 2\n"));
  assert_non_null (strstr (out, "[" CRI ".containerd.runtimes.haven]\n  runtime_type = \"io.containerd.runc.v2\"\n"));
  expect_toml (out, "version", "2");
  expect_toml (out, HANDLER "haven",
               "{\"options\": {\"BinaryName\": \"/usr/local/bin/haven-runc\"}, \"pod_annotations\": "
               "[\"run.haven.policy\"], \"runtime_type\": \"io.containerd.runc.v2\"}");
  /* A blank file is a missing one. */
  cleanup_free char *blank = edit_ok (" \n\n", &plain, false);
  assert_string_equal (blank, out);
  /* Taking it out leaves a valid, empty version 2 configuration. */
  cleanup_free char *removed = edit_ok (out, &plain, true);
  assert_null (strstr (removed, "haven runtime handler"));
  expect_toml (removed, "", "{\"version\": 2}");
}

static void
test_keeps_everything_else (void **state)
{
  (void) state;
  cleanup_free char *out = edit_ok (node_config, &plain, false);
  /* Every byte of the file, then a blank line and the block. */
  assert_true (str_has_prefix (out, node_config));
  const char *block = out + strlen (node_config);
  assert_true (str_has_prefix (block, "\n# >>> haven runtime handler \"haven\": "));
  /* The default handler runs under the systemd cgroup driver: so must we. */
  assert_non_null (strstr (block, "  SystemdCgroup = true\n"));
  expect_toml (out, HANDLER "haven|options",
               "{\"BinaryName\": \"/usr/local/bin/haven-runc\", \"SystemdCgroup\": true}");
  expect_toml (out, HANDLER "runc|options", "{\"SystemdCgroup\": true}");
  expect_toml (out, "plugins|io.containerd.grpc.v1.cri|registry|mirrors|docker.io|auth|password", "\"p}]\"");
  cleanup_free char *back = edit_ok (out, &plain, true);
  assert_string_equal (back, node_config);
}

static void
test_idempotent (void **state)
{
  (void) state;
  cleanup_free char *once = edit_ok (node_config, &plain, false);
  cleanup_free char *twice = edit_ok (once, &plain, false);
  assert_string_equal (once, twice);
  /* A new binary replaces the block where it is, and what someone put
   * after it stays. */
  const char *after = "[debug]\n  level = \"info\"\n";
  cleanup_free char *more = xasprintf ("%s%s", once, after);
  struct hv_cri_opts o = plain;
  o.binary = "/usr/local/lib/haven/handlers/containerd-haven";
  o.annotations = false;
  cleanup_free char *moved = edit_ok (more, &o, false);
  assert_true (str_has_prefix (moved, node_config));
  assert_non_null (strstr (moved, "BinaryName = \"/usr/local/lib/haven/handlers/containerd-haven\"\n"));
  assert_null (strstr (moved, "/usr/local/bin/haven-runc"));
  assert_null (strstr (moved, "pod_annotations"));
  assert_true (strlen (moved) > strlen (after) && strcmp (moved + strlen (moved) - strlen (after), after) == 0);
  expect_toml (moved, "debug|level", "\"info\"");
  cleanup_free char *back = edit_ok (moved, &o, true);
  cleanup_free char *want = xasprintf ("%s%s", node_config, after);
  assert_string_equal (back, want);
}

static void
test_other_handlers_kept (void **state)
{
  (void) state;
  struct hv_cri_opts a = plain, b = plain;
  a.name = "haven-strict";
  b.name = "haven.ci";
  b.binary = "/opt/haven/bin/haven-runc";
  cleanup_free char *one = edit_ok (node_config, &a, false);
  cleanup_free char *two = edit_ok (one, &b, false);
  /* A name that is no bare key is quoted. */
  assert_non_null (strstr (two, "[" CRI ".containerd.runtimes.\"haven.ci\"]\n"));
  expect_toml (two, HANDLER "haven.ci|options|BinaryName", "\"/opt/haven/bin/haven-runc\"");
  expect_toml (two, HANDLER "haven-strict|options|BinaryName", "\"/usr/local/bin/haven-runc\"");
  /* Taking out the first leaves the second as if it had been alone. */
  cleanup_free char *only_b = edit_ok (two, &a, true);
  cleanup_free char *b_alone = edit_ok (node_config, &b, false);
  assert_string_equal (only_b, b_alone);
  cleanup_free char *none = edit_ok (only_b, &b, true);
  assert_string_equal (none, node_config);
  /* Removing a handler that is not there changes nothing. */
  cleanup_free char *same = edit_ok (node_config, &a, true);
  assert_string_equal (same, node_config);
}

static void
test_uninstall_byte_for_byte (void **state)
{
  (void) state;
  /* No newline at the end, CRLF lines, trailing blank lines: kept. */
  const char *const files[] = {
    "version = 2\n",
    "version = 2\n\n\n",
    "version = 2\r\n[grpc]\r\n  address = \"/x\"\r\n",
    "# only a comment\n",
    "version = 2\n[" CRI ".containerd.runtimes.runc]\n  runtime_type = \"io.containerd.runc.v2\"\n",
  };
  for (size_t i = 0; i < N_ELEMENTS (files); i++)
    {
      cleanup_free char *in = edit_ok (files[i], &plain, false);
      cleanup_free char *out = edit_ok (in, &plain, true);
      /* A file without statements got version = 2, which stays. */
      if (i == 3)
        assert_true (str_has_prefix (out, files[i]) && strstr (out, "version = 2\n"));
      else
        assert_string_equal (out, files[i]);
    }
}

static void
test_refused (void **state)
{
  (void) state;
  expect_error ("version = 2\n[grpc\n", &plain, false, "config.toml:2: expected ']' after a table name");
  expect_error ("version = 2\nx = \"open\n", &plain, false, "config.toml:2: unterminated string");
  expect_error ("version = 2\n\nx = '''\nmany\n", &plain, false, "config.toml:3: unterminated multi-line string");
  expect_error ("version = 2\nx = [1,\n 2\n", &plain, false, "config.toml:");
  expect_error ("version = 2\nx = 1 y = 2\n", &plain, false, "config.toml:2: expected the end of the line");
  expect_error ("version = 1\n", &plain, false, "config.toml:1: version = 1: haven install containerd edits version 2");
  expect_error ("[plugins.cri.containerd]\n", &plain, false, "config.toml: no \"version = 2\" line");
  expect_error ("version = 2\n\n[" CRI ".containerd.runtimes.haven]\n  runtime_type = \"x\"\n", &plain, false,
                "config.toml:3: runtime handler \"haven\" is already configured here, not by haven install");
  expect_error ("version = 2\n[" CRI ".containerd]\nruntimes = { runc = { runtime_type = \"x\" } }\n", &plain, false,
                "config.toml:3: plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes is set as a value");
  expect_error ("version = 2\n[" CRI "]\ncontainerd.runtimes.haven.runtime_type = \"x\"\n", &plain, false,
                "config.toml:3: runtime handler \"haven\" is already configured here");
  expect_error ("version = 2\n[plugins]\n\"io.containerd.grpc.v1.cri\".containerd = {}\n", &plain, false,
                "config.toml:3: plugins.\"io.containerd.grpc.v1.cri\".containerd is set as a value");
  expect_error ("version = 2\n[[plugins]]\n", &plain, false, "config.toml:2: [[plugins]] is an array of tables");
  cleanup_free char *ours = edit_ok ("version = 2\n", &plain, false);
  /* A marker without its end, and a key that would fall into our block. */
  cleanup_free char *cut = xstrdup (ours);
  *strstr (cut, "# <<<") = '\0';
  expect_error (cut, &plain, false, "config.toml:3: the block of runtime handler \"haven\" has no end line");
  expect_error (cut, &plain, true, "has no end line");
  cleanup_free char *tail = xasprintf ("%sstray = 1\n", ours);
  unsigned line = 1;
  for (const char *p = ours; *p; p++)
    line += *p == '\n';
  cleanup_free char *msg = xasprintf ("config.toml:%u: this key follows the block", line);
  expect_error (tail, &plain, false, msg);
  cleanup_free char *tail2 = xasprintf ("%s# a comment between\n\nstray = 1\n", ours);
  cleanup_free char *msg2 = xasprintf ("config.toml:%u: this key follows the block", line + 2);
  expect_error (tail2, &plain, false, msg2);
  cleanup_free char *two = xasprintf ("%s%s", ours, strstr (ours, "# >>>"));
  expect_error (two, &plain, false, "a second block of runtime handler \"haven\"");
}

/* Tables defined by dotted keys take sub-tables from [table] lines. */
static void
test_dotted_keys (void **state)
{
  (void) state;
  const char *old = "version = 2\n[" CRI "]\ncontainerd.runtimes.runc.runtime_type = \"io.containerd.runc.v2\"\n";
  cleanup_free char *out = edit_ok (old, &plain, false);
  expect_toml (out, HANDLER "runc|runtime_type", "\"io.containerd.runc.v2\"");
  expect_toml (out, HANDLER "haven|options|BinaryName", "\"/usr/local/bin/haven-runc\"");
  cleanup_free char *back = edit_ok (out, &plain, true);
  assert_string_equal (back, old);
}

static void
test_cri_disabled_note (void **state)
{
  (void) state;
  hv_error *err = NULL;
  char *out = NULL, *note = NULL;
  assert_int_equal (hv_containerd_config_edit ("version = 2\ndisabled_plugins = [\"cri\"]\n", "c.toml", &plain,
                                               false, &out, &note, &err),
                    0);
  assert_non_null (note);
  assert_non_null (strstr (note, "c.toml:2: disabled_plugins turns containerd's CRI plugin off"));
  free (out);
  free (note);
  assert_int_equal (hv_containerd_config_edit ("version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n", "c.toml",
                                               &plain, false, &out, &note, &err),
                    0);
  assert_non_null (note);
  assert_non_null (strstr (note, "c.toml:2: the files in imports are not looked at"));
  free (out);
  free (note);
  /* Nothing to say about a plain file. */
  assert_int_equal (hv_containerd_config_edit (node_config, "c.toml", &plain, false, &out, &note, &err), 0);
  assert_null (note);
  free (out);
}

static void
test_crio_conf (void **state)
{
  (void) state;
  cleanup_free char *text = hv_crio_conf_text (&plain);
  assert_true (str_has_prefix (text, "# Written by `haven install crio`"));
  expect_toml (text, "crio|runtime|runtimes|haven",
               "{\"allowed_annotations\": [\"run.haven.policy\"], \"monitor_cgroup\": \"pod\", \"monitor_env\": "
               "[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"], \"runtime_path\": "
               "\"/usr/local/bin/haven-runc\", \"runtime_root\": \"/run/haven\", \"runtime_type\": \"oci\"}");
  struct hv_cri_opts locked = plain;
  locked.name = "haven.locked";
  locked.annotations = false;
  cleanup_free char *l = hv_crio_conf_text (&locked);
  assert_null (strstr (l, "allowed_annotations"));
  expect_toml (l, "crio|runtime|runtimes|haven.locked|runtime_type", "\"oci\"");
}

/* The wrapper, run by sh as the shim would, runs the runtime with the
 * policy before every argument the engine gives. */
static void
test_wrapper_binds_policy (void **state)
{
  (void) state;
  char *dir = tree_make ("wrap");
  /* A runtime at a path with a quote and a space in it, that prints its
   * arguments. */
  tree_mkdir (dir, "it's here");
  tree_put (dir, "it's here/rt", "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done\n");
  cleanup_free char *rt = xasprintf ("%s/it's here/rt", dir);
  assert_int_equal (chmod (rt, 0755), 0);
  cleanup_free char *text = hv_cri_wrapper_text ("containerd", "haven", rt, "/etc/haven/o'dd policy.yaml", true);
  assert_true (str_has_prefix (text, "#!/bin/sh\n# Written by `haven install containerd`"));
  tree_put (dir, "w", text);
  cleanup_free char *cmd = xasprintf ("sh '%s/w' --root /run/containerd/runc/k8s.io create --bundle 'b c' id",
                                      dir);
  FILE *p = popen (cmd, "r");
  char buf[1024] = "";
  size_t n = fread (buf, 1, sizeof (buf) - 1, p);
  buf[n] = '\0';
  assert_int_equal (pclose (p), 0);
  assert_string_equal (buf, "[--policy][/etc/haven/o'dd policy.yaml][--policy-lock][--root]"
                            "[/run/containerd/runc/k8s.io][create][--bundle][b c][id]");
  tree_remove (dir);
}

static int
install (char **argv, bool uninstall)
{
  int argc = 0;
  while (argv[argc])
    argc++;
  hv_error *err = NULL;
  int r = hv_cmd_install (argc, argv, uninstall, &err);
  if (r < 0)
    {
      print_message ("haven %s: %s\n", argv[0], err->msg);
      hv_error_free (&err);
    }
  return r;
}

/* The whole command: wrapper and configuration written, re-run
 * unchanged, locked, taken out. */
static void
test_command_containerd (void **state)
{
  (void) state;
  setenv ("HAVEN_POLICY_PATH", HAVEN_SRCDIR "/policies", 1);
  char *dir = tree_make ("k8s");
  tree_put (dir, "config.toml", node_config);
  tree_put (dir, "haven-runc", "#!/bin/sh\nexit 0\n");
  cleanup_free char *rt = xasprintf ("%s/haven-runc", dir);
  cleanup_free char *config = xasprintf ("%s/config.toml", dir);
  cleanup_free char *handlers = xasprintf ("%s/handlers", dir);
  cleanup_free char *wrapper = xasprintf ("%s/handlers/containerd-agents", dir);
  assert_int_equal (chmod (rt, 0755), 0);
  char *add[] = { "install", "containerd", "--config", config, "--name", "agents", "--runtime", rt,
                  "--policy", "strict", "--handler-dir", handlers, NULL };
  assert_int_equal (install (add, false), 0);
  cleanup_free char *text = tree_read (dir, "config.toml");
  assert_true (str_has_prefix (text, node_config));
  cleanup_free char *want = xasprintf ("BinaryName = \"%s\"\n", wrapper);
  assert_non_null (strstr (text, want));
  assert_non_null (strstr (text, "pod_annotations = [\"run.haven.policy\"]"));
  struct stat st;
  assert_int_equal (stat (wrapper, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0755);
  cleanup_free char *w = tree_read (dir, "handlers/containerd-agents");
  cleanup_free char *exec = xasprintf ("exec '%s' --policy 'strict' \"$@\"\n", rt);
  assert_non_null (strstr (w, exec));
  /* Again: nothing changes. */
  assert_int_equal (install (add, false), 0);
  cleanup_free char *again = tree_read (dir, "config.toml");
  assert_string_equal (again, text);
  /* A wrapper others could write is made anew. */
  assert_int_equal (chmod (wrapper, 0777), 0);
  assert_int_equal (install (add, false), 0);
  assert_int_equal (stat (wrapper, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0755);
  /* Locked: the wrapper says so, and pods' annotations stay out. */
  char *lock[] = { "install", "containerd", "--config", config, "--name", "agents", "--runtime", rt,
                   "--policy", "strict", "--policy-lock", "--handler-dir", handlers, NULL };
  assert_int_equal (install (lock, false), 0);
  cleanup_free char *locked = tree_read (dir, "config.toml");
  assert_null (strstr (locked, "pod_annotations"));
  cleanup_free char *wl = tree_read (dir, "handlers/containerd-agents");
  assert_non_null (strstr (wl, "--policy 'strict' --policy-lock \"$@\""));
  /* A misspelt policy fails before anything is written. */
  char *bad[] = { "install", "containerd", "--config", config, "--name", "other", "--runtime", rt,
                  "--policy", "no-such-policy", "--handler-dir", handlers, NULL };
  assert_int_equal (install (bad, false), -1);
  assert_false (tree_exists (dir, "handlers/containerd-other"));
  /* No policy: haven-runc itself, and the old wrapper goes. */
  char *nopolicy[] = { "install", "containerd", "--config", config, "--name", "agents", "--runtime", rt,
                       "--handler-dir", handlers, NULL };
  assert_int_equal (install (nopolicy, false), 0);
  assert_false (tree_exists (dir, "handlers/containerd-agents"));
  cleanup_free char *direct = tree_read (dir, "config.toml");
  cleanup_free char *want_rt = xasprintf ("BinaryName = \"%s\"\n", rt);
  assert_non_null (strstr (direct, want_rt));
  assert_int_equal (install (add, false), 0);
  char *rm[] = { "uninstall", "containerd", "--config", config, "--name", "agents", "--handler-dir", handlers, NULL };
  assert_int_equal (install (rm, true), 0);
  cleanup_free char *back = tree_read (dir, "config.toml");
  assert_string_equal (back, node_config);
  assert_false (tree_exists (dir, "handlers/containerd-agents"));
  /* Someone else's file at the wrapper's name is neither replaced nor
   * removed. */
  tree_put (dir, "handlers/containerd-agents", "#!/bin/sh\nexec runc \"$@\"\n");
  assert_int_equal (install (add, false), -1);
  assert_int_equal (install (rm, true), -1);
  cleanup_free char *theirs = tree_read (dir, "handlers/containerd-agents");
  assert_string_equal (theirs, "#!/bin/sh\nexec runc \"$@\"\n");
  /* A handler directory others can write is refused. */
  cleanup_free char *open_dir = xasprintf ("%s/open", dir);
  assert_int_equal (mkdir (open_dir, 0777), 0);
  assert_int_equal (chmod (open_dir, 0777), 0);
  char *open[] = { "install", "containerd", "--config", config, "--name", "x", "--runtime", rt,
                   "--policy", "strict", "--handler-dir", open_dir, NULL };
  assert_int_equal (install (open, false), -1);
  assert_false (tree_exists (dir, "open/containerd-x"));
  /* So is one below a directory others can write (not sticky). */
  cleanup_free char *below = xasprintf ("%s/open/handlers", dir);
  char *under[] = { "install", "containerd", "--config", config, "--name", "x", "--runtime", rt,
                    "--policy", "strict", "--handler-dir", below, NULL };
  assert_int_equal (install (under, false), -1);
  assert_false (tree_exists (dir, "open/handlers/containerd-x"));
  /* A RuntimeClass's handler is a DNS label. */
  char *upper[] = { "install", "containerd", "--config", config, "--name", "Haven_1", "--runtime", rt, NULL };
  assert_int_equal (install (upper, false), -1);
  cleanup_free char *unchanged = tree_read (dir, "config.toml");
  assert_string_equal (unchanged, node_config);
  tree_remove (dir);
}

static void
test_command_crio (void **state)
{
  (void) state;
  setenv ("HAVEN_POLICY_PATH", HAVEN_SRCDIR "/policies", 1);
  char *dir = tree_make ("crio");
  tree_put (dir, "haven-runc", "#!/bin/sh\nexit 0\n");
  cleanup_free char *rt = xasprintf ("%s/haven-runc", dir);
  cleanup_free char *conf = xasprintf ("%s/crio.conf.d/haven.conf", dir);
  cleanup_free char *handlers = xasprintf ("%s/handlers", dir);
  assert_int_equal (chmod (rt, 0755), 0);
  char *add[] = { "install", "crio", "--conf", conf, "--runtime", rt, "--policy", "strict",
                  "--handler-dir", handlers, NULL };
  assert_int_equal (install (add, false), 0);
  cleanup_free char *text = tree_read (dir, "crio.conf.d/haven.conf");
  cleanup_free char *want = xasprintf ("\"%s/handlers/crio-haven\"", dir);
  expect_toml (text, "crio|runtime|runtimes|haven|runtime_path", want);
  assert_true (tree_exists (dir, "handlers/crio-haven"));
  assert_int_equal (install (add, false), 0);
  char *config[] = { "install", "crio", "--config", conf, NULL };
  assert_int_equal (install (config, false), -1);
  char *rm[] = { "uninstall", "crio", "--conf", conf, "--handler-dir", handlers, NULL };
  assert_int_equal (install (rm, true), 0);
  assert_false (tree_exists (dir, "crio.conf.d/haven.conf"));
  assert_false (tree_exists (dir, "handlers/crio-haven"));
  /* Someone else's drop-in stays. */
  tree_put (dir, "crio.conf.d/haven.conf", "[crio.runtime]\n");
  assert_int_equal (install (add, false), -1);
  assert_int_equal (install (rm, true), -1);
  assert_true (tree_exists (dir, "crio.conf.d/haven.conf"));
  tree_remove (dir);
}

/* haven-runc's config filter, as the handler's wrapper runs it (--policy
 * handler_policy, --policy-lock when lock) on a pod's container whose
 * run.haven.policy annotation is pod_policy (NULL: none); the config it
 * gives, or NULL with *err. */
static char *
filter_with (const char *handler_policy, bool lock, const char *pod_policy, const char *cri_annotations,
             hv_error **err)
{
  struct hv_global g = { .policy = handler_policy, .policy_lock = lock };
  cleanup_free char *ann = pod_policy ? xasprintf ("%s\"" HV_POLICY_ANNOTATION "\": \"%s\"", cri_annotations, pod_policy)
                                      : xstrdup (cri_annotations);
  char *text = xasprintf ("{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"/pause\"], \"cwd\": \"/\"}, "
                          "\"root\": {\"path\": \"/\"}, \"linux\": {\"namespaces\": [{\"type\": \"pid\"}, "
                          "{\"type\": \"mount\"}, {\"type\": \"network\"}]}, \"annotations\": {%s}}",
                          ann);
  oci_spec *spec = NULL;
  if (oci_spec_parse (text, strlen (text), "config.json", &spec, err) < 0
      || hv_config_apply_policies (&g, "config.json", &text, &spec, err) < 0)
    {
      oci_spec_free (spec);
      free (text);
      return NULL;
    }
  oci_spec_free (spec);
  return text;
}

static char *
filter (const char *handler_policy, bool lock, const char *pod_policy, hv_error **err)
{
  return filter_with (handler_policy, lock, pod_policy, "", err);
}

/* The annotations containerd's CRI plugin puts on a pod's container and
 * on its sandbox container. */
#define CRI_CONTAINER_ANNOTATIONS                                                                                    \
  "\"io.kubernetes.cri.container-type\": \"container\", \"io.kubernetes.cri.sandbox-id\": \"0123abcd\", "             \
  "\"io.kubernetes.cri.sandbox-name\": \"agent\", \"io.kubernetes.cri.sandbox-namespace\": \"team\", "               \
  "\"io.kubernetes.cri.container-name\": \"box\", "
#define CRI_SANDBOX_ANNOTATIONS                                                                                      \
  "\"io.kubernetes.cri.container-type\": \"sandbox\", \"io.kubernetes.cri.sandbox-id\": \"0123abcd\", "

/* linux.resources.<what>.limit of a config; -1 when absent. */
static long long
limit_of (const char *config, const char *what)
{
  yajl_val root = yajl_tree_parse (config, NULL, 0);
  assert_non_null (root);
  yajl_val v = jw_lookup (jw_lookup (jw_lookup (jw_lookup (root, "linux"), "resources"), what), "limit");
  long long n = v && YAJL_IS_INTEGER (v) ? YAJL_GET_INTEGER (v) : -1;
  yajl_tree_free (root);
  return n;
}

static bool
can_chroot (void)
{
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    _exit (chroot ("/") == 0 ? 0 : 1);
  int status = 0;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

/* What a handler bound to a policy gives a pod: its policy whatever the
 * pod asks for, the pod's on top when it asks for a stricter one, and a
 * refusal of any other when locked. */
static void
test_pod_cannot_loosen_the_handler (void **state)
{
  (void) state;
  setenv ("HAVEN_POLICY_PATH", HAVEN_SRCDIR "/policies", 1);
  if (!can_chroot ())
    SKIP_BECAUSE ("strict's exec rules are compiled by looking in the container's root with chroot, which needs "
                  "CAP_SYS_CHROOT (run as root)");
  hv_error *err = NULL;
  /* strict's limits (pids 256, memory 2g) tell it from default (whose
   * limits come from the host at create, not in the config). */
  cleanup_free char *dflt = filter ("default", false, NULL, &err);
  if (dflt == NULL)
    fail_msg ("%s", err->msg);
  long long dflt_pids = limit_of (dflt, "pids");
  assert_true (dflt_pids < 0 || dflt_pids > 256);
  const char *const asks[] = { NULL, "default", "strict" };
  for (size_t i = 0; i < N_ELEMENTS (asks); i++)
    {
      cleanup_free char *out = filter ("strict", false, asks[i], &err);
      if (out == NULL)
        fail_msg ("pod asking for %s: %s", asks[i] ? asks[i] : "nothing", err->msg);
      long long pids = limit_of (out, "pids"), mem = limit_of (out, "memory");
      if (pids < 0 || pids > 256 || mem < 0 || mem > 2LL << 30)
        fail_msg ("handler strict, pod asking for %s: pids %lld, memory %lld", asks[i] ? asks[i] : "nothing", pids,
                  mem);
    }
  /* A pod under a default handler may ask for strict. */
  cleanup_free char *tighter = filter ("default", false, "strict", &err);
  if (tighter == NULL)
    fail_msg ("%s", err->msg);
  assert_true (limit_of (tighter, "pids") > 0 && limit_of (tighter, "pids") <= 256);
  /* Locked: another policy is refused, the handler's own is not. */
  assert_null (filter ("strict", true, "default", &err));
  assert_non_null (strstr (err->msg, "refused: this runtime is locked to policy \"strict\""));
  hv_error_free (&err);
  cleanup_free char *same = filter ("strict", true, "strict", &err);
  assert_non_null (same);
}

/* A pod's filter run on a config of containerd's, refused with a message
 * containing want. */
static void
expect_pod_refused (const char *handler_policy, const char *pod_policy, const char *cri_annotations, const char *want)
{
  hv_error *err = NULL;
  cleanup_free char *out = filter_with (handler_policy, false, pod_policy, cri_annotations, &err);
  if (out != NULL)
    fail_msg ("handler %s, pod asking for %s: accepted", handler_policy ? handler_policy : "(none)", pod_policy);
  if (strstr (err->msg, want) == NULL)
    fail_msg ("handler %s, pod asking for %s: \"%s\" lacks \"%s\"", handler_policy ? handler_policy : "(none)",
              pod_policy, err->msg, want);
  hv_error_free (&err);
}

/* A pod's run.haven.policy (containerd's pod_annotations, CRI-O's
 * allowed_annotations) names an installed policy, never a file, and
 * one that builds on the handler's; Docker's and Podman's annotation
 * still names a file. */
static void
test_pod_policy_annotation_is_a_name (void **state)
{
  (void) state;
  setenv ("HAVEN_POLICY_PATH", HAVEN_SRCDIR "/policies", 1);
  if (!can_chroot ())
    SKIP_BECAUSE ("strict's exec rules are compiled by looking in the container's root with chroot, which needs "
                  "CAP_SYS_CHROOT (run as root)");
  const char *const files[] = { HAVEN_SRCDIR "/policies/strict.yaml", "strict.yaml", "./strict", "../strict",
                                "policies/strict", ".strict", "/etc/passwd", "strict.yaml.bak", "" };
  for (size_t i = 0; i < N_ELEMENTS (files); i++)
    {
      expect_pod_refused ("default", files[i], CRI_CONTAINER_ANNOTATIONS,
                          "of the pod's container refused: a pod names an installed policy (such as strict), never a "
                          "file");
      expect_pod_refused (NULL, files[i], CRI_SANDBOX_ANNOTATIONS, "of the pod refused: a pod names an installed");
    }
  /* Stricter: strict extends default. */
  hv_error *err = NULL;
  cleanup_free char *tighter = filter_with ("default", false, "strict", CRI_CONTAINER_ANNOTATIONS, &err);
  if (tighter == NULL)
    fail_msg ("%s", err->msg);
  assert_true (limit_of (tighter, "pids") > 0 && limit_of (tighter, "pids") <= 256);
  cleanup_free char *same = filter_with ("strict", false, "strict", CRI_CONTAINER_ANNOTATIONS, &err);
  if (same == NULL)
    fail_msg ("%s", err->msg);
  /* Under a plain handler any installed policy may be named. */
  cleanup_free char *unbound = filter_with (NULL, false, "offline", CRI_SANDBOX_ANNOTATIONS, &err);
  if (unbound == NULL)
    fail_msg ("%s", err->msg);
  /* Weaker, or beside the handler's rather than on it: refused, said so. */
  expect_pod_refused ("strict", "default", CRI_CONTAINER_ANNOTATIONS,
                      "policy \"default\" does not build on this runtime handler's policy \"strict\" (a pod may ask "
                      "only for a stricter policy");
  expect_pod_refused ("strict", "ci", CRI_SANDBOX_ANNOTATIONS, "does not build on this runtime handler's policy");
  expect_pod_refused ("offline", "claude-code", CRI_CONTAINER_ANNOTATIONS,
                      "does not build on this runtime handler's policy \"offline\"");
  expect_pod_refused ("default", "no-such-policy", CRI_CONTAINER_ANNOTATIONS, "policy \"no-such-policy\" not found");
  /* Docker's annotation (no CRI annotations): a file as before. */
  cleanup_free char *docker = filter (NULL, false, HAVEN_SRCDIR "/policies/strict.yaml", &err);
  if (docker == NULL)
    fail_msg ("%s", err->msg);
  assert_true (limit_of (docker, "pids") > 0 && limit_of (docker, "pids") <= 256);
}

/* The lines of the table `header` in a dump, up to the next table, with
 * their indentation cut to two spaces; NULL when there is no such table. */
static char *
dump_table (const char *dump, const char *header)
{
  const char *at = strstr (dump, header);
  if (at == NULL)
    return NULL;
  char *out = xstrdup (""), *next;
  for (const char *line = strchr (at, '\n'); line && line[1]; line = strchr (line + 1, '\n'))
    {
      const char *text = line + 1;
      while (*text == ' ')
        text++;
      if (*text == '[')
        break;
      size_t len = strcspn (text, "\n");
      next = xasprintf ("%s\n  %.*s", out, (int) len, text);
      free (out);
      out = next;
    }
  next = xasprintf ("%s\n", out);
  free (out);
  return next;
}

/* containerd itself reads what was written (`containerd config dump`
 * loads a file and prints the configuration it makes of it; no daemon
 * starts). */
static void
test_containerd_reads_it (void **state)
{
  (void) state;
  if (system ("containerd --version >/dev/null 2>&1") != 0)
    SKIP_BECAUSE ("no containerd here to read the configuration written");
  char *dir = tree_make ("dump");
  cleanup_free char *text = edit_ok (node_config, &plain, false);
  tree_put (dir, "config.toml", text);
  cleanup_free char *cmd = xasprintf ("containerd --config '%s/config.toml' config dump 2>&1", dir);
  FILE *p = popen (cmd, "r");
  assert_non_null (p);
  size_t cap = 1 << 20, n = 0, got;
  cleanup_free char *out = xmalloc0 (cap);
  while (n < cap - 1 && (got = fread (out + n, 1, cap - 1 - n, p)) > 0)
    n += got;
  int status = pclose (p);
  tree_remove (dir);
  if (status != 0)
    fail_msg ("containerd refused it:\n%s", out);
  /* Each table of the handler as containerd dumps it: its own keys only. */
  cleanup_free char *handler = dump_table (out, "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.haven]");
  cleanup_free char *options
      = dump_table (out, "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.haven.options]");
  if (handler == NULL || options == NULL)
    fail_msg ("no handler tables in containerd's configuration:\n%s", out);
  assert_non_null (strstr (handler, "\n  pod_annotations = [\"run.haven.policy\"]\n"));
  assert_non_null (strstr (handler, "\n  runtime_type = \"io.containerd.runc.v2\"\n"));
  assert_non_null (strstr (options, "\n  BinaryName = \"/usr/local/bin/haven-runc\"\n"));
  /* The default handler's cgroup driver, copied. */
  assert_non_null (strstr (options, "\n  SystemdCgroup = true\n"));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_new_file),
    cmocka_unit_test (test_keeps_everything_else),
    cmocka_unit_test (test_idempotent),
    cmocka_unit_test (test_other_handlers_kept),
    cmocka_unit_test (test_uninstall_byte_for_byte),
    cmocka_unit_test (test_refused),
    cmocka_unit_test (test_dotted_keys),
    cmocka_unit_test (test_cri_disabled_note),
    cmocka_unit_test (test_crio_conf),
    cmocka_unit_test (test_wrapper_binds_policy),
    cmocka_unit_test (test_pod_cannot_loosen_the_handler),
    cmocka_unit_test (test_pod_policy_annotation_is_a_name),
    cmocka_unit_test (test_command_containerd),
    cmocka_unit_test (test_command_crio),
    cmocka_unit_test (test_containerd_reads_it),
  };
  int failed = cmocka_run_group_tests (tests, NULL, NULL);
  return unit_tests_status (failed, N_ELEMENTS (tests));
}
