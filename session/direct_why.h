/* `haven why` in a run without namespaces (direct_plan.h): nothing can be
 * bound there, so the sandbox reaches the run's view of its denials
 * (runtime/audit/include/denial_view.h) where it lies, read-only through
 * Landlock, named by $HAVEN_WHY_DIR; and haven's binary through a link in
 * the run's bundle (BUNDLE/bin/haven), first on PATH in the place of
 * HV_WHY_BIN_DIR, executable and read-only. */
#ifndef HAVEN_DIRECT_WHY_H
#define HAVEN_DIRECT_WHY_H

#include "direct_plan.h"
#include "error.h"
#include "oci_spec.h"

/* Grant and name the view (why_dir) and the binary (haven_exe, or NULL)
 * in plan and spec's environment. */
int hv_direct_why (hv_direct_plan *plan, oci_spec *spec, const char *bundle, const char *why_dir,
                   const char *haven_exe, hv_error **err);
#endif
