/* Unit tests of the policy parser and compiler: every error path with its
 * message, the seed format, extends, env filtering, sizes and durations. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "unit_skip.h"

#include "policy.h"
#include "policy_load.h"
#include "policy_parse.h"
#include "policy_compile.h"
#include "policy_apply.h"
#include "host_share.h"
#include "image_git_identity.h"
#include "policy_env.h"
#include "policy_glob.h"
#include "policy_paths.h"
#include "home_allow.h"
#include "utils.h"
#include "policy_parse_check.h"

static void
test_seed_format (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("filesystem: {read_only: ['/project', '/data'], block: ['/etc/passwd', '/home/*/.ssh']}\n"
            "network: {allow: ['api.github.com'], block_all: true}\n"
            "process: {allow_exec: ['python3', 'gcc'], block_shell: true}\n",
            &p);
  assert_int_equal (p.read_only.n, 2);
  assert_string_equal (p.block.v[1], "/home/*/.ssh");
  assert_int_equal (p.net_mode, HV_NET_ALLOWLIST);
  assert_string_equal (p.net_allow.v[0].name, "api.github.com");
  assert_string_equal (p.allow_exec.v[1], "gcc");
  assert_true (p.block_shell.value);
  hv_policy_free_fields (&p);
}

static void
test_all_sections (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("name: n\ndescription: d\n"
            "filesystem:\n  hide_home: yes\n  home_allow: [~/.cache]\n  tmpfs: [/var/tmp, {path: /tmp, size: 512m}]\n"
            "  protect: [.env]\n  project_writable: false\n"
            "network:\n  mode: open\n"
            "syscalls: {profile: none, allow: [ptrace], deny: [memfd_create]}\n"
            "resources: {memory: 2g, cpus: 1.5, pids: 100, nofile: 512, timeout: 30m}\n"
            "env: {pass: [PATH, 'LC_*'], deny: ['X*'], set: {CI: '1'}}\n"
            "audit: {log: /var/log/h.log}\nbest_effort: [landlock]\n",
            &p);
  assert_string_equal (p.name, "n");
  assert_true (p.hide_home.value);
  assert_int_equal (p.n_tmpfs, 2);
  assert_int_equal (p.tmpfs[1].size, 512ULL << 20);
  assert_false (p.project_writable.value);
  assert_int_equal (p.net_mode, HV_NET_OPEN);
  assert_string_equal (p.syscall_profile, "none");
  assert_int_equal (p.memory.value, 2ULL << 30);
  assert_int_equal (p.cpus_milli.value, 1500);
  assert_int_equal (p.pids.value, 100);
  assert_int_equal (p.timeout_s.value, 1800);
  assert_string_equal (oci_kv_get (&p.env_set, "CI"), "1");
  assert_string_equal (p.best_effort.v[0], "landlock");
  hv_policy_free_fields (&p);
}

#ifndef HAVEN_POLICY_DIR
#define HAVEN_POLICY_DIR "/usr/local/share/haven/policies" /* as policy_load.c */
#endif

#define SIZE_MSG "expected a size such as 512m or 2g (at least 1 byte, below 8 EiB; no inf, nan or exponents)"
#define CPUS_MSG "expected a number of CPUs such as 2 or 0.5 (from 0.001 to 4096)"
#define PIDS_MSG "expected a whole number from 1 to 4194304"
#define NOFILE_MSG "expected a whole number from 1 to 1073741824"
#define DURATION_MSG "expected a duration such as 90s, 30m or 2h (at least 1s, at most 2592000s = 30 days)"

static void
test_home_allow_forms (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("filesystem:\n  home_allow:\n    - ~/.cache\n    - {path: ~/.x, write: read-only}\n"
            "    - {path: ~/.claude, write: direct, protect: [settings.json, hooks]}\n",
            &p);
  assert_int_equal (p.home_allow.n, 3);
  assert_int_equal (p.home_access[0].write, HV_HOME_COPY);
  assert_int_equal (p.home_access[1].write, HV_HOME_READ_ONLY);
  assert_int_equal (p.home_access[2].write, HV_HOME_DIRECT);
  assert_string_equal (p.home_allow.v[2], "~/.claude");
  assert_string_equal (p.home_access[2].protect.v[1], "hooks");
  hv_policy_free_fields (&p);
  expect_error ("filesystem:\n  home_allow: [{path: ~/.c, write: yes}]\n",
                "t.yaml:2:36: filesystem.home_allow: write: expected copy, data, direct or read-only");
  expect_error ("filesystem:\n  home_allow: [{path: ~/.c, protect: [x]}]\n",
                "t.yaml:2:38: filesystem.home_allow: protect only applies to write: direct or data");
  expect_error ("filesystem:\n  home_allow: [{path: ~/.c, write: direct, protect: [../x]}]\n",
                "t.yaml:2:53: filesystem.home_allow: protect: \"../x\" must be relative to the entry, without ..");
  expect_error ("filesystem:\n  home_allow: [{write: direct}]\n", "t.yaml:2:16: filesystem.home_allow: needs a path");
  expect_error ("filesystem:\n  home_allow: [{path: ~/.c, mode: rw}]\n",
                "t.yaml:2:29: filesystem.home_allow: unknown key \"mode\" (expected path, write, protect, data, private, settings, commands, per_project)");
}

/* write: data, private, settings and commands. */
static void
test_home_allow_data_forms (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("filesystem:\n  home_allow:\n    - {path: ~/.a, write: data, data: [login.json, 'p/{project_dashed}'],"
            " private: ['*', '!settings.json'], settings: [settings.json, c.toml], commands: [command]}\n"
            "    - {path: ~/.a.json, commands: [command, args], per_project: [projects]}\n",
            &p);
  assert_int_equal (p.home_access[0].write, HV_HOME_DATA);
  assert_string_equal (p.home_access[0].data.v[1], "p/{project_dashed}");
  assert_string_equal (p.home_access[0].own.v[1], "!settings.json");
  assert_string_equal (p.home_access[0].settings.v[1], "c.toml");
  assert_int_equal (p.home_access[1].write, HV_HOME_COPY);
  assert_string_equal (p.home_access[1].commands.v[1], "args");
  assert_string_equal (p.home_access[1].per_project.v[0], "projects");
  hv_policy_free_fields (&p);
  expect_error ("filesystem:\n  home_allow: [{path: ~/.c, data: [x]}]\n",
                "t.yaml:2:35: filesystem.home_allow: data and private only apply to write: data");
  expect_error ("filesystem:\n  home_allow: [{path: ~/.c, write: data, private: [a/b]}]\n",
                "t.yaml:2:51: filesystem.home_allow: private: \"a/b\": names or globs of names directly in the entry, no '/'");
  expect_error ("filesystem:\n  home_allow: [{path: ~/.c, write: data, data: [/etc/x]}]\n",
                "t.yaml:2:48: filesystem.home_allow: data: \"/etc/x\" must be relative to the entry, without ..");
  expect_error ("filesystem:\n  home_allow: [{path: ~/.c, settings: [s.yaml], commands: [c]}]\n",
                "t.yaml:2:39: filesystem.home_allow: settings: \"s.yaml\": only .json and .toml files can be read");
  expect_error ("filesystem:\n  home_allow: [{path: ~/.c, settings: [s.json]}]\n",
                "t.yaml:2:16: filesystem.home_allow: settings without commands: name the keys whose values are commands");
  expect_error ("filesystem:\n  home_allow: [{path: ~/.c, per_project: [projects]}]\n",
                "t.yaml:2:42: filesystem.home_allow: per_project only applies to a copy-on-write .json file");
  expect_error ("filesystem:\n  home_allow: [{path: ~/.c, commands: [c]}]\n",
                "t.yaml:2:39: filesystem.home_allow: commands without settings: the entry itself must be a .json or .toml file");
}

