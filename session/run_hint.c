#include "config.h"
#include "run_hint.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "host_probe.h"
#include "utils.h"

void
hv_run_hint_namespaces (const char *fallback, hv_error **err)
{
  if (err == NULL || *err == NULL)
    return;
  /* Probed after the failure, not before every start: the runtime's own
   * error is what happened; the probe says whether the host is why. */
  hv_probe ns;
  hv_probe_namespaces (&ns);
  if (ns.ok)
    return;
  hv_error_append (err, "\nhaven: namespaces cannot be made here (%s): %s; haven doctor says what this host offers",
                   ns.why, fallback);
}

void
hv_run_hint_rootless_limits (const hv_policy *p, bool rootless, hv_error **err)
{
  if (!rootless || err == NULL || *err == NULL)
    return;
  int e = (*err)->errno_code;
  /* The runtime's refusal: creating the container's cgroup was denied.
   * nofile (an rlimit) and timeout (haven's own timer) need no cgroup. */
  if ((e != EACCES && e != EPERM && e != EROFS) || strstr ((*err)->msg, "cgroup") == NULL)
    return;
  char limits[128] = "";
  if (p->memory.set)
    strcat (limits, ", resources.memory");
  if (p->cpus_milli.set)
    strcat (limits, ", resources.cpus");
  if (p->pids.set)
    strcat (limits, ", resources.pids");
  if (limits[0] == '\0')
    return;
  const char *why = hv_cgroup_mode () == HV_CGROUP_V2
                        ? "haven does not create cgroups through the systemd user manager yet"
                        : "a cgroup v1 or hybrid host never delegates cgroups to users";
  hv_error_append (err,
                   "\nhaven: hint: policy \"%s\" sets %s; as an ordinary user these limits need a cgroup, "
                   "and this user may not create one here (%s).  Run haven as root (sudo haven run ...), "
                   "or use a policy without them (resources.nofile and resources.timeout need no cgroup).",
                   p->name, limits + 2, why);
}
