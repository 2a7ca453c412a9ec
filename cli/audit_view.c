#include "config.h"
#include "audit_view.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utils.h"

/* --- times ---------------------------------------------------------------- */

static int
parse_duration (const char *s, time_t now, time_t *out)
{
  char *end = NULL;
  if (!isdigit ((unsigned char) s[0]))
    return -1;
  errno = 0;
  unsigned long long n = strtoull (s, &end, 10);
  if (errno || end == s || end[0] == '\0' || end[1] != '\0')
    return -1;
  unsigned long long unit;
  switch (end[0])
    {
    case 's':
      unit = 1;
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    default:
      return -1;
    }
  /* Bounded so that the product fits (and means something): 100 years. */
  if (n > 100ULL * 366 * 86400 / unit)
    return -1;
  *out = now - (time_t) (n * unit);
  return 0;
}

/* "YYYY-MM-DD[(T| )HH:MM[:SS]][Z]": everything consumed, fields in range. */
static int
parse_when (const char *s, time_t *out)
{
  struct tm tm = { 0 };
  const char *p = strptime (s, "%Y-%m-%d", &tm);
  if (p == NULL)
    return -1;
  if (*p == 'T' || *p == ' ')
    {
      const char *q = strptime (p + 1, "%H:%M", &tm);
      if (q == NULL)
        return -1;
      p = q;
      if (*p == ':')
        {
          q = strptime (p + 1, "%S", &tm);
          if (q == NULL)
            return -1;
          p = q;
        }
    }
  bool utc = *p == 'Z';
  if (utc)
    p++;
  if (*p != '\0')
    return -1;
  struct tm check = tm;
  tm.tm_isdst = -1;
  time_t t = utc ? timegm (&tm) : mktime (&tm);
  /* strptime accepts 2026-02-31; mktime would roll it into March. */
  if (t == (time_t) -1 || tm.tm_mday != check.tm_mday || tm.tm_mon != check.tm_mon)
    return -1;
  *out = t;
  return 0;
}

int
hv_audit_parse_since (const char *s, time_t now, time_t *out, hv_error **err)
{
  if (parse_duration (s, now, out) == 0 || parse_when (s, out) == 0)
    return 0;
  return hv_error_set (err, 0,
                       "--since \"%s\": expected a time before now (10s, 5m, 2h, 3d) or a time such as "
                       "2026-11-23T10:00 (local; 2026-11-23T10:00Z for UTC)",
                       s);
}

int
hv_audit_parse_time (const char *s, time_t *sec, long *nsec)
{
  struct tm tm = { 0 };
  const char *p = strptime (s, "%Y-%m-%dT%H:%M:%S", &tm);
  if (p == NULL)
    return -1;
  long ns = 0;
  if (*p == '.')
    {
      int digits = 0;
      for (p++; isdigit ((unsigned char) *p); p++, digits++)
        if (digits < 9)
          ns = ns * 10 + (*p - '0');
      if (digits == 0)
        return -1;
      for (; digits < 9; digits++)
        ns *= 10;
    }
  if (p[0] != 'Z' || p[1] != '\0')
    return -1;
  time_t t = timegm (&tm);
  if (t == (time_t) -1)
    return -1;
  *sec = t;
  *nsec = ns;
  return 0;
}

/* --- records -------------------------------------------------------------- */

/* Nesting deeper than max (outside strings), or a comment: yajl's tree
 * is freed recursively, so a line of 100,000 '[' must never reach it. */
static bool
too_deep (const char *s, int max)
{
  int depth = 0;
  bool in_string = false;
  for (; *s; s++)
    {
      if (in_string)
        {
          if (*s == '\\' && s[1])
            s++;
          else if (*s == '"')
            in_string = false;
        }
      else if (*s == '"')
        in_string = true;
      else if (*s == '/')
        return true; /* a comment: yajl_tree_parse accepts them, and a
                      * quote inside one hid the nesting after it from
                      * this count (a record never holds one) */
      else if (*s == '[' || *s == '{')
        {
          if (++depth > max)
            return true;
        }
      else if (*s == ']' || *s == '}')
        depth--;
    }
  return false;
}

