/* A run whose policy has no network (`network.mode: none`).
 * `haven run -- npm install x` under the default policy retried for 70 s
 * and failed with a name-lookup error, and nothing said why: glibc's
 * resolver reached no name server (the sandbox has only loopback) and
 * answered EAI_AGAIN, "temporary failure", which package managers retry.
 *
 * So the sandbox gets the host's /etc/nsswitch.conf with its `hosts:`
 * line reduced to `files` (and `myhostname` where the host uses it): a
 * name not in /etc/hosts is "not known" at once (EAI_NONAME, Node's
 * ENOTFOUND), which no client retries, and /etc/hosts (localhost) still
 * resolves.  Programs with resolvers of their own (Go, musl, c-ares)
 * reach no name server either: their lookups fail at once as before
 * (network unreachable or connection refused on loopback).  And under a
 * terminal haven says once, at the start, that the network is off and
 * which policy key turns it on. */
#ifndef HAVEN_RUN_OFFLINE_H
#define HAVEN_RUN_OFFLINE_H

#include "error.h"
#include "policy.h"

/* Under network none: <bundle>/nsswitch.conf, its path in *path (NULL
 * otherwise, or when the host has no /etc/nsswitch.conf to cover; a
 * host file haven cannot read: a line in notes says so). */
int hv_run_offline_prepare (const hv_policy *p, const char *bundle, char **path, oci_strv *notes, hv_error **err);
/* Under network none and a terminal on stderr: one line for notes
 * saying so. */
void hv_run_offline_note (const hv_policy *p, oci_strv *notes);
#endif
