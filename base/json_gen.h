/* Small helpers for emitting JSON with yajl_gen. */
#ifndef HAVEN_JSON_GEN_H
#define HAVEN_JSON_GEN_H

#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "utf8.h"

/* The text generated so far, as a new string (the generator stays the
 * caller's to free). */
static inline char *
jg_text (yajl_gen g)
{
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (g, &buf, &len);
  char *r = strndup ((const char *) buf, len);
  if (r == NULL)
    abort ();
  return r;
}

/* How a generated document ends: its text as a new string, and the
 * generator freed. */
static inline char *
jg_finish (yajl_gen g)
{
  char *r = jg_text (g);
  yajl_gen_free (g);
  return r;
}

static inline void
jg_str (yajl_gen g, const char *s)
{
  yajl_gen_string (g, (const unsigned char *) s, strlen (s));
}

/* A string whose bytes nobody checked (a file name the sandbox chose, a
 * path a request or the host gave): written as valid UTF-8, every byte
 * that is not part of a well-formed sequence as U+FFFD (yajl would pass
 * it through and the document would not be JSON). */
static inline void
jg_utf8 (yajl_gen g, const char *s)
{
  size_t len = 0;
  char *clean = hv_utf8_sanitize (s ? s : "", s ? strlen (s) : 0, &len);
  yajl_gen_string (g, (const unsigned char *) clean, len);
  free (clean);
}

/* "key": text, as jg_utf8 writes it. */
static inline void
jg_kv_utf8 (yajl_gen g, const char *key, const char *value)
{
  jg_str (g, key);
  jg_utf8 (g, value);
}

/* "key": "value" (a NULL value is written as ""). */
static inline void
jg_kv (yajl_gen g, const char *key, const char *value)
{
  jg_str (g, key);
  jg_str (g, value ? value : "");
}

/* A config.json mount: {"destination", "type", "source", "options"}
 * (opts NULL-terminated). */
static inline void
jg_mount (yajl_gen g, const char *dest, const char *type, const char *src, const char *const *opts)
{
  yajl_gen_map_open (g);
  jg_kv (g, "destination", dest);
  jg_kv (g, "type", type);
  jg_kv (g, "source", src);
  jg_str (g, "options");
  yajl_gen_array_open (g);
  for (size_t i = 0; opts[i]; i++)
    jg_str (g, opts[i]);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}

/* Copy a parsed value unchanged (numbers from their original text, so
 * nothing is rounded; NULL as null). */
static inline void
jg_value (yajl_gen g, yajl_val v)
{
  if (v == NULL || YAJL_IS_NULL (v))
    yajl_gen_null (g);
  else if (YAJL_IS_STRING (v))
    jg_str (g, v->u.string);
  else if (YAJL_IS_NUMBER (v))
    yajl_gen_number (g, v->u.number.r, strlen (v->u.number.r));
  else if (YAJL_IS_TRUE (v))
    yajl_gen_bool (g, 1);
  else if (YAJL_IS_FALSE (v))
    yajl_gen_bool (g, 0);
  else if (YAJL_IS_ARRAY (v))
    {
      yajl_gen_array_open (g);
      for (size_t i = 0; i < v->u.array.len; i++)
        jg_value (g, v->u.array.values[i]);
      yajl_gen_array_close (g);
    }
  else
    {
      yajl_gen_map_open (g);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          jg_str (g, v->u.object.keys[i]);
          jg_value (g, v->u.object.values[i]);
        }
      yajl_gen_map_close (g);
    }
}
#endif