static const char *
member_string (yajl_val obj, const char *key)
{
  const char *path[] = { key, NULL };
  return YAJL_GET_STRING (yajl_tree_get (obj, path, yajl_t_string));
}

static yajl_val
member (yajl_val obj, const char *key)
{
  const char *path[] = { key, NULL };
  return yajl_tree_get (obj, path, yajl_t_any);
}

static int
compare_key (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Whether an object, here or nested (at most HV_AUDIT_VIEW_MAX_DEPTH
 * deep), names a key twice.  haven never writes such a record, and
 * readers disagree on it: yajl_tree_get here would take the first, the
 * runtime's reader and jq take the last, so one forged line could say
 * one thing to `haven audit` and another to `jq`.  It is refused. */
static bool
has_duplicate_key (yajl_val v)
{
  if (YAJL_IS_ARRAY (v))
    {
      for (size_t i = 0; i < v->u.array.len; i++)
        if (has_duplicate_key (v->u.array.values[i]))
          return true;
      return false;
    }
  if (!YAJL_IS_OBJECT (v))
    return false;
  size_t n = v->u.object.len;
  for (size_t i = 0; i < n; i++)
    if (has_duplicate_key (v->u.object.values[i]))
      return true;
  if (n < 2)
    return false;
  /* Sorted, so that a line of many keys costs n log n, not n^2. */
  cleanup_free const char **keys = xmalloc0 (n * sizeof (*keys));
  memcpy (keys, v->u.object.keys, n * sizeof (*keys));
  qsort (keys, n, sizeof (*keys), compare_key);
  for (size_t i = 1; i < n; i++)
    if (strcmp (keys[i - 1], keys[i]) == 0)
      return true;
  return false;
}

int
hv_audit_record_parse (const char *line, struct hv_audit_record *r)
{
  memset (r, 0, sizeof (*r));
  if (strlen (line) > HV_AUDIT_VIEW_MAX_LINE || too_deep (line, HV_AUDIT_VIEW_MAX_DEPTH))
    return -1;
  yajl_val root = yajl_tree_parse (line, NULL, 0);
  if (!YAJL_IS_OBJECT (root) || has_duplicate_key (root))
    {
      yajl_tree_free (root);
      return -1;
    }
  const char *time = member_string (root, "time");
  const char *event = member_string (root, "event");
  if (time == NULL || event == NULL || event[0] == '\0' || hv_audit_parse_time (time, &r->sec, &r->nsec) < 0)
    {
      yajl_tree_free (root);
      return -1;
    }
  r->root = root;
  r->event = event;
  r->policy = member_string (root, "policy");
  r->container = member_string (root, "container");
  yajl_val pod = member (root, "pod");
  if (YAJL_IS_OBJECT (pod))
    {
      r->pod_namespace = member_string (pod, "namespace");
      r->pod_name = member_string (pod, "name");
      r->pod_container = member_string (pod, "container");
    }
  return 0;
}

void
hv_audit_record_release (struct hv_audit_record *r)
{
  yajl_tree_free (r->root);
  memset (r, 0, sizeof (*r));
}

static bool
in_list (const oci_strv *v, const char *s)
{
  for (size_t i = 0; s && i < v->n; i++)
    if (strcmp (v->v[i], s) == 0)
      return true;
  return false;
}

/* want is NAMESPACE/POD or NAMESPACE/POD/CONTAINER, and the record is of
 * that pod (and container): each part matched whole. */
static bool
pod_matches (const struct hv_audit_record *r, const char *want)
{
  const char *slash = strchr (want, '/');
  if (slash == NULL || r->pod_namespace == NULL || r->pod_name == NULL)
    return false;
  const char *name = slash + 1, *end = strchr (name, '/');
  size_t ns_len = (size_t) (slash - want), name_len = end ? (size_t) (end - name) : strlen (name);
  if (strlen (r->pod_namespace) != ns_len || strncmp (r->pod_namespace, want, ns_len) != 0
      || strlen (r->pod_name) != name_len || strncmp (r->pod_name, name, name_len) != 0)
    return false;
  return end == NULL || (r->pod_container && strcmp (r->pod_container, end + 1) == 0);
}

bool
hv_audit_record_matches (const struct hv_audit_record *r, const struct hv_audit_filter *f)
{
  if (f->has_since && r->sec < f->since)
    return false;
  if (f->events.n && !in_list (&f->events, r->event) && !in_list (&f->events, member_string (r->root, "syscall"))
      && !in_list (&f->events, member_string (r->root, "rule")))
    return false;
  if (f->containers.n)
    {
      bool any = false;
      for (size_t i = 0; i < f->containers.n && !any; i++)
        {
          const char *want = f->containers.v[i];
          any = (r->container && strncmp (r->container, want, strlen (want)) == 0)
                || (r->policy && strcmp (r->policy, want) == 0) || pod_matches (r, want);
        }
      if (!any)
        return false;
    }
  return true;
}

/* --- formatting ----------------------------------------------------------- */

/* s as text a terminal shows as it is: control characters (C0, DEL, and
 * C1 as UTF-8) escaped, so an escape sequence in a process name prints
 * as text. */
static void
put_text (FILE *out, const char *s)
{
  const unsigned char *p = (const unsigned char *) s;
  for (; *p; p++)
    {
      if (*p < 0x20 || *p == 0x7f)
        fprintf (out, "\\x%02x", *p);
      else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
        {
          fprintf (out, "\\u%04x", p[1]);
          p++;
        }
      else
        fputc (*p, out);
    }
}

static void
put_value (FILE *out, yajl_val v)
{
  if (YAJL_IS_STRING (v))
    put_text (out, v->u.string);
  else if (YAJL_IS_NUMBER (v))
    put_text (out, v->u.number.r);
  else if (YAJL_IS_TRUE (v))
    fputs ("true", out);
  else if (YAJL_IS_FALSE (v))
    fputs ("false", out);
  else if (YAJL_IS_NULL (v) || v == NULL)
    fputs ("null", out);
  else if (YAJL_IS_ARRAY (v))
    {
      fputc ('[', out);
      for (size_t i = 0; i < v->u.array.len; i++)
        {
          if (i)
            fputs (", ", out);
          put_value (out, v->u.array.values[i]);
        }
      fputc (']', out);
    }
  else
    {
      fputc ('{', out);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          fprintf (out, "%s", i ? ", " : "");
          put_text (out, v->u.object.keys[i]);
          fputs (": ", out);
          put_value (out, v->u.object.values[i]);
        }
      fputc ('}', out);
    }
}