/* Claude Code's directory names (its JavaScript, run on these paths). */
static void
test_project_dashed (void **state)
{
  (void) state;
  cleanup_free char *a = hv_project_dashed ("/home/u/my.proj");
  assert_string_equal (a, "-home-u-my-proj");
  /* é is one UTF-16 unit, U+1F600 two. */
  cleanup_free char *b = hv_project_dashed ("/tmp/\xc3\xa9/\xf0\x9f\x98\x80/x");
  assert_string_equal (b, "-tmp------x");
  char long_path[512] = "/home/u/";
  for (int i = 0; i < 120; i++)
    strcat (long_path, "a");
  strcat (long_path, "/");
  for (int i = 0; i < 50; i++)
    strcat (long_path, "b.");
  strcat (long_path, "x");
  cleanup_free char *c = hv_project_dashed (long_path);
  assert_int_equal (strlen (c), 207);
  assert_string_equal (c + 194, "-b-b-b-y6xpmc");
  char zs[512] = "/tmp/q/";
  for (int i = 0; i < 210; i++)
    strcat (zs, "Z");
  cleanup_free char *d = hv_project_dashed (zs);
  assert_string_equal (d + 200, "-xx43ph");
  struct hv_run_ctx ctx = { .project = "/p/a.b" };
  cleanup_free char *e = hv_home_sub_expand ("projects/{project_dashed}/x", &ctx);
  assert_string_equal (e, "projects/-p-a-b/x");
}

static void
test_errors (void **state)
{
  (void) state;
  expect_error ("filesystem:\n  blok: [~/.ssh]\n",
                "t.yaml:2:3: filesystem.blok: unknown key (expected one of: read_only, read_write, block, protect, "
                "hide_home, home_allow, tmpfs, project_writable, project_links)");
  expect_error ("filesytem: {}\n", "t.yaml:1:1: filesytem: unknown key (expected one of: name, description, extends, "
                                   "filesystem, network, process, syscalls, resources, env, audit, best_effort, credentials, "
                                   "kubernetes)");
  expect_error ("filesystem:\n  block: ~/.ssh\n", "t.yaml:2:10: filesystem.block: expected a list");
  expect_error ("filesystem:\n  block: ['']\n", "t.yaml:2:11: filesystem.block: list items must be non-empty strings");
  expect_error ("filesystem:\n  hide_home: maybe\n", "t.yaml:2:14: filesystem.hide_home: expected true or false");
  expect_error ("filesystem:\n  tmpfs: [tmp]\n", "t.yaml:2:11: filesystem.tmpfs: needs an absolute path");
  expect_error ("filesystem:\n  tmpfs: [{path: /t, sise: 1m}]\n",
                "t.yaml:2:22: filesystem.tmpfs: unknown key \"sise\" (expected path, size)");
  expect_error ("network: {mode: some}\n", "t.yaml:1:17: network.mode: expected none, open, allowlist or ask");
  expect_error ("resources: {memory: lots}\n", "t.yaml:1:21: resources.memory: " SIZE_MSG);
  expect_error ("resources: {cpus: -1}\n", "t.yaml:1:19: resources.cpus: " CPUS_MSG);
  expect_error ("resources: {pids: 1.5}\n", "t.yaml:1:19: resources.pids: " PIDS_MSG);
  expect_error ("resources: {timeout: soon}\n", "t.yaml:1:22: resources.timeout: " DURATION_MSG);
  expect_error ("env: {set: [A]}\n", "t.yaml:1:12: env.set: expected a mapping of NAME: value");
  expect_error ("process: []\n", "t.yaml:1:10: process: expected a mapping");
  expect_error ("- a\n", "t.yaml:1:1: expected a mapping");
  expect_error ("filesystem: [\n", "t.yaml:2:1: invalid YAML: did not find expected node content while parsing a flow node");
}

/* resources.containers: limits for engine containers only, parsed like
 * the others, errors naming the field. */
static void
test_container_resources (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("resources:\n  pids: 100\n  containers:\n    memory: 1g\n    pids: 4096\n    cpus: 0.5\n", &p);
  assert_true (p.pids.set && p.pids.value == 100);
  assert_true (p.container_memory.set && p.container_memory.value == 1ULL << 30);
  assert_true (p.container_pids.set && p.container_pids.value == 4096);
  assert_true (p.container_cpus_milli.set && p.container_cpus_milli.value == 500);
  assert_false (p.memory.set);
  hv_policy_free_fields (&p);
  expect_error ("resources:\n  containers:\n    pids: lots\n",
                "t.yaml:3:11: containers.pids: expected a whole number from 1 to 4194304");
  expect_error ("resources:\n  containers:\n    swap: 1g\n", "t.yaml:3:5: containers.swap: unknown key (expected one of: memory, cpus, pids)");
  /* Shares of the host. */
  parse_ok ("resources:\n  containers:\n    memory: 75%\n    cpus: 90%\n", &p);
  assert_true (p.container_memory.set && p.container_memory_pct && p.container_memory.value == 75);
  assert_true (p.container_cpus_milli.set && p.container_cpus_pct && p.container_cpus_milli.value == 90);
  assert_true (hv_container_cpus_limit (&p) == hv_host_cpus_milli () * 90 / 100);
  uint64_t mem = hv_container_memory_limit (&p);
  assert_true (mem > hv_host_memory () / 100 * 74 && mem <= hv_host_memory () / 100 * 75 && mem % (1u << 20) == 0);
  hv_policy_free_fields (&p);
  expect_error ("resources:\n  containers:\n    memory: 0%\n",
                "t.yaml:3:13: containers.memory: expected a share of the host such as 75% (a whole number from 1 to 100)");
  expect_error ("resources:\n  containers:\n    cpus: 101%\n",
                "t.yaml:3:11: containers.cpus: expected a share of the host such as 75% (a whole number from 1 to 100)");
  expect_error ("resources:\n  containers:\n    cpus: 1.5%\n",
                "t.yaml:3:11: containers.cpus: expected a share of the host such as 75% (a whole number from 1 to 100)");
}

/* env.containers.pass: what an engine passes into a container
 * (a devcontainer's containerEnv) passes by the list's globs, never a
 * credential-looking name, and never under haven run's filter. */
static void
test_env_containers_pass (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("env:\n  pass: [PATH]\n  deny: [BLOCKED]\n  containers:\n    pass: [\"*\", NAMED_TOKEN]\n", &p);
  char *env[] = { "PATH=/bin", "APP_MODE=dev", "DEPLOY_TOKEN=t", "NAMED_TOKEN=n", "BLOCKED=b", NULL };
  char **c = hv_policy_filter_container_env (&p, env), **h = hv_policy_filter_env (&p, env);
  cleanup_free char *cs = NULL, *hs = NULL;
  for (char **e = c; *e; e++)
    {
      char *n = xasprintf ("%s%s ", cs ? cs : "", *e);
      free (cs);
      cs = n;
      free (*e);
    }
  for (char **e = h; *e; e++)
    {
      char *n = xasprintf ("%s%s ", hs ? hs : "", *e);
      free (hs);
      hs = n;
      free (*e);
    }
  free (c);
  free (h);
  assert_string_equal (cs, "PATH=/bin APP_MODE=dev NAMED_TOKEN=n ");
  assert_string_equal (hs, "PATH=/bin ");
  hv_policy_free_fields (&p);
  expect_error ("env:\n  containers:\n    set: {A: b}\n", "t.yaml:3:5: containers.set: unknown key (expected one of: pass)");
}

/* The image user's identity: user.name and user.email only,
 * as git reads them, from a hostile file. */
