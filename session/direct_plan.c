/* A policy's rules without namespaces (direct_plan.h): a verdict for
 * each, and the Landlock and seccomp settings of the run.  Every
 * decision here is fail-closed: what the kernel cannot enforce without
 * namespaces is refused unless the policy accepts a named weaker form
 * under best_effort (policies/README.md, "Without namespaces"). */
#include "config.h"
#include "direct_plan.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "direct_plan_fs.h"
#include "exit_status.h"
#include "haven_annotations.h"
#include "utils.h"

/* Landlock ABI versions of what the plan uses. */
#define ABI_NET 4    /* TCP bind and connect rules */
#define ABI_SCOPES 6 /* abstract Unix sockets and signals scoped to the domain */

/* Distinct TCP ports network_ports may allow (one Landlock rule each). */
#define MAX_PORTS 256

static bool
accepts (const hv_policy *p, const char *entry)
{
  return oci_strv_contains (&p->best_effort, entry);
}

static void __attribute__ ((format (printf, 4, 5)))
add (hv_direct_plan *plan, enum hv_direct_verdict verdict, const char *rule, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *how = xvasprintf (fmt, ap);
  va_end (ap);
  plan->rules = xrealloc (plan->rules, (plan->n_rules + 1) * sizeof (*plan->rules));
  plan->rules[plan->n_rules++] = (hv_direct_rule) { .rule = xstrdup (rule), .verdict = verdict, .how = how };
  if (verdict == HV_DIRECT_REFUSED)
    plan->n_refused++;
  else if (verdict == HV_DIRECT_WEAKER)
    plan->n_weaker++;
}

static bool
exec_rules (const hv_policy *p)
{
  return p->allow_exec.n > 0 || p->block_shell.value;
}

/* The Landlock exec list the compiler wrote (run.haven.landlock). */
static void
landlock_exec_list (const oci_spec *spec, oci_strv *out)
{
  const char *json = oci_kv_get (&spec->annotations, HV_LANDLOCK_ANNOTATION);
  if (json == NULL)
    return;
  yajl_val root = yajl_tree_parse (json, NULL, 0);
  const char *path[] = { "exec", NULL };
  yajl_val exec = root ? yajl_tree_get (root, path, yajl_t_array) : NULL;
  for (size_t i = 0; exec && i < exec->u.array.len; i++)
    if (YAJL_IS_STRING (exec->u.array.values[i]))
      oci_strv_push (out, exec->u.array.values[i]->u.string);
  yajl_tree_free (root);
}

/* The project-relative name a protect entry came from, or NULL. */
static const char *
protect_name (const hv_policy *p, const struct hv_run_ctx *ctx, const char *path)
{
  if (ctx->project == NULL)
    return NULL;
  size_t n = strlen (ctx->project);
  if (strncmp (path, ctx->project, n) != 0 || path[n] != '/')
    return NULL;
  for (size_t i = 0; i < p->protect.n; i++)
    {
      const char *rel = p->protect.v[i];
      while (rel[0] == '.' && rel[1] == '/')
        rel += 2;
      size_t m = strlen (rel);
      while (m > 0 && rel[m - 1] == '/')
        m--;
      if (strncmp (path + n + 1, rel, m) == 0 && path[n + 1 + m] == '\0')
        return p->protect.v[i];
    }
  return NULL;
}

static bool
project_writable (const hv_policy *p)
{
  return !p->project_writable.set || p->project_writable.value;
}