/* A member as text, or nothing when absent. */
static void
put_member (FILE *out, yajl_val root, const char *before, const char *key, const char *after)
{
  yajl_val v = member (root, key);
  if (v == NULL)
    return;
  fputs (before, out);
  put_value (out, v);
  fputs (after, out);
}

/* An array of strings joined by spaces (a command line). */
static void
put_words (FILE *out, yajl_val v)
{
  if (!YAJL_IS_ARRAY (v))
    return put_value (out, v);
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      if (i)
        fputc (' ', out);
      put_value (out, v->u.array.values[i]);
    }
}

/* Everything but the framing members, as key=value (events this
 * version does not know about, and the rest of known ones). */
static void
put_others (FILE *out, yajl_val root, const char *const *shown, bool lead)
{
  /* seq and prev are the chain's (haven audit --verify checks them), not
   * what happened. */
  static const char *const framing[] = { "time", "event", "policy", "container", "pod", "seq", "prev", NULL };
  /* The run id is said once, on the run's start record (--json has it
   * on every record). */
  yajl_val event = member (root, "event");
  const char *name = event && YAJL_IS_STRING (event) ? YAJL_GET_STRING (event) : NULL;
  bool start = name && strcmp (name, "start") == 0;
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *k = root->u.object.keys[i];
      bool skip = !start && strcmp (k, "run") == 0;
      for (size_t j = 0; framing[j] && !skip; j++)
        skip = strcmp (k, framing[j]) == 0;
      for (size_t j = 0; shown && shown[j] && !skip; j++)
        skip = strcmp (k, shown[j]) == 0;
      if (skip)
        continue;
      if (lead)
        fputc (' ', out);
      lead = true;
      put_text (out, k);
      fputc ('=', out);
      put_value (out, root->u.object.values[i]);
    }
}

