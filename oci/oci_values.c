/* The spec's value types: NULL-terminated string lists and key-value
 * lists (oci_spec.h). */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "oci_spec.h"
#include "utils.h"

void
oci_strv_free (oci_strv *s)
{
  for (size_t i = 0; i < s->n; i++)
    free (s->v[i]);
  free (s->v);
  s->v = NULL;
  s->n = 0;
  s->cap = 0;
}

void
oci_strv_push (oci_strv *v, const char *str)
{
  /* Grow by doubling: one realloc per item made long lists (a policy's
   * 100k-item block list) quadratic wherever realloc copies.  A list
   * built by hand (cap 0) holds exactly its items and the NULL. */
  size_t held = v->v == NULL ? 0 : v->cap > 0 ? v->cap : v->n + 1;
  if (held < v->n + 2)
    {
      v->cap = 2 * (v->n + 2);
      v->v = xrealloc (v->v, v->cap * sizeof (char *));
    }
  v->v[v->n++] = xstrdup (str);
  v->v[v->n] = NULL;
}

void
oci_strv_pushf (oci_strv *v, const char *fmt, ...)
{
  if (v == NULL)
    return;
  va_list ap;
  va_start (ap, fmt);
  char *line = xvasprintf (fmt, ap);
  va_end (ap);
  oci_strv_push (v, line);
  free (line);
}

bool
oci_strv_contains (const oci_strv *v, const char *str)
{
  for (size_t i = 0; i < v->n; i++)
    if (strcmp (v->v[i], str) == 0)
      return true;
  return false;
}

void
oci_strv_push_unique (oci_strv *v, const char *str)
{
  if (!oci_strv_contains (v, str))
    oci_strv_push (v, str);
}

/* Sorting pairs (string, position) puts equal strings next to each other
 * with the first one in the list first. */
struct strv_entry
{
  const char *s;
  size_t i;
};

static int
strv_entry_cmp (const void *a, const void *b)
{
  const struct strv_entry *x = a, *y = b;
  int c = strcmp (x->s, y->s);
  if (c != 0)
    return c;
  return x->i < y->i ? -1 : x->i > y->i;
}

void
oci_strv_dedup (oci_strv *v)
{
  if (v->n < 2)
    return;
  struct strv_entry *e = xmalloc0 (v->n * sizeof (*e));
  bool *drop = xmalloc0 (v->n * sizeof (*drop));
  for (size_t i = 0; i < v->n; i++)
    e[i] = (struct strv_entry){ v->v[i], i };
  qsort (e, v->n, sizeof (*e), strv_entry_cmp);
  for (size_t k = 1; k < v->n; k++)
    if (strcmp (e[k].s, e[k - 1].s) == 0)
      drop[e[k].i] = true;
  size_t n = 0;
  for (size_t i = 0; i < v->n; i++)
    if (drop[i])
      free (v->v[i]);
    else
      v->v[n++] = v->v[i];
  v->n = n;
  v->v[n] = NULL;
  free (e);
  free (drop);
}

void
oci_kv_list_free (oci_kv_list *l)
{
  for (size_t i = 0; i < l->n; i++)
    {
      free (l->v[i].key);
      free (l->v[i].value);
    }
  free (l->v);
  l->v = NULL;
  l->n = 0;
}
