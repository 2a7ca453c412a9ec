/* The plan of a policy's rules without namespaces (session/direct_plan.h):
 * every shipped policy compiled as haven run does, in a world of its own
 * (a project, a home, another user's home), then planned:
 *   - each rule's verdict, per shipped policy, and the best_effort
 *     entries that turn a refusal into a weaker form (and those that
 *     cannot: credentials);
 *   - nothing the namespaced sandbox hides is granted: no Landlock rule
 *     lies at or above a path the compiled spec masks, hides under a
 *     tmpfs or maskedPaths, nor above the world's secrets;
 *   - where the kernel has Landlock, the plan's rules applied in a child
 *     process: the secrets cannot be opened, the project can be written,
 *     the host cannot;
 *   - the refusal's words: every refused rule, why, the best_effort entry,
 *     haven doctor, exit status 125. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include <cmocka.h>

#include "array_size.h"
#include "direct_plan.h"
#include "direct_plan_explain.h"
#include "direct_plan_fs.h"
#include "json_gen.h"
#include "landlock.h"
#include "landlock_rules.h"
#include "policy_compile.h"
#include "policy_load.h"
#include "policy_parse.h"
#include "unit_skip.h"
#include "utils.h"

static const char *const shipped[] = { "default",    "offline", "strict",       "claude-code", "codex",
                                       "gemini-cli", "aider",   "devcontainer", "ci",          NULL };

/* Every weaker form there is. */
static const char *const all_weaker[] = { HV_WEAKER_PRIVATE_TMP, HV_WEAKER_NETWORK_PORTS,
                                          HV_WEAKER_PROTECT_AFTER_RUN, HV_WEAKER_UNIX_SOCKETS,
                                          HV_WEAKER_CGROUPS, NULL };

static char world[PATH_MAX];

/* The world's secrets: hidden in every shipped policy (hide_home, other
 * homes, block). */
static const char *const secrets[] = { "home/.ssh/id_rsa", "home/.aws/credentials", "others/alice/notes",
                                       "home/.netrc", NULL };

static void
put (const char *rel, const char *content)
{
  cleanup_free char *path = xasprintf ("%s/%s", world, rel);
  if (content == NULL)
    {
      if (mkdir (path, 0755) < 0 && errno != EEXIST)
        fail_msg ("mkdir %s: %s", path, strerror (errno));
      return;
    }
  FILE *f = fopen (path, "we");
  if (f == NULL || fputs (content, f) < 0 || fclose (f) != 0)
    fail_msg ("write %s: %s", path, strerror (errno));
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
  /* Under the build directory, not /tmp: the policies hide /tmp as a
   * whole, which would hide the world's secrets whatever the plan does. */
  const char *base = getenv ("HV_TEST_WORLD_DIR") ?: ".";
  char here[PATH_MAX];
  /* A build directory under one of the policies' private directories
   * (a checkout in /tmp): as root the world goes to /var/lib instead; an
   * ordinary user has nowhere else to write, and HV_TEST_WORLD_DIR
   * must name a place. */
  if (realpath (base, here) != NULL
      && (str_has_prefix (here, "/tmp/") || str_has_prefix (here, "/var/tmp/") || str_has_prefix (here, "/dev/shm/")))
    {
      if (geteuid () != 0)
        {
          fprintf (stderr, "test_direct_plan: the build directory %s lies under /tmp, /var/tmp or /dev/shm, which "
                           "the policies hide whole: set HV_TEST_WORLD_DIR to a directory elsewhere\n", here);
          return -1;
        }
      base = "/var/lib";
    }
  char tmpl[PATH_MAX];
  snprintf (tmpl, sizeof (tmpl), "%s/h-nsplan-world.XXXXXX", base);
  if (mkdtemp (tmpl) == NULL || realpath (tmpl, world) == NULL)
    return -1;
  static const char *const dirs[] = { "project", "project/.git", "project/.git/hooks", "project/src", "home",
                                      "home/.ssh", "home/.aws", "home/.cache", "home/.cargo", "others",
                                      "others/alice", "state", NULL };
  for (size_t i = 0; dirs[i]; i++)
    put (dirs[i], NULL);
  static const char *const files[] = { "project/.git/config", "project/.git/hooks/pre-commit", "project/src/main.py",
                                       "home/.ssh/id_rsa", "home/.aws/credentials", "others/alice/notes",
                                       "home/.netrc", "home/.cache/pip.log", NULL };
  for (size_t i = 0; files[i]; i++)
    put (files[i], "x\n");
  cleanup_free char *home = xasprintf ("%s/home", world);
  setenv ("HOME", home, 1);
  setenv ("HAVEN_POLICY_PATH", HAVEN_SRCDIR "/policies", 1);
  return 0;
}

static int
teardown_world (void **state)
{
  (void) state;
  if (world[0])
    nftw (world, remove_one, 16, FTW_DEPTH | FTW_PHYS);
  return 0;
}

