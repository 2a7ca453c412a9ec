#include "config.h"
#include "haven_run.h"

#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "audit_monitor.h"
#include "container.h"
#include "direct_plan.h"
#include "direct_why.h"
#include "direct_run.h"
#include "exit_status.h"
#include "fault_point.h"
#include "host_probe.h"
#include "policy.h"
#include "project_guard.h"
#include "policy_egress.h"
#include "project_links.h"
#include "run_ask.h"
#include "run_hint.h"
#include "run_learn.h"
#include "run_steps.h"
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

/* Everything one run holds, released by finish_session: the shared
 * steps' (run_steps.h) and the run's own. */
struct session
{
  const struct hv_session_opts *o;
  struct hv_run_steps_opts steps_opts;
  struct hv_run_steps st;
  hv_project_guard *project_guard;
  struct hv_project_links links; /* links the run leaves that lead outside (project_links.h) */
  struct hv_guard run_guard; /* ended in finish_session, after the git check */
  struct after_haven_died after;
  /* Without namespaces (direct_run.h): the compiled config as a spec and
   * the plan of the policy's rules. */
  bool direct;
  oci_spec *spec;
  hv_direct_plan plan;
  /* Under a policy that asks: the terminal's and HAVEN_ASK_COMMAND's
   * askers (run_ask.h), while the sandbox runs. */
  struct hv_run_ask *ask;
};

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
      hv_run_steps_say_notes (&notes);
      if (r < 0)
        fprintf (stderr, "haven: %s\n", lerr->msg);
    }
  /* The listener is haven's child, not the guard's, and died with haven
   * (its pid may be someone else's by now): only the exit record. */
  d->audit->listener = 0;
  hv_audit_end (d->audit, 128 + SIGKILL);
}

/* What `haven-runc run --bundle B ID` does, with the run's own options:
 * a time limit, and the sandbox dies with haven.  No config filter: the
 * config already is the policy. */
static int
run_sandbox (struct session *s, int *exit_status, hv_error **err)
{
  struct hv_run_steps *st = &s->st;
  if (hv_run_steps_state_root (st, err) < 0)
    return -1;
  struct hv_runtime rt = { .root = st->state_root };
  cleanup_free char *id = xasprintf ("haven-run-%d", getpid ());
  struct hv_run_opts ro = { .create = { .die_with_runtime = true },
                            /* The parser bounds timeouts to 30 days: the cast cannot truncate. */
                            .timeout_s = st->policy->timeout_s.set ? (unsigned) st->policy->timeout_s.value : 0 };
  /* What git would execute in the project, recorded just before the
   * sandbox starts, checked after it has exited however it ended ... */
  if (hv_project_guard_snapshot (st->rc.project, &s->project_guard, err) < 0)
    return -1;
  hv_fault_point ("session.project-snapshot");
  hv_project_links_start (&s->links);
  /* ... also when haven is killed: the run guard does it then. */
  s->after = (struct after_haven_died){ s->project_guard, &st->audit, st->policy, st->rc.project, &s->links };
  ro.after_runtime_died = (struct hv_guard_after){ after_haven_died, &s->after, st->audit.log_fd };
  hv_run_steps_create_opts (st, id, &ro.create);
  /* HAVEN_ASK_COMMAND is read from haven's own environment, never from
   * a policy: a policy may come from a project the agent wrote, and this
   * command runs outside the sandbox. */
  const char *ask_command = getenv ("HAVEN_ASK_COMMAND");
  if (hv_policy_asks (st->policy) && (st->rc.ctx.terminal || (ask_command && ask_command[0])))
    {
      if (hv_run_ask_start (st->run_id, st->rc.ctx.terminal, ask_command, &s->ask, err) < 0)
        return -1;
      hv_run_ask_hook (s->ask, &ro.hook);
    }
  int r = hv_container_run (&rt, &ro, &s->run_guard, exit_status, err);
  /* The sandbox is gone: so is every question of its run. */
  hv_run_ask_stop (s->ask);
  s->ask = NULL;
  return r;
}

/* hv_run_steps_opts.config_ready of a run without namespaces: the plan
 * of the policy's rules from the compiled config; a refused rule stops
 * the start (exit status 125), a weaker one is said now and in the
 * trail's start record. */
