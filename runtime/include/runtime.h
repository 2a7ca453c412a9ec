/* The runtime library's context: what every container operation needs
 * from whoever drives it.  haven-runc's command line (cli/) fills it from
 * its global options; `haven run` (session/) fills it for its own sandbox.
 * The runtime never looks above this struct: it knows nothing of command
 * lines or policies. */
#ifndef HAVEN_RUNTIME_H
#define HAVEN_RUNTIME_H

#include <stdbool.h>

#include "error.h"
#include "oci_spec.h"
#include "user_namespace.h"

/* Called by create once config.json is read and parsed, before anything
 * is made: the caller may rewrite the config (haven-runc applies its
 * policies here).  On a rewrite it replaces *text and *spec (freeing the
 * old ones); path names config.json for error messages. */
typedef int (*hv_config_filter_fn) (void *data, const char *path, char **text, oci_spec **spec, hv_error **err);

struct hv_runtime
{
  const char *root;     /* state directory root (hv_default_state_root) */
  bool systemd_cgroup;  /* cgroupsPath is slice:prefix:name, systemd makes the scope */
  const char *rootless; /* "true", "false", "auto" or NULL (auto) */
  hv_config_filter_fn config_filter; /* NULL: the config is used as written */
  void *config_filter_data;
};

/* /run/haven for root; $XDG_RUNTIME_DIR/haven or /tmp/haven-UID otherwise,
 * and for root inside a user namespace with XDG_RUNTIME_DIR set (rootless
 * Podman runs the runtime so). */
char *hv_default_state_root (void);
/* --rootless, or when auto or absent: not root, or root of a user
 * namespace (as for hv_default_state_root).  Rootless containers may run
 * without a cgroup when they ask for no limits. */
bool hv_runtime_rootless (const struct hv_runtime *rt);
#endif
