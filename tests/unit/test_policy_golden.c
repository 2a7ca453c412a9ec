/* Golden-output tests of the policy compiler: every shipped policy
 * (policies/NAME.yaml) is loaded and compiled the way `haven run` does,
 * and the config.json, normalized, must equal tests/golden/policies/NAME.json
 * byte for byte.  A change to a policy or to the compiler shows up here as a
 * diff to read, not only as a broken behaviour test.
 *
 * After an intended change, regenerate the golden files and read the diff
 * before committing it (it is the review of what the change does):
 *   HAVEN_UPDATE_GOLDEN=1 tests/unit/test_policy_golden && git diff tests/golden
 *
 * The compiler runs in a controlled world: a fresh temporary directory T
 * holds the project (T/project), the home (T/home), another user's home
 * (T/others/alice) and the state directory of copy-on-write home entries
 * (T/state, as `haven run` passes it when overlays work), all filled with
 * a fixed set of files (make_fixture); the command, the working directory,
 * the environment, uid/gid (1000/1000, not the caller's) and rootless
 * (false, as a root run) are fixed too, and $HOME and HAVEN_POLICY_PATH are
 * set so that only the source tree's policies are found.
 *
 * What still depends on the machine is normalized, and only that:
 *   - T/project, T/home and T are written @PROJECT@, @HOME@ and @TMP@, and
 *     the hash of the temporary path in the names of state entries @HASH@;
 *   - masks of host paths outside T (/etc/shadow, /etc/ssh/ssh_host_*_key,
 *     secrets under /srv and /var/www) depend on what the host has: they are
 *     left out of the text and checked instead (check_host_blocks): the host
 *     secrets every shipped policy must hide (/etc/shadow, /etc/gshadow, the
 *     SSH host keys, /etc/ssl/private) and every literal host path the
 *     policy blocks must have their mask wherever they exist here;
 *   - the masks at the end of "mounts" come in directory-reading order,
 *     which differs between file systems: they are sorted (each hides one
 *     path and none lies under another masked directory, so their order
 *     does not matter);
 *   - maskedPaths: Unix sockets bound on the host (/proc/net/unix) are left
 *     out (as root the test runs in a new network namespace, which has none);
 *     the host's shells (block_shell) are written once as @HOST-SHELLS@, each
 *     checked to be a shell by inode;
 *   - the Landlock exec list of block_shell: the host's programs are written
 *     once as @HOST-PROGRAMS@ (each checked to be a regular executable file
 *     of the host, outside T, and not a shell: a shell, or a file of the
 *     project or home, stays in by name and fails the test) and the library
 *     directories as @HOST-LIB-DIRS@;
 *   - under exec rules, a memfd must not be executable: the compiler sets
 *     vm.memfd_noexec=2 where the kernel has it (Linux >= 6.3) and adds a
 *     seccomp rule otherwise; either one is written as one "@memfd-noexec@"
 *     member of "linux" (both or neither leaves a different text).
 * The run.haven.landlock annotation (a JSON document in a string) is shown
 * parsed, under a key that says so, to keep the golden files readable. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include <cmocka.h>

#include "haven_annotations.h"
#include "json_gen.h"
#include "policy.h"
#include "policy_load.h"
#include "policy_compile.h"
#include "utils.h"

extern char **environ;

/* Every policy in Makefile.am's dist_policies_DATA: test_every_policy_listed
 * fails when policies/ has one this list lacks, or tests/golden one too many. */
static const char *const shipped[] = { "default",    "offline", "strict",       "claude-code", "codex",
                                       "gemini-cli", "aider",   "devcontainer", "ci",          NULL };

static char tmp_root[PATH_MAX]; /* T, a real path */

/* --- the controlled world ------------------------------------------------ */

static void
put_dir (const char *rel)
{
  cleanup_free char *path = xasprintf ("%s/%s", tmp_root, rel);
  if (mkdir (path, 0755) < 0 && errno != EEXIST)
    fail_msg ("mkdir %s: %s", path, strerror (errno));
}

static void
put_file (const char *rel, const char *content)
{
  cleanup_free char *path = xasprintf ("%s/%s", tmp_root, rel);
  FILE *f = fopen (path, "we");
  if (f == NULL || fputs (content, f) < 0 || fclose (f) != 0)
    fail_msg ("write %s: %s", path, strerror (errno));
}

