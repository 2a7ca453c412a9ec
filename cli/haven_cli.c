/* haven: sandbox a command on the workstation under a policy.
 *
 *   haven run [--policy NAME|FILE] [--project DIR] -- CMD ARGS...
 *   haven policy check|compile|list|explain ...
 *   haven serve [--socket PATH] ...   (the sandbox service)
 *   haven mcp [--policy P] ...        (an MCP server over stdio, a client of the service)
 *   haven doctor [--json] ...         (what this host offers, what each policy gets here)
 *
 * `haven run` compiles the policy into a bundle (the host's root mounted
 * read-only, the project writable) and runs it with the runtime in this
 * same process; no daemon is involved. */
#include "file_read.h"
#include "host_share.h"
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "approvals_policy.h"
#include "cli.h"
#include "audit_monitor.h"
#include "doctor_cmd.h"
#include "engine_install.h"
#include "install_cmd.h"
#include "exit_status.h"
#include "haven_annotations.h"
#include "haven_audit.h"
#include "approve_cmd.h"
#include "why_cmd.h"
#include "haven_help.h"
#include "haven_run.h"
#include "policy.h"
#include "policy_load.h"
#include "policy_apply.h"
#include "policy_compile.h"
#include "policy_env.h"
#include "k8s_token.h"
#include "mcp_cmd.h"
#include "policy_network_explain.h"
#include "policy_suggest_cmd.h"
#include "direct_plan_explain.h"
#include "run_context.h"
#include "sandbox.h"
#include "serve_cmd.h"
#include "self_exe.h"
#include "utils.h"

#define DEFAULT_POLICY HV_HAVEN_DEFAULT_POLICY

/* How haven was invoked (argv[0]): run_trust.c checks that path too. */
static const char *haven_argv0;

struct run_opts
{
  const char *policy;
  const char *project;
  bool keep_bundle;
  const char *config;
  const char *isolation;
  bool learn;
  bool help;
  char **cmd;
};

static int
parse_run (const char *what, int argc, char **argv, struct run_opts *o, hv_error **err)
{
  static const struct hv_opt opts[] = { { "policy", 'p', true, 1 }, { "project", 0, true, 2 },
                                        { "keep-bundle", 0, false, 3 }, { "config", 0, true, 4 },
                                        { "help", 'h', false, 5 }, { "isolation", 0, true, 6 },
                                        { "learn", 0, false, 7 },
                                        { NULL, 0, false, 0 } };
  struct hv_opt_iter it = { argc, argv, 1, what };
  const char *arg;
  int id;
  while ((id = hv_opt_next (&it, opts, &arg, err)) > 0)
    if (id == 1)
      o->policy = arg;
    else if (id == 2)
      o->project = arg;
    else if (id == 4)
      o->config = arg;
    else if (id == 5)
      o->help = true;
    else if (id == 6)
      o->isolation = arg;
    else if (id == 7)
      o->learn = true;
    else
      o->keep_bundle = true;
  if (id < 0)
    return -1;
  o->cmd = argv + it.index;
  return 0;
}

/* --isolation, else $HAVEN_ISOLATION, else auto. */
static int
parse_isolation (const char *opt, enum hv_isolation *out, hv_error **err)
{
  const char *env = getenv (HV_ISOLATION_ENV);
  const char *v = opt ? opt : (env && env[0] ? env : "auto");
  if (hv_isolation_parse (v, out) < 0)
    return hv_error_set (err, 0, "haven run: %s \"%s\": expected auto, namespaces or landlock",
                         opt ? "--isolation" : HV_ISOLATION_ENV, v);
  return 0;
}

static int
cmd_haven_run (int argc, char **argv, int *exit_status, hv_error **err)
{
  struct run_opts o = { .policy = getenv ("HAVEN_POLICY") };
  *exit_status = 0;
  if (parse_run ("haven run", argc, argv, &o, err) < 0)
    return -1;
  if (o.help)
    {
      hv_haven_usage (stdout, "run");
      return 0;
    }
  enum hv_isolation isolation = HV_ISOLATION_AUTO;
  if (parse_isolation (o.isolation, &isolation, err) < 0)
    return -1;
  struct hv_session_opts so = { .policy = o.policy ? o.policy : DEFAULT_POLICY,
                                .project = o.project,
                                .keep_bundle = o.keep_bundle,
                                .cmd = o.cmd,
                                .haven_argv0 = haven_argv0,
                                .isolation = isolation,
                                .learn = o.learn };
  return hv_session_run (&so, exit_status, err);
}

