/* Network `none` held after the engine's hooks: a private network
 * namespace is not enough on its own, because an engine's hook may move
 * an interface into it (Docker's libnetwork-setkey does, into init's
 * namespace, whichever it is). */
#ifndef HAVEN_NETNS_CHECK_H
#define HAVEN_NETNS_CHECK_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci_spec.h"

/* Does the config ask for network none?  Any other value is an error
 * (name: the config's, for the message). */
int hv_netns_none_wanted (const oci_spec *spec, const char *name, bool *none, hv_error **err);

/* The network namespace of init (pid, alive: it waits for us) has no
 * interface but loopback; else an error naming the others and when they
 * were found (what: "after the prestart and createRuntime hooks"...). */
int hv_netns_check_loopback_only (pid_t pid, const char *what, hv_error **err);

/* The names of the interfaces in /proc/net/dev's text other than "lo",
 * comma-separated (NULL: none).  For the check and its tests. */
char *hv_netns_other_interfaces (const char *text);
#endif
