/* The run.haven.gateway annotation: gateway_config.h. */
#include "config.h"
#include "gateway_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "haven_annotations.h"
#include "json_walk.h"
#include "utils.h"

static const char *const auth_names[] = { [HV_GW_AUTH_X_API_KEY] = "x-api-key", [HV_GW_AUTH_BEARER] = "bearer",
                                          [HV_GW_AUTH_GOOG_API_KEY] = "goog-api-key" };

const char *
hv_gw_auth_name (hv_gw_auth a)
{
  return (unsigned) a < sizeof (auth_names) / sizeof (auth_names[0]) ? auth_names[a] : "?";
}

char *
hv_gw_service_name (const hv_gw_api *api)
{
  return xasprintf ("api:%s", api->name);
}

void
hv_gw_config_free (hv_gw_config *c)
{
  if (c == NULL)
    return;
  for (size_t i = 0; i < c->n; i++)
    free (c->apis[i].key_file);
  free (c);
}

static int
check_keys (json_walk *w, yajl_val obj, const char *const *known)
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

static int
string_member (json_walk *w, yajl_val obj, const char *key, bool required, const char **out)
{
  yajl_val v = jw_lookup (obj, key);
  *out = NULL;
  if (jw_absent (v))
    return required ? jw_fail_key (w, key, "required field is missing") : 0;
  if (!YAJL_IS_STRING (v))
    return jw_fail_key (w, key, "expected a string");
  *out = YAJL_GET_STRING (v);
  return 0;
}

static int
parse_api (json_walk *w, yajl_val v, hv_gw_config *c)
{
  static const char *const known[] = { "provider", "port", "auth", "key_file", NULL };
  if (jw_expect_object (w, v) < 0 || check_keys (w, v, known) < 0)
    return -1;
  const char *provider, *auth, *key_file;
  if (string_member (w, v, "provider", true, &provider) < 0 || string_member (w, v, "auth", true, &auth) < 0
      || string_member (w, v, "key_file", false, &key_file) < 0)
    return -1;
  hv_gw_api_cfg *a = &c->apis[c->n];
  a->api = hv_gw_api_by_name (provider);
  if (a->api == NULL)
    return jw_fail_key (w, "provider", "\"%s\" is not one of anthropic, openai, gemini", provider);
  for (size_t i = 0; i < c->n; i++)
    if (c->apis[i].api == a->api)
      return jw_fail_key (w, "provider", "\"%s\" is named twice", provider);
  yajl_val port = jw_lookup (v, "port");
  if (jw_absent (port))
    return jw_fail_key (w, "port", "required field is missing");
  if (!YAJL_IS_INTEGER (port) || YAJL_GET_INTEGER (port) < 1 || YAJL_GET_INTEGER (port) > 65535)
    return jw_fail_key (w, "port", "expected a port number (1 to 65535)");
  a->port = (uint16_t) YAJL_GET_INTEGER (port);
  for (size_t i = 0; i < c->n; i++)
    if (c->apis[i].port == a->port)
      return jw_fail_key (w, "port", "%u is used by %s too", a->port, c->apis[i].api->name);
  bool known_auth = false;
  for (unsigned k = 0; k < sizeof (auth_names) / sizeof (auth_names[0]) && !known_auth; k++)
    if (strcmp (auth, auth_names[k]) == 0)
      {
        a->auth = (hv_gw_auth) k;
        known_auth = true;
      }
  if (!known_auth)
    return jw_fail_key (w, "auth", "\"%s\" is not one of x-api-key, bearer, goog-api-key", auth);
  if (!(a->api->auths & (1u << a->auth)))
    return jw_fail_key (w, "auth", "%s does not take its key as %s", a->api->name, auth);
  if (key_file && (key_file[0] != '/' || strlen (key_file) >= PATH_MAX))
    return jw_fail_key (w, "key_file", "\"%s\" is not an absolute path", key_file);
  a->key_file = key_file ? xstrdup (key_file) : NULL;
  c->n++;
  return 0;
}

