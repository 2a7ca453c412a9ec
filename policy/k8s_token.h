/* Kubernetes' service-account token in engine containers.
 *
 * kubelet binds a token for the pod's service account into every
 * container of a pod (unless the pod says automountServiceAccountToken:
 * false) at HV_K8S_TOKEN_DIR: with it an agent can talk to the cluster's
 * API server as the pod.  Under a policy whose
 * kubernetes.service_account_token is not true, the config filter
 * (policy_apply.c) replaces every mount at or below that directory, in
 * either spelling (/var/run is a link to /run in most images, and the
 * runtime resolves a destination inside the root filesystem, so both
 * reach the same place), by an empty read-only tmpfs (one below an
 * earlier one's place is left out: the tmpfs covers it).  The match is on
 * the destination's text, cleaned of "//" and "."; a destination with a
 * ".." component is refused, since a link in the image could take it
 * anywhere.  A token bound at any other path (a projected volume mounted
 * elsewhere by the pod spec) is not recognised. */
#ifndef HAVEN_K8S_TOKEN_H
#define HAVEN_K8S_TOKEN_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "policy.h"

#define HV_K8S_TOKEN_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define HV_K8S_TOKEN_DIR_RUN "/run/secrets/kubernetes.io/serviceaccount"

/* Does the policy hide the token (kubernetes.service_account_token false
 * or not set)? */
bool hv_k8s_token_hidden (const hv_policy *p);

/* Is a mount at destination dest one that brings the token: at or below
 * either spelling of HV_K8S_TOKEN_DIR?  1 yes (and, if rest is not NULL,
 * *rest is a new string: the cleaned destination's part below the
 * directory, "" for the directory itself, "/token" for a file in it), 0
 * no, -1 (with *err) for a destination with a ".." component.  name
 * names the config in the message. */
int hv_k8s_token_destination (const char *dest, const char *name, char **rest, hv_error **err);

/* `haven policy explain`'s lines on it. */
void hv_k8s_token_explain (const hv_policy *p, FILE *out);
#endif
