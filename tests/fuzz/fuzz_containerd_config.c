/* Fuzz target of `haven install containerd`'s edit of config.toml
 * (cli/cri_install.c hv_containerd_config_edit, over the TOML statement
 * reader cli/toml_scan.c).
 *
 * The first byte picks the handler's name and whether pods' annotations
 * pass; the rest, up to a NUL, is the file.  Adding and taking out run the
 * same checks, so both fail or both succeed, and a refusal names the file
 * ("config.toml:").  What adding writes is read again without error, adding
 * again changes nothing, and taking it out gives what taking out of the
 * input gives (an input without statements keeps the version line that
 * adding gave it, and nothing else; a last line without a newline keeps
 * the one adding gave it); for an input without a block of the
 * handler that ends with a newline and has a statement, that is the input
 * itself, byte for byte.
 * Built with libFuzzer by build.sh, and with gcc by make check as a replay
 * of the committed corpus (fuzz_corpus_driver.c). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cri_install.h"
#include "fuzz_util.h"
#include "toml_scan.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const char *const names[] = { "haven", "haven-strict", "runc", "a" };

/* edit, or NULL with the error's message in *msg. */
static char *
edit (const char *text, const struct hv_cri_opts *o, bool remove, char **msg)
{
  hv_error *err = NULL;
  char *out = NULL, *note = NULL;
  *msg = NULL;
  if (hv_containerd_config_edit (text, "config.toml", o, remove, &out, &note, &err) < 0)
    {
      if (err == NULL || out != NULL || note != NULL)
        fuzz_fail ("a failed edit without an error, or with output");
      *msg = strdup (err->msg);
      hv_error_free (&err);
      return NULL;
    }
  if (out == NULL)
    fuzz_fail ("an edit without output");
  free (note);
  return out;
}

/* Statements (not comments) in text; -1 when it does not scan. */
static long
statements (const char *text)
{
  struct hv_toml_doc doc;
  hv_error *err = NULL;
  if (hv_toml_scan (text, "config.toml", &doc, &err) < 0)
    {
      hv_error_free (&err);
      return -1;
    }
  long n = 0;
  for (size_t i = 0; i < doc.n; i++)
    n += doc.items[i].kind != HV_TOML_COMMENT;
  hv_toml_doc_free (&doc);
  return n;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size == 0)
    return 0;
  struct hv_cri_opts o = { .name = names[data[0] % 4],
                           .binary = "/usr/local/lib/haven/handlers/containerd-x",
                           .annotations = (data[0] & 4) != 0 };
  char *text = strndup ((const char *) data + 1, size - 1);
  char *add_err, *rm_err, *again_err, *out_err, *base_err;
  char *added = edit (text, &o, false, &add_err);
  char *removed = edit (text, &o, true, &rm_err);
  if ((added == NULL) != (removed == NULL))
    fuzz_fail ("adding %s but taking out %s", add_err ? add_err : "works", rm_err ? rm_err : "works");
  if (added == NULL)
    {
      if (strncmp (add_err, "config.toml:", 12) != 0 || strncmp (rm_err, "config.toml:", 12) != 0)
        fuzz_fail ("a refusal that does not name the file: %s / %s", add_err, rm_err);
      free (add_err);
      free (rm_err);
      free (text);
      return 0;
    }
  if (statements (added) < 0)
    fuzz_fail ("what adding wrote does not read again:\n%s", added);
  char *again = edit (added, &o, false, &again_err);
  if (again == NULL || strcmp (again, added) != 0)
    fuzz_fail ("adding again changed the file (%s):\n%s", again_err ? again_err : "", added);
  char *out = edit (added, &o, true, &out_err);
  if (out == NULL)
    fuzz_fail ("taking out of the added file failed: %s", out_err);
  /* A file without statements got the version line too, which stays. */
  long had = statements (text);
  if (had == 0 && statements (out) != 1)
    fuzz_fail ("taking out of a file that had no statements left other than the version line:\n%s", out);
  /* A last line without its newline got one, before the block. */
  size_t rn = strlen (removed);
  bool newline_added = rn > 0 && removed[rn - 1] != '\n' && strncmp (out, removed, rn) == 0
                       && strcmp (out + rn, "\n") == 0;
  if (had > 0 && strcmp (out, removed) != 0 && !newline_added)
    fuzz_fail ("taking out of the added file (%s) differs from taking out of the input:\n%s\n---\n%s",
               out_err ? out_err : "", out ? out : "", removed);
  /* An input without our block is its own "taken out". */
  size_t n = strlen (text);
  char marker[64];
  snprintf (marker, sizeof (marker), "# >>> haven runtime handler \"%s\"", o.name);
  if (strcmp (removed, text) != 0 && strstr (text, marker) == NULL)
    fuzz_fail ("taking out a handler that is not there changed the file");
  char *base = edit (removed, &o, true, &base_err);
  if (base == NULL || strcmp (base, removed) != 0)
    fuzz_fail ("taking out twice differs");
  if (n > 0 && text[n - 1] == '\n' && had > 0 && strstr (text, marker) == NULL
      && strcmp (out, text) != 0)
    fuzz_fail ("adding then taking out did not give the file back:\n%s\n---\n%s", text, out);
  free (base);
  free (out);
  free (again);
  free (added);
  free (removed);
  free (text);
  return 0;
}
