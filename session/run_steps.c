#include "config.h"
#include "run_steps.h"
#include "run_learn.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "approvals_policy.h"
#include "denial_rules.h"
#include "denial_view.h"
#include "fault_point.h"
#include "git_hidden_tracked.h"
#include "git_identity.h"
#include "home_commands.h"
#include "home_create.h"
#include "home_state.h"
#include "policy_compile.h"
#include "policy_load.h"
#include "run_leftovers.h"
#include "run_notice.h"
#include "run_offline.h"
#include "run_trust.h"
#include "runtime.h"
#include "self_exe.h"
#include "utils.h"

void
hv_run_steps_say_notes (oci_strv *notes)
{
  for (size_t i = 0; i < notes->n; i++)
    fprintf (stderr, "haven: %s\n", notes->v[i]);
  oci_strv_free (notes);
}

const char *
hv_run_bundle_parent (void)
{
  const char *runtime_dir = getenv ("XDG_RUNTIME_DIR");
  return geteuid () == 0 ? "/run" : (runtime_dir && runtime_dir[0] ? runtime_dir : "/tmp");
}

/* A fresh bundle directory (with an empty rootfs mount point).  haven
 * run's first removes what runs killed with SIGKILL left
 * (run_leftovers.h); a sandbox's is named after its label, and the
 * service that made it removes it (or its leftovers at its next start). */
static int
make_bundle (struct hv_run_steps *s, hv_error **err)
{
  const char *parent = hv_run_bundle_parent ();
  s->state_root = hv_default_state_root ();
  if (s->o->label)
    {
      s->bundle = xasprintf ("%s/" HV_SANDBOX_BUNDLE_PREFIX "%s", parent, s->o->label);
      if (mkdir (s->bundle, 0700) < 0)
        {
          int e = errno;
          free (steal_pointer (&s->bundle));
          return hv_error_set (err, e, "create bundle directory %s/" HV_SANDBOX_BUNDLE_PREFIX "%s", parent,
                               s->o->label);
        }
    }
  else
    {
      hv_run_clean_leftovers (parent, s->state_root);
      hv_fault_point ("session.leftovers-cleaned");
      if (hv_run_bundle_create (parent, &s->bundle, err) < 0)
        return -1;
    }
  hv_fault_point ("session.bundle-made");
  s->rootfs = xasprintf ("%s/rootfs", s->bundle);
  s->rc.ctx.rootfs = s->rootfs;
  if (mkdir (s->rootfs, 0755) < 0)
    return hv_error_set (err, errno, "mkdir %s", s->rootfs);
  return 0;
}

/* haven's binary on disk (self_exe.h): NULL unless a regular file. */
static char *
own_binary (void)
{
  cleanup_free char *path = hv_self_exe_path ();
  struct stat st;
  if (path == NULL || path[0] != '/' || stat (path, &st) < 0 || !S_ISREG (st.st_mode))
    return NULL;
  return realpath (path, NULL);
}

/* The run's view of its denials (denial_view.h): an empty file in a
 * directory of the bundle that haven's side writes and the sandbox reads
 * (bound read-only), and haven's own binary to read it with. */