static void
put_link (const char *rel, const char *target)
{
  cleanup_free char *path = xasprintf ("%s/%s", tmp_root, rel);
  if (symlink (target, path) < 0)
    fail_msg ("symlink %s: %s", path, strerror (errno));
}

/* The files the policies talk about: secrets the block list hides (and the
 * templates it shows again), what protect makes read-only, a link a
 * previous run could have planted, and the home_allow entries. */
static void
make_fixture (void)
{
  static const char *const dirs[]
      = { "project", "project/.git", "project/.git/hooks", "project/src", "project/src/deep", "project/keys",
          "project/venv", "project/venv/certifi", "home", "home/.ssh", "home/.aws", "home/.config",
          "home/.config/gh", "home/.config/claude", "home/.cache", "home/.npm", "home/.cargo", "home/.claude",
          "home/.claude/hooks", "home/.claude/commands", "home/.claude/agents", "home/.claude/projects",
          "home/.claude/local", "home/.codex", "home/.codex/sessions", "home/.gemini", "home/.gemini/tmp",
          "home/.aider", "home/.vscode-server", "home/.m2", "home/.local", "home/.local/bin", "others",
          "others/alice", "state", NULL };
  for (size_t i = 0; dirs[i]; i++)
    put_dir (dirs[i]);
  static const char *const files[]
      = { "project/.git/config", "project/.git/hooks/pre-commit", "project/.env", "project/.env.local",
          "project/.env.example", "project/.envrc", "project/.npmrc", "project/.aider.chat.history.md",
          "project/README.md", "project/src/main.py", "project/src/deep/.env.production",
          "project/src/deep/.env.sample", "project/keys/id_ed25519", "project/keys/server.pem",
          "project/keys/server.crt", "project/venv/certifi/cacert.pem", "home/.ssh/id_rsa",
          "home/.aws/credentials", "home/.config/gh/hosts.yml", "home/.netrc", "home/.claude.json",
          "home/.claude/settings.json", "home/.claude/CLAUDE.md", "home/.claude/hooks/on-stop.sh",
          /* write: data: data written for real, other projects'
           * state private, the rest copy-on-write. */
          "home/.claude/.credentials.json", "home/.claude/history.jsonl", "home/.claude/local/claude",
          "home/.codex/auth.json", "home/.codex/config.toml", "home/.codex/history.jsonl",
          "home/.gemini/oauth_creds.json", "home/.gemini/settings.json", NULL };
  for (size_t i = 0; files[i]; i++)
    put_file (files[i], "x\n");
  /* Planted by an earlier run: blocked by name, masked as the link itself. */
  put_link ("project/.netrc", "/nonexistent/netrc");
  /* Not made: ~/.rustup, ~/.local/share/virtualenvs, ~/.gradle (home_allow
   * entries that do not exist are not bound), and ~/.claude's plugins,
   * settings.local.json (haven run's home_state.c would create them;
   * `haven policy compile` leaves them missing, and so does this test). */
}

static int
remove_one (const char *path, const struct stat *st, int type, struct FTW *ftw)
{
  (void) st;
  (void) type;
  (void) ftw;
  return remove (path);
}

static int
setup_world (void **state)
{
  (void) state;
  char tmpl[] = "/tmp/haven-golden.XXXXXX";
  if (mkdtemp (tmpl) == NULL || realpath (tmpl, tmp_root) == NULL)
    return -1;
  make_fixture ();
  /* Only the source tree's policies, and no ~/.config/haven/policies of
   * the caller's. */
  cleanup_free char *home = xasprintf ("%s/home", tmp_root);
  setenv ("HOME", home, 1);
  setenv ("HAVEN_POLICY_PATH", HAVEN_SRCDIR "/policies", 1);
  return 0;
}

