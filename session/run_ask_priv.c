/* What haven run's two askers share (run_ask_priv.h): the lists of
 * requests dealt with, and the line either says on stderr. */
#include "config.h"
#include "run_ask_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "utils.h"

bool
hv_ask_listed (const oci_strv *ids, const char *id)
{
  for (size_t i = 0; i < ids->n; i++)
    if (strcmp (ids->v[i], id) == 0)
      return true;
  return false;
}

void
hv_ask_note (const struct hv_run_ask *a, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *msg = xvasprintf (fmt, ap);
  va_end (ap);
  /* The proxy has the terminal in raw mode: "\n" alone does not return
   * to the start of the line. */
  cleanup_free char *line = xasprintf ("haven: %s%s", msg, a->terminal ? "\r\n" : "\n");
  write_all (2, line, strlen (line));
}
