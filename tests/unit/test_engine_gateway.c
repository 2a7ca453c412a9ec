/* Unit tests of the model API gateway in engine containers
 * (policy/engine_gateway.c through hv_policy_apply_keys): the
 * run.haven.gateway annotation a config gets where the runtime's
 * registration names a key file, the environment rewritten so that no key
 * the engine passed reaches the container, the inactive case, a second
 * policy on top, the strict reading of an annotation already there, and
 * exec's environment. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include <cmocka.h>

#include "engine_gateway.h"
#include "haven_annotations.h"
#include "json_walk.h"
#include "policy.h"
#include "policy_apply.h"
#include "policy_load.h"
#include "utils.h"

static char policy_dir[] = "/tmp/hv-enggw-XXXXXX";

/* A policy file in policy_dir, loaded. */
static hv_policy *
load (const char *name, const char *yaml)
{
  cleanup_free char *path = xasprintf ("%s/%s.yaml", policy_dir, name);
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (yaml, f);
  fclose (f);
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (path, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  return p;
}

static const char *const anthropic_policy = "name: gw\n"
                                            "extends: default\n"
                                            "env:\n"
                                            "  pass: [ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, "
                                            "MY_KEY, KEEP]\n"
                                            "credentials:\n"
                                            "  api:\n"
                                            "    - {host: api.anthropic.com, header: x-api-key, token_env: MY_KEY}\n";

/* An engine's config with keys in its environment, as docker run -e
 * passes them, and annotations (JSON object members) of its own. */
static char *
engine_config (const char *annotations)
{
  return xasprintf ("{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"env\": ["
                    "\"PATH=/usr/bin\", \"KEEP=1\", \"ANTHROPIC_API_KEY=sk-real-1\", \"MY_KEY=sk-real-2\", "
                    "\"ANTHROPIC_AUTH_TOKEN=sk-real-3\", \"ANTHROPIC_BASE_URL=http://elsewhere\", "
                    "\"CLAUDE_CODE_OAUTH_TOKEN=sk-real-4\"]}, "
                    "\"root\": {\"path\": \"/\"}, \"linux\": {\"namespaces\": [{\"type\": \"pid\"}, "
                    "{\"type\": \"mount\"}, {\"type\": \"network\"}]}, \"annotations\": {%s}}",
                    annotations);
}

static const char *key_files[HV_GW_N_PROVIDERS] = { [HV_GW_ANTHROPIC] = "/etc/haven/anthropic.key" };

static char *
apply (const hv_policy *p, const char *cfg, const char *const *keys, oci_strv *notes)
{
  char *out = NULL;
  hv_error *err = NULL;
  if (hv_policy_apply_keys (p, cfg, "config.json", keys, &out, notes, &err) < 0)
    fail_msg ("%s", err->msg);
  return out;
}

/* The config's process.env, one "A=1 " after another. */
static char *
env_of (const char *config)
{
  yajl_val root = yajl_tree_parse (config, NULL, 0);
  assert_non_null (root);
  yajl_val env = jw_lookup (jw_lookup (root, "process"), "env");
  assert_true (env && YAJL_IS_ARRAY (env));
  char *out = xstrdup ("");
  for (size_t i = 0; i < env->u.array.len; i++)
    {
      char *more = xasprintf ("%s%s ", out, env->u.array.values[i]->u.string);
      free (out);
      out = more;
    }
  yajl_tree_free (root);
  return out;
}

static char *
annotation_of (const char *config, const char *key)
{
  yajl_val root = yajl_tree_parse (config, NULL, 0);
  assert_non_null (root);
  yajl_val v = jw_lookup (jw_lookup (root, "annotations"), key);
  char *out = v && YAJL_IS_STRING (v) ? xstrdup (v->u.string) : NULL;
  yajl_tree_free (root);
  return out;
}

static const char *
note_with (const oci_strv *notes, const char *text)
{
  for (size_t i = 0; i < notes->n; i++)
    if (strstr (notes->v[i], text))
      return notes->v[i];
  return NULL;
}

/* The registration names the key file: the annotation asks for the
 * gateway with it, and no key the engine passed is left in the config. */
static void
test_served (void **state)
{
  (void) state;
  hv_policy *p = load ("gw", anthropic_policy);
  cleanup_free char *cfg = engine_config ("\"other\": \"kept\"");
  cleanup_strv oci_strv notes = { 0 };
  cleanup_free char *out = apply (p, cfg, key_files, &notes);
  cleanup_free char *gw = annotation_of (out, HV_GATEWAY_ANNOTATION);
  assert_non_null (gw);
  assert_string_equal (gw, "{\"apis\":[{\"provider\":\"anthropic\",\"port\":8961,\"auth\":\"x-api-key\","
                           "\"key_file\":\"/etc/haven/anthropic.key\"}]}");
  cleanup_free char *env = env_of (out);
  assert_string_equal (env, "PATH=/usr/bin KEEP=1 HAVEN=1 ANTHROPIC_BASE_URL=http://127.0.0.1:8961 "
                            "ANTHROPIC_API_KEY=haven-gateway-placeholder ");
  if (strstr (out, "sk-real"))
    fail_msg ("a key is left in %s", out);
  cleanup_free char *other = annotation_of (out, "other");
  assert_string_equal (other, "kept");
  const char *note = note_with (&notes, "the gateway serves it");
  assert_non_null (note);
  assert_non_null (strstr (note, "withheld from the container: ANTHROPIC_API_KEY, MY_KEY, ANTHROPIC_AUTH_TOKEN, "
                                 "ANTHROPIC_BASE_URL"));
  assert_non_null (note_with (&notes, "env.pass does not name them): CLAUDE_CODE_OAUTH_TOKEN"));
  assert_null (strstr (note, "sk-real"));
  hv_policy_free (p);
}

/* Bearer: the placeholder goes where Claude Code reads a token. */
static void
test_served_bearer (void **state)
{
  (void) state;
  hv_policy *p = load ("gwb", "name: gwb\nextends: default\ncredentials:\n  api:\n"
                              "    - {host: api.anthropic.com, header: Authorization, token_env: ANTHROPIC_AUTH_TOKEN}\n");
  cleanup_free char *cfg = engine_config ("");
  cleanup_free char *out = apply (p, cfg, key_files, NULL);
  cleanup_free char *gw = annotation_of (out, HV_GATEWAY_ANNOTATION);
  assert_non_null (strstr (gw, "\"auth\":\"bearer\""));
  cleanup_free char *env = env_of (out);
  assert_non_null (strstr (env, "ANTHROPIC_AUTH_TOKEN=haven-gateway-placeholder "));
  assert_null (strstr (env, "ANTHROPIC_API_KEY"));
  assert_null (strstr (out, "sk-real"));
  hv_policy_free (p);
}

/* No key file for the provider: inactive, as an unset token_env is for
 * haven run: no annotation, the environment as env says, and a note. */
static void
test_inactive_without_key_file (void **state)
{
  (void) state;
  hv_policy *p = load ("gw", anthropic_policy);
  cleanup_free char *cfg = engine_config ("");
  const char *openai_only[HV_GW_N_PROVIDERS] = { [HV_GW_OPENAI] = "/etc/haven/openai.key" };
  const char *const *cases[] = { NULL, openai_only };
  for (size_t i = 0; i < 2; i++)
    {
      cleanup_strv oci_strv notes = { 0 };
      cleanup_free char *out = apply (p, cfg, cases[i], &notes);
      assert_null (strstr (out, HV_GATEWAY_ANNOTATION));
      cleanup_free char *env = env_of (out);
      assert_non_null (strstr (env, "ANTHROPIC_API_KEY=sk-real-1 "));
      assert_non_null (note_with (&notes, "this runtime has no key file for anthropic (haven install docker "
                                          "--api-key anthropic=FILE): the gateway is off for it"));
    }
  hv_policy_free (p);
}

/* A second policy (the container's run.haven.policy on top of the
 * runtime's) keeps the gateway, and its env rules cannot bring a key
 * variable back or drop the base URL (default passes neither). */
static void
test_second_policy_keeps_it (void **state)
{
  (void) state;
  hv_policy *p = load ("gw", anthropic_policy);
  hv_policy *dflt = NULL;
  hv_error *err = NULL;
  if (hv_policy_load ("default", &dflt, &err) < 0)
    fail_msg ("%s", err->msg);
  cleanup_free char *cfg = engine_config ("");
  cleanup_free char *first = apply (p, cfg, key_files, NULL);
  cleanup_free char *second = apply (dflt, first, NULL, NULL);
  cleanup_free char *a1 = annotation_of (first, HV_GATEWAY_ANNOTATION);
  cleanup_free char *a2 = annotation_of (second, HV_GATEWAY_ANNOTATION);
  assert_non_null (a2);
  assert_string_equal (a1, a2);
  cleanup_free char *env = env_of (second);
  assert_non_null (strstr (env, "ANTHROPIC_BASE_URL=http://127.0.0.1:8961 "));
  assert_non_null (strstr (env, "ANTHROPIC_API_KEY=haven-gateway-placeholder "));
  /* The same policy again: one entry, not two. */
  cleanup_free char *again = apply (p, first, key_files, NULL);
  cleanup_free char *a3 = annotation_of (again, HV_GATEWAY_ANNOTATION);
  assert_string_equal (a1, a3);
  hv_policy_free (dflt);
  hv_policy_free (p);
}

/* An annotation the config has already is read strictly: what cannot be
 * read fails the create rather than being dropped. */
static void
expect_bad_annotation (const hv_policy *p, const char *value, const char *message)
{
  /* value as a JSON string: its quotes escaped. */
  size_t n = 0;
  for (const char *c = value; *c; c++)
    n += *c == '"' ? 2 : 1;
  char *e = xmalloc0 (n + 1), *t = e;
  for (const char *c = value; *c; c++)
    {
      if (*c == '"')
        *t++ = '\\';
      *t++ = *c;
    }
  cleanup_free char *member = xasprintf ("\"" HV_GATEWAY_ANNOTATION "\": \"%s\"", e);
  free (e);
  cleanup_free char *cfg = engine_config (member);
  char *out = NULL;
  hv_error *err = NULL;
  if (hv_policy_apply_keys (p, cfg, "config.json", key_files, &out, NULL, &err) == 0)
    fail_msg ("accepted %s: %s", value, out);
  if (strstr (err->msg, message) == NULL)
    fail_msg ("expected \"%s\"\n     in \"%s\"", message, err->msg);
  hv_error_free (&err);
}

static void
test_annotation_read_strictly (void **state)
{
  (void) state;
  hv_policy *p = load ("gw", anthropic_policy);
  const char *pre = "config.json: annotation " HV_GATEWAY_ANNOTATION ": ";
  cleanup_free char *m1 = xasprintf ("%s.apis[0].extra: unknown member", pre);
  expect_bad_annotation (p, "{\"apis\":[{\"provider\":\"anthropic\",\"port\":1,\"auth\":\"x-api-key\",\"extra\":1}]}",
                         m1);
  expect_bad_annotation (p, "{\"apis\":[],\"x\":1}", ".x: unknown member (apis)");
  expect_bad_annotation (p, "{\"apis\":[{\"provider\":\"claude\",\"port\":1,\"auth\":\"x-api-key\"}]}",
                         ".apis[0].provider: unknown provider \"claude\"");
  expect_bad_annotation (p, "{\"apis\":[{\"provider\":\"anthropic\",\"port\":0,\"auth\":\"x-api-key\"}]}",
                         ".apis[0].port: expected a TCP port");
  expect_bad_annotation (p, "{\"apis\":[{\"provider\":\"anthropic\",\"port\":70000,\"auth\":\"x-api-key\"}]}",
                         ".apis[0].port: expected a TCP port");
  expect_bad_annotation (p, "{\"apis\":[{\"provider\":\"openai\",\"port\":1,\"auth\":\"x-api-key\"}]}",
                         ".apis[0].auth: openai takes no auth \"x-api-key\"");
  expect_bad_annotation (p, "{\"apis\":[{\"provider\":\"openai\",\"port\":1}]}", ".apis[0].auth: missing");
  expect_bad_annotation (p, "{\"apis\":[{\"provider\":\"openai\",\"port\":1,\"auth\":\"bearer\",\"key_file\":\"k\"}]}",
                         ".apis[0].key_file: expected an absolute path");
  expect_bad_annotation (p, "{\"apis\":[{\"provider\":\"openai\",\"port\":1,\"auth\":\"bearer\"},"
                            "{\"provider\":\"openai\",\"port\":2,\"auth\":\"bearer\"}]}",
                         ".apis[1].provider: \"openai\" given twice");
  expect_bad_annotation (p, "[1]", "expected");
  expect_bad_annotation (p, "{\"apis\":", "annotation " HV_GATEWAY_ANNOTATION);
  hv_policy_free (p);
}

/* An annotation the config had (another port, another provider) is
 * kept, and the container's environment follows it. */
static void
test_earlier_annotation_kept (void **state)
{
  (void) state;
  hv_policy *p = load ("gw", anthropic_policy);
  cleanup_free char *cfg = engine_config (
      "\"" HV_GATEWAY_ANNOTATION "\": \"{\\\"apis\\\":[{\\\"provider\\\":\\\"openai\\\",\\\"port\\\":9000,"
      "\\\"auth\\\":\\\"bearer\\\",\\\"key_file\\\":\\\"/o.key\\\"}]}\"");
  cleanup_free char *out = apply (p, cfg, key_files, NULL);
  cleanup_free char *gw = annotation_of (out, HV_GATEWAY_ANNOTATION);
  assert_string_equal (gw, "{\"apis\":[{\"provider\":\"openai\",\"port\":9000,\"auth\":\"bearer\",\"key_file\":"
                           "\"/o.key\"},{\"provider\":\"anthropic\",\"port\":8961,\"auth\":\"x-api-key\","
                           "\"key_file\":\"/etc/haven/anthropic.key\"}]}");
  cleanup_free char *env = env_of (out);
  assert_non_null (strstr (env, "OPENAI_BASE_URL=http://127.0.0.1:9000/v1 OPENAI_API_KEY=haven-gateway-placeholder "
                                "CODEX_API_KEY=haven-gateway-placeholder "));
  hv_policy_free (p);
}

/* docker exec -e: the exec'd process gets the placeholder too. */
static void
test_exec_env (void **state)
{
  (void) state;
  struct hv_engine_gateway gw = { 0 };
  hv_error *err = NULL;
  if (hv_engine_gateway_parse ("{\"apis\":[{\"provider\":\"gemini\",\"port\":8963,\"auth\":\"goog-api-key\","
                               "\"key_file\":\"/g\"}]}",
                               "config.json", &gw, &err) < 0)
    fail_msg ("%s", err->msg);
  oci_strv env = { 0 };
  oci_strv_push (&env, "GEMINI_API_KEY=real");
  oci_strv_push (&env, "GOOGLE_API_KEY=real");
  oci_strv_push (&env, "TERM=xterm");
  hv_engine_gateway_env (&gw, &env);
  assert_int_equal (env.n, 3);
  assert_string_equal (env.v[0], "TERM=xterm");
  assert_string_equal (env.v[1], "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8963");
  assert_string_equal (env.v[2], "GEMINI_API_KEY=haven-gateway-placeholder");
  assert_null (env.v[3]);
  oci_strv_free (&env);
  hv_engine_gateway_clear (&gw);
}

static int
setup (void **state)
{
  (void) state;
  setenv ("HAVEN_POLICY_PATH", HAVEN_SRCDIR "/policies", 1);
  return mkdtemp (policy_dir) ? 0 : -1;
}

static int
teardown (void **state)
{
  (void) state;
  cleanup_free char *rm = xasprintf ("rm -rf %s", policy_dir);
  return system (rm) == 0 ? 0 : -1;
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_served),
    cmocka_unit_test (test_served_bearer),
    cmocka_unit_test (test_inactive_without_key_file),
    cmocka_unit_test (test_second_policy_keeps_it),
    cmocka_unit_test (test_annotation_read_strictly),
    cmocka_unit_test (test_earlier_annotation_kept),
    cmocka_unit_test (test_exec_env),
  };
  return cmocka_run_group_tests (tests, setup, teardown);
}