int
hv_gw_config_parse (const char *text, const char *doc, hv_gw_config **out, hv_error **err)
{
  *out = NULL;
  json_walk w;
  jw_init (&w, doc, err);
  jw_push_key (&w, "annotations[\"" HV_GATEWAY_ANNOTATION "\"]");
  if (jw_too_deep (text, 8))
    return jw_fail (&w, "nested too deep");
  yajl_val root = NULL;
  /* Its message names the document, not the annotation in it. */
  if (jw_parse (&w, text, &root) < 0)
    return hv_error_wrap (err, "%s: .annotations[\"%s\"]", doc, HV_GATEWAY_ANNOTATION);
  hv_gw_config *c = xmalloc0 (sizeof (*c));
  static const char *const known[] = { "apis", NULL };
  int r = jw_expect_object (&w, root) < 0 || check_keys (&w, root, known) < 0 ? -1 : 0;
  yajl_val apis = r == 0 ? jw_lookup (root, "apis") : NULL;
  if (r == 0 && jw_absent (apis))
    r = jw_fail_key (&w, "apis", "required field is missing");
  if (r == 0)
    {
      size_t saved = jw_push_key (&w, "apis");
      r = jw_expect_array (&w, apis);
      if (r == 0 && apis->u.array.len == 0)
        r = jw_fail (&w, "no API listed");
      if (r == 0 && apis->u.array.len > HV_GW_N_PROVIDERS)
        r = jw_fail (&w, "more entries than providers (%d)", HV_GW_N_PROVIDERS);
      for (size_t i = 0; r == 0 && i < apis->u.array.len; i++)
        {
          size_t item = jw_push_index (&w, i);
          r = parse_api (&w, apis->u.array.values[i], c);
          if (r == 0)
            jw_pop (&w, item);
        }
      if (r == 0)
        jw_pop (&w, saved);
    }
  yajl_tree_free (root);
  if (r < 0)
    {
      hv_gw_config_free (c);
      return -1;
    }
  *out = c;
  return 0;
}

int
hv_gw_key_check (const char *key, hv_error **err)
{
  if (key == NULL || key[0] == '\0')
    return hv_error_set (err, 0, "the key is empty");
  for (const char *p = key; *p; p++)
    if (*p <= ' ' || *p > '~')
      return hv_error_set (err, 0, "the key holds a character a header cannot carry (a space or a control "
                                   "character)");
  return 0;
}

int
hv_gw_read_key_file (const char *path, char **key, hv_error **err)
{
  *key = NULL;
  cleanup_close int fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "key file %s", path);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return hv_error_set (err, errno, "key file %s", path);
  if (!S_ISREG (st.st_mode))
    return hv_error_set (err, 0, "key file %s: not a regular file", path);
  if (st.st_uid != geteuid () && st.st_uid != 0)
    return hv_error_set (err, 0, "key file %s: owned by uid %u, neither this user nor root", path,
                         (unsigned) st.st_uid);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return hv_error_set (err, 0, "key file %s: writable by group or others (mode %o)", path,
                         (unsigned) (st.st_mode & 07777));
  if (st.st_size > HV_GW_KEY_FILE_MAX)
    return hv_error_set (err, 0, "key file %s: larger than %d bytes", path, HV_GW_KEY_FILE_MAX);
  char *buf = xmalloc0 (HV_GW_KEY_FILE_MAX + 2);
  size_t n = 0;
  for (;;)
    {
      ssize_t r = read (fd, buf + n, HV_GW_KEY_FILE_MAX + 1 - n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          int e = errno;
          explicit_bzero (buf, HV_GW_KEY_FILE_MAX + 2);
          free (buf);
          return hv_error_set (err, e, "key file %s", path);
        }
      if (r == 0)
        break;
      n += (size_t) r;
      if (n > HV_GW_KEY_FILE_MAX)
        break;
    }
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
    n--;
  buf[n] = '\0';
  if (n > HV_GW_KEY_FILE_MAX || hv_gw_key_check (buf, err) < 0)
    {
      explicit_bzero (buf, HV_GW_KEY_FILE_MAX + 2);
      free (buf);
      if (*err == NULL)
        return hv_error_set (err, 0, "key file %s: larger than %d bytes", path, HV_GW_KEY_FILE_MAX);
      return hv_error_wrap (err, "key file %s", path);
    }
  *key = buf;
  return 0;
}
