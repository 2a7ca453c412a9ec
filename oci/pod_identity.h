/* Which pod a config belongs to, from the annotations the CRI runtimes
 * (containerd's CRI plugin, CRI-O) put on every container they create:
 * the pod sandbox ("pause") container and each container of the pod.
 *
 * kubelet never talks to the OCI runtime; the CRI runtime does, and it
 * names the pod only through these annotations.  They are the config's:
 * as trusted as the rest of it (whoever writes a config can already
 * bind the host's / into a container).  The values serve to find the
 * pod's sandbox container and to name the pod in the audit trail; a
 * value that would break either (a sandbox id that is not a plain name,
 * a name with a control character or a slash) is refused, not dropped. */
#ifndef HAVEN_POD_IDENTITY_H
#define HAVEN_POD_IDENTITY_H

#include <stdbool.h>

#include "error.h"
#include "oci_spec.h"

/* containerd 1.6+ (its CRI plugin, package "annotations") */
#define HV_CRI_CONTAINERD_TYPE "io.kubernetes.cri.container-type"
#define HV_CRI_CONTAINERD_SANDBOX_ID "io.kubernetes.cri.sandbox-id"
#define HV_CRI_CONTAINERD_POD_NAME "io.kubernetes.cri.sandbox-name"
#define HV_CRI_CONTAINERD_POD_NAMESPACE "io.kubernetes.cri.sandbox-namespace"
#define HV_CRI_CONTAINERD_POD_UID "io.kubernetes.cri.sandbox-uid"
#define HV_CRI_CONTAINERD_CONTAINER_NAME "io.kubernetes.cri.container-name"
/* CRI-O (its package "annotations", and kubelet's own pod labels, which
 * CRI-O copies into the annotations) */
#define HV_CRIO_TYPE "io.kubernetes.cri-o.ContainerType"
#define HV_CRIO_SANDBOX_ID "io.kubernetes.cri-o.SandboxID"
#define HV_CRIO_POD_NAME "io.kubernetes.pod.name"
#define HV_CRIO_POD_NAMESPACE "io.kubernetes.pod.namespace"
#define HV_CRIO_POD_UID "io.kubernetes.pod.uid"
#define HV_CRIO_CONTAINER_NAME "io.kubernetes.container.name"
/* The value of either type annotation for the sandbox container; the
 * other containers of a pod have "container". */
#define HV_CRI_TYPE_SANDBOX "sandbox"
#define HV_CRI_TYPE_CONTAINER "container"

typedef enum
{
  HV_POD_NONE = 0,    /* not made by a CRI runtime (Docker, Podman, haven run, ctr) */
  HV_POD_SANDBOX,     /* the pod's sandbox container: it holds the pod's namespaces */
  HV_POD_CONTAINER,   /* a container of the pod */
} hv_pod_role;

/* Points into the spec's annotations: valid while the spec is. */
typedef struct
{
  hv_pod_role role;
  const char *cri;           /* "containerd" or "cri-o"; NULL with HV_POD_NONE */
  const char *sandbox_id;    /* the sandbox container's id (its own id for HV_POD_SANDBOX) */
  const char *pod_namespace; /* may be NULL: not every CRI runtime version sets all */
  const char *pod_name;
  const char *pod_uid;
  const char *container_name; /* NULL for the sandbox container */
} hv_pod_identity;

/* Fills *out from spec's annotations.  A config with neither type
 * annotation is HV_POD_NONE (0).  Fails (-1) on a type other than the
 * two above, a container without a sandbox id, or a value that is not
 * a plain name (see hv_pod_name_ok).  name is the config's name in
 * messages ("config.json"). */
int hv_pod_identity_read (const oci_spec *spec, const char *name, hv_pod_identity *out, hv_error **err);

/* A value that may name a pod, a namespace, a container or a sandbox id:
 * 1 to 253 bytes of [A-Za-z0-9._-] (Kubernetes' names, namespaces and
 * container names are DNS labels or subdomains; ids are hex; uids are
 * UUIDs), not "." or "..". */
bool hv_pod_name_ok (const char *value);

#endif
