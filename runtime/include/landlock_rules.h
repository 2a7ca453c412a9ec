/* Landlock rules as lists, for the layers above the runtime: a sandbox
 * without namespaces (direct_run.h) restricts itself with them. */
#ifndef HAVEN_LANDLOCK_RULES_H
#define HAVEN_LANDLOCK_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "oci_spec.h"

/* The rules as lists, with what only a sandbox without namespaces needs
 * (direct_run.h): TCP bind and connect handled, connect allowed only to
 * the listed ports; the abstract-Unix-socket and signal scopes.  Paths
 * are opened link-free (a path that is or crosses a link gets no rule).  What is asked for and the kernel lacks
 * (network: ABI 4, scopes: ABI 6, Landlock itself) fails. */
struct hv_landlock_rules
{
  const oci_strv *read, *write, *exec; /* NULL: none */
  const oci_strv *list;                /* listing directories only; NULL: none */
  bool tcp_handled;
  const uint16_t *tcp_connect_ports;
  size_t n_tcp_connect_ports;
  bool scope_abstract_unix, scope_signal;
};
int hv_landlock_restrict (const struct hv_landlock_rules *rules, bool log_new_exec, hv_error **err);
#endif