static void
test_image_git_identity_parse (void **state)
{
  (void) state;
  static const struct
  {
    const char *text, *name, *email;
  } cases[] = {
    { "[user]\n\tname = A B\n\temail = a@b\n", "A B", "a@b" },
    { "[User]\n  NAME = \"Q \\\"x\\\" \" ; comment\n", "Q \"x\" ", NULL },
    { "[user \"sub\"]\n\tname = no\n[core]\n\tname = no\n", NULL, NULL },
    { "[user]\n\tname = first\n[user]\n\tname = last # trailing\n", "last", NULL },
    { "[user] name = same-line\n", "same-line", NULL },
    { "[user]\n\tnames = no\n\temail\n", NULL, NULL },
  };
  for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    {
      char *name = NULL, *email = NULL;
      hv_git_identity_parse (cases[i].text, strlen (cases[i].text), &name, &email);
      if (cases[i].name)
        assert_string_equal (name, cases[i].name);
      else
        assert_null (name);
      if (cases[i].email)
        assert_string_equal (email, cases[i].email);
      else
        assert_null (email);
      free (name);
      free (email);
    }
}

/* Pins reach the runtime as mounts (x-haven.pin, one mechanism for the
 * hidden files' parents and git's): a workspace's .git writable, its
 * hooks read-only (rro and the rest), no annotation; applied again
 * (stacked policies), an earlier pin keeps its options (no noexec added,
 * which the runtime would refuse on a pin) and is not repeated. */
/* Whether this process may chroot (the exec rules' compiler does, in a
 * child, to read the container's root as the container would). */
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

static void
test_apply_git_pins_as_mounts (void **state)
{
  (void) state;
  if (!can_chroot ())
    SKIP_BECAUSE ("exec rules are compiled by looking in the container's root with chroot, which needs "
                  "CAP_SYS_CHROOT (run as root)");
  char dir[] = "/tmp/hv-pins-XXXXXX";
  assert_non_null (mkdtemp (dir));
  cleanup_free char *mk = xasprintf ("mkdir -p %s/.git/hooks", dir);
  assert_int_equal (system (mk), 0);
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load ("default", &p, &err) < 0)
    fail_msg ("%s", err->msg);
  /* With exec rules: the filter adds noexec to the engine's mounts. */
  p->block_shell.set = p->block_shell.value = true;
  cleanup_free char *cfg = xasprintf (
      "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}, "
      "\"root\": {\"path\": \"/\"}, \"mounts\": [{\"destination\":\"/w\",\"type\":\"bind\", "
      "\"source\":\"%s\",\"options\":[\"rbind\"]}], \"linux\": {\"namespaces\": [{\"type\":\"pid\"}, "
      "{\"type\":\"mount\"}, {\"type\":\"network\"}]}}",
      dir);
  char *out = NULL, *again = NULL;
  if (hv_policy_apply (p, cfg, "config.json", &out, NULL, &err) < 0)
    fail_msg ("%s", err->msg);
  const char *pin = "\"destination\":\"/w/.git\",\"type\":\"bind\",\"source\":\"/w/.git\",\"options\":"
                    "[\"bind\",\"x-haven.nofollow\",\"x-haven.pin\"]";
  const char *ro = "\"destination\":\"/w/.git/hooks\",\"type\":\"bind\",\"source\":\"/w/.git/hooks\","
                   "\"options\":[\"bind\",\"x-haven.nofollow\",\"x-haven.pin\",\"rro\",\"rnosuid\",\"rnodev\",\"rnoexec\"]";
  compact (out);
  if (strstr (out, pin) == NULL || strstr (out, ro) == NULL)
    fail_msg ("no pin mounts in %s", out);
  assert_null (strstr (out, "run.haven.pin"));
  if (hv_policy_apply (p, out, "config.json", &again, NULL, &err) < 0)
    fail_msg ("applied again: %s", err->msg);
  compact (again);
  const char *first = strstr (again, pin), *first_ro = strstr (again, ro);
  if (first == NULL || first_ro == NULL)
    fail_msg ("pins changed when applied again: %s", again);
  assert_null (strstr (first + 1, pin));
  assert_null (strstr (first_ro + 1, ro));
  free (out);
  free (again);
  hv_policy_free (p);
  cleanup_free char *rm = xasprintf ("rm -rf %s", dir);
  assert_int_equal (system (rm), 0);
}

/* The default policy's engine-container limits (without them one
 * container could take every CPU): 75% of the host's memory, 90% of its CPUs,
 * written into the config as a memory limit (swap the same: none) and a
 * CPU quota; an engine's stricter limit stays. */
