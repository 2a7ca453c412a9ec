/* The steps that make a policy's sandbox on the workstation, shared by
 * `haven run` (one command, in this process) and the service's sandboxes
 * (sandbox.h: made in a child, whose init is a keeper): load the policy,
 * the run's context, a bundle, the compiled config with every check
 * (home commands and state, credentials, git identity and hidden files,
 * the offline resolver, run trust, secret files, API keys), the audit
 * trail's start, and the create options that wire egress (pasta), the
 * trail, the resolver's notice and the services' secrets.  Running the
 * container and what follows its end are each caller's own. */
#ifndef HAVEN_RUN_STEPS_H
#define HAVEN_RUN_STEPS_H

#include <stdbool.h>

#include "audit_monitor.h"
#include "container.h"
#include "egress_pasta.h"
#include "egress_way.h"
#include "error.h"
#include "oci_spec.h"
#include "policy.h"
#include "run_context.h"
#include "run_credentials.h"

struct hv_run_steps;

struct hv_run_steps_opts
{
  const char *policy;      /* name or file */
  const char *project;     /* NULL: the current directory */
  char **cmd;              /* the config's process.args, NULL-terminated */
  const char *haven_argv0; /* run_trust.h */
  bool keep_bundle;        /* write config.json into the bundle */
  /* A sandbox that outlives its maker (sandbox.h): the bundle is
   * <parent>/HV_SANDBOX_BUNDLE_PREFIX<label> (not a haven run's, which the
   * next run removes once its owner is gone), no terminal, and the
   * commands start in the project.  NULL: `haven run`. */
  const char *label;
  /* Called once the config is compiled and checked, before the audit
   * trail begins (a run without namespaces builds its plan there and sets
   * isolation and weaker, which the trail's start record says).  NULL:
   * nothing. */
  int (*config_ready) (struct hv_run_steps *s, void *data, hv_error **err);
  void *config_ready_data;
};

#define HV_SANDBOX_BUNDLE_PREFIX "haven-sandbox-"

struct hv_run_steps
{
  const struct hv_run_steps_opts *o;
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
  char *approvals_dir, *approved_dir; /* a policy that asks (approvals_policy.h) */
  /* The run's id, made first: a policy that asks hands it to the
   * resolver (run.haven.ask), its requests' ids begin with it (the
   * terminal asker finds its own run's requests by it). */
  char run_id[17];
  oci_strv git_shown, git_shown_snapshots;
  char *config_json;
  struct hv_audit audit;
  struct hv_pasta pasta;           /* the sandbox's network (allowlist) */
  hv_egress_way egress_way;        /* pasta, or haven's forwarder (egress_way.h) */
  struct hv_run_credentials creds; /* what credentials: and env.set_from_* give */
  int notice_fd; /* allowlist: the monitor's line about a refused name (run_notice.h) */
  /* What the layers below noted for the user (rc.ctx.notes points here),
   * said on stderr right after the call that noted it. */
  oci_strv notes;
  /* Set by config_ready: "landlock" and the rules held weaker
   * (direct_plan.h), for the trail's start record.  NULL: namespaces. */
  const char *isolation;
  oci_strv weaker;
};

#define HV_RUN_STEPS_INIT(opts)                                                                                        \
  { .o = (opts), .home_state_lock = -1, .audit = { .log_fd = -1 }, .pasta = HV_PASTA_INIT, .notice_fd = -1 }

/* The parent directory of bundles: /run for root, else $XDG_RUNTIME_DIR or /tmp. */
const char *hv_run_bundle_parent (void);
/* Policy, context, bundle, compiled and checked config, audit start. */
int hv_run_steps_make (struct hv_run_steps *s, hv_error **err);
/* The state root, made when missing, must be a directory of ours. */
int hv_run_steps_state_root (struct hv_run_steps *s, hv_error **err);
/* The create options the steps give: the config in memory, the bundle,
 * egress (pasta), the trail's fd, the notice fd, the services' secrets. */
void hv_run_steps_create_opts (struct hv_run_steps *s, const char *id, struct hv_create_opts *co);
/* Say the notes on stderr, each as its own "haven: " line; drop them. */
void hv_run_steps_say_notes (oci_strv *notes);
/* Credentials forgotten, the home state's lock released, the bundle
 * removed (unless kept), everything freed.  The container must be gone. */
void hv_run_steps_release (struct hv_run_steps *s);
#endif
