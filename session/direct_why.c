/* `haven why` without namespaces: direct_why.h. */
#include "config.h"
#include "direct_why.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "denial_rules.h"
#include "denial_view.h"
#include "utils.h"

/* env's NAME=... entry set to value (added when missing). */
static void
env_set (oci_strv *env, const char *name, const char *value)
{
  size_t n = strlen (name);
  char *entry = xasprintf ("%s=%s", name, value);
  for (size_t i = 0; i < env->n; i++)
    if (strncmp (env->v[i], name, n) == 0 && env->v[i][n] == '=')
      {
        free (env->v[i]);
        env->v[i] = entry;
        return;
      }
  oci_strv_push (env, entry);
  free (entry);
}

int
hv_direct_why (hv_direct_plan *plan, oci_spec *spec, const char *bundle, const char *why_dir, const char *haven_exe,
               hv_error **err)
{
  if (why_dir == NULL)
    return 0;
  /* Read, never written: haven's side writes it (the seccomp listener). */
  oci_strv_push_unique (&plan->read, why_dir);
  env_set (&spec->process.env, HV_WHY_ENV, why_dir);
  if (haven_exe == NULL)
    return 0;
  cleanup_free char *bin = xasprintf ("%s/bin", bundle);
  cleanup_free char *link = xasprintf ("%s/haven", bin);
  if (mkdir (bin, 0755) < 0 && errno != EEXIST)
    return hv_error_set (err, errno, "mkdir %s", bin);
  if (symlink (haven_exe, link) < 0 && errno != EEXIST)
    return hv_error_set (err, errno, "symlink %s", link);
  oci_strv_push_unique (&plan->read, bin);
  oci_strv_push_unique (&plan->exec, haven_exe);
  /* PATH as the compiler made it, with the bundle's bin/ where the
   * sandbox's mount would have been. */
  for (size_t i = 0; i < spec->process.env.n; i++)
    if (strncmp (spec->process.env.v[i], "PATH=" HV_WHY_BIN_DIR, 5 + strlen (HV_WHY_BIN_DIR)) == 0)
      {
        char *next = xasprintf ("PATH=%s%s", bin, spec->process.env.v[i] + 5 + strlen (HV_WHY_BIN_DIR));
        free (spec->process.env.v[i]);
        spec->process.env.v[i] = next;
      }
  return 0;
}
