#include "config.h"
#include "run_context.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy_hide.h"
#include "utils.h"

extern char **environ;

/* Where the command starts: the current directory, unless --project
 * names a project the current directory is not inside (then the
 * project: `haven run --project ~/src/app -- make` from elsewhere builds
 * the app, and a current directory outside the project is usually
 * hidden or read-only in the sandbox anyway).  Both are real paths. */
static char *
start_dir (const char *cwd, const char *project, bool project_given)
{
  size_t n = strlen (project);
  bool inside = strncmp (cwd, project, n) == 0 && (cwd[n] == '\0' || cwd[n] == '/' || strcmp (project, "/") == 0);
  return xstrdup (project_given && !inside ? project : cwd);
}

int
hv_run_context_init (const char *project_opt, char **cmd, struct hv_run_context *rc, hv_error **err)
{
  char buf[PATH_MAX];
  if (getcwd (buf, sizeof (buf)) == NULL)
    return hv_error_set (err, errno, "getcwd");
  rc->project = realpath (project_opt ? project_opt : buf, NULL);
  if (rc->project == NULL)
    return hv_error_set (err, errno, "project directory %s", project_opt ? project_opt : buf);
  rc->cwd = start_dir (buf, rc->project, project_opt != NULL);
  /* The home comes from the password database as well as from $HOME,
   * which the caller (or an agent that started haven) may have unset or
   * pointed elsewhere: both are hidden, and neither may be in the
   * project.  Other users' homes are hidden too (root reads them all). */
  hv_own_homes (getenv ("HOME"), getuid (), &rc->homes);
  hv_other_homes (&rc->homes, &rc->other_homes);
  /* ...and container engines' data (other containers' files). */
  hv_engine_roots (&rc->homes, &rc->engine_roots);
  if (hv_check_project_homes (rc->project, &rc->homes, &rc->other_homes, err) < 0
      || hv_check_project_homes (rc->project, NULL, &rc->engine_roots, err) < 0)
    return -1;
  struct hv_run_ctx *ctx = &rc->ctx;
  ctx->project = rc->project;
  ctx->home = getenv ("HOME");
  ctx->homes = &rc->homes;
  ctx->other_homes = &rc->other_homes;
  ctx->engine_roots = &rc->engine_roots;
  ctx->cwd = rc->cwd;
  ctx->uid = getuid ();
  ctx->gid = getgid ();
  ctx->rootless = geteuid () != 0;
  ctx->terminal = isatty (0) && isatty (1);
  ctx->argv = cmd;
  ctx->host_env = environ;
  return 0;
}

void
hv_run_context_release (struct hv_run_context *rc)
{
  free (rc->project);
  free (rc->cwd);
  oci_strv_free (&rc->homes);
  oci_strv_free (&rc->other_homes);
  oci_strv_free (&rc->engine_roots);
  rc->project = rc->cwd = NULL;
}
