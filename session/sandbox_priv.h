/* What the caller holds of a sandbox (sandbox.h), shared by the files
 * that make, use and destroy it. */
#ifndef HAVEN_SANDBOX_PRIV_H
#define HAVEN_SANDBOX_PRIV_H

#include "audit_monitor.h"
#include "egress_pasta.h"
#include "policy.h"
#include "project_guard.h"
#include "project_links.h"
#include "sandbox.h"
#include "sandbox_record.h"

/* The maker's state in the caller (hv_sandbox_maker.priv): what the
 * caller took before the fork, and where the maker puts things. */
struct hv_sandbox_making
{
  char *label;
  char *workspace;   /* the project's real path, or the scratch workspace */
  char *scratch_dir; /* the scratch workspace's parent, or NULL (a project) */
  hv_project_guard *guard;
  struct hv_project_links links;
};

struct hv_sandbox
{
  struct hv_sandbox_record r; /* ids, paths, the config, the env rules, the fds */
  struct hv_sandbox_making *making;
  /* The env rules and refuse_project_links: a policy of only those. */
  hv_policy *rules;
  struct hv_audit audit;
  struct hv_pasta pasta;
};

/* The maker child's work (sandbox_make.c): make the sandbox and send the
 * record (or the error) on sock.  Returns the child's exit status. */
int hv_sandbox_maker_run (const struct hv_sandbox_opts *o, const struct hv_sandbox_making *mk, int sock);
/* The maker's process: signals back to their defaults, sock as fd 3
 * (inherited by an exec), every other fd above 2 closed.  3, or -1. */
int hv_sandbox_maker_fd3 (int sock);

/* Remove what sandbox `label` left: its container (killed), bundle and
 * scratch workspace under scratch_dir (NULL: none). */
void hv_sandbox_remove_leftover (const char *label, const char *scratch_dir);
/* Remove a scratch workspace (written by the sandbox: nothing followed). */
int hv_sandbox_remove_workspace (const char *scratch_dir, const char *label);
#endif