static int
policy_check (int argc, char **argv, hv_error **err)
{
  if (argc != 2)
    return hv_error_set (err, 0, "usage: haven policy check NAME|FILE");
  cleanup_policy hv_policy *p = NULL;
  if (hv_policy_load (argv[1], &p, err) < 0)
    return -1;
  /* Cautions (user-content hosts, DoH resolvers): legal, but said. */
  for (size_t i = 0; i < p->warnings.n; i++)
    fprintf (stderr, "haven: warning: %s\n", p->warnings.v[i]);
  printf ("%s: ok (policy \"%s\")\n", p->file ? p->file : argv[1], p->name);
  /* What each weaker form the policy accepts means (parse refuses an
   * entry with no meaning). */
  for (size_t i = 0; i < p->best_effort.n; i++)
    printf ("  best_effort %s: %s\n", p->best_effort.v[i], hv_policy_best_effort_what (p->best_effort.v[i]));
  return 0;
}

static int
policy_compile (int argc, char **argv, hv_error **err)
{
  if (argc < 2)
    return hv_error_set (err, 0, "usage: haven policy compile NAME|FILE [--project DIR] [-- CMD ARGS...]");
  struct run_opts o = { .policy = argv[1] };
  cleanup_free char *json = NULL;
  cleanup_policy hv_policy *p = NULL;
  cleanup_run_context struct hv_run_context rc = { 0 };
  static char *default_cmd[] = { (char *) "sh", NULL };
  if (parse_run ("haven policy compile", argc - 1, argv + 1, &o, err) < 0)
    return -1;
  if (o.cmd[0] == NULL)
    o.cmd = default_cmd;
  if (hv_policy_load (argv[1], &p, err) < 0)
    return -1;
  if (o.config)
    {
      /* Tighten an existing config (Docker's, Podman's) instead. */
      cleanup_free char *text = NULL;
      cleanup_strv oci_strv notes = { 0 };
      if (hv_read_file (o.config, &text, NULL, err) < 0
          || hv_policy_apply (p, text, o.config, &json, &notes, err) < 0)
        return -1;
      for (size_t i = 0; i < notes.n; i++)
        fprintf (stderr, "haven: note: %s\n", notes.v[i]);
      puts (json);
      return 0;
    }
  if (hv_run_context_init (o.project, o.cmd, &rc, err) < 0)
    return -1;
  rc.ctx.rootfs = "rootfs";
  if (hv_policy_compile (p, &rc.ctx, &json, err) < 0)
    return -1;
  if (p->n_env_from || p->ssh_agent.value || p->n_git_creds)
    fprintf (stderr, "haven: note: env.set_from_file, env.set_from_env and credentials: are read by haven run "
                     "itself: this config has none of them\n");
  if (p->n_api_creds)
    fprintf (stderr, "haven: note: credentials.api: this config names the gateway and holds its placeholder; the "
                     "keys are read by haven run itself, which alone can run it\n");
  puts (json);
  return 0;
}

/* Every policy on the search path once (an earlier directory shadows a
 * later one), sorted by name: readdir's order is the filesystem's. */
static int
policy_list (hv_error **err)
{
  (void) err;
  oci_strv names = { 0 };
  hv_policy_names (&names);
  for (size_t i = 0; i < names.n; i++)
    {
      /* The file that `--policy NAME` would load. */
      cleanup_free char *found = hv_policy_find (names.v[i]);
      hv_policy *p = NULL;
      cleanup_error hv_error *perr = NULL;
      if (found == NULL || hv_policy_load (found, &p, &perr) < 0)
        printf ("%-14s (invalid: %s)\n", names.v[i], perr ? perr->msg : "not found");
      else
        printf ("%-14s %s\n", names.v[i], p->description ? p->description : "");
      hv_policy_free (p);
    }
  oci_strv_free (&names);
  return 0;
}

static void
list_line (const char *label, const oci_strv *v)
{
  if (v->n == 0)
    return;
  printf ("  %s", label);
  for (size_t i = 0; i < v->n; i++)
    printf ("%s%s", i ? ", " : " ", v->v[i]);
  printf ("\n");
}

/* Like list_line, but "DIR/ ** /NAME" patterns are grouped by DIR, so a
 * family of names hidden at any depth reads as one line per place. */