static int
teardown_world (void **state)
{
  (void) state;
  if (tmp_root[0])
    nftw (tmp_root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
  return 0;
}

static char *
compile_in_world (const hv_policy *p)
{
  cleanup_free char *project = xasprintf ("%s/project", tmp_root);
  cleanup_free char *home = xasprintf ("%s/home", tmp_root);
  cleanup_free char *other = xasprintf ("%s/others/alice", tmp_root);
  cleanup_free char *state = xasprintf ("%s/state", tmp_root);
  cleanup_free char *audit = xasprintf ("%s/bundle/audit.sock", tmp_root);
  cleanup_free char *env_home = xasprintf ("HOME=%s", home);
  /* A PATH entry in the home: exec rules must leave it out. */
  cleanup_free char *env_path = xasprintf ("PATH=%s/.local/bin:/usr/local/bin:/usr/bin:/bin", home);
  /* Passed by the policies, denied always (credentials), not passed. */
  char *env[] = { env_path, env_home, (char *) "USER=golden", (char *) "LOGNAME=golden",
                  (char *) "LANG=C.UTF-8", (char *) "LC_ALL=C", (char *) "TERM=xterm-256color",
                  (char *) "SHELL=/bin/bash", (char *) "TMPDIR=/tmp", (char *) "EDITOR=vi", (char *) "CI=true",
                  (char *) "GITHUB_ACTIONS=true", (char *) "AIDER_MODEL=gpt-4o",
                  (char *) "CLAUDE_CODE_USE_BEDROCK=0", (char *) "GOOGLE_CLOUD_PROJECT=demo",
                  (char *) "OPENAI_BASE_URL=http://localhost:8080", (char *) "OPENAI_API_KEY=sk-golden",
                  (char *) "ANTHROPIC_API_KEY=sk-ant-golden", (char *) "GEMINI_API_KEY=golden",
                  (char *) "GITHUB_TOKEN=ghp_golden", (char *) "AWS_ACCESS_KEY_ID=AKIAGOLDEN",
                  (char *) "SSH_AUTH_SOCK=/tmp/ssh-agent.sock", (char *) "HAVEN=0", (char *) "UNLISTED=1", NULL };
  char *argv[] = { (char *) "agent", (char *) "--print", (char *) "two words", NULL };
  oci_strv homes = { 0 }, other_homes = { 0 };
  oci_strv_push (&homes, home);
  oci_strv_push (&other_homes, other);
  struct hv_run_ctx ctx = { .project = project, .home = home, .homes = &homes, .other_homes = &other_homes,
                            .cwd = project, .rootfs = "rootfs", .uid = 1000, .gid = 1000, .rootless = false,
                            .terminal = false, .argv = argv, .host_env = env,
                            /* As haven run: the audit listener in the bundle. */
                            .audit_socket = p->audit_log ? audit : NULL, .home_state = state };
  char *json = NULL;
  hv_error *err = NULL;
  int r = hv_policy_compile (p, &ctx, &json, &err);
  oci_strv_free (&homes);
  oci_strv_free (&other_homes);
  if (r < 0)
    fail_msg ("compile %s: %s", p->name, err->msg);
  return json;
}

/* --- normalization ---------------------------------------------------- */

static char *
replace_all (const char *s, const char *from, const char *to)
{
  size_t fl = strlen (from), tl = strlen (to), n = 0;
  for (const char *q = strstr (s, from); q; q = strstr (q + fl, from))
    n++;
  char *out = xmalloc0 (strlen (s) + n * tl + 1);
  char *o = out;
  for (const char *q; (q = strstr (s, from)); s = q + fl)
    {
      memcpy (o, s, (size_t) (q - s));
      o += q - s;
      memcpy (o, to, tl);
      o += tl;
    }
  strcpy (o, s);
  return out;
}

/* State entries (and the shared layers of a home) are named NAME-HASH,
 * HASH a hash of the (temporary) path. */
static void
mask_state_hashes_after (char *s, const char *marker)
{
  for (char *q = strstr (s, marker); q; q = strstr (q + 1, marker))
    {
      char *name = q + strlen (marker);
      char *end = name + strcspn (name, "/");
      if (end - name < 17 || end[-17] != '-' || strspn (end - 16, "0123456789abcdef") < 16)
        continue;
      /* "@HASH@" is shorter: shift the rest left. */
      memcpy (end - 16, "@HASH@", 6);
      memmove (end - 10, end, strlen (end) + 1);
    }
}

static void
mask_state_hashes (char *s)
{
  mask_state_hashes_after (s, "@TMP@/state/home/");
  mask_state_hashes_after (s, "@TMP@/state/home-layers/");
  mask_state_hashes_after (s, "@TMP@/state/private/");
}

static char *
norm_str (const char *s)
{
  cleanup_free char *project = xasprintf ("%s/project", tmp_root);
  cleanup_free char *home = xasprintf ("%s/home", tmp_root);
  cleanup_free char *a = replace_all (s, project, "@PROJECT@");
  cleanup_free char *b = replace_all (a, home, "@HOME@");
  char *c = replace_all (b, tmp_root, "@TMP@");
  mask_state_hashes (c);
  return c;
}

static void
gen_str (yajl_gen g, const char *s)
{
  cleanup_free char *n = norm_str (s);
  jg_str (g, n);
}

/* A value with its strings normalized, nothing else changed. */
static void
gen_value (yajl_gen g, yajl_val v)
{
  if (YAJL_IS_STRING (v))
    gen_str (g, v->u.string);
  else if (YAJL_IS_ARRAY (v))
    {
      yajl_gen_array_open (g);
      for (size_t i = 0; i < v->u.array.len; i++)
        gen_value (g, v->u.array.values[i]);
      yajl_gen_array_close (g);
    }
  else if (YAJL_IS_OBJECT (v))
    {
      yajl_gen_map_open (g);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          gen_str (g, v->u.object.keys[i]);
          gen_value (g, v->u.object.values[i]);
        }
      yajl_gen_map_close (g);
    }
  else
    jg_value (g, v);
}