static int
make_why_view (struct hv_run_steps *s, hv_error **err)
{
  s->why_dir = xasprintf ("%s/why", s->bundle);
  if (mkdir (s->why_dir, 0755) < 0 || chmod (s->why_dir, 0755) < 0)
    return hv_error_set (err, errno, "mkdir %s", s->why_dir);
  cleanup_close int dir = open (s->why_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int fd
      = dir < 0 ? -1 : openat (dir, HV_WHY_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 || fchmod (fd, 0644) < 0)
    return hv_error_set (err, errno, "create %s/%s", s->why_dir, HV_WHY_FILE);
  s->rc.ctx.why_dir = s->why_dir;
  /* The table too, for `haven why PATH`: a write to a read-only mount
   * (EROFS) or a look at a hidden file (ENOENT) leaves no record, but the
   * agent can still ask what the policy does with the path. */
  cleanup_free char *rules = hv_policy_denial_rules_json (s->policy, &s->rc.ctx);
  if (write_file_atomic (s->why_dir, HV_WHY_RULES, rules, strlen (rules), err) < 0)
    return -1;
  cleanup_free char *rules_path = xasprintf ("%s/%s", s->why_dir, HV_WHY_RULES);
  if (chmod (rules_path, 0644) < 0)
    return hv_error_set (err, errno, "chmod %s", rules_path);
  /* Without it `haven why` is not in the sandbox; the view still is. */
  s->haven_exe = own_binary ();
  s->rc.ctx.haven_exe = s->haven_exe;
  return 0;
}

/* The policy compiled for this run and checked (run_trust.h); handed to
 * the runtime in memory, written as the bundle's config.json only for
 * --keep-bundle. */
static int
write_config (struct hv_run_steps *s, hv_error **err)
{
  if (s->policy->audit_log)
    s->audit_socket = xasprintf ("%s/audit.sock", s->bundle);
  s->rc.ctx.audit_socket = s->audit_socket;
  if (make_why_view (s, err) < 0)
    return -1;
  if (hv_home_commands_check (s->policy, &s->rc.ctx, err) < 0)
    return -1;
  s->rc.ctx.notes = &s->notes;
  int r = hv_home_entries_create (s->policy, &s->rc.ctx, err);
  hv_run_steps_say_notes (&s->notes);
  if (r < 0)
    return -1;
  r = hv_home_state_prepare (s->policy, &s->rc.ctx, &s->home_state, &s->home_state_lock, err);
  hv_run_steps_say_notes (&s->notes);
  if (r < 0)
    return -1;
  s->rc.ctx.home_state = s->home_state;
  if (hv_run_credentials_prepare (s->policy, &s->rc.ctx, s->bundle, &s->creds, err) < 0)
    return -1;
  if (hv_git_identity_write (s->policy, &s->rc.ctx, s->bundle, &s->git_identity, &s->git_excludes, err) < 0)
    return -1;
  s->rc.ctx.git_config = s->git_identity;
  s->rc.ctx.git_excludes = s->git_excludes;
  r = hv_git_hidden_tracked (s->policy, &s->rc.ctx, s->bundle, &s->git_identity, &s->git_attributes, &s->git_shown,
                             &s->git_shown_snapshots, err);
  hv_run_steps_say_notes (&s->notes);
  if (r < 0)
    return -1;
  s->rc.ctx.git_config = s->git_identity;
  s->rc.ctx.git_attributes = s->git_attributes;
  s->rc.ctx.git_shown = &s->git_shown;
  s->rc.ctx.git_shown_snapshots = &s->git_shown_snapshots;
  r = hv_run_offline_prepare (s->policy, s->bundle, &s->nsswitch, &s->notes, err);
  hv_run_steps_say_notes (&s->notes);
  if (r < 0)
    return -1;
  s->rc.ctx.nsswitch = s->nsswitch;
  if (hv_approvals_prepare (s->policy, &s->approvals_dir, &s->approved_dir, err) < 0)
    return -1;
  s->rc.ctx.approvals_dir = s->approvals_dir;
  s->rc.ctx.approved_dir = s->approved_dir;
  if (s->approvals_dir)
    s->rc.ctx.run_id = s->run_id;
  /* The compiler's notes are said here, before any error it returned. */
  r = hv_policy_compile (s->policy, &s->rc.ctx, &s->config_json, err);
  hv_run_steps_say_notes (&s->notes);
  s->rc.ctx.notes = NULL;
  if (r < 0)
    return -1;
  if (hv_check_run_trust (s->policy, s->rc.project, s->config_json, s->o->haven_argv0, err) < 0)
    return -1;
  if (hv_check_secret_files (&s->creds.files, s->rc.project, s->config_json, err) < 0)
    return -1;
  if (hv_run_credentials_check_config (s->policy, &s->creds, s->config_json, err) < 0)
    return -1;
  hv_fault_point ("session.config-compiled");
  /* The runtime takes the config from memory (run_sandbox); the file is
   * only for someone who asked to look at the bundle. */
  if (!s->o->keep_bundle)
    return 0;
  return write_file_atomic (s->bundle, "config.json", s->config_json, strlen (s->config_json), err);
}

/* The policy's audit log: ~/ is the caller's home. */
static int
start_audit (struct hv_run_steps *s, hv_error **err)
{
  const hv_policy *p = s->policy;
  if (p->audit_log == NULL || p->audit_log[0] == '\0')
    return 0;
  const char *home = s->rc.ctx.home;
  cleanup_free char *path = NULL;
  if (p->audit_log[0] == '~' && (p->audit_log[1] == '/' || p->audit_log[1] == '\0'))
    path = home ? xasprintf ("%s%s", home, p->audit_log + 1) : NULL;
  else
    path = xstrdup (p->audit_log);
  if (path == NULL || path[0] != '/')
    return hv_error_set (err, 0, "%s: audit.log: \"%s\" is not an absolute path (or ~/... with HOME set)",
                         p->file ? p->file : p->name, p->audit_log);
  cleanup_free char *denials = hv_policy_denial_rules_json (p, &s->rc.ctx);
  if (s->o->learn)
    {
      /* The base as `haven policy suggest` loads it again: a shipped or
       * installed policy by name, a file by its path as loaded. */
      const char *given = s->o->policy;
      size_t l = strlen (given);
      bool file = strchr (given, '/') || (l > 5 && strcmp (given + l - 5, ".yaml") == 0);
      /* Absolute: policy suggest runs from any directory. */
      cleanup_free char *abs = file && p->file ? realpath (p->file, NULL) : NULL;
      struct hv_audit_isolation iso = { s->isolation, s->weaker.v, s->weaker.n, true, abs ? abs : given };
      return hv_audit_begin_isolated (path, p->name, s->o->label, s->run_id, s->bundle, s->o->cmd, s->rc.project,
                                      denials, &iso, &s->audit, err);
    }
  if (s->isolation == NULL)
    return hv_audit_begin (path, p->name, s->o->label, s->run_id, s->bundle, s->o->cmd, s->rc.project, denials,
                           &s->audit, err);
  struct hv_audit_isolation iso = { s->isolation, s->weaker.v, s->weaker.n, false, NULL };
  return hv_audit_begin_isolated (path, p->name, s->o->label, s->run_id, s->bundle, s->o->cmd, s->rc.project, denials,
                                  &iso, &s->audit, err);
}

/* A state root in a shared directory must be ours, not planted. */
static int
check_state_root (const char *root, hv_error **err)
{
  struct stat st;
  if (mkdir (root, 0700) < 0 && errno != EEXIST)
    return hv_error_set (err, errno, "create %s", root);
  if (lstat (root, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != geteuid ())
    return hv_error_set (err, 0, "state directory %s is not a directory owned by uid %u", root, (unsigned) geteuid ());
  return 0;
}

/* hv_create_opts.egress_connect: pasta, and the note of a host without a
 * route said here, where the run's other notes are. */
static int
connect_pasta (void *data, pid_t init_pid, int netns_fd, hv_error **err)
{
  struct hv_pasta *p = data;
  if (hv_pasta_connect (p, init_pid, netns_fd, err) < 0)
    return -1;
  if (p->no_route)
    fprintf (stderr, "haven: note: the host has no route (IPv4 or IPv6, on any interface but lo): the sandbox "
                     "gets no network beyond its own loopback\n");
  return 0;
}


int
hv_run_steps_make (struct hv_run_steps *s, hv_error **err)
{
  hv_audit_run_id (s->run_id);
  if (hv_policy_load (s->o->policy, &s->policy, err) < 0)
    return -1;
  /* Names approved "always" for this policy: one more allow layer. */
  if (hv_approved_merge (s->policy, err) < 0)
    return -1;
  if (s->o->learn && hv_run_learn_prepare (s->policy, false, stderr, err) < 0)
    return -1;
  if (hv_run_context_init (s->o->project, s->o->cmd, &s->rc, err) < 0)
    return -1;
  if (s->o->label)
    {
      /* A sandbox's commands have no terminal and start in the project,
       * whatever the maker's own terminal and directory are. */
      s->rc.ctx.terminal = false;
      free (s->rc.cwd);
      s->rc.cwd = xstrdup (s->rc.project);
      s->rc.ctx.cwd = s->rc.cwd;
    }
  if (make_bundle (s, err) < 0)
    return -1;
  if (write_config (s, err) < 0)
    return -1;
  hv_fault_point ("session.config-written");
  if (s->o->config_ready && s->o->config_ready (s, s->o->config_ready_data, err) < 0)
    return -1;
  /* An allowlist's way out: pasta, or where it cannot run here haven's
   * forwarder (egress_way.h). */
  if (s->policy->learn_closed)
    /* Learn mode over none (run_learn.c): no interface but loopback, as
     * under none, whatever HAVEN_EGRESS_WAY says. */
    s->egress_way = HV_EGRESS_WAY_FORWARD;
  else if (s->policy->net_mode == HV_NET_ALLOWLIST)
    {
      char why[512];
      if (hv_egress_way_choose (getenv (HV_EGRESS_WAY_ENV), &s->egress_way, why, sizeof (why), err) < 0)
        return -1;
    }
  if (start_audit (s, err) < 0)
    return -1;
  hv_fault_point ("session.audit-started");
  hv_run_offline_note (s->policy, &s->notes);
  hv_run_steps_say_notes (&s->notes);
  return 0;
}

int
hv_run_steps_state_root (struct hv_run_steps *s, hv_error **err)
{
  return check_state_root (s->state_root, err);
}

void
hv_run_steps_create_opts (struct hv_run_steps *s, const char *id, struct hv_create_opts *co)
{
  co->id = id;
  co->bundle = s->bundle;
  co->config_text = s->config_json;
  /* An allowlist's way out (the config's run.haven.egress says "pasta"):
   * started at create once the egress table is in place, up before
   * create returns. */
  co->egress_connect = connect_pasta;
  co->egress_ready = hv_pasta_connected;
  co->egress_connect_data = &s->pasta;
  /* ... or haven's forwarder where pasta cannot run (egress_way.h). */
  co->egress_forward = s->egress_way == HV_EGRESS_WAY_FORWARD;
  /* How long pasta lives.  `haven run`: as long as haven (its child, dying
   * with it).  A service's sandbox (a label): as long as the sandbox,
   * whose maker (this process) exits once it is handed over, so pasta
   * must not die with the maker.  It cannot outlive the service either,
   * and nothing else bounds it: this pasta cannot quit with its namespace
   * (it holds the namespace by a descriptor, which also keeps it alive),
   * nor with a process it watches (it has no such option).  So pasta is
   * started as the maker's sibling (egress_pasta.h): the service's child,
   * dying with the service (PR_SET_PDEATHSIG, which the sandbox cannot
   * undo; the service forks makers from its one thread, the parent that
   * counts), killed and reaped by the service at destroy
   * (hv_sandbox_destroy).  A maker that dies before it hands the sandbox
   * over leaves its pasta to the service, which kills its own children
   * in the maker's session then (sandbox.c). */
  s->pasta.sibling = s->o->label != NULL;
  /* The run's trail gets the egress records too (dns-refused, net-denied). */
  co->egress_trail_fd = s->audit.log_fd;
  co->trail_sandbox = s->o->label;
  co->trail_run = s->run_id;
  /* ... and the first name the resolver refuses is said on our stderr. */
  s->notice_fd = hv_run_notice_open (s->policy);
  co->notice_fd = s->notice_fd > 2 ? s->notice_fd : 0;
  /* The services' secrets, in memory, for the monitor: credentials.api's
   * keys for its gateway, credentials.git's tokens for its broker (the
   * config names the providers and hosts, never a secret). */
  co->service_secrets = s->creds.service_secrets;
  co->n_service_secrets = s->creds.n_service_secrets;
}

void
hv_run_steps_release (struct hv_run_steps *s)
{
  hv_run_credentials_release (&s->creds);
  /* The sandbox and its mounts are gone: the next run may use the layers. */
  if (s->home_state_lock >= 0)
    close (s->home_state_lock);
  s->home_state_lock = -1;
  if (s->bundle && !s->o->keep_bundle)
    hv_run_bundle_remove (s->bundle);
  else if (s->bundle)
    fprintf (stderr, "haven: bundle kept in %s\n", s->bundle);
  hv_policy_free (s->policy);
  s->policy = NULL;
  hv_run_context_release (&s->rc);
  free (s->state_root);
  free (s->bundle);
  free (s->rootfs);
  free (s->audit_socket);
  free (s->why_dir);
  free (s->haven_exe);
  free (s->home_state);
  free (s->git_identity);
  free (s->git_excludes);
  free (s->git_attributes);
  free (s->nsswitch);
  free (s->approvals_dir);
  free (s->approved_dir);
  s->approvals_dir = s->approved_dir = NULL;
  oci_strv_free (&s->git_shown);
  oci_strv_free (&s->git_shown_snapshots);
  oci_strv_free (&s->weaker);
  free (s->config_json);
  s->state_root = s->bundle = s->rootfs = s->audit_socket = s->home_state = NULL;
  s->why_dir = s->haven_exe = NULL;
  s->git_identity = s->git_excludes = s->git_attributes = s->nsswitch = s->config_json = NULL;
  if (s->notice_fd >= 0)
    close (s->notice_fd);
  s->notice_fd = -1;
}