/* Files: hidden paths, protect, tmpfs, the home. */
static int
plan_files (const hv_policy *p, const struct hv_run_ctx *ctx, const oci_spec *spec, int abi, const char *root,
            hv_direct_plan *plan, hv_error **err)
{
  if (abi < 1)
    {
      add (plan, HV_DIRECT_REFUSED, "filesystem",
           "this kernel has no Landlock (or it is turned off): without namespaces nothing would keep a file "
           "hidden or read-only (no weaker form)");
      return 0;
    }
  cleanup_direct_view struct hv_direct_view view = { 0 };
  hv_direct_view_build (spec, exec_rules (p), &view);
  add (plan, HV_DIRECT_ENFORCED, "filesystem (the host read-only)",
       "Landlock: read%s on what the policy shows; write only to the project and the policy's writable paths",
       exec_rules (p) ? "" : " and execute");
  add (plan, HV_DIRECT_ENFORCED, "/proc",
       "the caller's, read-only: the run's own processes read as usual; of the caller's other processes "
       "(no PID namespace) the list, command lines and status show, their environment, memory and open "
       "files do not (Landlock refuses ptrace-mode access across its domain, the command holding no "
       "capability)");
  /* filesystem.tmpfs: a private directory needs a mount. */
  for (size_t i = 0; i < p->n_tmpfs; i++)
    {
      cleanup_free char *rule = xasprintf ("filesystem.tmpfs %s", p->tmpfs[i].path);
      if (accepts (p, HV_WEAKER_PRIVATE_TMP))
        {
          /* The real directory stays hidden, as the namespaced sandbox's
           * empty one hides it (the host's and other users' temporary
           * files, and whatever the policy blocks there, which the
           * compiler leaves to the tmpfs); the run's own scratch
           * directory is TMPDIR (runner).  What is weaker: a program
           * that writes to the path itself, not to TMPDIR, fails. */
          plan->scratch_tmp = true;
          add (plan, HV_DIRECT_WEAKER, rule,
               "a private scratch directory as TMPDIR; the real %s stays hidden and cannot be written (best_effort "
               "%s)",
               p->tmpfs[i].path, HV_WEAKER_PRIVATE_TMP);
        }
      else
        add (plan, HV_DIRECT_REFUSED, rule,
             "a private %s needs a mount namespace (best_effort %s would accept a private scratch directory as "
             "TMPDIR, the real %s hidden and not writable)",
             p->tmpfs[i].path, HV_WEAKER_PRIVATE_TMP, p->tmpfs[i].path);
    }

  /* Inside the writable project Landlock cannot take away what the tree
   * grants: a part of it can be neither hidden nor read-only (granting
   * the project entry by entry would also stop the command from making
   * a new file at those levels). */
  bool rw = ctx->project && project_writable (p);
  size_t hidden_outside = 0;
  for (size_t i = 0; i < view.n;)
    {
      struct hv_direct_entry *e = &view.v[i];
      bool in_project = rw && strcmp (e->path, ctx->project) != 0 && hv_direct_path_under (e->path, ctx->project);
      if (e->acc == 0 && in_project)
        {
          cleanup_free char *rule = xasprintf ("filesystem.block %s", e->path);
          add (plan, HV_DIRECT_REFUSED, rule,
               "it exists inside the project, which Landlock can only grant as a whole: hiding it needs a mount "
               "(no weaker form: a hidden file is never shown; move it out of the project)");
        }
      else if (e->acc == 0)
        hidden_outside++;
      if (e->protect && in_project)
        {
          const char *name = protect_name (p, ctx, e->path);
          cleanup_free char *rule
              = name ? xasprintf ("filesystem.protect %s", name) : xasprintf ("filesystem.read_only %s", e->path);
          if (name && accepts (p, HV_WEAKER_PROTECT_AFTER_RUN))
            {
              plan->guard_protect = true;
              add (plan, HV_DIRECT_WEAKER, rule,
                   "writable during the run; after it, haven kills what the command left running and the "
                   "project guard quarantines what changed there (best_effort %s)",
                   HV_WEAKER_PROTECT_AFTER_RUN);
              if (hv_direct_view_drop (&view, e->path))
                continue; /* the entry at i is now another one */
            }
          else if (name)
            add (plan, HV_DIRECT_REFUSED, rule,
                 "Landlock cannot make a part of the writable project read-only (best_effort %s would accept: "
                 "writable during the run, what changed there quarantined after it)",
                 HV_WEAKER_PROTECT_AFTER_RUN);
          else
            add (plan, HV_DIRECT_REFUSED, rule,
                 "Landlock cannot make a part of the writable project read-only (no weaker form)");
        }
      i++;
    }
  if (hidden_outside)
    add (plan, HV_DIRECT_ENFORCED, "filesystem.block (outside the project)",
         "Landlock: %zu hidden paths never granted (their names show in a listing, their content never); the "
         "directories above them are granted entry by entry, so what is made there later stays out of reach",
         hidden_outside);

  if (p->hide_home.value)
    add (plan, HV_DIRECT_ENFORCED, "filesystem.hide_home",
         "Landlock: nothing in the home is readable but the home_allow entries, granted one by one (HOME stays "
         "its real path; names in it show in a listing)");
  for (size_t i = 0; i < p->home_allow.n; i++)
    {
      cleanup_free char *rule = xasprintf ("filesystem.home_allow %s", p->home_allow.v[i]);
      switch (p->home_access[i].write)
        {
        case HV_HOME_COPY:
          add (plan, HV_DIRECT_ENFORCED, rule,
               "read-only (stricter: copy-on-write needs a mount; what the namespaced sandbox shows from the "
               "project's own copy is not shown)");
          break;
        case HV_HOME_DATA:
          add (plan, HV_DIRECT_ENFORCED, rule,
               "read-only, its data paths writable, its private ones never granted (stricter: copy-on-write "
               "needs a mount)");
          break;
        case HV_HOME_READ_ONLY:
          add (plan, HV_DIRECT_ENFORCED, rule, "Landlock: read-only");
          break;
        case HV_HOME_DIRECT:
          add (plan, HV_DIRECT_ENFORCED, rule,
               "Landlock: writable; a protected sub-path read-only, the directories above it granted entry "
               "by entry (nothing new can be made at those levels)");
          break;
        }
    }
  if (exec_rules (p))
    add (plan, HV_DIRECT_ENFORCED, p->block_shell.value ? "process.block_shell" : "process.allow_exec",
         "Landlock: execute only on the programs the policy allows");

  cleanup_strv oci_strv exec_list = { 0 };
  if (exec_rules (p))
    landlock_exec_list (spec, &exec_list);
  /* Every directory may be listed, as with namespaces: without it a
   * directory on the way to a hidden entry (/, /etc, the home's parent)
   * could not be, which breaks ls, globs and completion.  The price, said
   * with the hidden rules: a hidden entry's name shows in a listing, its
   * content never. */
  oci_strv_push (&plan->list, "/");
  if (hv_direct_grant (&view, exec_rules (p) ? &exec_list : NULL, root, plan, err) < 0)
    {
      /* Too many rules: refused by name rather than an error, so that
       * every other refusal is said with it. */
      add (plan, HV_DIRECT_REFUSED, "filesystem.block", "%s (no weaker form)", (*err)->msg);
      hv_error_free (err);
    }
  return 0;
}

