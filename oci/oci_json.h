/* The spec's value types (string lists, string maps, optional numbers
 * and booleans) read from JSON with json_walk's paths in errors. */
#ifndef HAVEN_OCI_JSON_H
#define HAVEN_OCI_JSON_H

#include "json_walk.h"
#include "oci_spec.h"

int jw_as_strv (json_walk *w, yajl_val v, oci_strv *out);
int jw_as_string_map (json_walk *w, yajl_val v, oci_kv_list *out);

/* Read obj[key] if present (leaving *out untouched if not). */
int jw_field_opt_bool (json_walk *w, yajl_val obj, const char *key, oci_opt_bool *out);
int jw_field_opt_u64 (json_walk *w, yajl_val obj, const char *key, oci_opt_u64 *out);
int jw_field_opt_i64 (json_walk *w, yajl_val obj, const char *key, oci_opt_i64 *out);
int jw_field_strv (json_walk *w, yajl_val obj, const char *key, oci_strv *out);
int jw_field_string_map (json_walk *w, yajl_val obj, const char *key, oci_kv_list *out);

#endif
