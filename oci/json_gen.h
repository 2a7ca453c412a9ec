/* Small helpers for emitting JSON with yajl_gen. */
#ifndef HAVEN_JSON_GEN_H
#define HAVEN_JSON_GEN_H

#include <string.h>
#include <yajl/yajl_gen.h>

static inline void
jg_str (yajl_gen g, const char *s)
{
  yajl_gen_string (g, (const unsigned char *) s, strlen (s));
}

/* "key": "value" (a NULL value is written as ""). */
static inline void
jg_kv (yajl_gen g, const char *key, const char *value)
{
  jg_str (g, key);
  jg_str (g, value ? value : "");
}
#endif