/* The policy NAME with extra best_effort entries (NULL-terminated). */
static hv_policy *
load (const char *name, const char *const *extra)
{
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (name, &p, &err) < 0)
    fail_msg ("load %s: %s", name, err->msg);
  for (size_t i = 0; extra && extra[i]; i++)
    oci_strv_push_unique (&p->best_effort, extra[i]);
  return p;
}

/* A variable the next compile's host environment holds besides the
 * fixed ones ("ANTHROPIC_API_KEY=...": the gateway runs), or NULL. */
static const char *extra_env;

static oci_spec *
compile (const hv_policy *p)
{
  cleanup_free char *project = xasprintf ("%s/project", world);
  cleanup_free char *home = xasprintf ("%s/home", world);
  cleanup_free char *other = xasprintf ("%s/others/alice", world);
  cleanup_free char *state = xasprintf ("%s/state", world);
  cleanup_free char *env_home = xasprintf ("HOME=%s", home);
  char *env[] = { (char *) "PATH=/usr/local/bin:/usr/bin:/bin", env_home, (char *) "TERM=xterm", (char *) extra_env,
                  NULL };
  char *argv[] = { (char *) "agent", NULL };
  oci_strv homes = { 0 }, other_homes = { 0 };
  oci_strv_push (&homes, home);
  oci_strv_push (&other_homes, other);
  struct hv_run_ctx ctx = { .project = project, .home = home, .homes = &homes, .other_homes = &other_homes,
                            .cwd = project, .rootfs = "rootfs", .uid = 1000, .gid = 1000, .argv = argv,
                            .host_env = env, .home_state = state };
  char *json = NULL;
  hv_error *err = NULL;
  if (hv_policy_compile (p, &ctx, &json, &err) < 0)
    fail_msg ("compile %s: %s", p->name, err->msg);
  oci_strv_free (&homes);
  oci_strv_free (&other_homes);
  oci_spec *spec = NULL;
  if (oci_spec_parse (json, strlen (json), "config.json", &spec, &err) < 0)
    fail_msg ("parse %s: %s", p->name, err->msg);
  free (json);
  return spec;
}

static void
plan_of (const hv_policy *p, const oci_spec *spec, int abi, hv_direct_plan *plan)
{
  cleanup_free char *project = xasprintf ("%s/project", world);
  cleanup_free char *home = xasprintf ("%s/home", world);
  struct hv_run_ctx ctx = { .project = project, .home = home, .cwd = project };
  hv_error *err = NULL;
  if (hv_direct_plan_build (p, &ctx, spec, abi, plan, &err) < 0)
    fail_msg ("plan %s: %s", p->name, err->msg);
}

static const hv_direct_rule *
rule (const hv_direct_plan *plan, const char *name)
{
  for (size_t i = 0; i < plan->n_rules; i++)
    if (strcmp (plan->rules[i].rule, name) == 0)
      return &plan->rules[i];
  return NULL;
}

static void
assert_verdict (const hv_direct_plan *plan, const char *name, enum hv_direct_verdict verdict, const char *policy)
{
  const hv_direct_rule *r = rule (plan, name);
  if (r == NULL)
    fail_msg ("%s: no rule \"%s\"", policy, name);
  if (r->verdict != verdict)
    fail_msg ("%s: rule \"%s\": verdict %d, expected %d (%s)", policy, name, r->verdict, verdict, r->how);
}

/* --- verdicts ------------------------------------------------------------- */

/* What each shipped policy cannot have without namespaces, with no
 * best_effort entry. */
#define TMPFS "filesystem.tmpfs /tmp", "filesystem.tmpfs /var/tmp"
#define PROTECT "filesystem.protect .git/hooks", "filesystem.protect .git/config"
static const struct
{
  const char *policy;
  const char *refused[10];
} expected[] = {
  { "default", { TMPFS, PROTECT, NULL } },
  { "offline", { TMPFS, PROTECT, NULL } },
  /* A read-only project: nothing to protect in it. */
  { "strict", { TMPFS, "resources.memory", "resources.cpus", "resources.pids", NULL } },
  { "ci", { TMPFS, PROTECT, "resources.memory", "resources.pids", NULL } },
  { "claude-code", { TMPFS, PROTECT, "network.allow", NULL } },
  { "codex", { TMPFS, PROTECT, "network.allow", NULL } },
  { "gemini-cli", { TMPFS, PROTECT, "network.allow", NULL } },
  /* credentials.api without its key in the environment: no gateway, nothing
   * refused (test_refusal_names_every_rule has the key). */
  { "aider", { TMPFS, PROTECT, "network.allow", NULL } },
  { "devcontainer", { TMPFS, PROTECT, "network.allow", NULL } },
};

/* Is any rule of list at or above path? */
static const char *
granted_in (const oci_strv *list, const char *path)
{
  for (size_t i = 0; i < list->n; i++)
    if (hv_direct_path_under (path, list->v[i]))
      return list->v[i];
  return NULL;
}