static void
list_patterns (const char *label, const oci_strv *v)
{
  oci_strv plain = { 0 }, dirs = { 0 };
  for (size_t i = 0; i < v->n; i++)
    {
      const char *star = strstr (v->v[i], "/**/");
      if (star == NULL)
        oci_strv_push (&plain, v->v[i]);
      else
        {
          cleanup_free char *dir = xasprintf ("%.*s", (int) (star - v->v[i]), v->v[i]);
          oci_strv_push_unique (&dirs, dir);
        }
    }
  if (plain.n || dirs.n)
    printf ("  %s\n", label);
  for (size_t i = 0; i < plain.n; i++)
    printf ("%s%s%s", i ? ", " : "    ", plain.v[i], i + 1 == plain.n ? "\n" : "");
  for (size_t d = 0; d < dirs.n; d++)
    {
      printf ("    at any depth under %s:", dirs.v[d]);
      size_t len = strlen (dirs.v[d]);
      bool first = true;
      for (size_t i = 0; i < v->n; i++)
        if (strncmp (v->v[i], dirs.v[d], len) == 0 && strncmp (v->v[i] + len, "/**/", 4) == 0)
          {
            printf ("%s%s", first ? " " : ", ", v->v[i] + len + 4);
            first = false;
          }
      printf ("\n");
    }
  oci_strv_free (&plain);
  oci_strv_free (&dirs);
}

/* A size exactly as enforced: in the largest unit that divides it, else
 * in bytes (explain used to print 0 MiB for a limit that was none). */
static const char *
exact_size (uint64_t v, char *buf, size_t len)
{
  static const char *const units[] = { "TiB", "GiB", "MiB", "KiB" };
  for (int i = 0; i < 4; i++)
    {
      uint64_t u = 1ULL << (10 * (4 - i));
      if (v >= u && v % u == 0)
        {
          snprintf (buf, len, "%llu %s", (unsigned long long) (v / u), units[i]);
          return buf;
        }
    }
  snprintf (buf, len, "%llu bytes", (unsigned long long) v);
  return buf;
}

static void
explain_list (const char *head, const oci_strv *v)
{
  for (size_t j = 0; j < v->n; j++)
    printf ("%s%s", j ? ", " : head, v->v[j]);
}

static void
explain_home_allow (const hv_policy *p)
{
  for (size_t i = 0; i < p->home_allow.n; i++)
    {
      const hv_home_access *a = &p->home_access[i];
      printf ("    %s: ", p->home_allow.v[i]);
      if (a->write == HV_HOME_COPY)
        printf ("copy-on-write (writes go to this project's copy, never to the real one)");
      else if (a->write == HV_HOME_READ_ONLY)
        printf ("read-only");
      else if (a->write == HV_HOME_DATA)
        {
          printf ("copy-on-write (writes go to this project's copy, never to the real one), but:");
          explain_list ("\n      written for real, nothing in it executable (noexec): ", &a->data);
          explain_list ("\n      read-only inside it: ", &a->protect);
          bool dashed = false;
          for (size_t j = 0; j < a->data.n; j++)
            dashed |= strstr (a->data.v[j], "_dashed}") != NULL;
          if (dashed)
            printf ("\n        ({project_dashed}, {cwd_dashed}: the path of the project, of the directory the "
                    "command starts in, each character but a letter or digit made '-')");
          if (a->own.n)
            {
              printf ("\n      this project's own copy, starting empty (the real one never shown), of each name "
                      "in it matching: ");
              bool first = true, any_keep = false;
              for (size_t j = 0; j < a->own.n; j++)
                if (a->own.v[j][0] != '!')
                  {
                    printf ("%s%s", first ? "" : ", ", a->own.v[j]);
                    first = false;
                  }
                else
                  any_keep = true;
              first = true;
              if (any_keep)
                printf ("\n        except (the real one, copy-on-write): ");
              for (size_t j = 0; j < a->own.n; j++)
                if (a->own.v[j][0] == '!')
                  {
                    printf ("%s%s", first ? "" : ", ", a->own.v[j] + 1);
                    first = false;
                  }
            }
        }
      else
        {
          printf ("writable for real, nothing in it executable (noexec)");
          explain_list ("; read-only inside it: ", &a->protect);
        }
      if (a->per_project.n)
        explain_list ("\n      this project's copy keeps only this project's entries of: ", &a->per_project);
      if (a->commands.n)
        {
          printf ("\n      the run is refused when ");
          if (a->settings.n)
            explain_list ("", &a->settings);
          else
            printf ("it");
          printf (" runs a file the sandbox can write, in: ");
          explain_list ("", &a->commands);
        }
      printf ("\n");
    }
}

