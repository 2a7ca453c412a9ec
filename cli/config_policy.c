#include "config.h"
#include "config_policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "haven_annotations.h"
#include "pod_identity.h"
#include "policy.h"
#include "policy_load.h"
#include "policy_apply.h"
#include "policy_compile.h"
#include "engine_gateway.h"
#include "exec_restrict.h"
#include "utils.h"

static int
tighten (const char *policy_name, const struct hv_global *g, char **text, const char *path, hv_error **err)
{
  hv_policy *p = NULL;
  char *tight = NULL;
  if (hv_policy_load (policy_name, &p, err) < 0)
    return hv_error_wrap (err, "%s", path);
  cleanup_strv oci_strv notes = { 0 };
  int r = hv_policy_apply_keys (p, *text, path, g->api_keys, &tight, &notes, err);
  hv_policy_free (p);
  if (r < 0)
    return -1;
  /* On stderr: Docker and Podman show it with a failed create only, but
   * haven-runc's own users and the runtime's log see it every time. */
  for (size_t i = 0; i < notes.n; i++)
    fprintf (stderr, "haven-runc: note: %s\n", notes.v[i]);
  free (*text);
  *text = tight;
  return 0;
}

/* A policy name as the search path finds it (NAME.yaml in a policy
 * directory): a letter or digit first, then letters, digits, '_', '-'
 * or '.', and not a file name (no ".yaml"). */
static bool
plain_policy_name (const char *s)
{
  if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= '0' && s[0] <= '9')))
    return false;
  for (const char *c = s; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'
          || *c == '-' || *c == '.'))
      return false;
  return strlen (s) <= 64 && strstr (s, ".yaml") == NULL;
}

/* A pod's run.haven.policy comes from whoever may create pods through
 * the Kubernetes API, not from the node's administrator: it names an
 * installed policy, never a file (a path would make the runtime, as
 * root, read a file the pod author chose, from the bundle's directory
 * or the node), and under a handler bound to a policy it must build on
 * that policy (`extends` it, directly or not): it is applied on top of
 * the handler's, so it only adds restrictions, and a pod asking for a
 * weaker one is told so instead of getting a mix it did not ask for.
 * Docker's and Podman's annotations come from the engine's user, who
 * already controls the host: they keep naming files. */
static int
check_pod_request (const struct hv_global *g, const char *wanted, const char *path, const hv_pod_identity *pod,
                   hv_error **err)
{
  const char *who = pod->role == HV_POD_SANDBOX ? "the pod" : "the pod's container";
  if (!plain_policy_name (wanted))
    return hv_error_set (err, 0,
                         "%s: annotation " HV_POLICY_ANNOTATION "=\"%s\" of %s refused: a pod names an installed "
                         "policy (such as strict), never a file",
                         path, wanted, who);
  if (g->policy == NULL || strcmp (wanted, g->policy) == 0)
    return 0;
  cleanup_policy hv_policy *handler = NULL, *asked = NULL;
  if (hv_policy_load (g->policy, &handler, err) < 0 || hv_policy_load (wanted, &asked, err) < 0)
    return hv_error_wrap (err, "%s: annotation " HV_POLICY_ANNOTATION "=\"%s\" of %s", path, wanted, who);
  /* files.v[0] is the handler's policy file itself; the asked policy's
   * files are it and every file of its `extends` chain. */
  struct stat h;
  if (handler->files.n == 0 || stat (handler->files.v[0], &h) < 0)
    return hv_error_set (err, errno, "%s: the handler's policy \"%s\"", path, g->policy);
  for (size_t i = 0; i < asked->files.n; i++)
    {
      struct stat a;
      if (stat (asked->files.v[i], &a) == 0 && a.st_dev == h.st_dev && a.st_ino == h.st_ino)
        return 0;
    }
  return hv_error_set (err, 0,
                       "%s: annotation " HV_POLICY_ANNOTATION "=\"%s\" of %s refused: policy \"%s\" does not "
                       "build on this runtime handler's policy \"%s\" (a pod may ask only for a stricter policy, one "
                       "that extends the handler's)",
                       path, wanted, who, wanted, g->policy);
}

int
hv_config_apply_policies (void *data, const char *path, char **text, oci_spec **spec, hv_error **err)
{
  const struct hv_global *g = data;
  /* haven run's own bundles already are their policy: haven run drives
   * the runtime library itself and installs no filter.  Nothing in a
   * config can opt out of this one (an annotation would let any config
   * author escape the policy it asked for). */
  cleanup_free char *wanted = xstrdup (oci_kv_get (&(*spec)->annotations, HV_POLICY_ANNOTATION));
  if (g->policy == NULL && wanted == NULL)
    return 0;
  if (wanted && g->policy_lock && (g->policy == NULL || strcmp (wanted, g->policy) != 0))
    return hv_error_set (err, 0,
                         "%s: annotation " HV_POLICY_ANNOTATION "=\"%s\" refused: this runtime is locked to %s%s%s", path,
                         wanted, g->policy ? "policy \"" : "its configuration", g->policy ? g->policy : "",
                         g->policy ? "\"" : "");
  if (wanted)
    {
      hv_pod_identity pod;
      if (hv_pod_identity_read (*spec, path, &pod, err) < 0)
        return -1;
      if (pod.role != HV_POD_NONE && check_pod_request (g, wanted, path, &pod, err) < 0)
        return -1;
    }
  if (g->policy && tighten (g->policy, g, text, path, err) < 0)
    return -1;
  if (wanted && (g->policy == NULL || strcmp (wanted, g->policy) != 0) && tighten (wanted, g, text, path, err) < 0)
    return -1;
  oci_spec_free (*spec);
  *spec = NULL;
  return oci_spec_parse (*text, strlen (*text), path, spec, err);
}

static int
restrict_exec (const char *policy_name, const oci_spec *container, oci_process *proc, hv_error **err)
{
  cleanup_policy hv_policy *p = NULL;
  /* A policy that no longer loads fails the exec: never run it unpoliced. */
  if (hv_policy_load (policy_name, &p, err) < 0)
    return hv_error_wrap (err, "exec into a container under policy \"%s\"", policy_name);
  hv_policy_restrict_exec (p, &container->process, proc);
  return 0;
}

int
hv_exec_apply_policies (const struct hv_global *g, const oci_spec *container, oci_process *proc, hv_error **err)
{
  /* The container's policy (recorded at create) and this runtime's own:
   * an exec gets both, as init did. */
  const char *applied = oci_kv_get (&container->annotations, HV_POLICY_ANNOTATION);
  if (g->policy && restrict_exec (g->policy, container, proc, err) < 0)
    return -1;
  if (applied && (g->policy == NULL || strcmp (applied, g->policy) != 0)
      && restrict_exec (applied, container, proc, err) < 0)
    return -1;
  /* A container whose gateway keeps a model API's key outside: an exec
   * (docker exec -e ANTHROPIC_API_KEY=...) gets the placeholder too. */
  const char *gateway = oci_kv_get (&container->annotations, HV_GATEWAY_ANNOTATION);
  if (gateway)
    {
      struct hv_engine_gateway gw = { 0 };
      int r = hv_engine_gateway_parse (gateway, "the container's config", &gw, err);
      if (r == 0)
        hv_engine_gateway_env (&gw, &proc->env);
      hv_engine_gateway_clear (&gw);
      if (r < 0)
        return hv_error_wrap (err, "exec");
    }
  return 0;
}