static void
test_shipped_verdicts (void **state)
{
  (void) state;
  for (size_t k = 0; k < N_ELEMENTS (expected); k++)
    {
      cleanup_policy hv_policy *p = load (expected[k].policy, NULL);
      cleanup_spec oci_spec *spec = compile (p);
      cleanup_direct_plan hv_direct_plan plan;
      plan_of (p, spec, 7, &plan);
      size_t n = 0;
      for (size_t i = 0; expected[k].refused[i]; i++, n++)
        assert_verdict (&plan, expected[k].refused[i], HV_DIRECT_REFUSED, p->name);
      for (size_t i = 0; i < plan.n_rules; i++)
        if (plan.rules[i].verdict == HV_DIRECT_REFUSED)
          print_message ("%s: refused %s: %s\n", p->name, plan.rules[i].rule, plan.rules[i].how);
      assert_int_equal (plan.n_refused, n);
      assert_int_equal (plan.n_weaker, 0);
      /* What the kernel enforces, each said. */
      assert_verdict (&plan, "filesystem.hide_home", HV_DIRECT_ENFORCED, p->name);
      assert_verdict (&plan, "filesystem.block (outside the project)", HV_DIRECT_ENFORCED, p->name);
      assert_verdict (&plan, "syscalls", HV_DIRECT_ENFORCED, p->name);
      assert_verdict (&plan, "Unix sockets", HV_DIRECT_ENFORCED, p->name);
      assert_verdict (&plan, "processes outside the run", HV_DIRECT_ENFORCED, p->name);
      assert_true (plan.scope_signal && plan.scope_abstract_unix);
      assert_false (plan.unix_sockets);
      if (p->net_mode == HV_NET_NONE)
        {
          assert_verdict (&plan, "network.mode none", HV_DIRECT_ENFORCED, p->name);
          assert_true (plan.tcp_handled);
          assert_int_equal (plan.n_tcp_connect_ports, 0);
          assert_false (plan.udp);
        }
      /* The project writable around its protected paths (refused: the
       * plan never runs, but it never grants what it must not either). */
      cleanup_free char *src = xasprintf ("%s/project/src/main.py", world);
      cleanup_free char *hooks = xasprintf ("%s/project/.git/hooks/pre-commit", world);
      if (p->project_writable.set && !p->project_writable.value)
        assert_null (granted_in (&plan.write, src));
      else
        assert_non_null (granted_in (&plan.write, src));
      assert_null (granted_in (&plan.write, hooks));
    }
}

/* Each weaker form accepted by its entry, said as weaker; credentials
 * have none. */
static void
test_best_effort_accepts (void **state)
{
  (void) state;
  for (size_t k = 0; shipped[k]; k++)
    {
      cleanup_policy hv_policy *p = load (shipped[k], all_weaker);
      cleanup_spec oci_spec *spec = compile (p);
      cleanup_direct_plan hv_direct_plan plan;
      plan_of (p, spec, 7, &plan);
      for (size_t i = 0; i < plan.n_rules; i++)
        if (plan.rules[i].verdict == HV_DIRECT_REFUSED)
          assert_true (str_has_prefix (plan.rules[i].rule, "credentials."));
      assert_int_equal (plan.n_refused, 0); /* no key in the environment: no gateway */
      if (p->n_api_creds)
        {
          /* With the key the gateway runs, and nothing accepts its absence. */
          extra_env = p->api_creds[0].key.host_var ? xasprintf ("%s=sk-test", p->api_creds[0].key.host_var) : NULL;
          cleanup_spec oci_spec *gspec = compile (p);
          free ((char *) extra_env);
          extra_env = NULL;
          cleanup_direct_plan hv_direct_plan gplan;
          plan_of (p, gspec, 7, &gplan);
          assert_int_equal (gplan.n_refused, 1);
          assert_verdict (&gplan, "credentials.api", HV_DIRECT_REFUSED, p->name);
        }
      assert_verdict (&plan, "filesystem.tmpfs /tmp", HV_DIRECT_WEAKER, p->name);
      assert_verdict (&plan, "Unix sockets", HV_DIRECT_WEAKER, p->name);
      assert_true (plan.scratch_tmp && plan.unix_sockets);
      bool rw = !p->project_writable.set || p->project_writable.value;
      cleanup_free char *project = xasprintf ("%s/project", world);
      if (rw)
        {
          assert_verdict (&plan, "filesystem.protect .git/hooks", HV_DIRECT_WEAKER, p->name);
          assert_true (plan.guard_protect);
          /* The guard handles protect: the project is one writable rule. */
          assert_true (oci_strv_contains (&plan.write, project));
        }
      else
        assert_null (granted_in (&plan.write, project));
      if (p->net_mode == HV_NET_ALLOWLIST)
        {
          assert_verdict (&plan, "network.allow", HV_DIRECT_WEAKER, p->name);
          assert_true (plan.tcp_handled && plan.udp);
          bool has_443 = false;
          for (size_t i = 0; i < plan.n_tcp_connect_ports; i++)
            has_443 |= plan.tcp_connect_ports[i] == 443;
          assert_true (has_443);
        }
      if (p->memory.set)
        assert_verdict (&plan, "resources.memory", HV_DIRECT_WEAKER, p->name);
    }
}