/* block's "!pattern" entries are exceptions, listed apart. */
static void
explain_blocked (const hv_policy *p)
{
  oci_strv hidden = { 0 }, shown = { 0 };
  for (size_t i = 0; i < p->block.n; i++)
    oci_strv_push (p->block.v[i][0] == '!' ? &shown : &hidden, p->block.v[i] + (p->block.v[i][0] == '!'));
  list_patterns ("Hidden (absent or empty):", &hidden);
  list_patterns ("Not hidden, as exceptions to the above (the last entry matching a path decides):", &shown);
  if (hidden.n)
    printf ("  A hidden file git tracks (haven run, the project's top repository) is hidden too: blank\n"
            "  lines that git reads as the staged content, so git status stays clean.  What was committed\n"
            "  stays readable in .git (git show HEAD:.env): remove a secret from history and rotate it.\n");
  oci_strv_free (&hidden);
  oci_strv_free (&shown);
}

static void
explain_hidden_home (const hv_policy *p)
{
  if (!p->hide_home.value)
    return;
  printf ("  Your home directory is hidden (an empty scratch directory)");
  if (p->home_allow.n)
    printf (", except:");
  printf ("\n");
  explain_home_allow (p);
  if (p->home_allow.n)
    printf ("  Copies live in ~/.local/state/haven/projects/; when no overlay can be mounted, copy-on-write\n"
            "  entries are read-only instead (haven says so).\n");
  printf ("  \"Your home\" is both $HOME and the home in the password database, whatever $HOME says;\n"
          "  ~/ in the lists above names a path in each.  Other users' homes (under /home, and /root)\n"
          "  are hidden too.\n");
}

static void
explain_files (const hv_policy *p)
{
  printf ("Files\n  The whole host filesystem is visible read-only, but for container engines' data\n"
          "  (/var/lib/docker, /var/lib/containerd, /var/lib/containers, ... : other containers' files),\n"
          "  which is hidden.\n");
  bool project_rw = !p->project_writable.set || p->project_writable.value;
  printf ("  The project directory is %s.\n", project_rw ? "writable" : "read-only");
  list_line ("Also writable:", &p->read_write);
  list_line ("Read-only even inside the project:", &p->protect);
  list_line ("Read-only:", &p->read_only);
  explain_blocked (p);
  explain_hidden_home (p);
  printf ("  haven refuses a project that is /, is your home or contains a hidden home.\n");
  if (p->refuse_project_links.value)
    printf ("  Symbolic links a haven run leaves in the project that lead outside it are removed after the run\n"
            "  and named on stderr (filesystem.project_links: refuse).\n");
  else
    printf ("  Symbolic links a haven run leaves in the project that lead outside it are named on stderr after\n"
            "  the run (filesystem.project_links: report; refuse removes them).\n");
  char size[64];
  for (size_t i = 0; i < p->n_tmpfs; i++)
    printf ("  %s is a private scratch directory (%s).\n", p->tmpfs[i].path,
            exact_size (p->tmpfs[i].size ? p->tmpfs[i].size : 256ULL << 20, size, sizeof (size)));
  printf ("  /run is replaced by an empty directory, so daemon sockets (docker.sock) are out of reach.\n");
  printf ("  A path named above that is, or crosses, a symbolic link is never followed (an earlier run may\n"
          "  have planted it): protected and hidden ones are masked, writable ones are not bound (with a\n"
          "  warning), a read-only one is an error; a mask whose path changed before the start stops it.\n");
  printf ("  The directories on the way to a hidden path in the project cannot be renamed or removed in the\n"
          "  sandbox (each is a mount point), so no run can make another's start miss a hidden file; a\n"
          "  directory there that haven cannot read and you own stops the start.\n");
  printf ("  Unix sockets bound on the host when the run starts (listed in /proc/net/unix) are masked\n"
          "  wherever they are, so connect() to them fails; sockets bound later, or only in another\n"
          "  network namespace, are not (abstract sockets are per network namespace: network none\n"
          "  leaves the host's out of reach).\n");
  printf ("  Git (every policy): what git would execute in the project that the sandbox created or changed\n"
          "  (hooks, the core.hooksPath directory and the one above it, the hook managers' files .husky/,\n"
          "  .pre-commit-config.yaml, lefthook.yml..., commondir, .git files, execution-capable config, in\n"
          "  every repository) is moved into .haven-quarantine/ when haven run ends, and when an engine\n"
          "  container ends (before docker run returns).  While an engine container runs, each git directory\n"
          "  of a writable project is pinned (cannot be renamed or replaced) and what git executes there is\n"
          "  read-only; a new repository, commondir, config, hooks or hook manager's file is quarantined\n"
          "  as soon as inotify reports it (a short window, not a wall; at most 16,384 directories watched).\n");
  printf ("  Agents' and editors' project settings (every policy, in every directory of the project): a\n"
          "  command the sandbox added to .claude/settings.json or settings.local.json (hooks, statusLine,\n"
          "  apiKeyHelper, env, permissions.defaultMode bypassPermissions: anything but permissions, model\n"
          "  and a few data keys), .mcp.json,\n"
          "  .gemini/settings.json, .codex/config.toml or a folderOpen task in .vscode/tasks.json is\n"
          "  quarantined the same way (a file that existed gets its content back), as is any file created\n"
          "  or changed in .claude/hooks/ or .gemini/extensions/; data changes stay.\n");
}

