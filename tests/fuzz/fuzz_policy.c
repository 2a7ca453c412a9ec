/* Fuzz target of policy files (policy/policy_load.c, policy_parse.c)
 * and the compiler (policy_compile.c).  The input is two YAML documents
 * cut at a line "---8<---": the first is written to a.yaml and loaded,
 * the second to b.yaml, which the first can name in `extends: b.yaml`
 * (a policy without `extends` builds on the repository's default policy,
 * found through HAVEN_POLICY_PATH).  Both lie in a private temp dir.
 * Loading must not crash, leak or read out of bounds, and fail only with
 * an error; a policy that loads must compile, or fail with an error, and
 * what it compiles to must be a config.json that oci_spec_parse accepts. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"
#include "policy_api.h"
#include "oci_spec.h"
#include "policy.h"
#include "policy_compile.h"
#include "policy_load.h"

#ifndef HAVEN_FUZZ_POLICIES
#error HAVEN_FUZZ_POLICIES must name the policies directory of the repository
#endif

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static char dir_a[128], dir_b[128], project[128], home[128], rootfs[128];

static void
setup (void)
{
  const char *tmp = fuzz_tmpdir ();
  snprintf (dir_a, sizeof (dir_a), "%s/a.yaml", tmp);
  snprintf (dir_b, sizeof (dir_b), "%s/b.yaml", tmp);
  snprintf (project, sizeof (project), "%s/project", tmp);
  snprintf (home, sizeof (home), "%s/home", tmp);
  snprintf (rootfs, sizeof (rootfs), "%s/rootfs", tmp);
  mkdir (project, 0700);
  mkdir (home, 0700);
  mkdir (rootfs, 0700);
  /* Policies by name come from the repository only, never from the
   * user's ~/.config or /etc. */
  setenv ("HAVEN_POLICY_PATH", HAVEN_FUZZ_POLICIES, 1);
  setenv ("HOME", home, 1);
}

/* A "**" pattern walks its directory tree, up to 2,000,000 entries
 * (policy_glob.h): by design, and bounded, but "/ ** /x" would walk this
 * machine for seconds per input.  Patterns that can only walk the private
 * project and home are compiled; the others are loaded only. */
static bool
walks_only_tmp (const oci_strv *v)
{
  for (size_t i = 0; i < v->n; i++)
    if (strstr (v->v[i], "**") && (strstr (v->v[i], "..") || !(strncmp (v->v[i], "{project}/", 10) == 0
                                                                || strncmp (v->v[i], "~/", 2) == 0)))
      return false;
  return true;
}

static bool
cheap_to_compile (const hv_policy *p)
{
  return walks_only_tmp (&p->read_only) && walks_only_tmp (&p->read_write) && walks_only_tmp (&p->block)
         && walks_only_tmp (&p->protect) && walks_only_tmp (&p->home_allow) && walks_only_tmp (&p->allow_exec);
}

static void
compile (const hv_policy *p)
{
  if (!cheap_to_compile (p))
    return;
  char env_home[160];
  snprintf (env_home, sizeof (env_home), "HOME=%s", home);
  char *env[] = { (char *) "PATH=/usr/bin:/bin", env_home, (char *) "USER=fuzz", (char *) "TERM=xterm",
                  (char *) "OPENAI_API_KEY=sk-fuzz", (char *) "LANG=C.UTF-8", NULL };
  char *argv[] = { (char *) "agent", (char *) "--flag", NULL };
  oci_strv homes = { 0 };
  oci_strv_push (&homes, home);
  struct hv_run_ctx ctx = { .project = project, .home = home, .homes = &homes, .cwd = project,
                            .rootfs = rootfs, .uid = 1000, .gid = 1000, .argv = argv, .host_env = env };
  char *json = NULL;
  hv_error *err = NULL;
  if (hv_policy_compile (p, &ctx, &json, &err) < 0)
    {
      if (err == NULL || json != NULL)
        fuzz_fail ("compile failed without an error, or left a config");
      hv_error_free (&err);
    }
  else
    {
      oci_spec *spec = NULL;
      if (json == NULL)
        fuzz_fail ("compile succeeded without a config");
      if (oci_spec_parse (json, strlen (json), "compiled config.json", &spec, &err) < 0)
        fuzz_fail ("the compiled config is not a valid config.json: %s\n%s", err->msg, json);
      /* credentials.api: while the gateway serves OpenAI, the host's
       * OPENAI_API_KEY never reaches the sandbox, whatever env says. */
      for (size_t i = 0; i < p->n_api_creds; i++)
        if (strcmp (p->api_creds[i].provider, "openai") == 0 && hv_api_active (&p->api_creds[i], env)
            && strstr (json, "OPENAI_API_KEY=sk-fuzz"))
          fuzz_fail ("the key of a served credentials.api item is in the config:\n%s", json);
      oci_spec_free (spec);
      free (json);
    }
  oci_strv_free (&homes);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (project[0] == '\0')
    setup ();
  char *docs[2];
  fuzz_split (data, size, "\n---8<---\n", docs, 2);
  fuzz_write_file (dir_a, docs[0], strlen (docs[0]));
  fuzz_write_file (dir_b, docs[1], strlen (docs[1]));
  fuzz_free_parts (docs, 2);

  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (dir_a, &p, &err) < 0)
    {
      if (err == NULL || err->msg == NULL)
        fuzz_fail ("load failed without an error");
      hv_error_free (&err);
      return 0;
    }
  if (p == NULL)
    fuzz_fail ("load succeeded without a policy");
  compile (p);
  hv_policy_free (p);
  return 0;
}