static const char *
str_of (yajl_val obj, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (obj, path, yajl_t_string);
  return v ? v->u.string : NULL;
}

static bool
under_tmp (const char *path)
{
  size_t l = strlen (tmp_root);
  return strncmp (path, tmp_root, l) == 0 && (path[l] == '/' || path[l] == '\0');
}

/* policy_exec.c's system bin directories and shell names. */
static const char *const bin_dirs[]
    = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", NULL };
static const char *const shell_names[] = { "sh",  "bash", "dash", "zsh",     "ksh",   "mksh", "fish",
                                           "csh", "tcsh", "ash",  "busybox", "rbash", NULL };

/* Is PATH a regular file that one of the shell names in a system bin
 * directory is (by inode, as the compiler decides)? */
static bool
is_host_shell (const char *path)
{
  struct stat st, sh;
  if (lstat (path, &st) < 0 || !S_ISREG (st.st_mode))
    return false;
  for (size_t d = 0; bin_dirs[d]; d++)
    for (size_t i = 0; shell_names[i]; i++)
      {
        cleanup_free char *cand = xasprintf ("%s/%s", bin_dirs[d], shell_names[i]);
        if (stat (cand, &sh) == 0 && sh.st_ino == st.st_ino && sh.st_dev == st.st_dev)
          return true;
      }
  return false;
}

static bool
real_dir_of_list (const char *path, const char *const *dirs)
{
  for (size_t i = 0; dirs[i]; i++)
    {
      char real[PATH_MAX];
      if (realpath (dirs[i], real) && strcmp (real, path) == 0)
        return true;
    }
  return false;
}

/* A program block_shell lets run: a regular executable file of the host
 * (the real path of a name in a system bin directory, which may lie
 * elsewhere: /usr/bin/clang is /usr/lib/llvm-14/bin/clang), not a shell. */
static bool
is_host_program (const char *path)
{
  struct stat st;
  return !under_tmp (path) && lstat (path, &st) == 0 && S_ISREG (st.st_mode) && (st.st_mode & 0111)
         && !is_host_shell (path);
}

static bool
is_host_lib_dir (const char *path)
{
  static const char *const lib_dirs[] = { "/usr/lib", "/usr/libexec", "/usr/local/lib", "/lib64", "/opt", NULL };
  return real_dir_of_list (path, lib_dirs);
}

