/* Typed, path-tracking access to a yajl tree.
 *
 * A json_walk remembers where in the document it is (".process.rlimits[2]")
 * so every rejection names the JSON path and the reason, as in
 *   config.json: .process.rlimits[2].hard: expected an unsigned integer
 * JSON null is treated as "absent" everywhere, as Go encoders emit it for
 * nil pointers. */
#ifndef HAVEN_JSON_WALK_H
#define HAVEN_JSON_WALK_H

#include <stdbool.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "error.h"

typedef struct
{
  const char *name; /* document name for messages */
  char path[2048];
  size_t len;
  hv_error **err;
} json_walk;

void jw_init (json_walk *w, const char *name, hv_error **err);
size_t jw_push_key (json_walk *w, const char *key);
size_t jw_push_index (json_walk *w, size_t i);
void jw_pop (json_walk *w, size_t saved);
int jw_fail (json_walk *w, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* jw_fail for the member `key` of the current object. */
int jw_fail_key (json_walk *w, const char *key, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

/* Parse text into a tree; malformed JSON is reported with yajl's position. */
int jw_parse (json_walk *w, const char *text, yajl_val *out);

/* Whether text nests arrays and objects deeper than max, counted as
 * yajl_tree_parse reads it (strings and comments skipped).  Text a
 * sandbox wrote must be checked before it reaches yajl: its tree is
 * built and freed recursively (a file of a million '[' overflows the
 * stack), and yajl_gen refuses more than 127 levels, which the
 * generators here do not check (a value nested 130 deep came out as
 * text that is not JSON). */
bool jw_too_deep (const char *text, unsigned max);

static inline bool
jw_absent (yajl_val v)
{
  return v == NULL || YAJL_IS_NULL (v);
}
yajl_val jw_lookup (yajl_val obj, const char *key);
/* obj's member KEY when it is a string (else NULL), or an integer (else
 * ABSENT): for reading records haven wrote, where a missing or mistyped
 * member is only left out, never an error. */
const char *jw_string_at (yajl_val obj, const char *key);
long long jw_integer_at (yajl_val obj, const char *key, long long absent);

/* Converters for the value at the current path. */
int jw_as_string (json_walk *w, yajl_val v, char **out);
int jw_as_bool (json_walk *w, yajl_val v, bool *out);
int jw_as_u64 (json_walk *w, yajl_val v, uint64_t *out);
int jw_as_u32 (json_walk *w, yajl_val v, uint32_t *out);
int jw_as_i64 (json_walk *w, yajl_val v, int64_t *out);
int jw_as_int (json_walk *w, yajl_val v, int *out);
int jw_expect_object (json_walk *w, yajl_val v);
int jw_expect_array (json_walk *w, yajl_val v);

/* Fail naming the first member of obj not in known (NULL-terminated):
 * a strict reader must not drop a field it does not understand in
 * silence.  obj must be an object (jw_expect_object first). */
int jw_only_keys (json_walk *w, yajl_val obj, const char *const *known);
/* obj[key] as a string borrowed from the tree (*out: NULL when absent and
 * not required). */
int jw_member_string (json_walk *w, yajl_val obj, const char *key, bool required, const char **out);

/* Field accessors: read obj[key] if present (leaving *out untouched if not). */
int jw_field_string (json_walk *w, yajl_val obj, const char *key, char **out);
int jw_field_required_string (json_walk *w, yajl_val obj, const char *key, char **out);
int jw_field_bool (json_walk *w, yajl_val obj, const char *key, bool *out);
int jw_field_u32 (json_walk *w, yajl_val obj, const char *key, uint32_t *out);

/* Defines a field accessor: look the key up, push it onto the path,
 * convert (an expression of w, v and out). */
#define JW_DEFINE_FIELD(fn_name, out_type, convert)                                                       \
  int fn_name (json_walk *w, yajl_val obj, const char *key, out_type *out)                         \
  {                                                                                                \
    yajl_val v = jw_lookup (obj, key);                                                             \
    if (jw_absent (v))                                                                             \
      return 0;                                                                                    \
    size_t saved = jw_push_key (w, key);                                                           \
    if (convert < 0)                                                                               \
      return -1;                                                                                   \
    jw_pop (w, saved);                                                                             \
    return 0;                                                                                      \
  }

#endif
