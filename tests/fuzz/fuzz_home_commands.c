/* Fuzz target of the host agents' settings as a run checks them
 * (session/home_commands.c hv_home_commands_check_text: JSON through
 * yajl and a small TOML reader): a home_allow entry's settings files
 * are ones the sandbox may have rewritten in an earlier run, so their
 * text is hostile.  The first byte's low bit picks the reader
 * (config.toml or settings.json), the rest is the text.  The policy:
 * the project writable (a private temp dir, with an `rw` directory
 * holding a file `run.sh`) and read_write `{project}/rw*` (a glob) and
 * `/nonexistent-haven-fuzz`; the keys are the union of the shipped
 * policies' `commands`.  Besides "no crash, leak or sanitizer report":
 * the check fails exactly when it sets an error, whose message starts
 * with the file's name, and gives the same answer when run again. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"
#include "home_commands.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static char *key_list[] = { "command", "args", "env", "notify", "apiKeyHelper", "awsAuthRefresh",
                            "awsCredentialExport", "otelHeadersHelper", "discoveryCommand", "callCommand" };
static char *rw_list[] = { "{project}/rw*", "/nonexistent-haven-fuzz" };

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static char project[128], home[128];
  if (project[0] == '\0')
    {
      const char *tmp = fuzz_tmpdir ();
      snprintf (project, sizeof (project), "%s/project", tmp);
      snprintf (home, sizeof (home), "%s/home", tmp);
      char rw[160], script[192];
      snprintf (rw, sizeof (rw), "%s/rw", project);
      snprintf (script, sizeof (script), "%s/run.sh", rw);
      if (mkdir (project, 0700) < 0 || mkdir (home, 0700) < 0 || mkdir (rw, 0700) < 0)
        fuzz_fail ("mkdir in %s: %s", tmp, strerror (errno));
      fuzz_write_file (script, "#!/bin/sh\n", 10);
    }
  if (size < 1)
    return 0;
  const char *name = data[0] & 1 ? "config.toml" : "settings.json";
  /* As check_file reads a file: up to its first NUL. */
  char *text = malloc (size);
  memcpy (text, data + 1, size - 1);
  text[size - 1] = '\0';

  hv_policy p = { 0 };
  p.read_write.v = rw_list;
  p.read_write.n = sizeof (rw_list) / sizeof (rw_list[0]);
  struct hv_run_ctx ctx = { 0 };
  ctx.project = project;
  ctx.home = home;
  ctx.cwd = project;
  oci_strv keys = { .v = key_list, .n = sizeof (key_list) / sizeof (key_list[0]) };

  hv_error *err = NULL, *err2 = NULL;
  int r = hv_home_commands_check_text (&p, &ctx, name, text, &keys, &err);
  if (r != 0 && r != -1)
    fuzz_fail ("%s: returned %d", name, r);
  if ((r < 0) != (err != NULL))
    fuzz_fail ("%s: returned %d with%s an error", name, r, err ? "" : "out");
  if (err && (err->msg == NULL || strncmp (err->msg, name, strlen (name)) != 0))
    fuzz_fail ("%s: the error does not name the file: %s", name, err->msg ? err->msg : "(null)");
  int r2 = hv_home_commands_check_text (&p, &ctx, name, text, &keys, &err2);
  if (r2 != r || (err && strcmp (err->msg, err2->msg) != 0))
    fuzz_fail ("%s: a second check answered otherwise", name);
  hv_error_free (&err);
  hv_error_free (&err2);
  free (text);
  return 0;
}