static void
gen_landlock (yajl_gen g, const char *text)
{
  yajl_val ll = yajl_tree_parse (text, NULL, 0);
  if (ll == NULL || !YAJL_IS_OBJECT (ll))
    fail_msg ("the landlock annotation is not a JSON object: %s", text);
  yajl_gen_map_open (g);
  for (size_t i = 0; i < ll->u.object.len; i++)
    {
      yajl_val v = ll->u.object.values[i];
      jg_str (g, ll->u.object.keys[i]);
      if (strcmp (ll->u.object.keys[i], "exec") != 0 || !YAJL_IS_ARRAY (v))
        {
          gen_value (g, v);
          continue;
        }
      bool programs = false, libs = false;
      yajl_gen_array_open (g);
      for (size_t j = 0; j < v->u.array.len; j++)
        {
          const char *path = YAJL_GET_STRING (v->u.array.values[j]);
          if (path && is_host_program (path))
            {
              if (!programs)
                jg_str (g, "@HOST-PROGRAMS@");
              programs = true;
            }
          else if (path && is_host_lib_dir (path))
            {
              if (!libs)
                jg_str (g, "@HOST-LIB-DIRS@");
              libs = true;
            }
          else
            gen_value (g, v->u.array.values[j]);
        }
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
  yajl_tree_free (ll);
}

static bool
is_mask (yajl_val m)
{
  const char *type = str_of (m, "type"), *src = str_of (m, "source");
  if (type && src && strcmp (type, "bind") == 0 && strcmp (src, "/dev/null") == 0)
    return true;
  const char *path[] = { "options", NULL };
  yajl_val opts = yajl_tree_get (m, path, yajl_t_array);
  if (type == NULL || strcmp (type, "tmpfs") != 0 || opts == NULL)
    return false;
  for (size_t i = 0; i < opts->u.array.len; i++)
    if (YAJL_IS_STRING (opts->u.array.values[i]) && strcmp (opts->u.array.values[i]->u.string, "size=4k") == 0)
      return true;
  return false;
}

struct sorted_mount
{
  char *key;
  yajl_val v;
};

static int
cmp_mounts (const void *a, const void *b)
{
  return strcmp (((const struct sorted_mount *) a)->key, ((const struct sorted_mount *) b)->key);
}

/* Every mount but the masks of host paths (recorded in host_masks), the
 * trailing run of masks sorted by destination. */
static void
gen_mounts (yajl_gen g, yajl_val mounts, oci_strv *host_masks)
{
  size_t n = mounts->u.array.len, kept = 0;
  yajl_val *v = xmalloc0 ((n + 1) * sizeof (yajl_val));
  for (size_t i = 0; i < n; i++)
    {
      yajl_val m = mounts->u.array.values[i];
      const char *dest = str_of (m, "destination");
      if (dest && is_mask (m) && !under_tmp (dest))
        oci_strv_push (host_masks, dest);
      else
        v[kept++] = m;
    }
  size_t first_mask = kept;
  while (first_mask > 0 && is_mask (v[first_mask - 1]))
    first_mask--;
  struct sorted_mount *tail = xmalloc0 ((kept - first_mask + 1) * sizeof (*tail));
  for (size_t i = first_mask; i < kept; i++)
    {
      const char *dest = str_of (v[i], "destination");
      tail[i - first_mask] = (struct sorted_mount){ norm_str (dest ? dest : ""), v[i] };
    }
  qsort (tail, kept - first_mask, sizeof (*tail), cmp_mounts);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < kept; i++)
    gen_value (g, i < first_mask ? v[i] : tail[i - first_mask].v);
  yajl_gen_array_close (g);
  for (size_t i = 0; i < kept - first_mask; i++)
    free (tail[i].key);
  free (tail);
  free (v);
}

static void
gen_masked_paths (yajl_gen g, yajl_val paths)
{
  bool shells = false;
  yajl_gen_array_open (g);
  for (size_t i = 0; i < paths->u.array.len; i++)
    {
      const char *path = YAJL_GET_STRING (paths->u.array.values[i]);
      struct stat st;
      if (path && lstat (path, &st) == 0 && S_ISSOCK (st.st_mode))
        continue;
      if (path && is_host_shell (path))
        {
          if (!shells)
            jg_str (g, "@HOST-SHELLS@");
          shells = true;
          continue;
        }
      gen_value (g, paths->u.array.values[i]);
    }
  yajl_gen_array_close (g);
}

/* The seccomp rule refusing memfds created without MFD_NOEXEC_SEAL
 * (policy_compile.c, gen_no_exec_memfds). */