/* False when refused (too many ports). */
static bool
plan_ports (const hv_policy *p, hv_direct_plan *plan)
{
  for (size_t i = 0; i < p->net_allow.n; i++)
    for (unsigned port = p->net_allow.v[i].port_lo; port && port <= p->net_allow.v[i].port_hi; port++)
      {
        bool seen = false;
        for (size_t j = 0; j < plan->n_tcp_connect_ports && !seen; j++)
          seen = plan->tcp_connect_ports[j] == port;
        if (seen)
          continue;
        if (plan->n_tcp_connect_ports == MAX_PORTS)
          {
            cleanup_free char *rule = xasprintf ("network.allow %s", p->net_allow.v[i].entry);
            add (plan, HV_DIRECT_REFUSED, rule,
                 "with the others, more than %d distinct ports (ports %u-%u): the weaker form allows ports one "
                 "by one (no weaker form for this many)",
                 MAX_PORTS, p->net_allow.v[i].port_lo, p->net_allow.v[i].port_hi);
            return false;
          }
        plan->tcp_connect_ports
            = xrealloc (plan->tcp_connect_ports, (plan->n_tcp_connect_ports + 1) * sizeof (uint16_t));
        plan->tcp_connect_ports[plan->n_tcp_connect_ports++] = (uint16_t) port;
      }
  return true;
}