static void
explain_programs (const hv_policy *p)
{
  printf ("\nPrograms\n");
  if (p->allow_exec.n)
    list_line ("Only these may be executed:", &p->allow_exec);
  else if (p->block_shell.value)
    printf ("  Installed programs may be executed, but no shell; nothing the command writes is executable.\n");
  else
    printf ("  Any installed program may be executed.\n");
  if (p->block_shell.value)
    printf ("  No shell may be executed (sh, bash, dash, zsh, busybox sh... under any name).\n");
  if (p->allow_exec.n || p->block_shell.value)
    printf ("  Writable places (and the project) are noexec; shell files are unreadable%s; no executable\n"
            "  memfd; a #! script in allow_exec needs its interpreter named too.\n"
            "  Limit: the dynamic loader can still run other readable host programs, and an allowed\n"
            "  interpreter runs any script.\n",
            p->block_shell.value ? "" : " unless allow_exec names them");
  printf ("  No new privileges: setuid programs do not gain rights.\n");
  printf ("  No set-user-ID or set-group-ID file can be made (chmod, open, mknod with the bit: EPERM).\n");
  if (p->capabilities.n)
    list_line ("Capabilities kept:", &p->capabilities);
  else
    printf ("  No capabilities.\n");
}

static void
explain_syscalls (const hv_policy *p)
{
  printf ("\nSystem calls\n");
  if (p->syscall_profile && strcmp (p->syscall_profile, "none") == 0)
    printf ("  No agent seccomp profile%s.\n", p->syscall_deny.n ? " (only the denials below)" : "");
  else
    printf ("  Escape primitives fail with \"Operation not permitted\": ptrace, mount, bpf, perf_event_open,\n"
            "  keyctl, io_uring, userfaultfd, module and kexec loading, TIOCSTI, new user namespaces, ...\n"
            "  (arguments compared as the kernel reads them: ioctl's request on its low 32 bits).\n");
  printf ("  The command never shares your controlling terminal (a new session without a pty).\n");
  list_line ("Also allowed:", &p->syscall_allow);
  list_line ("Also denied:", &p->syscall_deny);
}