static bool
is_memfd_seal_rule (yajl_val rule)
{
  const char *names[] = { "names", NULL }, *args[] = { "args", NULL };
  yajl_val nv = yajl_tree_get (rule, names, yajl_t_array), av = yajl_tree_get (rule, args, yajl_t_array);
  if (nv == NULL || nv->u.array.len != 1 || av == NULL || av->u.array.len != 1
      || !YAJL_IS_STRING (nv->u.array.values[0]) || strcmp (nv->u.array.values[0]->u.string, "memfd_create") != 0)
    return false;
  const char *value[] = { "value", NULL }, *two[] = { "valueTwo", NULL };
  yajl_val a = av->u.array.values[0];
  yajl_val v1 = yajl_tree_get (a, value, yajl_t_number), v2 = yajl_tree_get (a, two, yajl_t_number);
  return v1 && v2 && strcmp (v1->u.number.r, "8") == 0 && strcmp (v2->u.number.r, "0") == 0;
}

static bool
is_memfd_sysctl (yajl_val sysctl)
{
  return sysctl && YAJL_IS_OBJECT (sysctl) && sysctl->u.object.len == 1
         && strcmp (sysctl->u.object.keys[0], "vm.memfd_noexec") == 0
         && YAJL_IS_STRING (sysctl->u.object.values[0])
         && strcmp (sysctl->u.object.values[0]->u.string, "2") == 0;
}

static void
gen_seccomp (yajl_gen g, yajl_val seccomp, bool *seal_rule)
{
  yajl_gen_map_open (g);
  for (size_t i = 0; i < seccomp->u.object.len; i++)
    {
      yajl_val v = seccomp->u.object.values[i];
      jg_str (g, seccomp->u.object.keys[i]);
      if (strcmp (seccomp->u.object.keys[i], "syscalls") != 0 || !YAJL_IS_ARRAY (v))
        {
          gen_value (g, v);
          continue;
        }
      yajl_gen_array_open (g);
      for (size_t j = 0; j < v->u.array.len; j++)
        if (is_memfd_seal_rule (v->u.array.values[j]))
          *seal_rule = true;
        else
          gen_value (g, v->u.array.values[j]);
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
}

static void
gen_linux (yajl_gen g, yajl_val linux_obj)
{
  const char *sysctl_path[] = { "sysctl", NULL };
  bool sysctl = is_memfd_sysctl (yajl_tree_get (linux_obj, sysctl_path, yajl_t_object));
  bool seal_rule = false;
  yajl_gen_map_open (g);
  for (size_t i = 0; i < linux_obj->u.object.len; i++)
    {
      const char *key = linux_obj->u.object.keys[i];
      yajl_val v = linux_obj->u.object.values[i];
      if (strcmp (key, "sysctl") == 0 && sysctl)
        continue;
      jg_str (g, key);
      if (strcmp (key, "maskedPaths") == 0 && YAJL_IS_ARRAY (v))
        gen_masked_paths (g, v);
      else if (strcmp (key, "seccomp") == 0 && YAJL_IS_OBJECT (v))
        {
          gen_seccomp (g, v, &seal_rule);
          if (sysctl || seal_rule)
            {
              jg_str (g, "@memfd-noexec@");
              jg_str (g, sysctl && seal_rule ? "both the sysctl and the seccomp rule (unexpected)"
                                             : "vm.memfd_noexec=2 (Linux >= 6.3), else seccomp refuses "
                                               "memfd_create without MFD_NOEXEC_SEAL");
            }
        }
      else
        gen_value (g, v);
    }
  yajl_gen_map_close (g);
}

static char *
normalize (const char *json, oci_strv *host_masks)
{
  char errbuf[256];
  yajl_val root = yajl_tree_parse (json, errbuf, sizeof (errbuf));
  if (root == NULL || !YAJL_IS_OBJECT (root))
    fail_msg ("the compiled config is not a JSON object: %s", errbuf);
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_gen_config (g, yajl_gen_indent_string, "  ");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *key = root->u.object.keys[i];
      yajl_val v = root->u.object.values[i];
      jg_str (g, key);
      if (strcmp (key, "mounts") == 0 && YAJL_IS_ARRAY (v))
        gen_mounts (g, v, host_masks);
      else if (strcmp (key, "linux") == 0 && YAJL_IS_OBJECT (v))
        gen_linux (g, v);
      else if (strcmp (key, "annotations") == 0 && YAJL_IS_OBJECT (v))
        {
          yajl_gen_map_open (g);
          for (size_t j = 0; j < v->u.object.len; j++)
            {
              const char *akey = v->u.object.keys[j];
              yajl_val av = v->u.object.values[j];
              if (strcmp (akey, HV_LANDLOCK_ANNOTATION) == 0 && YAJL_IS_STRING (av))
                {
                  jg_str (g, HV_LANDLOCK_ANNOTATION " (a JSON string, shown parsed)");
                  gen_landlock (g, av->u.string);
                }
              else
                {
                  jg_str (g, akey);
                  gen_value (g, av);
                }
            }
          yajl_gen_map_close (g);
        }
      else
        gen_value (g, v);
    }
  yajl_gen_map_close (g);
  char *text = jg_text (g);
  yajl_gen_free (g);
  yajl_tree_free (root);
  char *out = xasprintf ("%s\n", text);
  free (text);
  return out;
}