/* --- nothing hidden is granted -------------------------------------------- */

/* Is any rule of the plan at or above path? */
static const char *
granted_at (const hv_direct_plan *plan, const char *path)
{
  const oci_strv *lists[] = { &plan->read, &plan->write, &plan->exec };
  for (size_t l = 0; l < 3; l++)
    for (size_t i = 0; i < lists[l]->n; i++)
      if (hv_direct_path_under (path, lists[l]->v[i]))
        return lists[l]->v[i];
  return NULL;
}

/* What the spec hides, read from the spec itself: every mount that does
 * not show the host's own path there (a bind of another source, a tmpfs,
 * devpts), and maskedPaths. */
static void
spec_hidden (const oci_spec *spec, oci_strv *out)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const oci_mount *m = &spec->mounts[i];
      const char *type = m->type ? m->type : "";
      bool same = m->source && strcmp (m->source, m->destination) == 0;
      if (strcmp (type, "proc") == 0 || strcmp (type, "overlay") == 0 || same)
        continue;
      oci_strv_push (out, m->destination);
    }
  for (size_t i = 0; i < spec->linux_cfg.masked_paths.n; i++)
    oci_strv_push (out, spec->linux_cfg.masked_paths.v[i]);
}

static void
check_nothing_hidden_granted (const char *name, const char *const *extra)
{
  cleanup_policy hv_policy *p = load (name, extra);
  cleanup_spec oci_spec *spec = compile (p);
  cleanup_direct_plan hv_direct_plan plan;
  plan_of (p, spec, 7, &plan);
  cleanup_strv oci_strv hidden = { 0 };
  spec_hidden (spec, &hidden);
  cleanup_free char *project = xasprintf ("%s/project", world);
  size_t checked = 0;
  for (size_t i = 0; i < hidden.n; i++)
    {
      const char *h = hidden.v[i];
      /* A tmpfs's path too, under private_tmp's weaker form: the real
       * directory stays hidden (the run's scratch directory is TMPDIR). */
      /* The kernel's files a container masks in /proc: read as the
       * caller reads them (direct_plan_fs.c says why). */
      if (str_has_prefix (h, "/proc/"))
        continue;
      /* Inside the project: refused by name (test_refusal_names). */
      if (strcmp (h, project) != 0 && hv_direct_path_under (h, project))
        continue;
      const char *g = granted_at (&plan, h);
      if (g)
        fail_msg ("%s: %s is hidden in the sandbox, but the plan grants %s", name, h, g);
      checked++;
    }
  assert_true (checked > 0);
  if (getenv ("HV_DEBUG_PLAN"))
    {
      for (size_t i = 0; i < plan.read.n; i++) print_message ("read %s\n", plan.read.v[i]);
      for (size_t i = 0; i < plan.write.n; i++) print_message ("write %s\n", plan.write.v[i]);
      for (size_t i = 0; i < plan.exec.n; i++) print_message ("exec %s\n", plan.exec.v[i]);
    }
  for (size_t i = 0; secrets[i]; i++)
    {
      cleanup_free char *path = xasprintf ("%s/%s", world, secrets[i]);
      char real[PATH_MAX];
      if (realpath (path, real) == NULL)
        fail_msg ("realpath %s", path);
      const char *g = granted_at (&plan, real);
      if (g)
        fail_msg ("%s: the secret %s is granted by %s", name, real, g);
    }
  /* /proc read whole: the run's own processes need theirs; another
   * process's environ is Landlock's ptrace scope's (test_plan_applied). */
  assert_non_null (granted_at (&plan, "/proc/self/fd"));
  assert_non_null (granted_at (&plan, "/proc/cpuinfo"));
  assert_int_equal (plan.list.n, 1);
  assert_string_equal (plan.list.v[0], "/");
  if (access ("/etc/shadow", F_OK) == 0)
    assert_null (granted_at (&plan, "/etc/shadow"));
  /* What is shown stays shown: the host's programs, the home's cache. */
  assert_non_null (granted_at (&plan, "/etc/passwd"));
  cleanup_free char *cache = xasprintf ("%s/home/.cache/pip.log", world);
  assert_non_null (granted_at (&plan, cache));
}

static void
test_hidden_never_granted (void **state)
{
  (void) state;
  for (size_t k = 0; shipped[k]; k++)
    {
      check_nothing_hidden_granted (shipped[k], NULL);
      /* With the weaker forms /tmp is shown, so the planner must split
       * the host's directories down to the world's hidden homes. */
      check_nothing_hidden_granted (shipped[k], all_weaker);
    }
}

