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

/* Called by create once config.json is read and parsed, before anything
 * is made: the caller may rewrite the config (haven-runc applies its
 * policies here).  On a rewrite it replaces *text and *spec (freeing the
 * old ones); path names config.json for error messages. */
typedef int (*hv_config_filter_fn) (void *data, const char *path, char **text, oci_spec **spec, hv_error **err);

struct hv_runtime
{
  const char *root;     /* state directory root (hv_default_state_root) */
  bool systemd_cgroup;  /* cgroupsPath is slice:prefix:name, systemd makes the scope */
  const char *rootless; /* "true", "false", "auto" or NULL (false) */
  hv_config_filter_fn config_filter; /* NULL: the config is used as written */
  void *config_filter_data;
};

/* /run/haven for root; $XDG_RUNTIME_DIR/haven or /tmp/haven-UID otherwise. */
char *hv_default_state_root (void);
#endif