static void
expect_host_mask (const hv_policy *p, const oci_strv *host_masks, const char *path)
{
  char real[PATH_MAX];
  struct stat st;
  /* Only what exists here, link-free (a link is masked itself, at the
   * link's path, or refused: not this test's concern). */
  if (lstat (path, &st) < 0 || realpath (path, real) == NULL || strcmp (real, path) != 0)
    return;
  for (size_t j = 0; j < host_masks->n; j++)
    if (strcmp (host_masks->v[j], path) == 0)
      return;
  fail_msg ("policy %s: %s exists here but the config has no mask for it", p->name, path);
}

/* The masks of host paths are left out of the golden text, so they are
 * checked here: the host secrets every shipped policy hides (it extends
 * default), whatever the policy file says, and every literal host path the
 * policy blocks, wherever they exist on this machine. */
static void
check_host_blocks (const hv_policy *p, const oci_strv *host_masks)
{
  static const char *const secrets[]
      = { "/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_*_key", "/etc/ssl/private", NULL };
  for (size_t i = 0; secrets[i]; i++)
    {
      glob_t gl;
      if (glob (secrets[i], GLOB_NOSORT, NULL, &gl) != 0)
        continue;
      for (size_t j = 0; j < gl.gl_pathc; j++)
        expect_host_mask (p, host_masks, gl.gl_pathv[j]);
      globfree (&gl);
    }
  for (size_t i = 0; i < p->block.n; i++)
    if (p->block.v[i][0] == '/' && !strpbrk (p->block.v[i], "*?["))
      expect_host_mask (p, host_masks, p->block.v[i]);
}

/* --- comparison ------------------------------------------------------- */

static char *
read_all (const char *path)
{
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return NULL;
  size_t cap = 4096, len = 0;
  char *buf = xmalloc0 (cap);
  size_t n;
  while ((n = fread (buf + len, 1, cap - len - 1, f)) > 0)
    {
      len += n;
      if (cap - len < 2)
        buf = xrealloc (buf, cap *= 2);
    }
  buf[len] = '\0';
  fclose (f);
  return buf;
}

static void
write_all_to (const char *path, const char *text)
{
  FILE *f = fopen (path, "we");
  if (f == NULL || fputs (text, f) < 0 || fclose (f) != 0)
    fail_msg ("write %s: %s", path, strerror (errno));
}

static void
print_first_difference (const char *want, const char *got)
{
  size_t line = 1;
  const char *w = want, *a = got;
  while (*w && *w == *a)
    {
      if (*w == '\n')
        line++;
      w++;
      a++;
    }
  const char *ws = w, *as = a;
  while (ws > want && ws[-1] != '\n')
    ws--;
  while (as > got && as[-1] != '\n')
    as--;
  print_error ("first difference at line %zu:\n  golden: %.*s\n  actual: %.*s\n", line, (int) strcspn (ws, "\n"),
               ws, (int) strcspn (as, "\n"), as);
}

/* diff -u, when the system has it (no shell: paths are arguments). */
static void
print_diff (const char *golden, const char *actual)
{
  char *argv[] = { (char *) "diff", (char *) "-u", (char *) golden, (char *) actual, NULL };
  pid_t pid;
  if (posix_spawnp (&pid, "diff", NULL, NULL, argv, environ) != 0)
    return;
  fflush (stdout);
  int status;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
}

/* NULL when policy NAME compiles to its golden text (or the text was
 * rewritten), else what differs.  Failing only once everything is freed
 * keeps LeakSanitizer quiet about the longjmp of fail_msg. */
