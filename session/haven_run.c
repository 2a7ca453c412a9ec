#include "config.h"
#include "haven_run.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit_monitor.h"
#include "container.h"
#include "egress_pasta.h"
#include "exit_status.h"
#include "fault_point.h"
#include "git_hidden_tracked.h"
#include "git_identity.h"
#include "home_commands.h"
#include "home_create.h"
#include "home_state.h"
#include "policy.h"
#include "policy_load.h"
#include "policy_compile.h"
#include "project_guard.h"
#include "project_links.h"
#include "run_context.h"
#include "run_credentials.h"
#include "run_hint.h"
#include "run_leftovers.h"
#include "run_notice.h"
#include "run_offline.h"
#include "run_trust.h"
#include "runtime.h"
#include "utils.h"

/* What the end of hv_session_run does, for the run guard to do when
 * haven died before it (run_guard.h): the guard is a fork of haven made
 * after the snapshot and the audit start, so both are in its memory. */
struct after_haven_died
{
  hv_project_guard *guard;
  struct hv_audit *audit;
  const hv_policy *policy;
  const char *project;
  const struct hv_project_links *links;
};

/* Everything one run holds, released by finish_session. */
struct session
{
  const struct hv_session_opts *o;
  hv_policy *policy;
  struct hv_run_context rc;
  char *state_root;
  char *bundle;
  char *rootfs;
  char *audit_socket;
  char *home_state;
  int home_state_lock; /* held while the sandbox may use the copy-on-write layers */
  char *git_identity, *git_excludes, *git_attributes;
  char *nsswitch; /* network none: names from /etc/hosts only (run_offline.h) */
  oci_strv git_shown, git_shown_snapshots;
  char *config_json;
  struct hv_audit audit;
  hv_project_guard *project_guard;
  struct hv_project_links links; /* links the run leaves that lead outside (project_links.h) */
  struct hv_guard run_guard; /* ended in finish_session, after the git check */
  struct hv_pasta pasta;     /* the sandbox's network (allowlist), stopped in finish_session */
  struct after_haven_died after;
  struct hv_run_credentials creds; /* what credentials: and env.set_from_* give */
  int notice_fd; /* allowlist: the monitor's line about a refused name (run_notice.h) */
  /* What the layers below noted for the user (rc.ctx.notes points here),
   * said by say_notes right after the call that noted it. */
  oci_strv notes;
};

/* The one place the session's notes reach stderr, each as its own
 * "haven: " line, in the order they were noted; then dropped. */
static void
say_notes (oci_strv *notes)
{
  for (size_t i = 0; i < notes->n; i++)
    fprintf (stderr, "haven: %s\n", notes->v[i]);
  oci_strv_free (notes);
}

static void
after_haven_died (void *data)
{
  struct after_haven_died *d = data;
  fprintf (stderr, "haven: haven ended before the run did (killed?); the sandbox is gone, "
                   "checking what it left in the project\n");
  if (d->guard)
    {
      cleanup_error hv_error *gerr = NULL;
      if (hv_project_guard_check (d->guard, &gerr) < 0)
        fprintf (stderr, "haven: %s\n", gerr->msg);
    }
  if (d->policy)
    {
      cleanup_error hv_error *lerr = NULL;
      oci_strv notes = { 0 };
      int r = hv_project_links_check (d->policy, d->project, d->links, &notes, &lerr);
      say_notes (&notes);
      if (r < 0)
        fprintf (stderr, "haven: %s\n", lerr->msg);
    }
  /* The listener is haven's child, not the guard's, and died with haven
   * (its pid may be someone else's by now): only the exit record. */
  d->audit->listener = 0;
  hv_audit_end (d->audit, 128 + SIGKILL);
}

/* A fresh bundle directory (with an empty rootfs mount point), after
 * removing what runs killed with SIGKILL left (run_leftovers.h). */
static int
make_bundle (struct session *s, hv_error **err)
{
  const char *runtime_dir = getenv ("XDG_RUNTIME_DIR");
  const char *parent = geteuid () == 0 ? "/run" : (runtime_dir && runtime_dir[0] ? runtime_dir : "/tmp");
  s->state_root = hv_default_state_root ();
  hv_run_clean_leftovers (parent, s->state_root);
  hv_fault_point ("session.leftovers-cleaned");
  if (hv_run_bundle_create (parent, &s->bundle, err) < 0)
    return -1;
  hv_fault_point ("session.bundle-made");
  s->rootfs = xasprintf ("%s/rootfs", s->bundle);
  s->rc.ctx.rootfs = s->rootfs;
  if (mkdir (s->rootfs, 0755) < 0)
    return hv_error_set (err, errno, "mkdir %s", s->rootfs);
  return 0;
}

