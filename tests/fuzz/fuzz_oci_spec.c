/* Fuzz target of the JSON documents a runtime caller hands haven-runc:
 * config.json (oci_spec_parse), the `exec --process` file
 * (oci_process_parse), `update --resources` (oci_resources_parse), the
 * seccomp annotation (oci_seccomp_parse) and the egress annotation
 * (hv_egress_config_parse).  The same bytes go to each parser: none may
 * crash, leak or read out of bounds; each either fails with an error or
 * succeeds (never both, never neither); the egress config, when it
 * parses, generates JSON that parses again and generates the same text. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress_config.h"
#include "error.h"
#include "file_read.h"
#include "fuzz_util.h"
#include "mounts.h"
#include "oci_spec.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* r < 0 exactly when *err was set. */
static void
check_result (const char *what, int r, hv_error **err)
{
  if ((r < 0) != (*err != NULL))
    fuzz_fail ("%s: returned %d with%s an error", what, r, *err ? "" : "out");
  if (*err && (*err)->msg == NULL)
    fuzz_fail ("%s: an error without a message", what);
  hv_error_free (err);
}

static void
check_egress (const char *json)
{
  hv_egress_config *c = NULL, *again = NULL;
  hv_error *err = NULL;
  int r = hv_egress_config_parse (json, "fuzz", &c, &err);
  check_result ("egress config", r, &err);
  if (r < 0)
    return;
  char *text = hv_egress_config_generate (c);
  if (hv_egress_config_parse (text, "fuzz (generated)", &again, &err) < 0)
    fuzz_fail ("generated egress config does not parse: %s\n%s", err->msg, text);
  char *text2 = hv_egress_config_generate (again);
  if (strcmp (text, text2) != 0)
    fuzz_fail ("egress config not stable:\n%s\n%s", text, text2);
  free (text2);
  free (text);
  hv_egress_config_free (again);
  hv_egress_config_free (c);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* The readers hand the parsers a NUL-terminated copy of the file
   * (hv_read_file); the length is passed too, so a NUL inside counts. */
  char *json = malloc (size + 1);
  memcpy (json, data, size);
  json[size] = '\0';
  hv_error *err = NULL;

  oci_spec *spec = NULL;
  int r = oci_spec_parse (json, size, "config.json", &spec, &err);
  check_result ("config.json", r, &err);
  if (r == 0 && spec == NULL)
    fuzz_fail ("config.json parsed to nothing");
  /* Each mount's options as the runtime reads them before mounting
   * (flags, propagation, haven's x-haven.* options). */
  for (size_t i = 0; spec && i < spec->n_mounts; i++)
    {
      struct hv_mount_opts o;
      r = hv_mount_opts_parse (&spec->mounts[i].options, &o, &err);
      check_result ("mount options", r, &err);
      if (r == 0)
        {
          if (o.subdir && (o.subdir[0] == '\0' || o.subdir[0] == '/'))
            fuzz_fail ("x-haven.subdir accepted as \"%s\"", o.subdir);
          hv_mount_opts_free (&o);
        }
    }
  oci_spec_free (spec);

  oci_process *p = NULL;
  r = oci_process_parse (json, size, "process.json", &p, &err);
  check_result ("process.json", r, &err);
  if (r == 0)
    {
      if (p == NULL || (p->args.n == 0 && p->command_line == NULL))
        fuzz_fail ("process.json parsed without args");
      oci_process_free (p);
    }

  oci_resources *res = NULL;
  r = oci_resources_parse (json, size, "resources", &res, &err);
  check_result ("resources", r, &err);
  oci_resources_free (res);

  oci_seccomp *sc = NULL;
  r = oci_seccomp_parse (json, size, "seccomp", &sc, &err);
  check_result ("seccomp", r, &err);
  oci_seccomp_free (sc);

  check_egress (json);
  free (json);
  return 0;
}
