/* haven-runc's policies on the configs it creates: the runtime's own
 * (--policy, set by the administrator in daemon.json runtimeArgs or
 * containers.conf), then the container's run.haven.policy annotation
 * unless the runtime is locked (--policy-lock).  Policies only tighten, so
 * their order cannot loosen anything.  Installed as the runtime library's
 * config filter (runtime/include/runtime.h) by haven-runc's command line. */
#ifndef HAVEN_CONFIG_POLICY_H
#define HAVEN_CONFIG_POLICY_H

#include "cli.h"
#include "oci_spec.h"

/* An hv_config_filter_fn; data is the struct hv_global. */
int hv_config_apply_policies (void *data, const char *path, char **text, oci_spec **spec, hv_error **err);
/* exec: the process Docker or Podman asked for, made no stronger than
 * the container's init under the container's policies (policy/exec_restrict.h). */
int hv_exec_apply_policies (const struct hv_global *g, const oci_spec *container, oci_process *proc, hv_error **err);
#endif
