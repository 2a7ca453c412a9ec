/* The file half of a plan without namespaces (direct_plan.h): the
 * compiled spec's mounts read as a view of the host (what is shown
 * read-only, writable, executable, and what is hidden), then turned into
 * Landlock rules that give exactly that view or less.  Private to
 * direct_plan*.c and its unit test. */
#ifndef HAVEN_DIRECT_PLAN_FS_H
#define HAVEN_DIRECT_PLAN_FS_H

#include <stdbool.h>
#include <stddef.h>

#include "direct_plan.h"

/* Bits of what a path of the view allows. */
#define HV_DIRECT_R 1u
#define HV_DIRECT_W 2u
#define HV_DIRECT_X 4u

/* More Landlock rules than this (hidden paths in a large directory):
 * the plan refuses, naming the directory, rather than making a ruleset
 * the kernel may refuse or that takes long to load. */
#define HV_DIRECT_MAX_RULES 8192

struct hv_direct_entry
{
  char *path;
  unsigned acc;  /* HV_DIRECT_*: 0 is hidden */
  bool mount_x;  /* the mount did not say noexec (exec rules strip X from acc) */
  bool protect;  /* a read-only bind below a writable one (protect, read_only) */
};

struct hv_direct_view
{
  struct hv_direct_entry *v;
  size_t n;
};

void hv_direct_view_free (struct hv_direct_view *view);
#define cleanup_direct_view __attribute__ ((cleanup (hv_direct_view_free)))

/* The view the spec's mounts, maskedPaths and readonlyPaths make.  exec_rules:
 * X only where the Landlock exec list says (hv_direct_grant adds those). */
void hv_direct_view_build (const oci_spec *spec, bool exec_rules, struct hv_direct_view *view);
/* Remove the entry at path (a tmpfs the plan replaces, a protect bind the
 * guard handles instead); true when one was there. */
bool hv_direct_view_drop (struct hv_direct_view *view, const char *path);
/* Is path at or below dir? */
bool hv_direct_path_under (const char *path, const char *dir);

/* Landlock rules for the view into plan->read/write/exec, and for each
 * path of exec_list (where the view shows it executable).  root: the
 * host's "/" (a test's tree otherwise; the plan's paths stay absolute
 * host paths without it).  Returns -1 with *err naming the directory
 * when more than HV_DIRECT_MAX_RULES rules would be needed. */
int hv_direct_grant (const struct hv_direct_view *view, const oci_strv *exec_list, const char *root,
                     hv_direct_plan *plan, hv_error **err);
/* hv_direct_plan_build with the host's "/" at root (a unit test's tree). */
int hv_direct_plan_build_at (const hv_policy *p, const struct hv_run_ctx *ctx, const oci_spec *spec, int landlock_abi,
                             const char *root, hv_direct_plan *plan, hv_error **err);
#endif
