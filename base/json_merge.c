#include "config.h"
#include "json_merge.h"

#include <string.h>

#include "array_size.h"
#include "json_gen.h"
#include "json_walk.h"


void
jm_gen_value (yajl_gen g, yajl_val v)
{
  if (v == NULL || YAJL_IS_NULL (v))
    {
      yajl_gen_null (g);
      return;
    }
  switch (v->type)
    {
    case yajl_t_string:
      jg_str (g, v->u.string);
      break;
    case yajl_t_number:
      yajl_gen_number (g, v->u.number.r, strlen (v->u.number.r));
      break;
    case yajl_t_true:
      yajl_gen_bool (g, 1);
      break;
    case yajl_t_false:
      yajl_gen_bool (g, 0);
      break;
    case yajl_t_object:
      yajl_gen_map_open (g);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          jg_str (g, v->u.object.keys[i]);
          jm_gen_value (g, v->u.object.values[i]);
        }
      yajl_gen_map_close (g);
      break;
    case yajl_t_array:
      yajl_gen_array_open (g);
      for (size_t i = 0; i < v->u.array.len; i++)
        jm_gen_value (g, v->u.array.values[i]);
      yajl_gen_array_close (g);
      break;
    default:
      yajl_gen_null (g);
      break;
    }
}

/* Value of obj[key], honouring the last of duplicate keys as the parser
 * does; NULL when absent (a JSON null is returned as is). */
static yajl_val
member (yajl_val obj, const char *key)
{
  if (obj == NULL || !YAJL_IS_OBJECT (obj))
    return NULL;
  yajl_val found = NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      found = obj->u.object.values[i];
  return found;
}

static void merge_object (yajl_gen g, yajl_val base, yajl_val patch, bool is_blockio);

static bool
device_key (yajl_val e, long long *major, long long *minor)
{
  yajl_val ma = member (e, "major"), mi = member (e, "minor");
  if (ma == NULL || mi == NULL || !YAJL_IS_INTEGER (ma) || !YAJL_IS_INTEGER (mi))
    return false;
  *major = YAJL_GET_INTEGER (ma);
  *minor = YAJL_GET_INTEGER (mi);
  return true;
}

/* A blockIO device list: the patch's elements update the base's element
 * for the same device (the last such one, as runc searches backwards) or
 * are appended. */
static void
merge_device_array (yajl_gen g, yajl_val base, yajl_val patch)
{
  size_t nb = base && YAJL_IS_ARRAY (base) ? base->u.array.len : 0;
  size_t np = patch->u.array.len;
  yajl_val *patch_for = xmalloc0 ((nb + 1) * sizeof (*patch_for));
  bool *appended = xmalloc0 ((np + 1) * sizeof (*appended));
  for (size_t j = 0; j < np; j++)
    {
      long long pma, pmi, bma, bmi;
      yajl_val p = patch->u.array.values[j];
      bool matched = false;
      if (YAJL_IS_OBJECT (p) && device_key (p, &pma, &pmi))
        for (size_t i = nb; i-- > 0;)
          if (device_key (base->u.array.values[i], &bma, &bmi) && bma == pma && bmi == pmi)
            {
              patch_for[i] = p;
              matched = true;
              break;
            }
      appended[j] = !matched;
    }
  yajl_gen_array_open (g);
  for (size_t i = 0; i < nb; i++)
    if (patch_for[i])
      merge_object (g, base->u.array.values[i], patch_for[i], false);
    else
      jm_gen_value (g, base->u.array.values[i]);
  for (size_t j = 0; j < np; j++)
    if (appended[j])
      jm_gen_value (g, patch->u.array.values[j]);
  yajl_gen_array_close (g);
  free (patch_for);
  free (appended);
}

/* The member `key` of an object (of blockIO when parent_is_blockio). */
static void
merge_member (yajl_gen g, const char *key, yajl_val base, yajl_val patch, bool parent_is_blockio)
{
  if (YAJL_IS_OBJECT (patch))
    merge_object (g, base, patch, strcmp (key, "blockIO") == 0);
  else if (parent_is_blockio && YAJL_IS_ARRAY (patch))
    merge_device_array (g, base, patch);
  else
    jm_gen_value (g, patch);
}

static void
merge_object (yajl_gen g, yajl_val base, yajl_val patch, bool is_blockio)
{
  if (base && !YAJL_IS_OBJECT (base))
    base = NULL;
  yajl_gen_map_open (g);
  size_t nb = base ? base->u.object.len : 0;
  for (size_t i = 0; i < nb; i++)
    {
      const char *key = base->u.object.keys[i];
      /* Duplicate keys: only the last one counts, emit it once. */
      if (member (base, key) != base->u.object.values[i])
        continue;
      yajl_val p = member (patch, key);
      if (p && YAJL_IS_NULL (p))
        continue;
      jg_str (g, key);
      if (p == NULL)
        jm_gen_value (g, base->u.object.values[i]);
      else
        merge_member (g, key, base->u.object.values[i], p, is_blockio);
    }
  for (size_t i = 0; i < patch->u.object.len; i++)
    {
      const char *key = patch->u.object.keys[i];
      yajl_val p = patch->u.object.values[i];
      if (member (patch, key) != p || YAJL_IS_NULL (p) || member (base, key) != NULL)
        continue;
      jg_str (g, key);
      merge_member (g, key, NULL, p, is_blockio);
    }
  yajl_gen_map_close (g);
}

void
jm_gen_merged (yajl_gen g, yajl_val base, yajl_val patch)
{
  if (patch == NULL)
    jm_gen_value (g, base);
  else if (YAJL_IS_OBJECT (patch))
    merge_object (g, base, patch, false);
  else
    jm_gen_value (g, patch);
}

int
jm_merge_at (const char *text, const char *name, const char *const *keys, size_t n_keys, const char *patch_text,
             const char *patch_name, char **out, hv_error **err)
{
  json_walk w;
  yajl_val root = NULL, patch = NULL;
  jw_init (&w, name, err);
  if (jw_parse (&w, text, &root) < 0)
    return -1;
  jw_init (&w, patch_name, err);
  if (jw_parse (&w, patch_text, &patch) < 0)
    {
      yajl_tree_free (root);
      return -1;
    }
  /* The patch wrapped in one single-member object per key of the path,
   * built on the stack: {"linux": {"resources": PATCH}}. */
  struct yajl_val_s wrap[8];
  yajl_val values[8];
  if (n_keys > N_ELEMENTS (wrap))
    {
      yajl_tree_free (root);
      yajl_tree_free (patch);
      return hv_error_set (err, 0, "%s: merge path too deep", name);
    }
  yajl_val top = patch;
  for (size_t i = n_keys; i-- > 0;)
    {
      values[i] = top;
      wrap[i].type = yajl_t_object;
      wrap[i].u.object.keys = (const char **) &keys[i];
      wrap[i].u.object.values = &values[i];
      wrap[i].u.object.len = 1;
      top = &wrap[i];
    }
  yajl_gen g = yajl_gen_alloc (NULL);
  jm_gen_merged (g, root, top);
  *out = jg_finish (g);
  yajl_tree_free (root);
  yajl_tree_free (patch);
  return 0;
}