static void
format_denied (FILE *out, yajl_val r)
{
  put_member (out, r, "", "syscall", "");
  put_member (out, r, " by pid ", "pid", "");
  put_member (out, r, " (", "comm", ")");
  put_member (out, r, ", ", "process", "");
  put_member (out, r, ", rule ", "rule", "");
  static const char *const shown[] = { "syscall", "pid", "comm", "process", "rule", "args", NULL };
  put_others (out, r, shown, true);
}

static void
format_net_denied (FILE *out, yajl_val r)
{
  put_member (out, r, "", "protocol", " to ");
  put_member (out, r, "", "destination", "");
  put_member (out, r, " port ", "port", "");
  yajl_val names = member (r, "names");
  if (YAJL_IS_ARRAY (names) && names->u.array.len)
    {
      fputs (" (", out);
      put_words (out, names);
      fputc (')', out);
    }
  static const char *const shown[] = { "protocol", "destination", "port", "names", NULL };
  put_others (out, r, shown, true);
}

static void
format_start (FILE *out, yajl_val r)
{
  yajl_val cmd = member (r, "command");
  if (cmd)
    put_words (out, cmd);
  put_member (out, r, " in ", "project", "");
  static const char *const shown[] = { "command", "project", "bundle", "monitor_pid", "haven_pid", NULL };
  put_others (out, r, shown, true);
}

static void
format_dropped (FILE *out, yajl_val r)
{
  put_member (out, r, "", "count", " denials not recorded");
  put_member (out, r, " (", "reason", ")");
  yajl_val calls = member (r, "syscalls");
  if (YAJL_IS_OBJECT (calls))
    for (size_t i = 0; i < calls->u.object.len; i++)
      {
        fputs (i ? ", " : ": ", out);
        put_text (out, calls->u.object.keys[i]);
        fputc (' ', out);
        put_value (out, calls->u.object.values[i]);
      }
  static const char *const shown[] = { "count", "reason", "syscalls", NULL };
  put_others (out, r, shown, true);
}

char *
hv_audit_record_format (const struct hv_audit_record *rec)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&buf, &len);
  if (out == NULL)
    abort ();
  struct tm tm;
  char when[32];
  localtime_r (&rec->sec, &tm);
  strftime (when, sizeof (when), "%Y-%m-%d %H:%M:%S", &tm);
  fprintf (out, "%s  ", when);
  /* Who: a container by its short id (as docker ps shows it), else
   * haven run; then the policy. */
  if (rec->container)
    {
      char id[13];
      snprintf (id, sizeof (id), "%s", rec->container);
      put_text (out, id);
    }
  else
    fputs ("haven-run", out);
  /* A pod's container: NAMESPACE/POD/CONTAINER, as --container takes it. */
  if (rec->pod_name)
    {
      fputc (' ', out);
      put_text (out, rec->pod_namespace ? rec->pod_namespace : "?");
      fputc ('/', out);
      put_text (out, rec->pod_name);
      if (rec->pod_container)
        {
          fputc ('/', out);
          put_text (out, rec->pod_container);
        }
    }
  fputs (" (", out);
  put_text (out, rec->policy ? rec->policy : "?");
  fputs (")  ", out);
  put_text (out, rec->event);
  fputs ("  ", out);
  const char *e = rec->event;
  if (strcmp (e, "denied") == 0)
    format_denied (out, rec->root);
  else if (strcmp (e, "net-denied") == 0)
    format_net_denied (out, rec->root);
  else if (strcmp (e, "start") == 0)
    format_start (out, rec->root);
  else if (strcmp (e, "dropped") == 0)
    format_dropped (out, rec->root);
  else
    put_others (out, rec->root, NULL, false);
  fclose (out);
  /* No trailing blanks (an event with nothing more to say). */
  while (len && buf[len - 1] == ' ')
    buf[--len] = '\0';
  return buf;
}