static char *
golden_mismatch (const char *name)
{
  cleanup_free char *file = xasprintf ("%s/policies/%s.yaml", HAVEN_SRCDIR, name);
  cleanup_free char *golden = xasprintf ("%s/tests/golden/policies/%s.json", HAVEN_SRCDIR, name);
  cleanup_policy hv_policy *p = NULL;
  cleanup_error hv_error *err = NULL;
  if (hv_policy_load (file, &p, &err) < 0)
    return xasprintf ("load %s: %s", file, err->msg);
  cleanup_free char *json = compile_in_world (p);
  cleanup_strv oci_strv host_masks = { 0 };
  cleanup_free char *actual = normalize (json, &host_masks);
  check_host_blocks (p, &host_masks);
  const char *update = getenv ("HAVEN_UPDATE_GOLDEN");
  if (update && strcmp (update, "1") == 0)
    {
      write_all_to (golden, actual);
      print_message ("updated %s\n", golden);
      return NULL;
    }
  cleanup_free char *want = read_all (golden);
  if (want == NULL)
    return xasprintf ("%s: %s (HAVEN_UPDATE_GOLDEN=1 tests/unit/test_policy_golden writes it)", golden,
                      strerror (errno));
  if (strcmp (want, actual) == 0)
    return NULL;
  cleanup_free char *out = xasprintf ("/tmp/haven-golden-%s-XXXXXX.json", name);
  int fd = mkstemps (out, 5);
  if (fd < 0)
    return xasprintf ("mkstemps %s: %s", out, strerror (errno));
  close (fd);
  write_all_to (out, actual);
  print_first_difference (want, actual);
  print_diff (golden, out);
  return xasprintf ("policy %s: the compiled config differs from %s; actual output in %s (if the change is "
                    "intended: HAVEN_UPDATE_GOLDEN=1 tests/unit/test_policy_golden, then review git diff)",
                    name, golden, out);
}

static void
test_golden (void **state)
{
  char *why = golden_mismatch (*state);
  if (why == NULL)
    return;
  static char msg[4096];
  snprintf (msg, sizeof (msg), "%s", why);
  free (why);
  fail_msg ("%s", msg);
}

static bool
in_shipped (const char *name)
{
  for (size_t i = 0; shipped[i]; i++)
    if (strcmp (shipped[i], name) == 0)
      return true;
  return false;
}

/* Every policies/NAME.yaml has a golden test, and every golden file a
 * policy. */
static void
names_with_suffix (const char *dir, const char *suffix, void (*check) (const char *name, const char *dir))
{
  struct dirent **list;
  int n = scandir (dir, &list, NULL, alphasort);
  if (n < 0)
    fail_msg ("scandir %s: %s", dir, strerror (errno));
  size_t sl = strlen (suffix);
  for (int i = 0; i < n; i++)
    {
      size_t l = strlen (list[i]->d_name);
      if (l > sl && strcmp (list[i]->d_name + l - sl, suffix) == 0)
        {
          cleanup_free char *name = strndup (list[i]->d_name, l - sl);
          check (name, dir);
        }
      free (list[i]);
    }
  free (list);
}

static void
must_be_shipped (const char *name, const char *dir)
{
  if (!in_shipped (name))
    fail_msg ("%s/%s has no golden test: add it to shipped[] in tests/unit/test_policy_golden.c", dir, name);
}

static void
test_every_policy_listed (void **state)
{
  (void) state;
  names_with_suffix (HAVEN_SRCDIR "/policies", ".yaml", must_be_shipped);
  names_with_suffix (HAVEN_SRCDIR "/tests/golden/policies", ".json", must_be_shipped);
}

int
main (void)
{
  /* In a new network namespace (as root) no host socket is bound, so none
   * is masked; elsewhere sockets are left out by normalize. */
  if (unshare (CLONE_NEWNET) < 0 && errno != EPERM)
    fprintf (stderr, "test_policy_golden: unshare(CLONE_NEWNET): %s\n", strerror (errno));
  struct CMUnitTest tests[N_ELEMENTS (shipped)] = { { 0 } };
  size_t n = 0;
  tests[n++] = (struct CMUnitTest){ "every_policy_listed", test_every_policy_listed, NULL, NULL, NULL };
  for (size_t i = 0; shipped[i]; i++)
    tests[n++] = (struct CMUnitTest){ shipped[i], test_golden, NULL, NULL, (void *) shipped[i] };
  return _cmocka_run_group_tests ("policy_golden", tests, n, setup_world, teardown_world);
}