static void
explain_resources (const hv_policy *p)
{
  char size[64];
  printf ("\nResources\n");
  if (p->memory.set)
    printf ("  Memory: %s\n", exact_size (p->memory.value, size, sizeof (size)));
  if (p->cpus_milli.set)
    printf ("  CPUs: %.2f\n", (double) p->cpus_milli.value / 1000.0);
  if (p->pids.set)
    printf ("  Processes: %llu\n", (unsigned long long) p->pids.value);
  if (p->nofile.set)
    printf ("  Open files: %llu\n", (unsigned long long) p->nofile.value);
  if (p->timeout_s.set)
    printf ("  Wall-clock limit: %llu s\n", (unsigned long long) p->timeout_s.value);
  if (p->container_memory.set && p->container_memory_pct)
    printf ("  Memory in engine containers: %llu%% of the host's (%s on this host; swap none)\n",
            (unsigned long long) p->container_memory.value,
            exact_size (hv_container_memory_limit (p), size, sizeof (size)));
  else if (p->container_memory.set)
    printf ("  Memory in engine containers: %s\n", exact_size (p->container_memory.value, size, sizeof (size)));
  if (p->container_cpus_milli.set && p->container_cpus_pct)
    printf ("  CPUs in engine containers: %llu%% of the host's (%.2f of %.0f on this host)\n",
            (unsigned long long) p->container_cpus_milli.value, (double) hv_container_cpus_limit (p) / 1000.0,
            (double) hv_host_cpus_milli () / 1000.0);
  else if (p->container_cpus_milli.set)
    printf ("  CPUs in engine containers: %.2f\n", (double) p->container_cpus_milli.value / 1000.0);
  if (p->container_pids.set)
    printf ("  Processes in engine containers: %llu\n", (unsigned long long) p->container_pids.value);
  printf ("  The command is killed with haven, also if haven is killed (SIGKILL).\n");
}

static void
explain_audit (const hv_policy *p)
{
  printf ("\nAudit\n");
  if (p->audit_log)
    {
      printf ("  Each denied system call is recorded in %s (JSON lines),\n", p->audit_log);
      printf ("  the first of each system call always, the others at most %d per second after a burst\n"
              "  of %d and %d MiB per run; what is left out is counted in \"dropped\" records.\n"
              "  Every denied call fails with EPERM either way.\n",
              HV_AUDIT_RATE, HV_AUDIT_BURST, HV_AUDIT_MAX_BYTES >> 20);
      printf ("  Each denial record names the rule that refused it and the policy line that would allow\n"
              "  it; inside the sandbox `haven why` lists this run's (read-only, its own only).\n");
      printf ("  Only haven's side writes the trail, out of the sandbox's reach (a trail it could write\n"
              "  is refused); each record is chained to the one before it (seq, and prev: the SHA-256\n"
              "  of the line before), so `haven audit --verify` names the first changed, removed or cut\n"
              "  line.  `haven run --learn` records a run's refusals; `haven policy suggest` turns them\n"
              "  into a policy that extends this one.\n");
    }
  else
    printf ("  No audit trail (set audit.log to record denied system calls).\n");
  printf ("  In engine containers (haven-runc --policy, " HV_POLICY_ANNOTATION ") each denied call is recorded\n"
          "  in the container's own trail, /var/log/haven/containers/<id>.jsonl for root\n"
          "  ($XDG_STATE_HOME/haven/containers/<id>.jsonl otherwise, rootless Podman's too),\n"
          "  whatever audit.log says.\n");
}

extern char **environ;

/* What a policy enforces, in words, one section per kind of rule. */
static int
policy_explain (int argc, char **argv, hv_error **err)
{
  if (argc != 2)
    return hv_error_set (err, 0, "usage: haven policy explain NAME|FILE");
  cleanup_policy hv_policy *p = NULL;
  if (hv_policy_load (argv[1], &p, err) < 0 || hv_approved_merge (p, err) < 0)
    return -1;
  printf ("Policy \"%s\"%s%s\n\n", p->name, p->description ? ": " : "", p->description ? p->description : "");
  explain_files (p);
  hv_net_explain (p, stdout);
  explain_programs (p);
  explain_syscalls (p);
  explain_resources (p);
  hv_env_explain (p, environ, stdout);
  hv_k8s_token_explain (p, stdout);
  explain_audit (p);
  hv_direct_plan_explain (p, stdout);
  return 0;
}

static int
cmd_policy (int argc, char **argv, hv_error **err)
{
  if (argc < 2)
    return hv_error_set (err, 0, "haven policy: which? list, explain, check or compile (see haven policy --help)");
  const char *sub = argv[1];
  if (strcmp (sub, "check") == 0)
    return policy_check (argc - 1, argv + 1, err);
  if (strcmp (sub, "compile") == 0)
    return policy_compile (argc - 1, argv + 1, err);
  if (strcmp (sub, "list") == 0)
    return policy_list (err);
  if (strcmp (sub, "explain") == 0)
    return policy_explain (argc - 1, argv + 1, err);
  if (strcmp (sub, "suggest") == 0)
    return hv_policy_suggest_cmd (argc - 1, argv + 1, err);
  return hv_error_set (err, 0, "unknown policy command \"%s\" (check, compile, list, explain, suggest)", sub);
}