/* Sockets: Landlock's TCP rules, seccomp's socket() filter, the scopes. */
static void
plan_network (const hv_policy *p, int abi, hv_direct_plan *plan)
{
  plan->unix_sockets = accepts (p, HV_WEAKER_UNIX_SOCKETS);
  plan->scope_abstract_unix = abi >= ABI_SCOPES;
  plan->scope_signal = abi >= ABI_SCOPES;
  switch (p->net_mode)
    {
    case HV_NET_OPEN:
      plan->udp = true;
      add (plan, HV_DIRECT_ENFORCED, "network.mode open", "the host's network, as the policy says");
      break;
    case HV_NET_ALLOWLIST:
      /* No weaker form: without the resolver nothing can hold a lookup
       * while someone is asked; allowing or refusing instead would do
       * other than the policy says. */
      if (p->net_ask.n)
        add (plan, HV_DIRECT_REFUSED, "network.ask",
             "asking for a name needs haven's resolver in a network namespace, which holds the lookup until "
             "the answer (no weaker form)");
      if (p->net_ask_all.set && p->net_ask_all.value)
        add (plan, HV_DIRECT_REFUSED, "network.mode ask",
             "asking for a name needs haven's resolver in a network namespace, which holds the lookup until "
             "the answer (no weaker form)");
      if (!accepts (p, HV_WEAKER_NETWORK_PORTS))
        {
          add (plan, HV_DIRECT_REFUSED, "network.allow",
               "names and pinned addresses need haven's resolver in a network namespace (best_effort %s would "
               "accept: TCP connect only to the allowlist's ports, at any address; UDP open for DNS)",
               HV_WEAKER_NETWORK_PORTS);
          break;
        }
      if (abi < ABI_NET)
        {
          add (plan, HV_DIRECT_REFUSED, "network.allow",
               "Landlock ABI %d has no network rules (%d needed), so not even the ports can be limited", abi,
               ABI_NET);
          break;
        }
      plan->tcp_handled = true;
      plan->udp = true;
      if (!plan_ports (p, plan))
        break;
      add (plan, HV_DIRECT_WEAKER, "network.allow",
           "TCP connect only to the allowlist's %zu ports, at any address; UDP open (DNS); no name is checked "
           "(best_effort %s)",
           plan->n_tcp_connect_ports, HV_WEAKER_NETWORK_PORTS);
      break;
    case HV_NET_NONE:
    case HV_NET_UNSET:
    default:
      if (abi < ABI_NET)
        {
          add (plan, HV_DIRECT_REFUSED, "network.mode none",
               "Landlock ABI %d has no network rules (%d needed): TCP could not be refused (no weaker form)",
               abi < 0 ? 0 : abi, ABI_NET);
          break;
        }
      plan->tcp_handled = true;
      add (plan, HV_DIRECT_ENFORCED, "network.mode none",
           "Landlock: no TCP bind or connect; seccomp: no UDP or other socket%s", plan->unix_sockets ? "" : ", no Unix socket");
      break;
    }
  if (plan->unix_sockets)
    add (plan, HV_DIRECT_WEAKER, "Unix sockets",
         "pathname Unix sockets the visible files hold are reachable (Landlock does not restrict their "
         "connect)%s (best_effort %s)",
         plan->scope_abstract_unix ? "" : ", and abstract ones too (Landlock ABI < 6)", HV_WEAKER_UNIX_SOCKETS);
  else
    add (plan, HV_DIRECT_ENFORCED, "Unix sockets",
         "seccomp: socket(AF_UNIX) refused (a daemon's socket would be reachable otherwise; best_effort %s "
         "would allow them)",
         HV_WEAKER_UNIX_SOCKETS);
  /* The namespaced sandbox has its own PID namespace: nothing in it can
   * signal a process outside.  Only Landlock's signal scope replaces it. */
  if (plan->scope_signal)
    add (plan, HV_DIRECT_ENFORCED, "processes outside the run",
         "Landlock scopes: no signal to, and no abstract Unix socket of, a process outside the run");
  else
    add (plan, HV_DIRECT_REFUSED, "processes outside the run",
         "Landlock ABI %d cannot scope signals (%d needed): the command could signal the caller's other "
         "processes (no weaker form)",
         abi < 0 ? 0 : abi, ABI_SCOPES);
}

/* Whether the compiled config mounts something at dest: the services of
 * credentials.git and ssh_agent are bound into the sandbox only when the
 * run has something to serve. */
static bool
spec_mounts (const oci_spec *spec, const char *dest)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    if (spec->mounts[i].destination && strcmp (spec->mounts[i].destination, dest) == 0)
      return true;
  return false;
}

/* The credentials' services run only where the run has a secret for them
 * (a policy naming ANTHROPIC_API_KEY, say, has no gateway while the
 * variable is unset, and its agent uses its own login, as with
 * namespaces): a rule with nothing to serve is nothing to refuse. */
static void
plan_credentials (const hv_policy *p, const oci_spec *spec, hv_direct_plan *plan)
{
  static const char why[] = "its socket lives in the sandbox's namespaces (no weaker form)";
  if (p->n_api_creds && oci_kv_get (&spec->annotations, HV_GATEWAY_ANNOTATION) != NULL)
    add (plan, HV_DIRECT_REFUSED, "credentials.api", "the gateway listens on the sandbox's own loopback: %s", why);
  else if (p->n_api_creds)
    add (plan, HV_DIRECT_ENFORCED, "credentials.api",
         "no key in the environment: no gateway runs (the agent uses its own login, as with namespaces)");
  if (p->n_git_creds && spec_mounts (spec, HV_GIT_CREDENTIALS_DIR))
    add (plan, HV_DIRECT_REFUSED, "credentials.git", "the broker is bound into the sandbox's /run: %s", why);
  if (p->ssh_agent.value && (spec_mounts (spec, HV_SSH_AGENT_SOCKET) || spec_mounts (spec, HV_SSH_AGENT_VIEW_DIR)))
    add (plan, HV_DIRECT_REFUSED, "credentials.ssh_agent", "the agent's socket is bound into the sandbox: %s",
         why);
}