/* The plan's file rules as the runtime's run.haven.landlock document. */
static char *
landlock_json (const hv_direct_plan *plan)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  const char *keys[] = { "read", "write", "exec" };
  const oci_strv *lists[] = { &plan->read, &plan->write, &plan->exec };
  for (size_t l = 0; l < 3; l++)
    {
      jg_str (g, keys[l]);
      yajl_gen_array_open (g);
      for (size_t i = 0; i < lists[l]->n; i++)
        jg_str (g, lists[l]->v[i]);
      yajl_gen_array_close (g);
    }
  jg_str (g, "bestEffort");
  yajl_gen_bool (g, false);
  yajl_gen_map_close (g);
  return jg_finish (g);
}

/* The status of a program run by a child confined by json. */
static int
confined_exec (const char *json, const char *program)
{
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      hv_error *err = NULL;
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || hv_landlock_apply (json, false, &err) < 0)
        _exit (10);
      /* A shell told to do nothing; true ignores its arguments. */
      char *argv[] = { (char *) program, (char *) "-c", (char *) ":", NULL };
      execv (program, argv);
      _exit (errno == EACCES ? 13 : 12);
    }
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

/* Exec rules (strict: block_shell): the host's programs run, a shell
 * does not (Landlock refuses its execve). */
static void
test_landlock_exec_rules (void **state)
{
  (void) state;
  if (hv_landlock_abi () < 1)
    SKIP_BECAUSE ("this kernel has no Landlock");
  char sh[PATH_MAX], tru[PATH_MAX];
  if (realpath ("/bin/sh", sh) == NULL || realpath ("/bin/true", tru) == NULL)
    SKIP_BECAUSE ("no /bin/sh or /bin/true here");
  /* A program outside the allowed ones, on a mount that is not noexec. */
  put ("tools", NULL);
  cleanup_free char *tool = xasprintf ("%s/tools/true", world);
  {
    cleanup_free char *bytes = NULL;
    size_t len = 0;
    FILE *in = fopen (tru, "re");
    FILE *out = open_memstream (&bytes, &len);
    int c;
    while (in && (c = fgetc (in)) != EOF)
      fputc (c, out);
    fclose (out);
    if (in)
      fclose (in);
    FILE *t = fopen (tool, "we");
    assert_non_null (t);
    assert_int_equal (fwrite (bytes, 1, len, t), len);
    assert_int_equal (fclose (t), 0);
    assert_int_equal (chmod (tool, 0755), 0);
  }
  cleanup_policy hv_policy *p = load ("strict", all_weaker);
  cleanup_spec oci_spec *spec = compile (p);
  cleanup_direct_plan hv_direct_plan plan;
  plan_of (p, spec, hv_landlock_abi (), &plan);
  cleanup_free char *json = landlock_json (&plan);
  assert_int_equal (confined_exec (json, tru), 0);
  assert_int_equal (confined_exec (json, sh), 13);
  assert_int_equal (confined_exec (json, tool), 13);
  /* Without the plan's exec rules the shell runs: the check above is
   * theirs. */
  cleanup_policy hv_policy *d = load ("default", all_weaker);
  cleanup_spec oci_spec *dspec = compile (d);
  cleanup_direct_plan hv_direct_plan dplan;
  plan_of (d, dspec, hv_landlock_abi (), &dplan);
  cleanup_free char *djson = landlock_json (&dplan);
  assert_int_equal (confined_exec (djson, tru), 0);
  assert_int_equal (confined_exec (djson, sh), 0);
  assert_int_equal (confined_exec (djson, tool), 0);
}

