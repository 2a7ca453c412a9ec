/* Fuzz target of the project's agent settings files as the project guard
 * reads them after a run (runtime/guard/agent_config.c
 * hv_agent_config_exec_entries: JSON through yajl, Codex's TOML line by
 * line, VS Code's tasks.json).  The sandbox writes these files, so their
 * text is hostile.  The first byte picks the file (hv_agent_configs), the
 * rest is its text.  Besides "no crash, leak or sanitizer report": the
 * reader fails exactly when it sets an error (a text with a NUL byte
 * always fails, an empty one never), gives the same entries when run
 * again, every entry is a non-empty string, and in a JSON settings file
 * every top-level member that is not a data key is an entry ("key: ..."):
 * a command the guard would otherwise not record; and each JSON entry's
 * value is JSON yajl reads (the guard compares these texts before and
 * after a run: one cut short could hide a change). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "agent_config.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static bool
has_entry (const oci_strv *v, const char *key)
{
  size_t k = strlen (key);
  for (size_t i = 0; i < v->n; i++)
    if (strncmp (v->v[i], key, k) == 0 && v->v[i][k] == ':' && v->v[i][k + 1] == ' ')
      return true;
  return false;
}

static void
check_members (const hv_agent_config *c, const char *text, const oci_strv *out)
{
  yajl_val tree = yajl_tree_parse (text, NULL, 0);
  if (tree == NULL)
    fuzz_fail ("%s: accepted a text yajl does not parse", c->name);
  for (size_t i = 0; c->format == HV_AGENT_JSON && YAJL_IS_OBJECT (tree) && i < tree->u.object.len; i++)
    if (!hv_agent_config_is_data (c, tree->u.object.keys[i]) && !has_entry (out, tree->u.object.keys[i]))
      fuzz_fail ("%s: member \"%s\" is not an entry", c->name, tree->u.object.keys[i]);
  if (c->format == HV_AGENT_JSON && !YAJL_IS_OBJECT (tree) && !has_entry (out, "(top level)"))
    fuzz_fail ("%s: a top level that is not an object is not an entry", c->name);
  for (size_t i = 0; i < out->n; i++)
    {
      /* "key: value" (keys hold ": " too: try each cut). */
      bool ok = false;
      for (const char *cut = strstr (out->v[i], ": "); cut && !ok; cut = strstr (cut + 1, ": "))
        {
          yajl_val v = yajl_tree_parse (cut + 2, NULL, 0);
          ok = v != NULL;
          yajl_tree_free (v);
        }
      if (!ok)
        fuzz_fail ("%s: entry %zu is not \"key: JSON\": %.200s", c->name, i, out->v[i]);
    }
  yajl_tree_free (tree);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  size_t nconfigs = 0;
  while (hv_agent_configs[nconfigs].name)
    nconfigs++;
  const hv_agent_config *c = &hv_agent_configs[data[0] % nconfigs];
  size_t len = size - 1;
  /* As the guard reads a file: its bytes, then a NUL. */
  char *text = malloc (len + 1);
  memcpy (text, data + 1, len);
  text[len] = '\0';

  oci_strv out = { 0 }, again = { 0 };
  hv_error *err = NULL, *err2 = NULL;
  int r = hv_agent_config_exec_entries (c, text, len, &out, &err);
  if (r != 0 && r != -1)
    fuzz_fail ("%s: returned %d", c->name, r);
  if ((r < 0) != (err != NULL))
    fuzz_fail ("%s: returned %d with%s an error", c->name, r, err ? "" : "out");
  if (err && (err->msg == NULL || err->msg[0] == '\0'))
    fuzz_fail ("%s: an error without a message", c->name);
  if (r < 0 && out.n)
    fuzz_fail ("%s: failed with %zu entries", c->name, out.n);
  if (memchr (text, '\0', len) && r == 0)
    fuzz_fail ("%s: a text holding a NUL byte was read", c->name);
  if (strspn (text, " \t\r\n") == len && (r != 0 || out.n))
    fuzz_fail ("%s: a blank text gave entries or an error", c->name);
  for (size_t i = 0; i < out.n; i++)
    if (out.v[i] == NULL || out.v[i][0] == '\0')
      fuzz_fail ("%s: entry %zu is empty", c->name, i);

  int r2 = hv_agent_config_exec_entries (c, text, len, &again, &err2);
  if (r2 != r || again.n != out.n)
    fuzz_fail ("%s: a second read gave %d and %zu entries, not %d and %zu", c->name, r2, again.n, r, out.n);
  for (size_t i = 0; i < out.n; i++)
    if (strcmp (out.v[i], again.v[i]) != 0)
      fuzz_fail ("%s: entry %zu differs on a second read", c->name, i);

  if (r == 0 && c->format != HV_AGENT_TOML && strspn (text, " \t\r\n") != len)
    check_members (c, text, &out);

  oci_strv_free (&out);
  oci_strv_free (&again);
  hv_error_free (&err);
  hv_error_free (&err2);
  free (text);
  return 0;
}