int
haven_main (int argc, char **argv)
{
  hv_error *err = NULL;
  int r = -1;
  int status = 0; /* the sandboxed command's, for haven run */
  haven_argv0 = argv[0];
  /* Not a user's command: haven serve executes it to make a sandbox in a
   * fresh process (session/sandbox.h, maker_exe). */
  if (argc >= 2 && strcmp (argv[1], "__sandbox-maker") == 0)
    {
      if (hv_ensure_sealed_self (argv, &err) < 0)
        {
          fprintf (stderr, "haven: %s\n", err->msg);
          hv_error_free (&err);
          return HV_EXIT_HAVEN_FAILED;
        }
      /* _exit, as a forked maker ends: what it made is its caller's
       * now, and nothing of it is released here. */
      _exit (hv_sandbox_maker_main (argc, argv));
    }
  if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    {
      hv_haven_usage (stdout, NULL);
      return argc < 2 ? 1 : 0;
    }
  /* `haven COMMAND --help` is the command's usage (run parses its own
   * options: what follows its command is the command's). */
  if (strcmp (argv[1], "run") != 0 && hv_haven_is_command (argv[1]) && hv_haven_asks_help (argc, argv))
    {
      hv_haven_usage (stdout, argv[1]);
      return 0;
    }
  if (strcmp (argv[1], "run") == 0)
    {
      /* The runtime runs in this process: protect the binary first
       * (CVE-2019-5736), exactly as haven-runc does. */
      if (hv_ensure_sealed_self (argv, &err) == 0)
        r = cmd_haven_run (argc - 1, argv + 1, &status, &err);
    }
  else if (strcmp (argv[1], "serve") == 0)
    {
      /* Its makers run the runtime in children of this process: the same
       * protection of the binary as haven run's. */
      if (hv_ensure_sealed_self (argv, &err) == 0)
        r = hv_cmd_serve (argc - 1, argv + 1, haven_argv0, &err);
    }
  else if (strcmp (argv[1], "mcp") == 0)
    /* A client of the service: it runs no runtime itself (a private
     * service it starts is `haven serve`, which protects itself). */
    return hv_cmd_mcp (argc - 1, argv + 1, haven_argv0);
  else if (strcmp (argv[1], "doctor") == 0)
    /* A report: its own exit status (0, or 2 for bad options). */
    return hv_cmd_doctor (argc - 1, argv + 1);
  else if (strcmp (argv[1], "policy") == 0)
    r = cmd_policy (argc - 1, argv + 1, &err);
  else if (strcmp (argv[1], "audit") == 0)
    r = hv_cmd_audit (argc - 1, argv + 1, &status, &err);
  else if (strcmp (argv[1], "approve") == 0)
    r = hv_cmd_approve (argc - 1, argv + 1, &err);
  else if (strcmp (argv[1], "why") == 0)
    {
      /* Inside a sandbox: its own exit status (0, 1 outside one, 2 on
       * bad options).  It ends with _exit after flushing: no exit
       * handlers run in the sandbox, where a sanitizer build's leak check
       * at exit cannot work (it needs ptrace, which the agent profile
       * refuses) and used to die before stdio's buffers were written,
       * losing the whole answer. */
      int why_status = hv_cmd_why (argc - 1, argv + 1);
      fflush (stdout);
      fflush (stderr);
      _exit (why_status);
    }
  else if (strcmp (argv[1], "install") == 0 || strcmp (argv[1], "uninstall") == 0)
    r = hv_cmd_install (argc - 1, argv + 1, strcmp (argv[1], "uninstall") == 0, &err);
  else if (strcmp (argv[1], "--version") == 0)
    {
      printf ("haven version %s\ncommit: %s\n", PACKAGE_VERSION, HAVEN_GIT_COMMIT);
      return 0;
    }
  else
    hv_error_set (&err, 0, "unknown command \"%s\" (see haven --help)", argv[1]);
  if (r < 0)
    {
      fprintf (stderr, "haven: %s\n", err ? err->msg : "unknown error");
      /* A command that could not be executed exits as a shell's would
       * (126 denied, 127 not found); any other failure of haven's 125. */
      int code = err && err->exit_status ? err->exit_status : HV_EXIT_HAVEN_FAILED;
      hv_error_free (&err);
      return code;
    }
  return status;
}
