/* Kubernetes' service-account token in engine containers (k8s_token.h). */
#include "config.h"

#include <string.h>

#include "k8s_token.h"
#include "utils.h"

bool
hv_k8s_token_hidden (const hv_policy *p)
{
  return !(p->k8s_service_account_token.set && p->k8s_service_account_token.value);
}

/* Is path (cleaned, absolute) dir or below it? */
static bool
at_or_below (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* path's part below dir ("" for dir itself), if path is dir or below. */
static const char *
below (const char *path, const char *dir)
{
  return at_or_below (path, dir) ? path + strlen (dir) : NULL;
}

int
hv_k8s_token_destination (const char *dest, const char *name, char **rest, hv_error **err)
{
  /* The destination as the runtime walks it: components between
   * slashes, "." and empty ones skipped; a relative destination is taken
   * from the root, as runtimes do. */
  cleanup_free char *clean = xmalloc0 (strlen (dest) + 2);
  size_t len = 0;
  for (const char *c = dest; *c;)
    {
      while (*c == '/')
        c++;
      size_t n = strcspn (c, "/");
      if (n == 0 || (n == 1 && c[0] == '.'))
        {
          c += n;
          continue;
        }
      if (n == 2 && c[0] == '.' && c[1] == '.')
        return hv_error_set (err, 0,
                             "%s: mount destination \"%s\" has a \"..\": it cannot be checked for Kubernetes' "
                             "service-account token (kubernetes.service_account_token is false)",
                             name, dest);
      clean[len++] = '/';
      memcpy (clean + len, c, n);
      len += n;
      c += n;
    }
  clean[len] = '\0';
  const char *r = below (clean, HV_K8S_TOKEN_DIR);
  if (r == NULL)
    r = below (clean, HV_K8S_TOKEN_DIR_RUN);
  if (r && rest)
    *rest = xstrdup (r);
  return r != NULL;
}

void
hv_k8s_token_explain (const hv_policy *p, FILE *out)
{
  fprintf (out, "\nKubernetes\n");
  if (hv_k8s_token_hidden (p))
    fprintf (out,
             "  The service-account token is hidden: in a pod, what is mounted at\n"
             "  %s (or the same under /run) is replaced by an\n"
             "  empty read-only directory, so the agent cannot talk to the API server as the pod\n"
             "  (kubernetes.service_account_token: false).  A token the pod spec mounts at another path\n"
             "  is not hidden.\n",
             HV_K8S_TOKEN_DIR);
  else
    fprintf (out,
             "  The service-account token is visible: kubelet's mount at\n"
             "  %s stays (kubernetes.service_account_token: true).\n",
             HV_K8S_TOKEN_DIR);
}
