/* haven install|uninstall containerd|crio: haven-runc as a Kubernetes
 * runtime handler (the name a RuntimeClass's `handler` gives).
 *
 * containerd: a block of lines, between marker comments, added to the CRI
 * plugin's configuration (config version 2): the runc shim with
 * haven-runc as its binary.  Every other byte of the file stays as it
 * was; `uninstall` takes out only that block.  CRI-O: a drop-in file of
 * its own under crio.conf.d.
 *
 * A handler bound to a policy: neither the runc shim nor CRI-O passes the
 * runtime arguments of its own, so the handler's binary is a root-owned
 * wrapper script that runs haven-runc with --policy (and --policy-lock).
 * Pods ask for a stricter policy with the run.haven.policy annotation,
 * which the handler lets through unless it is locked; haven-runc applies
 * the handler's policy first and the pod's on top, so that a pod can only
 * tighten. */
#ifndef HAVEN_CRI_INSTALL_H
#define HAVEN_CRI_INSTALL_H

#include <stdbool.h>

#include "error.h"

#define HV_CONTAINERD_CONFIG "/etc/containerd/config.toml"
#define HV_CRIO_DROP_IN_DIR "/etc/crio/crio.conf.d"
/* Wrappers binding a policy to a handler: DIR/ENGINE-NAME. */
#define HV_CRI_HANDLER_DIR "/usr/local/lib/haven/handlers"

struct hv_cri_opts
{
  const char *name;   /* the runtime handler's name */
  const char *binary; /* what the engine runs: the wrapper, or haven-runc */
  bool annotations;   /* let pods' run.haven.policy through (not when locked) */
};

/* config.toml's text after adding (remove: taking out) the handler's
 * block.  old_text NULL or blank: there was no file (a minimal version 2
 * configuration is made).  *note, when not NULL afterwards: something the
 * administrator should know (the CRI plugin disabled).  Errors name
 * path:line. */
int hv_containerd_config_edit (const char *old_text, const char *path, const struct hv_cri_opts *o, bool remove,
                               char **out, char **note, hv_error **err);

/* The CRI-O drop-in's text. */
char *hv_crio_conf_text (const struct hv_cri_opts *o);

/* The wrapper script of handler NAME of ENGINE ("containerd", "crio"):
 * RUNTIME run with --policy POLICY (and --policy-lock). */
char *hv_cri_wrapper_text (const char *engine, const char *name, const char *runtime, const char *policy,
                           bool lock);

/* `haven install|uninstall containerd|crio ...` (argv[1] is the engine). */
int hv_cmd_install_cri (int argc, char **argv, bool uninstall, hv_error **err);
#endif