static void
plan_resources (const hv_policy *p, hv_direct_plan *plan)
{
  const struct
  {
    const char *rule;
    bool set;
  } cg[] = { { "resources.memory", p->memory.set }, { "resources.cpus", p->cpus_milli.set },
             { "resources.pids", p->pids.set } };
  for (size_t i = 0; i < 3; i++)
    {
      if (!cg[i].set)
        continue;
      if (accepts (p, HV_WEAKER_CGROUPS))
        add (plan, HV_DIRECT_WEAKER, cg[i].rule, "not limited (best_effort %s)", HV_WEAKER_CGROUPS);
      else
        add (plan, HV_DIRECT_REFUSED, cg[i].rule,
             "a limit needs a cgroup haven can make (best_effort %s would accept running without the limit)",
             HV_WEAKER_CGROUPS);
    }
  if (p->nofile.set)
    add (plan, HV_DIRECT_ENFORCED, "resources.nofile", "rlimit");
  if (p->timeout_s.set)
    add (plan, HV_DIRECT_ENFORCED, "resources.timeout", "haven kills the run at the timeout");
}

int
hv_direct_plan_build_at (const hv_policy *p, const struct hv_run_ctx *ctx, const oci_spec *spec, int landlock_abi,
                         const char *root, hv_direct_plan *plan, hv_error **err)
{
  memset (plan, 0, sizeof (*plan));
  if (plan_files (p, ctx, spec, landlock_abi, root, plan, err) < 0)
    {
      hv_direct_plan_free (plan);
      return -1;
    }
  plan_network (p, landlock_abi, plan);
  plan_credentials (p, spec, plan);
  plan_resources (p, plan);
  add (plan, HV_DIRECT_ENFORCED, "syscalls",
       "seccomp: the policy's profile; a denied call fails with EPERM (no denial records: no monitor runs)");
  add (plan, HV_DIRECT_ENFORCED, "process.capabilities",
       "every capability dropped, no_new_privs%s", p->capabilities.n ? " (stricter: the policy's too)" : "");
  add (plan, HV_DIRECT_ENFORCED, "env", "the compiled environment, exactly");
  return 0;
}

int
hv_direct_plan_build (const hv_policy *p, const struct hv_run_ctx *ctx, const oci_spec *spec, int landlock_abi,
                      hv_direct_plan *plan, hv_error **err)
{
  return hv_direct_plan_build_at (p, ctx, spec, landlock_abi, "/", plan, err);
}

int
hv_direct_plan_refusal (const hv_direct_plan *plan, const hv_policy *p, hv_error **err)
{
  if (plan->n_refused == 0)
    return 0;
  char *msg = xasprintf ("the policy %s cannot run without namespaces here: %zu rule%s cannot be enforced",
                         p && p->name ? p->name : "", plan->n_refused, plan->n_refused == 1 ? "" : "s");
  for (size_t i = 0; i < plan->n_rules; i++)
    if (plan->rules[i].verdict == HV_DIRECT_REFUSED)
      {
        char *next = xasprintf ("%s\n  %s: %s", msg, plan->rules[i].rule, plan->rules[i].how);
        free (msg);
        msg = next;
      }
  hv_error_set (err, 0, "%s\nhaven doctor says what this host offers", msg);
  free (msg);
  return hv_error_set_exit_status (err, HV_EXIT_HAVEN_FAILED);
}

void
hv_direct_plan_free (hv_direct_plan *plan)
{
  oci_strv_free (&plan->read);
  oci_strv_free (&plan->list);
  oci_strv_free (&plan->write);
  oci_strv_free (&plan->exec);
  free (plan->tcp_connect_ports);
  for (size_t i = 0; i < plan->n_rules; i++)
    {
      free (plan->rules[i].rule);
      free (plan->rules[i].how);
    }
  free (plan->rules);
  memset (plan, 0, sizeof (*plan));
}