static void
test_apply_default_container_limits (void **state)
{
  (void) state;
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load ("default", &p, &err) < 0)
    fail_msg ("%s", err->msg);
  const char *cfg = "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}, "
                    "\"root\": {\"path\": \"/\"}, \"linux\": {\"cgroupsPath\": \"/t\", \"namespaces\": "
                    "[{\"type\": \"pid\"}, {\"type\": \"mount\"}], \"resources\": {\"cpu\": {\"shares\": 1024}}}}";
  char *out = NULL;
  if (hv_policy_apply (p, cfg, "config.json", &out, NULL, &err) < 0)
    fail_msg ("%s", err->msg);
  char want[128];
  snprintf (want, sizeof (want), "\"quota\": %llu", (unsigned long long) (hv_host_cpus_milli () * 90 / 100 * 100));
  if (strstr (out, want) == NULL)
    fail_msg ("no %s in %s", want, out);
  assert_non_null (strstr (out, "\"period\": 100000"));
  assert_non_null (strstr (out, "\"shares\": 1024"));
  uint64_t mem = (hv_host_memory () / 100 * 75) & ~((uint64_t) (1u << 20) - 1);
  snprintf (want, sizeof (want), "\"limit\": %llu", (unsigned long long) mem);
  if (strstr (out, want) == NULL)
    fail_msg ("no %s in %s", want, out);
  snprintf (want, sizeof (want), "\"swap\": %llu", (unsigned long long) mem);
  assert_non_null (strstr (out, want));
  free (out);
  out = NULL;
  /* The engine's own lower quota (docker run --cpus 0.5) stays. */
  const char *low = "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}, "
                    "\"root\": {\"path\": \"/\"}, \"linux\": {\"cgroupsPath\": \"/t\", \"namespaces\": "
                    "[{\"type\": \"pid\"}, {\"type\": \"mount\"}], \"resources\": {\"cpu\": {\"quota\": 50000, "
                    "\"period\": 100000}}}}";
  if (hv_policy_apply (p, low, "config.json", &out, NULL, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_non_null (strstr (out, "\"quota\": 50000"));
  free (out);
  hv_policy_free (p);
}

static void
test_sizes_and_durations (void **state)
{
  (void) state;
  uint64_t v;
  assert_int_equal (hv_parse_size ("512k", &v), 0);
  assert_int_equal (v, 512 * 1024);
  assert_int_equal (hv_parse_size ("1.5G", &v), 0);
  assert_int_equal (v, 3ULL << 29);
  assert_int_equal (hv_parse_size ("2MiB", &v), 0);
  assert_int_equal (v, 2ULL << 20);
  assert_int_equal (hv_parse_size ("12x", &v), -1);
  assert_int_equal (hv_parse_duration ("90", &v), 0);
  assert_int_equal (v, 90);
  assert_int_equal (hv_parse_duration ("2h", &v), 0);
  assert_int_equal (v, 7200);
  assert_int_equal (hv_parse_duration ("1d", &v), -1);
}

static void
test_env_filter (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("env: {pass: [PATH, 'LC_*', GITHUB_TOKEN, 'MY*'], deny: [MYSECRETVAR], set: {HAVEN: '1', PATH: /bin}}\n", &p);
  char *host[] = { (char *) "PATH=/usr/bin", (char *) "LC_ALL=C", (char *) "GITHUB_TOKEN=x", (char *) "MYVAR=1",
                   (char *) "MYSECRETVAR=2", (char *) "OTHER=3", NULL };
  char **env = hv_policy_filter_env (&p, host);
  char joined[512] = "";
  for (char **e = env; *e; e++)
    {
      strcat (joined, *e);
      strcat (joined, " ");
      free (*e);
    }
  free (env);
  /* A credential passes when named (GITHUB_TOKEN), deny wins over a
   * glob; set replaces passed values where they stand. */
  assert_string_equal (joined, "PATH=/bin LC_ALL=C GITHUB_TOKEN=x MYVAR=1 HAVEN=1 ");
  hv_policy_free_fields (&p);
}

static void
test_extends_and_validation (void **state)
{
  (void) state;
  char dir[] = "/tmp/haven-policy-test.XXXXXX";
  assert_non_null (mkdtemp (dir));
  char base[256], child[256], bad[256];
  snprintf (base, sizeof (base), "%s/base.yaml", dir);
  snprintf (child, sizeof (child), "%s/child.yaml", dir);
  snprintf (bad, sizeof (bad), "%s/bad.yaml", dir);
  FILE *f = fopen (base, "w");
  fputs ("name: base\nextends: none\nfilesystem: {block: [/a]}\nresources: {pids: 10}\n", f);
  fclose (f);
  f = fopen (child, "w");
  fputs ("extends: base.yaml\nname: child\nfilesystem: {block: [/b]}\nresources: {pids: 20}\n", f);
  fclose (f);
  f = fopen (bad, "w");
  fputs ("process: {allow_exec: [/bin/bash], block_shell: true}\n", f);
  fclose (f);
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (child, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_string_equal (p->name, "child");
  /* exec reloads a policy given as a file by that file, not by its name
   * (which no search path finds) */
  assert_string_equal (p->reload_as, child);
  assert_int_equal (p->block.n, 2);
  assert_string_equal (p->block.v[0], "/a");
  assert_int_equal (p->pids.value, 20);
  assert_int_equal (p->net_mode, HV_NET_NONE);
  hv_policy_free (p);
  p = NULL;
  assert_int_equal (hv_policy_load (bad, &p, &err), -1);
  assert_non_null (strstr (err->msg, "lists the shell \"/bin/bash\" but process.block_shell is true"));
  hv_error_free (&err);
  unlink (base);
  unlink (child);
  unlink (bad);
  rmdir (dir);
}

/* A home_allow entry repeated by a policy that extends another is one
 * entry (the child's mode, both protect lists): two overlays of one
 * directory would share their upper and work directories. */
static void
test_extends_repeated_home_entry_is_one (void **state)
{
  (void) state;
  char dir[] = "/tmp/haven-policy-test.XXXXXX";
  assert_non_null (mkdtemp (dir));
  char base[256], child[256];
  snprintf (base, sizeof (base), "%s/base.yaml", dir);
  snprintf (child, sizeof (child), "%s/child.yaml", dir);
  FILE *f = fopen (base, "w");
  fputs ("name: base\nextends: none\nfilesystem:\n  home_allow: [~/.cache, {path: ~/.x, write: direct, protect: [a]}]\n",
         f);
  fclose (f);
  f = fopen (child, "w");
  fputs ("extends: base.yaml\nname: child\nfilesystem:\n  home_allow:\n    - {path: ~/.cache, write: read-only}\n"
         "    - {path: ~/.x, write: direct, protect: [b]}\n    - ~/.y\n",
         f);
  fclose (f);
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (child, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_int_equal (p->home_allow.n, 3);
  assert_string_equal (p->home_allow.v[0], "~/.cache");
  assert_int_equal (p->home_access[0].write, HV_HOME_READ_ONLY);
  assert_string_equal (p->home_allow.v[1], "~/.x");
  assert_int_equal (p->home_access[1].protect.n, 2);
  assert_string_equal (p->home_allow.v[2], "~/.y");
  hv_policy_free (p);
  unlink (base);
  unlink (child);
  rmdir (dir);
}

/* Nothing in a policy file may weaken it silently. */
static void
test_second_document_is_an_error (void **state)
{
  (void) state;
  expect_error ("resources: {memory: 1g}\n---\nresources: {memory: 2g}\n",
                "t.yaml:2:1: a second YAML document: a policy file holds exactly one");
  expect_error ("filesystem: {block: [/a]}\n...\n---\n", "t.yaml:3:1: a second YAML document: a policy file holds exactly one");
  /* One explicit document is fine. */
  hv_policy p;
  parse_ok ("---\nresources: {memory: 1g}\n...\n", &p);
  assert_int_equal (p.memory.value, 1ULL << 30);
  hv_policy_free_fields (&p);
}

static void
test_duplicate_keys_are_errors (void **state)
{
  (void) state;
  expect_error ("resources:\n  memory: 1g\n  memory: 64g\n", "t.yaml:3:3: duplicate key \"memory\" (also at line 2)");
  expect_error ("filesystem: {block: [/a]}\nnetwork: {mode: none}\nfilesystem: {}\n",
                "t.yaml:3:1: duplicate key \"filesystem\" (also at line 1)");
  expect_error ("env: {set: {A: '1', B: '2', A: '3'}}\n", "t.yaml:1:29: duplicate key \"A\" (also at line 1)");
  expect_error ("filesystem: {tmpfs: [{path: /t, size: 1m, size: 9g}]}\n",
                "t.yaml:1:43: duplicate key \"size\" (also at line 1)");
  /* Quoted and plain spellings are the same key. */
  expect_error ("resources: {pids: 10, 'pids': 99999}\n", "t.yaml:1:23: duplicate key \"pids\" (also at line 1)");
}

static void
test_numbers_never_drop_a_limit (void **state)
{
  (void) state;
  static const char *const bad_sizes[] = { "inf", "nan", "1e-9", "1e9", "-1", "-1g", "0", "0.1", "0k", "0x10",
                                           "+5m", " 5m", "8e", "9223372036854775808", "8388608t", "99999999999999999999",
                                           "1.5.2g", ".5g", "5.g", "infinity", "NaN" };
  for (size_t i = 0; i < sizeof (bad_sizes) / sizeof (bad_sizes[0]); i++)
    {
      char yaml[128];
      snprintf (yaml, sizeof (yaml), "resources: {memory: '%s'}\n", bad_sizes[i]);
      expect_error (yaml, "t.yaml:1:21: resources.memory: " SIZE_MSG);
    }
  static const char *const bad_durations[] = { "nan", "inf", "4294967296", "4294967296s", "0", "0.4s", "-5",
                                               "1e3", "2592001", "43201m", "721h", "18446744073709551617" };
  for (size_t i = 0; i < sizeof (bad_durations) / sizeof (bad_durations[0]); i++)
    {
      char yaml[128];
      snprintf (yaml, sizeof (yaml), "resources: {timeout: '%s'}\n", bad_durations[i]);
      expect_error (yaml, "t.yaml:1:22: resources.timeout: " DURATION_MSG);
    }
  static const char *const bad_counts[] = { "0", "-1", "18446744073709551616", "99999999999999999999999", "4194305",
                                            "1e3", "nan", "10 " };
  for (size_t i = 0; i < sizeof (bad_counts) / sizeof (bad_counts[0]); i++)
    {
      char yaml[128];
      snprintf (yaml, sizeof (yaml), "resources: {pids: '%s'}\n", bad_counts[i]);
      expect_error (yaml, "t.yaml:1:19: resources.pids: " PIDS_MSG);
    }
  expect_error ("resources: {nofile: 18446744073709551617}\n", "t.yaml:1:21: resources.nofile: " NOFILE_MSG);
  static const char *const bad_cpus[] = { "nan", "inf", "0", "0.0001", "1e2", "4097", "-0.5" };
  for (size_t i = 0; i < sizeof (bad_cpus) / sizeof (bad_cpus[0]); i++)
    {
      char yaml[128];
      snprintf (yaml, sizeof (yaml), "resources: {cpus: '%s'}\n", bad_cpus[i]);
      expect_error (yaml, "t.yaml:1:19: resources.cpus: " CPUS_MSG);
    }
  expect_error ("filesystem: {tmpfs: [{path: /t, size: inf}]}\n", "t.yaml:1:39: filesystem.tmpfs.size: " SIZE_MSG);

  /* What is accepted is exact. */
  hv_policy p;
  parse_ok ("resources: {memory: 1.5k, timeout: 2592000, pids: 4194304, nofile: 1, cpus: 0.001}\n", &p);
  assert_int_equal (p.memory.value, 1536);
  assert_int_equal (p.timeout_s.value, 2592000);
  assert_int_equal (p.pids.value, 4194304);
  assert_int_equal (p.nofile.value, 1);
  assert_int_equal (p.cpus_milli.value, 1);
  hv_policy_free_fields (&p);
  parse_ok ("resources: {memory: 9223372036854775807, timeout: 0.5s}\n", &p);
  assert_int_equal (p.memory.value, 9223372036854775807ULL);
  assert_int_equal (p.timeout_s.value, 1);
  hv_policy_free_fields (&p);
}

static void
test_paths_with_variables_are_errors (void **state)
{
  (void) state;
  expect_error ("filesystem: {block: [$HOME/.ssh]}\n",
                "t.yaml:1:22: filesystem.block: \"$HOME/.ssh\": environment variables are not expanded (write ~/ for "
                "your home, or an absolute path)");
  expect_error ("filesystem: {read_write: ['${HOME}/.cache']}\n",
                "t.yaml:1:27: filesystem.read_write: \"${HOME}/.cache\": environment variables are not expanded (write "
                "~/ for your home, or an absolute path)");
  expect_error ("filesystem: {protect: ['src/$XDG_DIR']}\n",
                "t.yaml:1:24: filesystem.protect: \"src/$XDG_DIR\": environment variables are not expanded (write ~/ "
                "for your home, or an absolute path)");
  expect_error ("filesystem: {read_only: [~root/.ssh]}\n",
                "t.yaml:1:26: filesystem.read_only: \"~root/.ssh\": ~user is not supported (write ~/ for your home, or "
                "an absolute path)");
  expect_error ("filesystem: {tmpfs: [{path: '/x/$TMP'}]}\n",
                "t.yaml:1:22: filesystem.tmpfs: \"/x/$TMP\": environment variables are not expanded (write ~/ for your "
                "home, or an absolute path)");
  hv_policy p;
  parse_ok ("filesystem: {block: ['~/.ssh', '~', '/a/price$', 'b$1']}\n", &p);
  assert_int_equal (p.block.n, 4);
  hv_policy_free_fields (&p);
}

static double
seconds_since (const struct timespec *t0)
{
  struct timespec t1;
  clock_gettime (CLOCK_MONOTONIC, &t1);
  return (double) (t1.tv_sec - t0->tv_sec) + (double) (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void
test_deep_and_large_documents (void **state)
{
  (void) state;
  /* 100k levels of flow nesting took 52 s in libyaml's loader. */
  size_t depth = 100000;
  char *deep = malloc (2 * depth + 32);
  strcpy (deep, "filesystem: {block: ");
  size_t n = strlen (deep);
  memset (deep + n, '[', depth);
  memset (deep + n + depth, ']', depth);
  strcpy (deep + n + 2 * depth, "}\n");
  struct timespec t0;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  expect_error (deep, "t.yaml:1:83: nested deeper than 64 levels");
  assert_true (seconds_since (&t0) < 1.0);
  free (deep);

  /* Block nesting too. */
  char block[8192] = "";
  for (int i = 0; i < 70; i++)
    {
      size_t l = strlen (block);
      snprintf (block + l, sizeof (block) - l, "%*sk%d:\n", i, "", i);
    }
  expect_error (block, "t.yaml:65:65: nested deeper than 64 levels");

  /* 1 MB of list items parses in linear time. */
  size_t items = 100000;
  char *big = malloc (items * 16 + 64);
  strcpy (big, "filesystem:\n  block:\n");
  char *c = big + strlen (big);
  for (size_t i = 0; i < items; i++)
    c += sprintf (c, "  - /p%06zu\n", i);
  clock_gettime (CLOCK_MONOTONIC, &t0);
  hv_policy p;
  parse_ok (big, &p);
  assert_int_equal (p.block.n, items);
  assert_true (seconds_since (&t0) < 5.0);
  hv_policy_free_fields (&p);
  free (big);

  /* A wide mapping: duplicate detection must not be quadratic. */
  char *wide = malloc (items * 20 + 64);
  strcpy (wide, "env:\n  set:\n");
  c = wide + strlen (wide);
  for (size_t i = 0; i < items; i++)
    c += sprintf (c, "    V%06zu: x\n", i);
  clock_gettime (CLOCK_MONOTONIC, &t0);
  parse_ok (wide, &p);
  assert_int_equal (p.env_set.n, items);
  assert_true (seconds_since (&t0) < 5.0);
  hv_policy_free_fields (&p);
  free (wide);
}

static void
test_only_regular_policy_files (void **state)
{
  (void) state;
  char dir[] = "/tmp/haven-policy-test.XXXXXX";
  assert_non_null (mkdtemp (dir));
  char fifo[256], child[256], child_dir[256], child_dev[256], big[256];
  snprintf (fifo, sizeof (fifo), "%s/fifo.yaml", dir);
  snprintf (child, sizeof (child), "%s/child.yaml", dir);
  snprintf (child_dir, sizeof (child_dir), "%s/child_dir.yaml", dir);
  snprintf (child_dev, sizeof (child_dev), "%s/child_dev.yaml", dir);
  snprintf (big, sizeof (big), "%s/big.yaml", dir);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  FILE *f = fopen (child, "w");
  fputs ("extends: fifo.yaml\n", f);
  fclose (f);
  f = fopen (child_dir, "w");
  fprintf (f, "extends: %s\n", dir);
  fclose (f);
  f = fopen (child_dev, "w");
  fputs ("extends: /dev/zero\n", f);
  fclose (f);
  f = fopen (big, "w");
  for (int i = 0; i < 120000; i++)
    fputs ("# padding\n", f);
  fclose (f);

  /* Before: open() of the FIFO blocked forever.  An alarm makes a hang a
   * failure instead of a stuck test. */
  alarm (10);
  hv_policy *p = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_policy_load (child, &p, &err), -1);
  if (strstr (err->msg, "fifo.yaml: not a regular file") == NULL)
    fail_msg ("got %s", err->msg);
  hv_error_free (&err);
  assert_int_equal (hv_policy_load (child_dir, &p, &err), -1);
  if (strstr (err->msg, ": not a regular file") == NULL)
    fail_msg ("got %s", err->msg);
  hv_error_free (&err);
  assert_int_equal (hv_policy_load (child_dev, &p, &err), -1);
  if (strstr (err->msg, "/dev/zero: not a regular file") == NULL)
    fail_msg ("got %s", err->msg);
  hv_error_free (&err);
  assert_int_equal (hv_policy_load (big, &p, &err), -1);
  if (strstr (err->msg, "big.yaml: larger than 1048576 bytes") == NULL)
    fail_msg ("got %s", err->msg);
  hv_error_free (&err);
  /* A file whose size fstat does not know (procfs says 0; the maps of a
   * sanitizer build are tens of KB): read whole, the buffer growing past
   * its first 4 KB, and then refused as YAML, not as too large. */
  assert_int_equal (hv_policy_load ("/proc/self/maps", &p, &err), -1);
  if (strstr (err->msg, "/proc/self/maps:") == NULL || strstr (err->msg, "larger than") != NULL)
    fail_msg ("got %s", err->msg);
  hv_error_free (&err);
  alarm (0);
  unlink (fifo);
  unlink (child);
  unlink (child_dir);
  unlink (child_dev);
  unlink (big);
  rmdir (dir);
}

static void
touch_file (const char *dir, const char *rel)
{
  char path[4096];
  snprintf (path, sizeof (path), "%s/%s", dir, rel);
  /* mkdir -p of the parents */
  for (char *s = path + strlen (dir) + 1; (s = strchr (s, '/')) != NULL; s++)
    {
      *s = '\0';
      mkdir (path, 0755);
      *s = '/';
    }
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fclose (f);
}

static bool
strv_has (const oci_strv *v, const char *s)
{
  for (size_t i = 0; i < v->n; i++)
    if (strcmp (v->v[i], s) == 0)
      return true;
  return false;
}

/* "**" finds a name at every depth (no depth limit: a secret nine levels
 * down must be hidden too), does not follow symlinks out of the tree,
 * fails closed past its entry bound, and rejects malformed patterns. */
static void
test_glob_double_star (void **state)
{
  (void) state;
  char dir[] = "/tmp/hv-glob-XXXXXX";
  assert_non_null (mkdtemp (dir));
  char outside[] = "/tmp/hv-glob-out-XXXXXX";
  assert_non_null (mkdtemp (outside));
  touch_file (dir, ".env");
  touch_file (dir, "a/.env");
  touch_file (dir, "a/b/c/d/e/f/g/h/i/.env");
  touch_file (dir, "a/not.env");
  touch_file (dir, "keys/x.pem");
  touch_file (dir, "keys/sub/y.pem");
  touch_file (outside, ".env");
  char link[4200];
  snprintf (link, sizeof (link), "%s/link", dir);
  assert_int_equal (symlink (outside, link), 0);

  hv_error *err = NULL;
  oci_strv found = { 0 };
  char pat[4200], want[4200];
  snprintf (pat, sizeof (pat), "%s/**/.env", dir);
  assert_int_equal (hv_glob_expand (pat, 0, &found, &err), 0);
  assert_int_equal (found.n, 3);
  snprintf (want, sizeof (want), "%s/.env", dir);
  assert_true (strv_has (&found, want));
  snprintf (want, sizeof (want), "%s/a/.env", dir);
  assert_true (strv_has (&found, want));
  snprintf (want, sizeof (want), "%s/a/b/c/d/e/f/g/h/i/.env", dir);
  assert_true (strv_has (&found, want));
  oci_strv_free (&found);

  /* Several components after "**", and a glob before it. */
  snprintf (pat, sizeof (pat), "%s/**/keys/*.pem", dir);
  assert_int_equal (hv_glob_expand (pat, 0, &found, &err), 0);
  assert_int_equal (found.n, 1);
  oci_strv_free (&found);
  snprintf (pat, sizeof (pat), "%s/k*/**/*.pem", dir);
  assert_int_equal (hv_glob_expand (pat, 0, &found, &err), 0);
  assert_int_equal (found.n, 2);
  oci_strv_free (&found);

  /* Bounded: fail closed rather than hide only part. */
  snprintf (pat, sizeof (pat), "%s/**/.env", dir);
  assert_int_equal (hv_glob_expand (pat, 5, &found, &err), -1);
  assert_non_null (strstr (err->msg, "more than 5 entries under"));
  assert_non_null (strstr (err->msg, "narrow the pattern"));
  hv_error_free (&err);
  oci_strv_free (&found);

  static const char *const bad[] = { "/x/a**/b", "/x/**", "/x/**/a/**/b", "/x/**b", NULL };
  for (size_t i = 0; bad[i]; i++)
    {
      assert_int_equal (hv_glob_expand (bad[i], 0, &found, &err), -1);
      assert_non_null (strstr (err->msg, "must be a whole path component and appear once"));
      hv_error_free (&err);
    }
  oci_strv_free (&found);

  /* Plain globs still work. */
  snprintf (pat, sizeof (pat), "%s/a/*.env", dir);
  assert_int_equal (hv_glob_expand (pat, 0, &found, &err), 0);
  assert_int_equal (found.n, 1);
  oci_strv_free (&found);

  /* "**" matches come sorted, whatever order the file system lists them
   * in: a policy compiles to the same config on every machine. */
  static const char *const names[] = { "zeta", "alpha", "mid", "beta", "omega", "kappa", "delta", "x1", "a9", "q" };
  for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
    {
      char rel[64];
      snprintf (rel, sizeof (rel), "sorted/%s/.env", names[i]);
      touch_file (dir, rel);
    }
  snprintf (pat, sizeof (pat), "%s/sorted/**/.env", dir);
  assert_int_equal (hv_glob_expand (pat, 0, &found, &err), 0);
  assert_int_equal (found.n, sizeof (names) / sizeof (names[0]));
  for (size_t i = 1; i < found.n; i++)
    assert_true (strcmp (found.v[i - 1], found.v[i]) < 0);
  oci_strv_free (&found);

  char cmd[9000];
  snprintf (cmd, sizeof (cmd), "rm -rf '%s' '%s'", dir, outside);
  assert_int_equal (system (cmd), 0);
}

/* A directory the caller owns and cannot read (a run set it to mode 000)
 * makes every expansion fail, naming it: the sandbox, running as the
 * caller, could make it readable again and reach what the expansion did
 * not see.  One of another user is passed over.  As root nothing is
 * unreadable, so the checks run in a child as an ordinary user (uid
 * 65534, which owns the tree), with their results as its exit status. */
static int
glob_unreadable_child (const char *dir)
{
  if (getuid () == 0 && (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0
                         || setresuid (65534, 65534, 65534) < 0))
    return 10;
  char pat[4200], sub[4200];
  snprintf (sub, sizeof (sub), "%s/sub", dir);
  /* "**" walks, glob(3) with a wildcard below it and beside it, and a
   * plain path (which glob only looks up). */
  const char *const pats[] = { "/**/.env", "/sub/*.pem", "/sub/dir/.env", "/s*/dir/.env", NULL };
  for (int i = 0; pats[i]; i++)
    {
      hv_error *err = NULL;
      oci_strv found = { 0 };
      snprintf (pat, sizeof (pat), "%s%s", dir, pats[i]);
      if (hv_glob_expand (pat, 0, &found, &err) != -1)
        return 20 + i;
      char want[4400];
      snprintf (want, sizeof (want), "cannot read %s to find the paths the policy names: Permission denied", sub);
      if (strstr (err->msg, want) == NULL)
        {
          fprintf (stderr, "pattern %s: %s\n", pat, err->msg);
          return 30 + i;
        }
      hv_error_free (&err);
      oci_strv_free (&found);
    }
  /* Readable again: found, and the other user's directory (root's, 0700)
   * does not stop the walk. */
  if (chmod (sub, 0755) < 0)
    return 11;
  hv_error *err = NULL;
  oci_strv found = { 0 };
  snprintf (pat, sizeof (pat), "%s/**/.env", dir);
  if (hv_glob_expand (pat, 0, &found, &err) != 0 || found.n != 1)
    return 12;
  oci_strv_free (&found);
  return 0;
}

static void
test_glob_unreadable_own_directory (void **state)
{
  (void) state;
  if (getuid () != 0 && geteuid () != 0)
    SKIP_BECAUSE ("needs root: an ordinary user cannot make the other user's directory it walks past");
  char dir[] = "/tmp/hv-glob-unread-XXXXXX";
  assert_non_null (mkdtemp (dir));
  assert_int_equal (chmod (dir, 0755), 0);
  touch_file (dir, "sub/dir/.env");
  touch_file (dir, "theirs/x");
  char cmd[9000];
  snprintf (cmd, sizeof (cmd), "chown -R 65534:65534 '%s' && chown 0:0 '%s/theirs' && chmod 700 '%s/theirs' && chmod 000 '%s/sub'",
            dir, dir, dir, dir);
  assert_int_equal (system (cmd), 0);
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    _exit (glob_unreadable_child (dir));
  int status = 0;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  snprintf (cmd, sizeof (cmd), "chmod 755 '%s/sub'; rm -rf '%s'", dir, dir);
  assert_int_equal (system (cmd), 0);
  assert_true (WIFEXITED (status));
  if (WEXITSTATUS (status) != 0)
    fail_msg ("glob_unreadable_child: %d", WEXITSTATUS (status));
}

/* A policy without `extends` builds on default (the seed format is then
 * as strict as default where it is silent); `extends: none` does not;
 * default itself does not extend itself. */
static void
test_implicit_default (void **state)
{
  (void) state;
  char dir[] = "/tmp/haven-policy-test.XXXXXX";
  assert_non_null (mkdtemp (dir));
  char seed[256], bare[256], child[256];
  snprintf (seed, sizeof (seed), "%s/seed.yaml", dir);
  snprintf (bare, sizeof (bare), "%s/bare.yaml", dir);
  snprintf (child, sizeof (child), "%s/child.yaml", dir);
  FILE *f = fopen (seed, "w");
  fputs ("filesystem: {read_only: ['/project'], block: ['/etc/passwd']}\n"
         "process: {allow_exec: ['python3'], block_shell: true}\n",
         f);
  fclose (f);
  f = fopen (bare, "w");
  fputs ("extends: none\nfilesystem: {block: [/x]}\n", f);
  fclose (f);
  f = fopen (child, "w");
  fputs ("extends: seed.yaml\nname: child\nfilesystem: {block: [/y]}\n", f);
  fclose (f);
  hv_policy *p = NULL, *def = NULL;
  hv_error *err = NULL;
  if (hv_policy_load ("default", &def, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_string_equal (def->reload_as, "default"); /* by name, as given */
  if (hv_policy_load (seed, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_string_equal (p->name, "seed");
  assert_true (p->hide_home.value);
  assert_int_equal (p->protect.n, def->protect.n);
  assert_int_equal (p->n_tmpfs, def->n_tmpfs);
  assert_int_equal (p->env_pass.n, def->env_pass.n);
  assert_int_equal (p->block.n, def->block.n + 1);
  assert_string_equal (p->block.v[def->block.n], "/etc/passwd");
  assert_true (p->block_shell.value);
  hv_policy_free (p);
  /* Layering: child -> seed -> default, each once. */
  if (hv_policy_load (child, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_string_equal (p->name, "child");
  assert_int_equal (p->block.n, def->block.n + 2);
  hv_policy_free (p);
  if (hv_policy_load (bare, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_false (p->hide_home.set);
  assert_int_equal (p->block.n, 1);
  assert_int_equal (p->protect.n, 0);
  hv_policy_free (p);
  hv_policy_free (def);
  /* With no default to find, a policy without `extends` is refused. */
  setenv ("HAVEN_POLICY_PATH", dir, 1);
  char *saved_home = getenv ("HOME") ? strdup (getenv ("HOME")) : NULL;
  setenv ("HOME", dir, 1);
  if (access (HAVEN_POLICY_DIR "/default.yaml", F_OK) != 0 && access ("/etc/haven/policies/default.yaml", F_OK) != 0)
    {
      assert_int_equal (hv_policy_load (seed, &p, &err), -1);
      assert_non_null (strstr (err->msg, "write `extends: none` to start from nothing"));
      hv_error_free (&err);
    }
  else
    print_message ("note: a default policy is installed on this host (" HAVEN_POLICY_DIR " or /etc/haven/policies): "
                   "the refusal of a policy without `extends` when there is none is not checked\n");
  setenv ("HAVEN_POLICY_PATH", HAVEN_SRCDIR "/policies", 1);
  if (saved_home)
    setenv ("HOME", saved_home, 1);
  free (saved_home);
  unlink (seed);
  unlink (bare);
  unlink (child);
  rmdir (dir);
}

/* Several "**" patterns of one directory in one walk, and the matcher
 * that decides block's "!" exceptions agreeing with the expansion. */
static void
test_glob_set_and_match (void **state)
{
  (void) state;
  char dir[] = "/tmp/hv-glob-XXXXXX";
  assert_non_null (mkdtemp (dir));
  touch_file (dir, ".env.local");
  touch_file (dir, "a/.env.example");
  touch_file (dir, "a/b/server.key");
  touch_file (dir, "a/b/notes.txt");
  char p1[4200], p2[4200], p3[4200];
  snprintf (p1, sizeof (p1), "%s/**/.env.*", dir);
  snprintf (p2, sizeof (p2), "%s/**/*.key", dir);
  snprintf (p3, sizeof (p3), "%s/a/*.txt", dir);
  char *pats[] = { p1, p2, p3 };
  oci_strv found = { 0 };
  hv_error *err = NULL;
  assert_int_equal (hv_glob_expand_set (pats, 3, 0, &found, &err), 0);
  assert_int_equal (found.n, 3);
  char want[4200];
  snprintf (want, sizeof (want), "%s/a/b/server.key", dir);
  assert_true (strv_has (&found, want));
  assert_true (hv_glob_match (p2, want));
  assert_false (hv_glob_match (p1, want));
  snprintf (want, sizeof (want), "%s/a/.env.example", dir);
  assert_true (strv_has (&found, want));
  assert_true (hv_glob_match (p1, want));
  snprintf (p3, sizeof (p3), "%s/**/.env.example", dir);
  assert_true (hv_glob_match (p3, want));
  snprintf (want, sizeof (want), "%s/.env.local", dir);
  assert_false (hv_glob_match (p3, want));
  assert_true (hv_glob_match (p1, want));
  /* Not below the walked directory: no match. */
  assert_false (hv_glob_match (p1, "/elsewhere/.env.local"));
  assert_true (hv_glob_match ("/**/x", "/a/b/x"));
  assert_true (hv_glob_match ("/srv/*/conf", "/srv/app/conf"));
  assert_false (hv_glob_match ("/srv/*/conf", "/srv/app/sub/conf"));
  /* The bound covers all walks together. */
  assert_int_equal (hv_glob_expand_set (pats, 2, 3, &found, &err), -1);
  assert_non_null (strstr (err->msg, "and 1 more patterns; narrow the pattern"));
  hv_error_free (&err);
  oci_strv_free (&found);
  char cmd[4300];
  snprintf (cmd, sizeof (cmd), "rm -rf '%s'", dir);
  assert_int_equal (system (cmd), 0);
}

/* The resolver of policy paths never follows a link: it says whether a
 * path is one or crosses one (and which), spells the path from the real
 * anchor, and refuses "..". */
static void
test_policy_path_resolver (void **state)
{
  (void) state;
  char dir[] = "/tmp/hv-paths-XXXXXX";
  assert_non_null (mkdtemp (dir));
  touch_file (dir, "real/file");
  char path[4200], target[4200];
  snprintf (path, sizeof (path), "%s/link", dir);
  assert_int_equal (symlink ("/tmp", path), 0);
  snprintf (path, sizeof (path), "%s/real/dirlink", dir);
  snprintf (target, sizeof (target), "%s/real", dir);
  assert_int_equal (symlink (target, path), 0);
  struct hv_run_ctx ctx = { .project = dir, .home = NULL };
  struct hv_policy_path pp;
  hv_error *err = NULL;

  snprintf (path, sizeof (path), "%s/./real//file", dir);
  assert_int_equal (hv_policy_path_resolve (&ctx, path, &pp, &err), HV_PATH_FOUND);
  snprintf (target, sizeof (target), "%s/real/file", dir);
  assert_string_equal (pp.real, target);
  assert_true (S_ISREG (pp.st.st_mode));
  assert_true (pp.fd >= 0);
  assert_true (pp.in_sandbox_writable);
  hv_policy_path_clear (&pp);

  /* The link itself: reported, its target never opened. */
  snprintf (path, sizeof (path), "%s/link", dir);
  assert_int_equal (hv_policy_path_resolve (&ctx, path, &pp, &err), HV_PATH_LINK);
  assert_true (pp.link_last);
  assert_string_equal (pp.link, path);
  assert_true (S_ISLNK (pp.st.st_mode));
  hv_policy_path_clear (&pp);

  /* Crossing a link: the first link on the way is named. */
  snprintf (path, sizeof (path), "%s/real/dirlink/file", dir);
  assert_int_equal (hv_policy_path_resolve (&ctx, path, &pp, &err), HV_PATH_LINK);
  assert_false (pp.link_last);
  snprintf (target, sizeof (target), "%s/real/dirlink", dir);
  assert_string_equal (pp.link, target);
  assert_string_equal (pp.real, path);
  hv_policy_path_clear (&pp);

  snprintf (path, sizeof (path), "%s/real/none/file", dir);
  assert_int_equal (hv_policy_path_resolve (&ctx, path, &pp, &err), HV_PATH_MISSING);
  assert_int_equal (pp.fd, -1);
  hv_policy_path_clear (&pp);
  snprintf (path, sizeof (path), "%s/real/file/below", dir);
  assert_int_equal (hv_policy_path_resolve (&ctx, path, &pp, &err), HV_PATH_MISSING);
  hv_policy_path_clear (&pp);

  snprintf (path, sizeof (path), "%s/real/../link", dir);
  assert_int_equal (hv_policy_path_resolve (&ctx, path, &pp, &err), -1);
  assert_non_null (strstr (err->msg, "\"..\" is not allowed"));
  hv_error_free (&err);

  /* The same through the fd-only entry point; outside the anchors, from /. */
  int fd = -1;
  struct stat st;
  assert_int_equal (hv_policy_path_open (&ctx, "/etc/passwd", &fd, &st, &err), HV_PATH_FOUND);
  assert_true (fd >= 0 && S_ISREG (st.st_mode));
  close (fd);

  char cmd[9000];
  snprintf (cmd, sizeof (cmd), "rm -rf '%s'", dir);
  assert_int_equal (system (cmd), 0);
}

/* An allowlist in an engine container keeps the engine's
 * netns and hands the rules to the runtime; network host is refused;
 * CAP_NET_RAW and CAP_NET_ADMIN go whatever the policy lists. */
static void
test_apply_allowlist_engine (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("network: {allow: [\"192.0.2.0/24:443\", api.github.com], deny: [\"192.0.2.9\"]}\n"
            "process: {capabilities: [CAP_NET_RAW, CAP_CHOWN, CAP_NET_ADMIN]}\n",
            &p);
  p.name = xstrdup ("t");
  assert_int_equal (p.net_mode, HV_NET_ALLOWLIST);
  const char *cfg = "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
                    "\"capabilities\": {\"bounding\": [\"CAP_NET_RAW\", \"CAP_CHOWN\", \"CAP_NET_ADMIN\"]}}, "
                    "\"root\": {\"path\": \"/\"}, \"linux\": {\"namespaces\": [{\"type\": \"pid\"}, "
                    "{\"type\": \"network\", \"path\": \"/var/run/netns/engine\"}]}}";
  char *out = NULL;
  hv_error *err = NULL;
  if (hv_policy_apply (&p, cfg, "config.json", &out, NULL, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_non_null (strstr (out, "\"path\": \"/var/run/netns/engine\""));
  assert_non_null (strstr (out, "run.haven.egress"));
  assert_non_null (strstr (out, "\\\"cidr\\\":\\\"192.0.2.0/24\\\",\\\"ports\\\":\\\"443\\\""));
  assert_non_null (strstr (out, "\\\"name\\\":\\\"api.github.com\\\""));
  assert_non_null (strstr (out, "\"CAP_CHOWN\""));
  assert_null (strstr (out, "CAP_NET_RAW"));
  assert_null (strstr (out, "CAP_NET_ADMIN"));
  free (out);
  out = NULL;
  /* network: host (no network namespace): refused. */
  const char *host = "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}, "
                     "\"root\": {\"path\": \"/\"}, \"linux\": {\"namespaces\": [{\"type\": \"pid\"}]}}";
  assert_int_equal (hv_policy_apply (&p, host, "config.json", &out, NULL, &err), -1);
  assert_non_null (strstr (err->msg, "the container shares the host's network (network: host)"));
  hv_error_free (&err);
  /* A path to the runtime's own namespace: the same. */
  const char *own = "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}, "
                    "\"root\": {\"path\": \"/\"}, \"linux\": {\"namespaces\": [{\"type\": \"network\", "
                    "\"path\": \"/proc/self/ns/net\"}]}}";
  assert_int_equal (hv_policy_apply (&p, own, "config.json", &out, NULL, &err), -1);
  assert_non_null (strstr (err->msg, "network namespace /proc/self/ns/net is the host's"));
  hv_error_free (&err);
  hv_policy_free_fields (&p);
}

/* Network none on a Docker config drops Docker's network
 * hook (it moves eth0 into init's namespace, whichever that is), keeps
 * the engine's other hooks, replaces the namespace and asks the runtime
 * to check it (run.haven.network); an open policy keeps the hook. */
static void
test_apply_none_drops_docker_network_hook (void **state)
{
  (void) state;
  const char *cfg = "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}, "
                    "\"root\": {\"path\": \"/\"}, \"hooks\": {\"prestart\": ["
                    "{\"path\": \"/proc/42/exe\", \"args\": [\"libnetwork-setkey\", \"-exec-root=/x\", \"id\", \"c\"]}, "
                    "{\"path\": \"/usr/bin/other-hook\", \"args\": [\"other-hook\"]}]}, "
                    "\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"network\"}]}}";
  hv_policy p;
  parse_ok ("network: {mode: none}\n", &p);
  p.name = xstrdup ("t");
  char *out = NULL;
  hv_error *err = NULL;
  if (hv_policy_apply (&p, cfg, "config.json", &out, NULL, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_null (strstr (out, "libnetwork-setkey"));
  assert_non_null (strstr (out, "\"other-hook\""));
  assert_non_null (strstr (out, "\"run.haven.network\": \"none\""));
  free (out);
  out = NULL;
  hv_policy_free_fields (&p);
  parse_ok ("network: {mode: open}\n", &p);
  p.name = xstrdup ("t");
  if (hv_policy_apply (&p, cfg, "config.json", &out, NULL, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_non_null (strstr (out, "libnetwork-setkey"));
  assert_null (strstr (out, "run.haven.network"));
  free (out);
  hv_policy_free_fields (&p);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_seed_format),       cmocka_unit_test (test_all_sections),
    cmocka_unit_test (test_apply_none_drops_docker_network_hook),
    cmocka_unit_test (test_errors), cmocka_unit_test (test_home_allow_forms),            cmocka_unit_test (test_sizes_and_durations), cmocka_unit_test (test_container_resources),
    cmocka_unit_test (test_apply_default_container_limits),
    cmocka_unit_test (test_apply_git_pins_as_mounts), cmocka_unit_test (test_env_containers_pass),
    cmocka_unit_test (test_image_git_identity_parse),
    cmocka_unit_test (test_env_filter),        cmocka_unit_test (test_extends_and_validation),
    cmocka_unit_test (test_extends_repeated_home_entry_is_one),
    cmocka_unit_test (test_home_allow_data_forms),
    cmocka_unit_test (test_project_dashed),
    cmocka_unit_test (test_glob_double_star),  cmocka_unit_test (test_glob_unreadable_own_directory),
    cmocka_unit_test (test_implicit_default),
    cmocka_unit_test (test_glob_set_and_match),
    cmocka_unit_test (test_second_document_is_an_error),
    cmocka_unit_test (test_duplicate_keys_are_errors),
    cmocka_unit_test (test_numbers_never_drop_a_limit),
    cmocka_unit_test (test_paths_with_variables_are_errors),
    cmocka_unit_test (test_deep_and_large_documents),
    cmocka_unit_test (test_only_regular_policy_files),
    cmocka_unit_test (test_policy_path_resolver),
    cmocka_unit_test (test_apply_allowlist_engine),
  };
  /* The shipped policies: a policy without `extends` builds on default. */
  setenv ("HAVEN_POLICY_PATH", HAVEN_SRCDIR "/policies", 1);
  return unit_tests_status (cmocka_run_group_tests (tests, NULL, NULL), N_ELEMENTS (tests));
}