static int
plan_direct (struct hv_run_steps *st, void *data, hv_error **err)
{
  struct session *s = data;
  if (oci_spec_parse (st->config_json, strlen (st->config_json), "the compiled config", &s->spec, err) < 0)
    return -1;
  if (hv_direct_plan_build (st->policy, &st->rc.ctx, s->spec, hv_probe_landlock_abi (), &s->plan, err) < 0)
    return -1;
  if (s->plan.n_refused > 0)
    return hv_direct_plan_refusal (&s->plan, st->policy, err);
  /* `haven why` where nothing can be bound (direct_why.h). */
  if (hv_direct_why (&s->plan, s->spec, st->bundle, st->why_dir, st->haven_exe, err) < 0)
    return -1;
  st->isolation = "landlock";
  for (size_t i = 0; i < s->plan.n_rules; i++)
    if (s->plan.rules[i].verdict == HV_DIRECT_WEAKER)
      {
        fprintf (stderr, "haven: note: without namespaces, %s: %s\n", s->plan.rules[i].rule, s->plan.rules[i].how);
        oci_strv_pushf (&st->weaker, "%s: %s", s->plan.rules[i].rule, s->plan.rules[i].how);
      }
  return 0;
}

/* The command without namespaces: the project guard around it as around
 * the sandbox; haven has killed every process the command left before
 * the guard looks (hv_direct_run). */
static int
run_direct (struct session *s, int *exit_status, hv_error **err)
{
  struct hv_run_steps *st = &s->st;
  if (hv_project_guard_snapshot (st->rc.project, &s->project_guard, err) < 0)
    return -1;
  hv_fault_point ("session.project-snapshot");
  hv_project_links_start (&s->links);
  /* ... also when haven is killed: the command's reaper does it then. */
  s->after = (struct after_haven_died){ s->project_guard, &st->audit, st->policy, st->rc.project, &s->links };
  struct hv_guard_after after = { after_haven_died, &s->after, st->audit.log_fd };
  /* The parser bounds timeouts to 30 days: the cast cannot truncate. */
  unsigned timeout_s = st->policy->timeout_s.set ? (unsigned) st->policy->timeout_s.value : 0;
  return hv_direct_run_guarded (s->spec, &s->plan, timeout_s, &st->audit, &after, exit_status, err);
}

/* auto: namespaces where they can be made here, else Landlock and
 * seccomp, said in one line. */
static bool
choose_direct (enum hv_isolation isolation)
{
  if (isolation == HV_ISOLATION_LANDLOCK)
    return true;
  if (isolation == HV_ISOLATION_NAMESPACES)
    return false;
  hv_probe ns;
  hv_probe_namespaces_quick (&ns);
  if (ns.ok)
    return false;
  fprintf (stderr, "haven: note: namespaces cannot be made here (%s): Landlock and seccomp only; haven doctor says "
                   "what that enforces\n",
           ns.why);
  return true;
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
  hv_pasta_kill (&s->st.pasta);
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
  if (s->st.policy)
    {
      cleanup_error hv_error *lerr = NULL;
      int r = hv_project_links_check (s->st.policy, s->st.rc.project, &s->links, &s->st.notes, &lerr);
      hv_run_steps_say_notes (&s->st.notes);
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
  hv_audit_end (&s->st.audit, trail_status);
  hv_fault_point ("session.audit-ended");
  /* Done: from here on, a kill of haven leaves nothing for the guard. */
  hv_guard_stop (&s->run_guard);
  hv_fault_point ("session.guard-stopped");
  hv_run_steps_release (&s->st);
  hv_project_guard_free (s->project_guard);
  hv_direct_plan_free (&s->plan);
  oci_spec_free (s->spec);
  return ret;
}

int
hv_session_run (const struct hv_session_opts *o, int *exit_status, hv_error **err)
{
  struct session s = { .o = o,
                       .steps_opts = { .policy = o->policy, .project = o->project, .cmd = o->cmd,
                                       .haven_argv0 = o->haven_argv0, .keep_bundle = o->keep_bundle,
                                       .learn = o->learn },
                       .run_guard = { 0, -1 } };
  s.st = (struct hv_run_steps) HV_RUN_STEPS_INIT (&s.steps_opts);
  *exit_status = 0;
  if (o->cmd == NULL || o->cmd[0] == NULL)
    return hv_error_set (err, 0, "haven run: no command given (haven run -- CMD ARGS...)");
  s.direct = choose_direct (o->isolation);
  if (s.direct)
    {
      s.steps_opts.config_ready = plan_direct;
      s.steps_opts.config_ready_data = &s;
    }
  int ret = -1;
  if (o->learn && s.direct)
    {
      hv_run_learn_prepare (NULL, true, stderr, err);
      goto out;
    }
  if (hv_run_steps_make (&s.st, err) < 0)
    goto out;
  if (s.direct)
    ret = run_direct (&s, exit_status, err);
  else
    {
      ret = run_sandbox (&s, exit_status, err);
      if (ret < 0)
        hv_run_hint_rootless_limits (s.st.policy, s.st.rc.ctx.rootless, err);
      if (ret < 0)
        hv_run_hint_namespaces ("haven run --isolation landlock runs with Landlock and seccomp only instead", err);
    }
out:
  return finish_session (&s, ret, exit_status, err);
}