/* The policy compiled for this run and checked (run_trust.h); handed to
 * the runtime in memory, written as the bundle's config.json only for
 * --keep-bundle. */
static int
write_config (struct session *s, hv_error **err)
{
  if (s->policy->audit_log)
    s->audit_socket = xasprintf ("%s/audit.sock", s->bundle);
  s->rc.ctx.audit_socket = s->audit_socket;
  if (hv_home_commands_check (s->policy, &s->rc.ctx, err) < 0)
    return -1;
  s->rc.ctx.notes = &s->notes;
  int r = hv_home_entries_create (s->policy, &s->rc.ctx, err);
  say_notes (&s->notes);
  if (r < 0)
    return -1;
  r = hv_home_state_prepare (s->policy, &s->rc.ctx, &s->home_state, &s->home_state_lock, err);
  say_notes (&s->notes);
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
  say_notes (&s->notes);
  if (r < 0)
    return -1;
  s->rc.ctx.git_config = s->git_identity;
  s->rc.ctx.git_attributes = s->git_attributes;
  s->rc.ctx.git_shown = &s->git_shown;
  s->rc.ctx.git_shown_snapshots = &s->git_shown_snapshots;
  r = hv_run_offline_prepare (s->policy, s->bundle, &s->nsswitch, &s->notes, err);
  say_notes (&s->notes);
  if (r < 0)
    return -1;
  s->rc.ctx.nsswitch = s->nsswitch;
  /* The compiler's notes are said here, before any error it returned. */
  r = hv_policy_compile (s->policy, &s->rc.ctx, &s->config_json, err);
  say_notes (&s->notes);
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
start_audit (struct session *s, hv_error **err)
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
  return hv_audit_begin (path, p->name, s->bundle, s->o->cmd, s->rc.project, &s->audit, err);
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

/* What `haven-runc run --bundle B ID` does, with the run's own options:
 * a time limit, and the sandbox dies with haven.  No config filter: the
 * config already is the policy. */
static int
run_sandbox (struct session *s, int *exit_status, hv_error **err)
{
  if (check_state_root (s->state_root, err) < 0)
    return -1;
  struct hv_runtime rt = { .root = s->state_root };
  cleanup_free char *id = xasprintf ("haven-run-%d", getpid ());
  struct hv_run_opts ro = { .create = { .id = id, .bundle = s->bundle, .die_with_runtime = true,
                                        .config_text = s->config_json },
                            /* The parser bounds timeouts to 30 days: the cast cannot truncate. */
                            .timeout_s = s->policy->timeout_s.set ? (unsigned) s->policy->timeout_s.value : 0 };
  /* What git would execute in the project, recorded just before the
   * sandbox starts, checked after it has exited however it ended ... */
  if (hv_project_guard_snapshot (s->rc.project, &s->project_guard, err) < 0)
    return -1;
  hv_fault_point ("session.project-snapshot");
  hv_project_links_start (&s->links);
  /* ... also when haven is killed: the run guard does it then. */
  s->after = (struct after_haven_died){ s->project_guard, &s->audit, s->policy, s->rc.project, &s->links };
  ro.after_runtime_died = (struct hv_guard_after){ after_haven_died, &s->after, s->audit.log_fd };
  /* An allowlist's way out (the config's run.haven.egress says "pasta"):
   * started at create once the egress table is in place, up before
   * create returns. */
  ro.create.egress_connect = connect_pasta;
  ro.create.egress_ready = hv_pasta_connected;
  ro.create.egress_connect_data = &s->pasta;
  /* The run's trail gets the egress records too (dns-refused, net-denied). */
  ro.create.egress_trail_fd = s->audit.log_fd;
  /* ... and the first name the resolver refuses is said on our stderr. */
  s->notice_fd = hv_run_notice_open (s->policy);
  ro.create.notice_fd = s->notice_fd > 2 ? s->notice_fd : 0;
  /* credentials.api: the keys, in memory, for the monitor's gateway
   * (the config names the providers in run.haven.gateway, never a key). */
  ro.create.service_secrets = s->creds.services;
  ro.create.n_service_secrets = s->creds.n_services;
  return hv_container_run (&rt, &ro, &s->run_guard, exit_status, err);
}

/* However the run went: check the project, end the audit trail, stop the
 * run guard, remove the bundle.  A failed quarantine turns a successful
 * run into an error (ret). */
static int
finish_session (struct session *s, int ret, int *exit_status, hv_error **err)
{
  /* The container is gone: its network too (pasta holds the namespace).
   * Killed first, not reaped: its exit's tail (the tap device's
   * teardown, an RCU barrier of 10-20 ms) runs while haven finishes and
   * after haven has exited. */
  hv_fault_point ("session.sandbox-done");
  hv_pasta_kill (&s->pasta);
  hv_fault_point ("session.pasta-killed");
  if (s->project_guard)
    {
      cleanup_error hv_error *gerr = NULL;
      if (hv_project_guard_check (s->project_guard, &gerr) < 0)
        {
          if (ret < 0)
            fprintf (stderr, "haven: %s\n", gerr->msg);
          else
            {
              *err = steal_pointer (&gerr);
              ret = -1;
            }
        }
    }
  if (s->policy)
    {
      cleanup_error hv_error *lerr = NULL;
      int r = hv_project_links_check (s->policy, s->rc.project, &s->links, &s->notes, &lerr);
      say_notes (&s->notes);
      if (r < 0)
        {
          if (ret < 0)
            fprintf (stderr, "haven: %s\n", lerr->msg);
          else
            {
              *err = steal_pointer (&lerr);
              ret = -1;
            }
        }
    }
  /* The trail's exit status is the one haven exits with: a command that
   * could not be executed is 126 or 127 there too, haven's own failure 125. */
  int trail_status = *exit_status;
  if (ret < 0)
    trail_status = *err && (*err)->exit_status ? (*err)->exit_status : HV_EXIT_HAVEN_FAILED;
  hv_audit_end (&s->audit, trail_status);
  hv_fault_point ("session.audit-ended");
  /* Done: from here on, a kill of haven leaves nothing for the guard. */
  hv_guard_stop (&s->run_guard);
  hv_fault_point ("session.guard-stopped");
  hv_run_credentials_release (&s->creds);
  /* The sandbox and its mounts are gone: the next run may use the layers. */
  if (s->home_state_lock >= 0)
    close (s->home_state_lock);
  if (s->bundle && !s->o->keep_bundle)
    hv_run_bundle_remove (s->bundle);
  else if (s->bundle)
    fprintf (stderr, "haven: bundle kept in %s\n", s->bundle);
  hv_project_guard_free (s->project_guard);
  hv_policy_free (s->policy);
  hv_run_context_release (&s->rc);
  free (s->state_root);
  free (s->bundle);
  free (s->rootfs);
  free (s->audit_socket);
  free (s->home_state);
  free (s->git_identity);
  free (s->git_excludes);
  free (s->git_attributes);
  free (s->nsswitch);
  oci_strv_free (&s->git_shown);
  oci_strv_free (&s->git_shown_snapshots);
  free (s->config_json);
  if (s->notice_fd >= 0)
    close (s->notice_fd);
  return ret;
}

int
hv_session_run (const struct hv_session_opts *o, int *exit_status, hv_error **err)
{
  struct session s = { .o = o, .home_state_lock = -1, .audit = { .log_fd = -1 }, .run_guard = { 0, -1 },
                       .pasta = HV_PASTA_INIT, .notice_fd = -1 };
  *exit_status = 0;
  if (o->cmd == NULL || o->cmd[0] == NULL)
    return hv_error_set (err, 0, "haven run: no command given (haven run -- CMD ARGS...)");
  int ret = -1;
  if (hv_policy_load (o->policy, &s.policy, err) < 0)
    goto out;
  if (hv_run_context_init (o->project, o->cmd, &s.rc, err) < 0)
    goto out;
  if (make_bundle (&s, err) < 0)
    goto out;
  if (write_config (&s, err) < 0)
    goto out;
  hv_fault_point ("session.config-written");
  if (start_audit (&s, err) < 0)
    goto out;
  hv_fault_point ("session.audit-started");
  hv_run_offline_note (s.policy, &s.notes);
  say_notes (&s.notes);
  ret = run_sandbox (&s, exit_status, err);
  if (ret < 0)
    hv_run_hint_rootless_limits (s.policy, s.rc.ctx.rootless, err);
out:
  return finish_session (&s, ret, exit_status, err);
}
