#include "config.h"
#include "config_policy.h"

#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "policy_load.h"
#include "policy_apply.h"
#include "utils.h"

static int
tighten (const char *policy_name, char **text, const char *path, hv_error **err)
{
  hv_policy *p = NULL;
  char *tight = NULL;
  if (hv_policy_load (policy_name, &p, err) < 0)
    return hv_error_wrap (err, "%s", path);
  int r = hv_policy_apply (p, *text, path, &tight, err);
  hv_policy_free (p);
  if (r < 0)
    return -1;
  free (*text);
  *text = tight;
  return 0;
}

int
hv_config_apply_policies (void *data, const char *path, char **text, oci_spec **spec, hv_error **err)
{
  const struct hv_global *g = data;
  /* haven run's own bundles already are their policy: haven run drives
   * the runtime library itself and installs no filter.  Nothing in a
   * config can opt out of this one (an annotation would let any config
   * author escape the policy it asked for). */
  cleanup_free char *wanted = xstrdup (oci_kv_get (&(*spec)->annotations, "run.haven.policy"));
  if (g->policy == NULL && wanted == NULL)
    return 0;
  if (wanted && g->policy_lock && (g->policy == NULL || strcmp (wanted, g->policy) != 0))
    return hv_error_set (err, 0, "%s: annotation run.haven.policy=\"%s\" refused: this runtime is locked to %s%s%s",
                         path, wanted, g->policy ? "policy \"" : "its configuration", g->policy ? g->policy : "",
                         g->policy ? "\"" : "");
  if (g->policy && tighten (g->policy, text, path, err) < 0)
    return -1;
  if (wanted && (g->policy == NULL || strcmp (wanted, g->policy) != 0) && tighten (wanted, text, path, err) < 0)
    return -1;
  oci_spec_free (*spec);
  *spec = NULL;
  return oci_spec_parse (*text, strlen (*text), path, spec, err);
}
