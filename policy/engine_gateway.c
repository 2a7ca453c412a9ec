/* The model API gateway in engine containers (engine_gateway.h). */
#include "config.h"
#include "engine_gateway.h"

#include <stdio.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "haven_annotations.h"
#include "json_gen.h"
#include "json_walk.h"
#include "policy_api.h"
#include "utils.h"

static void
api_clear (struct hv_engine_api *a)
{
  free (a->provider);
  free (a->auth);
  free (a->key_file);
  free (a->token_env);
  memset (a, 0, sizeof (*a));
}

void
hv_engine_gateway_clear (struct hv_engine_gateway *gw)
{
  for (size_t i = 0; i < gw->n; i++)
    api_clear (&gw->api[i]);
  gw->n = 0;
}

static struct hv_engine_api *
find (struct hv_engine_gateway *gw, const char *provider)
{
  for (size_t i = 0; i < gw->n; i++)
    if (strcmp (gw->api[i].provider, provider) == 0)
      return &gw->api[i];
  return NULL;
}

/* One entry of "apis" into a (fields it names). */
static int
parse_entry (json_walk *w, yajl_val e, struct hv_engine_api *a)
{
  if (jw_expect_object (w, e) < 0)
    return -1;
  for (size_t k = 0; k < e->u.object.len; k++)
    {
      const char *key = e->u.object.keys[k];
      yajl_val v = e->u.object.values[k];
      size_t saved = jw_push_key (w, key);
      int r;
      if (strcmp (key, "provider") == 0)
        r = jw_as_string (w, v, &a->provider);
      else if (strcmp (key, "auth") == 0)
        r = jw_as_string (w, v, &a->auth);
      else if (strcmp (key, "key_file") == 0)
        r = jw_as_string (w, v, &a->key_file);
      else if (strcmp (key, "port") == 0)
        {
          uint32_t port = 0;
          r = jw_as_u32 (w, v, &port);
          if (r == 0 && (port == 0 || port > 65535))
            r = jw_fail (w, "expected a TCP port (1-65535), not %u", port);
          a->port = port;
        }
      else
        r = jw_fail (w, "unknown member (provider, port, auth, key_file)");
      jw_pop (w, saved);
      if (r < 0)
        return -1;
    }
  if (a->provider == NULL)
    return jw_fail_key (w, "provider", "missing");
  if (hv_api_agent_env (a->provider) == NULL)
    return jw_fail_key (w, "provider", "unknown provider \"%s\" (anthropic, openai, gemini)", a->provider);
  if (a->port == 0)
    return jw_fail_key (w, "port", "missing");
  if (a->auth == NULL)
    return jw_fail_key (w, "auth", "missing");
  if (!hv_api_provider_takes (a->provider, a->auth))
    return jw_fail_key (w, "auth", "%s takes no auth \"%s\"", a->provider, a->auth);
  if (a->key_file && a->key_file[0] != '/')
    return jw_fail_key (w, "key_file", "expected an absolute path, not \"%s\"", a->key_file);
  return 0;
}

int
hv_engine_gateway_parse (const char *text, const char *where, struct hv_engine_gateway *gw, hv_error **err)
{
  cleanup_free char *name = xasprintf ("%s: annotation " HV_GATEWAY_ANNOTATION, where);
  json_walk w;
  yajl_val root = NULL;
  jw_init (&w, name, err);
  if (jw_too_deep (text, 8))
    return jw_fail (&w, "nested too deep");
  if (jw_parse (&w, text, &root) < 0)
    return -1;
  int r = jw_expect_object (&w, root);
  for (size_t k = 0; r == 0 && k < root->u.object.len; k++)
    if (strcmp (root->u.object.keys[k], "apis") != 0)
      r = jw_fail_key (&w, root->u.object.keys[k], "unknown member (apis)");
  yajl_val apis = r == 0 ? jw_lookup (root, "apis") : NULL;
  size_t saved = jw_push_key (&w, "apis");
  if (r == 0)
    r = jw_expect_array (&w, apis);
  for (size_t i = 0; r == 0 && i < apis->u.array.len; i++)
    {
      size_t at = jw_push_index (&w, i);
      struct hv_engine_api a = { 0 };
      r = parse_entry (&w, apis->u.array.values[i], &a);
      if (r == 0 && find (gw, a.provider))
        r = jw_fail_key (&w, "provider", "\"%s\" given twice", a.provider);
      if (r == 0 && gw->n == HV_GW_N_PROVIDERS)
        r = jw_fail (&w, "more entries than providers");
      if (r == 0)
        gw->api[gw->n++] = a;
      else
        api_clear (&a);
      jw_pop (&w, at);
    }
  jw_pop (&w, saved);
  yajl_tree_free (root);
  return r;
}

/* The names of engine_env's variables that the gateway for a withholds. */
static bool
withheld_by (const struct hv_engine_api *a, const char *name, size_t len)
{
  const struct hv_api_agent_env *e = hv_api_agent_env (a->provider);
  if (a->token_env && strlen (a->token_env) == len && strncmp (a->token_env, name, len) == 0)
    return true;
  if (strlen (e->base_var) == len && strncmp (e->base_var, name, len) == 0)
    return true;
  for (const char *const *k = e->key_vars; *k; k++)
    if (strlen (*k) == len && strncmp (*k, name, len) == 0)
      return true;
  return false;
}

