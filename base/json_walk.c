#include "config.h"
#include "json_walk.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void
jw_init (json_walk *w, const char *name, hv_error **err)
{
  w->name = name;
  w->path[0] = '\0';
  w->len = 0;
  w->err = err;
}

static size_t
jw_append (json_walk *w, const char *piece)
{
  size_t saved = w->len, room = sizeof (w->path) - w->len;
  size_t n = strlen (piece);
  if (n >= room)
    n = room - 1;
  memcpy (w->path + w->len, piece, n);
  w->len += n;
  w->path[w->len] = '\0';
  return saved;
}

size_t
jw_push_key (json_walk *w, const char *key)
{
  char piece[512];
  snprintf (piece, sizeof (piece), ".%s", key);
  return jw_append (w, piece);
}

size_t
jw_push_index (json_walk *w, size_t i)
{
  char piece[32];
  snprintf (piece, sizeof (piece), "[%zu]", i);
  return jw_append (w, piece);
}

void
jw_pop (json_walk *w, size_t saved)
{
  w->len = saved;
  w->path[saved] = '\0';
}

int
jw_fail (json_walk *w, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *msg = xvasprintf (fmt, ap);
  va_end (ap);
  hv_error_set (w->err, 0, "%s: %s: %s", w->name, w->len ? w->path : ".", msg);
  free (msg);
  return -1;
}

int
jw_fail_key (json_walk *w, const char *key, const char *fmt, ...)
{
  size_t saved = jw_push_key (w, key);
  va_list ap;
  va_start (ap, fmt);
  char *msg = xvasprintf (fmt, ap);
  va_end (ap);
  jw_fail (w, "%s", msg);
  free (msg);
  jw_pop (w, saved);
  return -1;
}

bool
jw_too_deep (const char *text, unsigned max)
{
  unsigned depth = 0;
  for (const char *s = text; *s; s++)
    {
      if (*s == '"')
        {
          for (s++; *s && *s != '"'; s++)
            if (*s == '\\' && s[1])
              s++;
          if (*s == '\0')
            return false; /* unterminated: yajl fails on it */
        }
      else if (s[0] == '/' && s[1] == '/')
        {
          s = strchrnul (s, '\n');
          if (*s == '\0')
            return false;
        }
      else if (s[0] == '/' && s[1] == '*')
        {
          const char *e = strstr (s + 2, "*/");
          if (e == NULL)
            return false;
          s = e + 1;
        }
      else if (*s == '[' || *s == '{')
        {
          if (++depth > max)
            return true;
        }
      else if ((*s == ']' || *s == '}') && depth > 0)
        depth--;
    }
  return false;
}

int
jw_parse (json_walk *w, const char *text, yajl_val *out)
{
  char ebuf[512];
  ebuf[0] = '\0';
  *out = yajl_tree_parse (text, ebuf, sizeof (ebuf));
  if (*out == NULL)
    {
      /* yajl's message spans lines and pads them to draw an arrow under
       * the error: keep it on one line, each run of blanks one space. */
      size_t l = 0;
      for (char *p = ebuf; *p; p++)
        {
          char c = *p == '\n' || *p == '\r' || *p == '\t' ? ' ' : *p;
          if (c == ' ' && (l == 0 || ebuf[l - 1] == ' '))
            continue;
          ebuf[l++] = c;
        }
      while (l > 0 && ebuf[l - 1] == ' ')
        l--;
      ebuf[l] = '\0';
      return hv_error_set (w->err, 0, "%s: invalid JSON: %s", w->name, ebuf[0] ? ebuf : "parse error");
    }
  return 0;
}

yajl_val
jw_lookup (yajl_val obj, const char *key)
{
  if (obj == NULL || !YAJL_IS_OBJECT (obj))
    return NULL;
  /* With duplicate keys the last one wins, as in Go's encoding/json: the
   * engine that wrote (or vetted) the config and this runtime must read
   * the same value. */
  for (size_t i = obj->u.object.len; i-- > 0;)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return obj->u.object.values[i];
  return NULL;
}

const char *
jw_string_at (yajl_val obj, const char *key)
{
  yajl_val v = jw_lookup (obj, key);
  return v && YAJL_IS_STRING (v) ? YAJL_GET_STRING (v) : NULL;
}

long long
jw_integer_at (yajl_val obj, const char *key, long long absent)
{
  yajl_val v = jw_lookup (obj, key);
  return v && YAJL_IS_INTEGER (v) ? YAJL_GET_INTEGER (v) : absent;
}