/* The plan's rules applied by the runtime's Landlock code, in a child. */
static void
test_landlock_applied (void **state)
{
  (void) state;
  if (hv_landlock_abi () < 1)
    SKIP_BECAUSE ("this kernel has no Landlock");
  cleanup_free char *link = xasprintf ("%s/project/sshdir", world);
  cleanup_free char *ssh = xasprintf ("%s/home/.ssh", world);
  assert_int_equal (symlink (ssh, link), 0);
  cleanup_policy hv_policy *p = load ("default", all_weaker);
  cleanup_spec oci_spec *spec = compile (p);
  cleanup_direct_plan hv_direct_plan plan;
  plan_of (p, spec, hv_landlock_abi (), &plan);
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      hv_error *err = NULL;
      /* The plan's file rules as the runner applies them (direct_run_child.c). */
      struct hv_landlock_rules rules = { .list = &plan.list, .read = &plan.read, .write = &plan.write, .exec = &plan.exec };
      /* As the runner does: no capability (with CAP_SYS_PTRACE, root
       * reads the parent's environ across Landlock's domain). */
      struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
      struct __user_cap_data_struct none[2] = { 0 };
      if (syscall (SYS_capset, &h, none) < 0)
        _exit (9);
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || hv_landlock_restrict (&rules, false, &err) < 0)
        _exit (10);
      for (size_t i = 0; secrets[i]; i++)
        {
          cleanup_free char *path = xasprintf ("%s/%s", world, secrets[i]);
          int fd = open (path, O_RDONLY);
          if (fd >= 0 || errno != EACCES)
            _exit (20 + (int) i);
        }
      cleanup_free char *main_py = xasprintf ("%s/project/src/main.py", world);
      cleanup_free char *made = xasprintf ("%s/project/new.txt", world);
      if (open (main_py, O_WRONLY | O_APPEND) < 0 || open (made, O_WRONLY | O_CREAT, 0644) < 0)
        _exit (30);
      /* Read and listed (a directory of the host, executable). */
      if (open ("/etc/passwd", O_RDONLY) < 0 || open ("/usr/bin", O_RDONLY | O_DIRECTORY) < 0)
        _exit (31);
      /* The host is read-only (even as root). */
      if (open ("/etc/haven-direct-plan-test", O_WRONLY | O_CREAT, 0644) >= 0 || errno != EACCES)
        _exit (32);
      cleanup_free char *cache = xasprintf ("%s/home/.cache/pip.log", world);
      if (open (cache, O_RDONLY) < 0 || open (cache, O_WRONLY) >= 0)
        _exit (33);
      /* A link planted in the project leads nowhere granted. */
      cleanup_free char *via_link = xasprintf ("%s/project/sshdir/id_rsa", world);
      if (open (via_link, O_RDONLY) >= 0 || errno != EACCES)
        _exit (34);
      /* The devices a command needs; not the host's shared memory. */
      if (open ("/dev/null", O_WRONLY) < 0 || open ("/dev/shm/h-nsplan-test", O_WRONLY | O_CREAT, 0600) >= 0)
        _exit (35);
      /* Another process's environment (the test's, outside the domain). */
      cleanup_free char *environ_path = xasprintf ("/proc/%d/environ", (int) getppid ());
      if (open (environ_path, O_RDONLY) >= 0 || errno != EACCES)
        _exit (36);
      /* Directories listed, a hidden one's content never read. */
      cleanup_free char *home_dir = xasprintf ("%s/home", world);
      if (open ("/", O_RDONLY | O_DIRECTORY) < 0 || open (home_dir, O_RDONLY | O_DIRECTORY) < 0)
        _exit (38);
      /* The kernel's files of /proc are read, and the process's own. */
      if (open ("/proc/cpuinfo", O_RDONLY) < 0 || open ("/proc/self/status", O_RDONLY) < 0
          || open ("/proc/self/fd", O_RDONLY | O_DIRECTORY) < 0)
        _exit (37);
      _exit (0);
    }
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  unlink (link);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}

/* --- the refusal ---------------------------------------------------------- */

static void
test_refusal_names (void **state)
{
  (void) state;
  put ("project/.env", "SECRET=1\n");
  cleanup_policy hv_policy *p = load ("claude-code", NULL);
  extra_env = "ANTHROPIC_API_KEY=sk-test"; /* the gateway runs: credentials.api refused */
  cleanup_spec oci_spec *spec = compile (p);
  extra_env = NULL;
  cleanup_direct_plan hv_direct_plan plan;
  plan_of (p, spec, 7, &plan);
  cleanup_free char *env = xasprintf ("%s/project/.env", world);
  unlink (env);
  cleanup_free char *block = xasprintf ("filesystem.block %s", env);
  assert_verdict (&plan, block, HV_DIRECT_REFUSED, p->name);
  hv_error *err = NULL;
  assert_int_equal (hv_direct_plan_refusal (&plan, p, &err), -1);
  assert_non_null (err);
  print_message ("%s\n", err->msg);
  assert_int_equal (err->exit_status, 125);
  /* Every refused rule, each with its reason. */
  for (size_t i = 0; i < plan.n_rules; i++)
    if (plan.rules[i].verdict == HV_DIRECT_REFUSED)
      {
        cleanup_free char *line = xasprintf ("\n  %s: %s", plan.rules[i].rule, plan.rules[i].how);
        assert_non_null (strstr (err->msg, line));
      }
  assert_non_null (strstr (err->msg, "filesystem.protect .git/hooks: "));
  assert_non_null (strstr (err->msg, "best_effort " HV_WEAKER_PROTECT_AFTER_RUN " would accept"));
  assert_non_null (strstr (err->msg, "best_effort " HV_WEAKER_NETWORK_PORTS " would accept"));
  assert_non_null (strstr (err->msg, "best_effort " HV_WEAKER_PRIVATE_TMP " would accept"));
  assert_non_null (strstr (err->msg, "credentials.api: "));
  assert_true (str_has_prefix (err->msg, "the policy claude-code cannot run without namespaces here"));
  const char *tail = "\nhaven doctor says what this host offers";
  assert_string_equal (err->msg + strlen (err->msg) - strlen (tail), tail);
  hv_error_free (&err);
  /* Accepted forms leave nothing to refuse but what has none. */
  cleanup_policy hv_policy *d = load ("default", all_weaker);
  cleanup_spec oci_spec *dspec = compile (d);
  cleanup_direct_plan hv_direct_plan dplan;
  plan_of (d, dspec, 7, &dplan);
  assert_int_equal (hv_direct_plan_refusal (&dplan, d, &err), 0);
  assert_null (err);
}

