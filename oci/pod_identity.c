/* Reading the CRI runtimes' pod annotations (pod_identity.h). */
#include "config.h"
#include "pod_identity.h"

#include <errno.h>
#include <string.h>

bool
hv_pod_name_ok (const char *value)
{
  size_t n = value ? strlen (value) : 0;
  if (n == 0 || n > 253 || strcmp (value, ".") == 0 || strcmp (value, "..") == 0)
    return false;
  for (size_t i = 0; i < n; i++)
    {
      char c = value[i];
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
                || c == '-';
      if (!ok)
        return false;
    }
  return true;
}

/* One optional name: absent is fine, present must be plain. */
static int
take_name (const oci_spec *spec, const char *key, const char *name, const char **out, hv_error **err)
{
  const char *v = oci_kv_get (&spec->annotations, key);
  if (v != NULL && !hv_pod_name_ok (v))
    return hv_error_set (err, 0, "%s: annotation %s=\"%s\": not a plain name ([A-Za-z0-9._-], at most 253 bytes)",
                         name, key, v);
  *out = v;
  return 0;
}

int
hv_pod_identity_read (const oci_spec *spec, const char *name, hv_pod_identity *out, hv_error **err)
{
  memset (out, 0, sizeof *out);
  const char *type_key = HV_CRI_CONTAINERD_TYPE, *id_key = HV_CRI_CONTAINERD_SANDBOX_ID;
  const char *ns_key = HV_CRI_CONTAINERD_POD_NAMESPACE, *pod_key = HV_CRI_CONTAINERD_POD_NAME;
  const char *uid_key = HV_CRI_CONTAINERD_POD_UID, *ctr_key = HV_CRI_CONTAINERD_CONTAINER_NAME;
  const char *type = oci_kv_get (&spec->annotations, type_key);
  out->cri = "containerd";
  if (type == NULL)
    {
      type_key = HV_CRIO_TYPE, id_key = HV_CRIO_SANDBOX_ID;
      ns_key = HV_CRIO_POD_NAMESPACE, pod_key = HV_CRIO_POD_NAME;
      uid_key = HV_CRIO_POD_UID, ctr_key = HV_CRIO_CONTAINER_NAME;
      type = oci_kv_get (&spec->annotations, type_key);
      out->cri = "cri-o";
    }
  if (type == NULL)
    {
      out->cri = NULL;
      return 0;
    }
  if (strcmp (type, HV_CRI_TYPE_SANDBOX) == 0)
    out->role = HV_POD_SANDBOX;
  else if (strcmp (type, HV_CRI_TYPE_CONTAINER) == 0)
    out->role = HV_POD_CONTAINER;
  else
    return hv_error_set (err, 0, "%s: annotation %s=\"%s\": expected \"" HV_CRI_TYPE_SANDBOX "\" or \"" HV_CRI_TYPE_CONTAINER "\"",
                         name, type_key, type);
  if (take_name (spec, id_key, name, &out->sandbox_id, err) < 0 || take_name (spec, ns_key, name, &out->pod_namespace, err) < 0
      || take_name (spec, pod_key, name, &out->pod_name, err) < 0 || take_name (spec, uid_key, name, &out->pod_uid, err) < 0)
    return -1;
  if (out->role == HV_POD_CONTAINER && take_name (spec, ctr_key, name, &out->container_name, err) < 0)
    return -1;
  /* A container must say which pod it joins: without the sandbox's id
   * nothing could check that it shares the pod's network policy. */
  if (out->role == HV_POD_CONTAINER && out->sandbox_id == NULL)
    return hv_error_set (err, 0, "%s: annotation %s=\"%s\" without %s", name, type_key, type, id_key);
  return 0;
}