int
jw_as_string (json_walk *w, yajl_val v, char **out)
{
  if (!YAJL_IS_STRING (v))
    return jw_fail (w, "expected a string");
  free (*out);
  *out = xstrdup (v->u.string);
  return 0;
}

int
jw_as_bool (json_walk *w, yajl_val v, bool *out)
{
  if (YAJL_IS_TRUE (v))
    *out = true;
  else if (YAJL_IS_FALSE (v))
    *out = false;
  else
    return jw_fail (w, "expected a boolean");
  return 0;
}

/* Integers are parsed from yajl's original text so that the full uint64
 * range survives (yajl's own integer is a long long). */
static bool
is_integer_text (const char *r, bool allow_minus)
{
  if (*r == '-')
    {
      if (!allow_minus)
        return false;
      r++;
    }
  if (*r == '\0')
    return false;
  for (; *r; r++)
    if (*r < '0' || *r > '9')
      return false;
  return true;
}

int
jw_as_u64 (json_walk *w, yajl_val v, uint64_t *out)
{
  if (!YAJL_IS_NUMBER (v) || !is_integer_text (v->u.number.r, false))
    return jw_fail (w, "expected an unsigned integer");
  errno = 0;
  unsigned long long x = strtoull (v->u.number.r, NULL, 10);
  if (errno != 0)
    return jw_fail (w, "integer %s out of range", v->u.number.r);
  *out = x;
  return 0;
}

int
jw_as_u32 (json_walk *w, yajl_val v, uint32_t *out)
{
  uint64_t x;
  if (jw_as_u64 (w, v, &x) < 0)
    return -1;
  if (x > UINT32_MAX)
    return jw_fail (w, "integer %" PRIu64 " out of range for 32 bits", x);
  *out = (uint32_t) x;
  return 0;
}

int
jw_as_i64 (json_walk *w, yajl_val v, int64_t *out)
{
  if (!YAJL_IS_NUMBER (v) || !is_integer_text (v->u.number.r, true))
    return jw_fail (w, "expected an integer");
  errno = 0;
  long long x = strtoll (v->u.number.r, NULL, 10);
  if (errno != 0)
    return jw_fail (w, "integer %s out of range", v->u.number.r);
  *out = x;
  return 0;
}

int
jw_as_int (json_walk *w, yajl_val v, int *out)
{
  int64_t x;
  if (jw_as_i64 (w, v, &x) < 0)
    return -1;
  if (x < INT32_MIN || x > INT32_MAX)
    return jw_fail (w, "integer %" PRId64 " out of range for 32 bits", x);
  *out = (int) x;
  return 0;
}

int
jw_expect_object (json_walk *w, yajl_val v)
{
  if (!YAJL_IS_OBJECT (v))
    return jw_fail (w, "expected an object");
  return 0;
}

int
jw_expect_array (json_walk *w, yajl_val v)
{
  if (!YAJL_IS_ARRAY (v))
    return jw_fail (w, "expected an array");
  return 0;
}

JW_DEFINE_FIELD (jw_field_string, char *, jw_as_string (w, v, out))
JW_DEFINE_FIELD (jw_field_bool, bool, jw_as_bool (w, v, out))
JW_DEFINE_FIELD (jw_field_u32, uint32_t, jw_as_u32 (w, v, out))

int
jw_only_keys (json_walk *w, yajl_val obj, const char *const *known)
{
  for (size_t i = 0; i < obj->u.object.len; i++)
    {
      bool ok = false;
      for (size_t j = 0; known[j] && !ok; j++)
        ok = strcmp (obj->u.object.keys[i], known[j]) == 0;
      if (!ok)
        return jw_fail_key (w, obj->u.object.keys[i], "unknown field");
    }
  return 0;
}

int
jw_member_string (json_walk *w, yajl_val obj, const char *key, bool required, const char **out)
{
  yajl_val v = jw_lookup (obj, key);
  *out = NULL;
  if (jw_absent (v))
    return required ? jw_fail_key (w, key, "required field is missing") : 0;
  if (!YAJL_IS_STRING (v))
    return jw_fail_key (w, key, "expected a string");
  *out = v->u.string;
  return 0;
}

int
jw_field_required_string (json_walk *w, yajl_val obj, const char *key, char **out)
{
  if (jw_absent (jw_lookup (obj, key)))
    return jw_fail_key (w, key, "required field is missing");
  return jw_field_string (w, obj, key, out);
}