/* Older kernels: what each Landlock ABI lacks is refused by name. */
static void
test_landlock_abi (void **state)
{
  (void) state;
  cleanup_policy hv_policy *p = load ("default", all_weaker);
  cleanup_spec oci_spec *spec = compile (p);
  static const struct
  {
    int abi;
    const char *refused;
  } cases[] = { { 0, "filesystem" }, { 3, "network.mode none" }, { 5, "processes outside the run" } };
  for (size_t i = 0; i < N_ELEMENTS (cases); i++)
    {
      cleanup_direct_plan hv_direct_plan plan;
      plan_of (p, spec, cases[i].abi, &plan);
      assert_verdict (&plan, cases[i].refused, HV_DIRECT_REFUSED, p->name);
      if (cases[i].abi == 0)
        assert_int_equal (plan.read.n + plan.write.n + plan.exec.n, 0);
    }
}

/* The parser knows every weaker form's entry, and refuses an unknown
 * one by file:line:column. */
static void
test_best_effort_parsed (void **state)
{
  (void) state;
  const char *ok = "best_effort: [landlock, " HV_WEAKER_PRIVATE_TMP ", " HV_WEAKER_NETWORK_PORTS ", "
                   HV_WEAKER_PROTECT_AFTER_RUN ", " HV_WEAKER_UNIX_SOCKETS ", " HV_WEAKER_CGROUPS "]\n";
  hv_policy p = { 0 };
  hv_error *err = NULL;
  if (hv_policy_parse (ok, strlen (ok), "t.yaml", &p, NULL, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_int_equal (p.best_effort.n, 6);
  hv_policy_free_fields (&p);
  const char *bad = "name: t\nbest_effort:\n  - private_tmp\n  - private-tmp\n";
  memset (&p, 0, sizeof (p));
  assert_int_equal (hv_policy_parse (bad, strlen (bad), "t.yaml", &p, NULL, &err), -1);
  hv_policy_free_fields (&p);
  assert_non_null (err);
  assert_true (str_has_prefix (err->msg, "t.yaml:4:5: best_effort: unknown entry \"private-tmp\" (known: landlock, "));
  hv_error_free (&err);
}

/* explain's section: each rule's verdict for the current directory. */
static void
test_explain_section (void **state)
{
  (void) state;
  char *text = NULL;
  size_t len = 0;
  char here[PATH_MAX];
  assert_non_null (getcwd (here, sizeof (here)));
  cleanup_free char *project = xasprintf ("%s/project", world);
  assert_int_equal (chdir (project), 0);
  cleanup_policy hv_policy *p = load ("claude-code", NULL);
  FILE *out = open_memstream (&text, &len);
  /* explain compiles with this process's environment: with the key, the
   * gateway runs and credentials.api is refused. */
  setenv ("ANTHROPIC_API_KEY", "sk-test", 1);
  hv_direct_plan_explain (p, out);
  unsetenv ("ANTHROPIC_API_KEY");
  fclose (out);
  assert_int_equal (chdir (here), 0);
  print_message ("%s", text);
  assert_true (str_has_prefix (text, "\nWithout namespaces "));
  cleanup_free char *on = xasprintf ("with %s as the project:\n", project);
  assert_non_null (strstr (text, on));
  assert_non_null (strstr (text, "\n  refused   filesystem.tmpfs /tmp: "));
  assert_non_null (strstr (text, "\n  refused   credentials.api: "));
  assert_non_null (strstr (text, "\n  enforced  filesystem.hide_home: "));
  assert_non_null (strstr (text, "\n  It would not start: 6 rules refused "));
  free (text);
  /* The policy's best_effort entries, each said, and the weaker rules. */
  cleanup_policy hv_policy *d = load ("default", all_weaker);
  text = NULL;
  out = open_memstream (&text, &len);
  assert_int_equal (chdir (project), 0);
  hv_direct_plan_explain (d, out);
  fclose (out);
  assert_int_equal (chdir (here), 0);
  assert_non_null (strstr (text, "\n  best_effort private_tmp: without namespaces: filesystem.tmpfs "));
  assert_non_null (strstr (text, "\n  weaker    filesystem.protect .git/hooks: "));
  assert_non_null (strstr (text, "\n  It would start, 5 rules weaker as said above.\n"));
  free (text);
}

/* network_ports: the allowlist's ports, one by one; an entry of every
 * port is refused by name, never turned into TCP anywhere. */
static void
test_network_ports (void **state)
{
  (void) state;
  static const struct
  {
    const char *allow;
    bool refused;
    uint16_t port;
  } cases[] = { { "[example.com:22, example.org]", false, 22 }, { "[10.0.0.0/8]", true, 0 } };
  for (size_t c = 0; c < N_ELEMENTS (cases); c++)
    {
      cleanup_free char *file = xasprintf ("%s/ports.yaml", world);
      cleanup_free char *text = xasprintf ("name: ports\nextends: default\nnetwork:\n  mode: allowlist\n"
                                           "  allow: %s\nbest_effort: [network_ports]\n",
                                           cases[c].allow);
      put ("ports.yaml", text);
      cleanup_policy hv_policy *p = load (file, NULL);
      cleanup_spec oci_spec *spec = compile (p);
      cleanup_direct_plan hv_direct_plan plan;
      plan_of (p, spec, 7, &plan);
      unlink (file);
      if (cases[c].refused)
        {
          assert_verdict (&plan, "network.allow 10.0.0.0/8", HV_DIRECT_REFUSED, p->name);
          assert_null (rule (&plan, "network.allow"));
          continue;
        }
      assert_verdict (&plan, "network.allow", HV_DIRECT_WEAKER, p->name);
      assert_int_equal (plan.n_tcp_connect_ports, 3);
      assert_int_equal (plan.tcp_connect_ports[0], cases[c].port);
      assert_int_equal (plan.tcp_connect_ports[1], 443);
      assert_int_equal (plan.tcp_connect_ports[2], 80);
      assert_true (plan.tcp_handled && plan.udp);
    }
}

/* A hidden file among more entries than the plan grants one by one:
 * refused, naming the directory (never granted whole). */
static void
test_rule_cap (void **state)
{
  (void) state;
  put ("big", NULL);
  for (int i = 0; i <= HV_DIRECT_MAX_RULES; i++)
    {
      cleanup_free char *rel = xasprintf ("big/f%d", i);
      put (rel, "");
    }
  put ("big/secret", "x\n");
  cleanup_free char *text = xasprintf ("name: cap\nextends: default\nfilesystem:\n  block: [%s/big/secret]\n"
                                       "best_effort: [private_tmp, protect_after_run]\n",
                                       world);
  put ("cap.yaml", text);
  cleanup_free char *file = xasprintf ("%s/cap.yaml", world);
  cleanup_policy hv_policy *p = load (file, NULL);
  cleanup_spec oci_spec *spec = compile (p);
  cleanup_direct_plan hv_direct_plan plan;
  plan_of (p, spec, 7, &plan);
  cleanup_free char *big = xasprintf ("%s/big", world);
  cleanup_free char *secret = xasprintf ("%s/big/secret", world);
  assert_null (granted_at (&plan, secret));
  const hv_direct_rule *r = rule (&plan, "filesystem.block");
  assert_non_null (r);
  assert_int_equal (r->verdict, HV_DIRECT_REFUSED);
  cleanup_free char *words = xasprintf ("to hide what lies in %s", big);
  assert_non_null (strstr (r->how, words));
  for (int i = 0; i <= HV_DIRECT_MAX_RULES; i++)
    {
      cleanup_free char *path = xasprintf ("%s/big/f%d", world, i);
      unlink (path);
    }
  unlink (secret);
  rmdir (big);
  unlink (file);
}

/* A policy that asks (network.ask, mode: ask) needs the resolver to hold
 * a lookup: refused by name, whatever best_effort accepts. */
static void
test_ask_refused (void **state)
{
  (void) state;
  hv_policy *p = load ("claude-code", all_weaker);
  oci_spec *spec = compile (p);
  p->net_ask_all = (oci_opt_bool) { .set = true, .value = true };
  hv_direct_plan plan = { 0 };
  plan_of (p, spec, 6, &plan);
  assert_verdict (&plan, "network.mode ask", HV_DIRECT_REFUSED, p->name);
  assert_null (rule (&plan, "network.ask"));
  hv_direct_plan_free (&plan);
  hv_policy_free (p);
  oci_spec_free (spec);
  p = load ("claude-code", all_weaker);
  spec = compile (p);
  char *problem = NULL;
  assert_int_equal (hv_net_entry_parse ("asked.example", false, "t.yaml:1:1", &p->net_ask, &problem), 0);
  memset (&plan, 0, sizeof (plan));
  plan_of (p, spec, 6, &plan);
  assert_verdict (&plan, "network.ask", HV_DIRECT_REFUSED, p->name);
  hv_direct_plan_free (&plan);
  hv_policy_free (p);
  oci_spec_free (spec);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_shipped_verdicts),   cmocka_unit_test (test_best_effort_accepts),
    cmocka_unit_test (test_hidden_never_granted), cmocka_unit_test (test_landlock_applied),
    cmocka_unit_test (test_refusal_names),      cmocka_unit_test (test_landlock_abi),
    cmocka_unit_test (test_best_effort_parsed), cmocka_unit_test (test_explain_section),
    cmocka_unit_test (test_network_ports),      cmocka_unit_test (test_landlock_exec_rules),
    cmocka_unit_test (test_rule_cap), cmocka_unit_test (test_ask_refused),
  };
  int failed = cmocka_run_group_tests (tests, setup_world, teardown_world);
  return unit_tests_status (failed, N_ELEMENTS (tests));
}