static char *
withheld_names (const struct hv_engine_api *a, const oci_strv *engine_env)
{
  char *names = NULL;
  for (size_t i = 0; engine_env && i < engine_env->n; i++)
    {
      size_t len = strcspn (engine_env->v[i], "=");
      if (!withheld_by (a, engine_env->v[i], len))
        continue;
      char *more = xasprintf ("%s%s%.*s", names ? names : "", names ? ", " : "", (int) len, engine_env->v[i]);
      free (names);
      names = more;
    }
  return names;
}

void
hv_engine_gateway_add (struct hv_engine_gateway *gw, const hv_policy *p, const char *const *key_files,
                       const oci_strv *engine_env, oci_strv *notes)
{
  for (size_t i = 0; i < p->n_api_creds; i++)
    {
      const hv_api_credential *c = &p->api_creds[i];
      const hv_gw_api *api = hv_gw_api_by_name (c->provider);
      const char *file = key_files && api ? key_files[api->id] : NULL;
      if (file == NULL)
        {
          oci_strv_pushf (notes,
                          "credentials.api %s: this runtime has no key file for %s (haven install docker "
                          "--api-key %s=FILE): the gateway is off for it, and the container gets what env passes",
                          c->key.name, c->provider, c->provider);
          continue;
        }
      struct hv_engine_api *a = find (gw, c->provider);
      if (a)
        api_clear (a);
      else
        a = &gw->api[gw->n++];
      const struct hv_api_agent_env *e = hv_api_agent_env (c->provider);
      *a = (struct hv_engine_api) { .provider = xstrdup (c->provider),
                                    .port = e->port,
                                    .auth = xstrdup (c->auth),
                                    .key_file = xstrdup (file),
                                    .token_env = c->key.host_var ? xstrdup (c->key.host_var) : NULL };
      cleanup_free char *withheld = withheld_names (a, engine_env);
      oci_strv_pushf (notes,
                      "credentials.api %s: the gateway serves it on 127.0.0.1:%u in the container with the key in "
                      "%s; the container gets %s=%s and a placeholder in %s%s%s",
                      c->key.name, a->port, file, e->base_var, e->base_url,
                      hv_api_placeholder_var (c->provider, c->auth), withheld ? "; withheld from the container: " : "",
                      withheld ? withheld : "");
    }
}

char *
hv_engine_gateway_json (const struct hv_engine_gateway *gw)
{
  if (gw->n == 0)
    return NULL;
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_str (g, "apis");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < gw->n; i++)
    {
      const struct hv_engine_api *a = &gw->api[i];
      yajl_gen_map_open (g);
      jg_kv (g, "provider", a->provider);
      jg_str (g, "port");
      yajl_gen_integer (g, a->port);
      jg_kv (g, "auth", a->auth);
      if (a->key_file)
        jg_kv (g, "key_file", a->key_file);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  return jg_finish (g);
}

void
hv_engine_gateway_env (const struct hv_engine_gateway *gw, oci_strv *env)
{
  if (gw->n == 0)
    return;
  oci_strv out = { 0 };
  for (size_t i = 0; i < env->n; i++)
    {
      size_t len = strcspn (env->v[i], "=");
      bool withheld = false;
      for (size_t j = 0; j < gw->n && !withheld; j++)
        withheld = withheld_by (&gw->api[j], env->v[i], len);
      if (!withheld)
        oci_strv_push (&out, env->v[i]);
    }
  for (size_t j = 0; j < gw->n; j++)
    {
      const struct hv_engine_api *a = &gw->api[j];
      const struct hv_api_agent_env *e = hv_api_agent_env (a->provider);
      /* The listener's port is the annotation's, which an earlier
       * annotation may have set to another than the default: the
       * default URL with its port replaced (the path after it, /v1 for
       * OpenAI, kept). */
      const char *path = strchr (e->base_url + strlen ("http://"), '/');
      oci_strv_pushf (&out, "%s=http://127.0.0.1:%u%s", e->base_var, a->port, path ? path : "");
      const char *var = hv_api_placeholder_var (a->provider, a->auth);
      oci_strv_pushf (&out, "%s=%s", var, HV_GATEWAY_PLACEHOLDER_KEY);
      if (e->also_placeholder && strcmp (e->also_placeholder, var) != 0)
        oci_strv_pushf (&out, "%s=%s", e->also_placeholder, HV_GATEWAY_PLACEHOLDER_KEY);
    }
  oci_strv_free (env);
  *env = out;
}

char *
hv_api_gateway_annotation (const hv_policy *p, char *const *host_env)
{
  /* The one writer of the format serves haven run too; the strings are
   * borrowed from p, so gw is not cleared.  The policy lists each host
   * once, so each provider at most once. */
  struct hv_engine_gateway gw = { 0 };
  for (size_t i = 0; i < p->n_api_creds && gw.n < HV_GW_N_PROVIDERS; i++)
    {
      const hv_api_credential *c = &p->api_creds[i];
      if (hv_api_active (c, host_env))
        gw.api[gw.n++] = (struct hv_engine_api){
          .provider = c->provider,
          .port = hv_api_agent_env (c->provider)->port,
          .auth = c->auth,
        };
    }
  return hv_engine_gateway_json (&gw);
}
