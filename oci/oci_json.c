/* The spec's value types read from JSON. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "oci_json.h"
#include "utils.h"

int
jw_as_strv (json_walk *w, yajl_val v, oci_strv *out)
{
  if (jw_expect_array (w, v) < 0)
    return -1;
  oci_strv_free (out);
  out->v = xmalloc0 ((v->u.array.len + 1) * sizeof (char *));
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      size_t saved = jw_push_index (w, i);
      if (jw_as_string (w, v->u.array.values[i], &out->v[out->n]) < 0)
        return -1;
      out->n++;
      jw_pop (w, saved);
    }
  return 0;
}

int
jw_as_string_map (json_walk *w, yajl_val v, oci_kv_list *out)
{
  if (jw_expect_object (w, v) < 0)
    return -1;
  oci_kv_list_free (out);
  out->v = xmalloc0 ((v->u.object.len + 1) * sizeof (oci_kv));
  for (size_t i = 0; i < v->u.object.len; i++)
    {
      size_t saved = jw_push_key (w, v->u.object.keys[i]);
      char *val = NULL;
      if (jw_as_string (w, v->u.object.values[i], &val) < 0)
        return -1;
      jw_pop (w, saved);
      /* A repeated key replaces the earlier value (last wins, as in
       * jw_lookup), so the list holds each key once. */
      size_t j = 0;
      while (j < out->n && strcmp (out->v[j].key, v->u.object.keys[i]) != 0)
        j++;
      if (j < out->n)
        {
          free (out->v[j].value);
          out->v[j].value = val;
          continue;
        }
      out->v[out->n].key = xstrdup (v->u.object.keys[i]);
      out->v[out->n].value = val;
      out->n++;
    }
  return 0;
}

JW_DEFINE_FIELD (jw_field_strv, oci_strv, jw_as_strv (w, v, out))
JW_DEFINE_FIELD (jw_field_string_map, oci_kv_list, jw_as_string_map (w, v, out))
JW_DEFINE_FIELD (jw_field_opt_bool, oci_opt_bool, (out->set = true, jw_as_bool (w, v, &out->value)))
JW_DEFINE_FIELD (jw_field_opt_u64, oci_opt_u64, (out->set = true, jw_as_u64 (w, v, &out->value)))
JW_DEFINE_FIELD (jw_field_opt_i64, oci_opt_i64, (out->set = true, jw_as_i64 (w, v, &out->value)))
