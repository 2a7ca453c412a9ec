/* Unit tests of credentials.api, the model API keys haven's gateway keeps
 * out of the sandbox: the schema and its errors, extends, the conflicts
 * refused at load, which items a run serves, the environment the sandbox
 * gets instead of the key, the gateway annotation, `explain`, and the
 * session's reading of the keys for the monitor. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy.h"
#include "engine_gateway.h"
#include "policy_api.h"
#include "policy_compile.h"
#include "policy_env.h"
#include "policy_load.h"
#include "policy_parse.h"
#include "run_credentials.h"
#include "utils.h"
#include "policy_parse_check.h"

#define ANTHROPIC "{host: api.anthropic.com, header: x-api-key, token_env: ANTHROPIC_API_KEY}"

static void
test_schema (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("credentials:\n  api:\n    - " ANTHROPIC "\n"
            "    - {host: api.openai.com, header: Authorization, token_file: ~/.config/openai.key}\n"
            "    - {host: generativelanguage.googleapis.com, header: x-goog-api-key, token_env: GEMINI_API_KEY}\n",
            &p);
  assert_int_equal (p.n_api_creds, 3);
  assert_string_equal (p.api_creds[0].provider, "anthropic");
  assert_string_equal (p.api_creds[0].auth, "x-api-key");
  assert_string_equal (p.api_creds[0].key.name, "api.anthropic.com");
  assert_string_equal (p.api_creds[0].key.host_var, "ANTHROPIC_API_KEY");
  assert_null (p.api_creds[0].key.file);
  assert_string_equal (p.api_creds[0].key.where, "t.yaml:3:7");
  /* A header name in any case. */
  assert_string_equal (p.api_creds[1].provider, "openai");
  assert_string_equal (p.api_creds[1].auth, "bearer");
  assert_string_equal (p.api_creds[1].key.file, "~/.config/openai.key");
  assert_null (p.api_creds[1].key.host_var);
  assert_string_equal (p.api_creds[2].provider, "gemini");
  assert_string_equal (p.api_creds[2].auth, "goog-api-key");
  hv_policy_free_fields (&p);
  /* Anthropic takes a bearer token too. */
  parse_ok ("credentials: {api: [{host: api.anthropic.com, header: authorization, token_env: T}]}\n", &p);
  assert_string_equal (p.api_creds[0].auth, "bearer");
  hv_policy_free_fields (&p);
}

static void
test_schema_errors (void **state)
{
  (void) state;
  expect_error ("credentials: {api: {host: api.anthropic.com}}\n",
                "t.yaml:1:20: credentials.api: expected a list of {host, header, token_env or token_file}");
  expect_error ("credentials: {api: [api.anthropic.com]}\n",
                "t.yaml:1:21: credentials.api: expected {host, header, token_env or token_file}");
  expect_error ("credentials: {api: [{host: api.example.com, header: x-api-key, token_env: T}]}\n",
                "t.yaml:1:28: credentials.api: host: \"api.example.com\" is not a model API haven's gateway serves "
                "(api.anthropic.com, api.openai.com, generativelanguage.googleapis.com)");
  expect_error ("credentials: {api: [{host: API.anthropic.com, header: x-api-key, token_env: T}]}\n",
                "t.yaml:1:28: credentials.api: host: \"API.anthropic.com\" is not a model API haven's gateway serves "
                "(api.anthropic.com, api.openai.com, generativelanguage.googleapis.com)");
  expect_error ("credentials: {api: [{host: api.openai.com, header: x-api-key, token_env: T}]}\n",
                "t.yaml:1:52: credentials.api: header: api.openai.com does not take its key in \"x-api-key\" (it "
                "takes authorization)");
  expect_error ("credentials: {api: [{host: api.anthropic.com, header: x-goog-api-key, token_env: T}]}\n",
                "t.yaml:1:55: credentials.api: header: api.anthropic.com does not take its key in \"x-goog-api-key\" "
                "(it takes x-api-key or authorization)");
  expect_error ("credentials: {api: [{host: generativelanguage.googleapis.com, header: authorization, token_env: T}]}\n",
                "t.yaml:1:71: credentials.api: header: generativelanguage.googleapis.com does not take its key in "
                "\"authorization\" (it takes x-goog-api-key)");
  expect_error ("credentials: {api: [{host: api.openai.com, header: cookie, token_env: T}]}\n",
                "t.yaml:1:52: credentials.api: header: api.openai.com does not take its key in \"cookie\" (it takes "
                "authorization)");
  expect_error ("credentials: {api: [{host: api.openai.com, token_env: T}]}\n",
                "t.yaml:1:21: credentials.api: api.openai.com: an entry needs header: (api.openai.com takes "
                "authorization)");
  expect_error ("credentials: {api: [{header: x-api-key, token_env: T}]}\n",
                "t.yaml:1:21: credentials.api: an entry needs host:");
  expect_error ("credentials: {api: [{host: api.anthropic.com, header: x-api-key}]}\n",
                "t.yaml:1:21: credentials.api: api.anthropic.com: give exactly one of token_env and token_file");
  expect_error ("credentials: {api: [{host: api.anthropic.com, header: x-api-key, token_env: T, token_file: /k}]}\n",
                "t.yaml:1:21: credentials.api: api.anthropic.com: give exactly one of token_env and token_file");
  expect_error ("credentials: {api: [{host: api.anthropic.com, header: x-api-key, token_file: k}]}\n",
                "t.yaml:1:78: credentials.api: \"k\": expected an absolute path or ~/...");
  expect_error ("credentials: {api: [{host: api.anthropic.com, header: x-api-key, token_env: 'A-B'}]}\n",
                "t.yaml:1:77: credentials.api: token_env: \"A-B\" is not a variable name");
  expect_error ("credentials: {api: [{host: api.anthropic.com, header: x-api-key, token_env: ''}]}\n",
                "t.yaml:1:77: credentials.api: token_env: expected a non-empty string");
  expect_error ("credentials: {api: [{host: api.anthropic.com, header: x-api-key, token_env: T, username: u}]}\n",
                "t.yaml:1:80: credentials.api: unknown key \"username\" (expected host, header, token_env, "
                "token_file)");
  expect_error ("credentials: {api: [{host: api.anthropic.com, host: api.openai.com, header: x-api-key, "
                "token_env: T}]}\n",
                "t.yaml:1:47: duplicate key \"host\" (also at line 1)");
  expect_error ("credentials:\n  api:\n    - " ANTHROPIC "\n"
                "    - {host: api.anthropic.com, header: authorization, token_env: OTHER}\n",
                "t.yaml:4:14: credentials.api: host api.anthropic.com is listed twice (also at t.yaml:3:7)");
}

/* Loaded with extends: the child's item for a host replaces the base's;
 * the conflicts are checked on the merged policy. */
static void
test_load (void **state)
{
  (void) state;
  char dir[] = "/tmp/haven-api-test.XXXXXX";
  assert_non_null (mkdtemp (dir));
  cleanup_free char *base = xasprintf ("%s/base.yaml", dir);
  cleanup_free char *child = xasprintf ("%s/child.yaml", dir);
  write_text (base, "extends: none\nnetwork: {allow: [api.anthropic.com]}\ncredentials:\n  api:\n    - " ANTHROPIC "\n"
                    "    - {host: api.openai.com, header: authorization, token_env: OPENAI_API_KEY}\n");
  write_text (child, "extends: base.yaml\n"
                     "credentials: {api: [{host: api.anthropic.com, header: authorization, token_file: /k}]}\n");
  hv_policy *p = NULL;
  hv_error *err = NULL;
  if (hv_policy_load (child, &p, &err) < 0)
    fail_msg ("%s", err->msg);
  assert_int_equal (p->n_api_creds, 2);
  assert_string_equal (p->api_creds[0].key.name, "api.openai.com");
  assert_string_equal (p->api_creds[1].key.name, "api.anthropic.com");
  assert_string_equal (p->api_creds[1].auth, "bearer");
  assert_string_equal (p->api_creds[1].key.file, "/k");
  assert_null (p->api_creds[1].key.host_var);
  hv_policy_free (p);
  p = NULL;

  /* The host's network: the gateway's loopback would be the host's. */
  write_text (child, "extends: base.yaml\nnetwork: {mode: open}\n");
  write_text (base, "extends: none\ncredentials:\n  api:\n    - " ANTHROPIC "\n");
  assert_int_equal (hv_policy_load (child, &p, &err), -1);
  cleanup_free char *want = xasprintf ("%s:4:7: credentials.api: api.anthropic.com needs the sandbox's own network "
                                       "(haven's gateway listens on its loopback), but network.mode is open (the "
                                       "host's network): use network.mode none or an allowlist, or drop "
                                       "credentials.api",
                                       base);
  assert_string_equal (err->msg, want);
  hv_error_free (&err);

  /* The key's own variable or file copied into a sandbox variable. */
  write_text (child, "extends: base.yaml\nenv: {set_from_env: {COPY: ANTHROPIC_API_KEY}}\n");
  assert_int_equal (hv_policy_load (child, &p, &err), -1);
  cleanup_free char *want2 = xasprintf ("%s:2:22: env.set_from_env: COPY would be the key that credentials.api keeps "
                                        "out of the sandbox (%s:4:7, token_env ANTHROPIC_API_KEY)",
                                        child, base);
  assert_string_equal (err->msg, want2);
  hv_error_free (&err);
  write_text (base, "extends: none\ncredentials: {api: [{host: api.openai.com, header: authorization, "
                    "token_file: ~/.config/openai.key}]}\n");
  write_text (child, "extends: base.yaml\nenv: {set_from_file: {K: ~/.config/openai.key}}\n");
  assert_int_equal (hv_policy_load (child, &p, &err), -1);
  assert_non_null (strstr (err->msg, "env.set_from_file: K would be the key that credentials.api keeps out"));
  hv_error_free (&err);
  write_text (child, "extends: base.yaml\nnetwork: {allow: [github.com]}\n"
                     "credentials: {git: [{host: github.com, token_file: ~/.config/openai.key}]}\n");
  assert_int_equal (hv_policy_load (child, &p, &err), -1);
  cleanup_free char *want3 = xasprintf ("%s:3:21: credentials.git: the token for github.com would be the key that "
                                        "credentials.api keeps out of the sandbox (%s:2:21, token_file "
                                        "~/.config/openai.key)",
                                        child, base);
  assert_string_equal (err->msg, want3);
  hv_error_free (&err);
  unlink (base);
  unlink (child);
  rmdir (dir);
}

/* A policy built without hv_policy_load (parse only) is refused by the
 * compiler too. */
static void
test_compile_refuses_host_network (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("name: n\nnetwork: {mode: open}\ncredentials: {api: [" ANTHROPIC "]}\n", &p);
  struct hv_run_ctx ctx = { 0 };
  char *json = NULL;
  hv_error *err = NULL;
  assert_int_equal (hv_policy_compile (&p, &ctx, &json, &err), -1);
  assert_null (json);
  assert_string_equal (err->msg, "t.yaml:3:21: credentials.api needs the sandbox's own network, but network.mode is open");
  hv_error_free (&err);
  hv_policy_free_fields (&p);
}

static char *
run_env (const hv_policy *p, char **host, oci_strv *notes)
{
  struct hv_run_ctx ctx = { .host_env = host, .notes = notes };
  return joined (hv_policy_run_env (p, &ctx));
}

/* What the sandbox gets: the gateway's URL and the placeholder; no
 * variable the provider's agents take a key from, whatever env passed or
 * set; with the key's variable unset, env as written. */
static void
test_run_env (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("env:\n  pass: [ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, ANTHROPIC_BASE_URL,"
            " ANTHROPIC_MODEL, OTHER]\n"
            "credentials: {api: [" ANTHROPIC "]}\n",
            &p);
  char *all[] = { (char *) "ANTHROPIC_API_KEY=sk-real", (char *) "ANTHROPIC_AUTH_TOKEN=tok-real",
                  (char *) "CLAUDE_CODE_OAUTH_TOKEN=oauth-real", (char *) "ANTHROPIC_BASE_URL=https://x",
                  (char *) "ANTHROPIC_MODEL=m", (char *) "OTHER=1", NULL };
  cleanup_free char *on = run_env (&p, all, NULL);
  assert_string_equal (on, "ANTHROPIC_MODEL=m OTHER=1 ANTHROPIC_BASE_URL=http://127.0.0.1:8961 "
                           "ANTHROPIC_API_KEY=haven-gateway-placeholder ");
  /* Unset or empty: inactive, env as written (the agent's own login). */
  char *unset[] = { (char *) "ANTHROPIC_AUTH_TOKEN=tok-real", (char *) "OTHER=1", NULL };
  cleanup_free char *off = run_env (&p, unset, NULL);
  assert_string_equal (off, "ANTHROPIC_AUTH_TOKEN=tok-real OTHER=1 ");
  char *empty[] = { (char *) "ANTHROPIC_API_KEY=", (char *) "ANTHROPIC_AUTH_TOKEN=tok-real", NULL };
  cleanup_free char *off2 = run_env (&p, empty, NULL);
  assert_string_equal (off2, "ANTHROPIC_API_KEY= ANTHROPIC_AUTH_TOKEN=tok-real ");
  hv_policy_free_fields (&p);

  /* Any token_env, passed by a glob that would pass it (no credential
   * shape), or set by the policy: withheld; the bearer placeholder goes
   * in ANTHROPIC_AUTH_TOKEN.  What the policy itself wrote is noted. */
  parse_ok ("env: {pass: ['*'], set: {ANTHROPIC_BASE_URL: 'http://mine'}}\n"
            "credentials: {api: [{host: api.anthropic.com, header: authorization, token_env: MYSTUFF}]}\n",
            &p);
  char *custom[] = { (char *) "MYSTUFF=sk-real", (char *) "PATH=/bin", NULL };
  oci_strv notes = { 0 };
  cleanup_free char *bearer = run_env (&p, custom, &notes);
  assert_string_equal (bearer, "PATH=/bin ANTHROPIC_BASE_URL=http://127.0.0.1:8961 "
                               "ANTHROPIC_AUTH_TOKEN=haven-gateway-placeholder ");
  assert_int_equal (notes.n, 1);
  assert_string_equal (notes.v[0], "env: the policy's ANTHROPIC_BASE_URL is not used: credentials.api (t.yaml:2:21) "
                                   "serves api.anthropic.com through haven's gateway, which sets the agent's "
                                   "variables itself");
  oci_strv_free (&notes);
  hv_policy_free_fields (&p);

  /* A token file is always served; the other providers' variables. */
  parse_ok ("env: {pass: [OPENAI_API_KEY, CODEX_API_KEY, OPENAI_BASE_URL, GEMINI_API_KEY, GOOGLE_API_KEY]}\n"
            "credentials:\n  api:\n"
            "    - {host: api.openai.com, header: authorization, token_file: /k}\n"
            "    - {host: generativelanguage.googleapis.com, header: x-goog-api-key, token_env: GEMINI_API_KEY}\n",
            &p);
  char *keys[] = { (char *) "OPENAI_API_KEY=o", (char *) "CODEX_API_KEY=c", (char *) "OPENAI_BASE_URL=u",
                   (char *) "GEMINI_API_KEY=g", (char *) "GOOGLE_API_KEY=gg", NULL };
  cleanup_free char *both = run_env (&p, keys, NULL);
  assert_string_equal (both, "OPENAI_BASE_URL=http://127.0.0.1:8962/v1 OPENAI_API_KEY=haven-gateway-placeholder "
                             "CODEX_API_KEY=haven-gateway-placeholder GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8963 "
                             "GEMINI_API_KEY=haven-gateway-placeholder ");
  hv_policy_free_fields (&p);
}

/* The secrets the session read are withheld too (set_from_env into a
 * key variable of a served provider). */
static void
test_run_env_secret_env (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("env: {set_from_env: {CLAUDE_CODE_OAUTH_TOKEN: HOST_OAUTH}}\ncredentials: {api: [" ANTHROPIC "]}\n", &p);
  char *host[] = { (char *) "ANTHROPIC_API_KEY=sk-real", (char *) "HOST_OAUTH=oauth-real", NULL };
  oci_kv secrets[] = { { (char *) "CLAUDE_CODE_OAUTH_TOKEN", (char *) "oauth-real" } };
  oci_kv_list secret_env = { .v = secrets, .n = 1 };
  oci_strv notes = { 0 };
  struct hv_run_ctx ctx = { .host_env = host, .secret_env = &secret_env, .notes = &notes };
  cleanup_free char *env = joined (hv_policy_run_env (&p, &ctx));
  assert_string_equal (env, "ANTHROPIC_BASE_URL=http://127.0.0.1:8961 ANTHROPIC_API_KEY=haven-gateway-placeholder ");
  assert_int_equal (notes.n, 1);
  oci_strv_free (&notes);
  hv_policy_free_fields (&p);
}

static void
test_annotation (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("credentials:\n  api:\n    - " ANTHROPIC "\n"
            "    - {host: api.openai.com, header: authorization, token_file: /k}\n"
            "    - {host: generativelanguage.googleapis.com, header: x-goog-api-key, token_env: GEMINI_API_KEY}\n",
            &p);
  char *all[] = { (char *) "ANTHROPIC_API_KEY=sk-real", (char *) "GEMINI_API_KEY=g-real", NULL };
  cleanup_free char *three = hv_api_gateway_annotation (&p, all);
  assert_string_equal (three, "{\"apis\":[{\"provider\":\"anthropic\",\"port\":8961,\"auth\":\"x-api-key\"},"
                              "{\"provider\":\"openai\",\"port\":8962,\"auth\":\"bearer\"},"
                              "{\"provider\":\"gemini\",\"port\":8963,\"auth\":\"goog-api-key\"}]}");
  char *none[] = { (char *) "GEMINI_API_KEY=", NULL };
  cleanup_free char *file_only = hv_api_gateway_annotation (&p, none);
  assert_string_equal (file_only, "{\"apis\":[{\"provider\":\"openai\",\"port\":8962,\"auth\":\"bearer\"}]}");
  hv_policy_free_fields (&p);
  parse_ok ("credentials: {api: [" ANTHROPIC "]}\n", &p);
  assert_null (hv_api_gateway_annotation (&p, none));
  hv_policy_free_fields (&p);
  parse_ok ("env: {pass: [ANTHROPIC_API_KEY]}\n", &p);
  assert_null (hv_api_gateway_annotation (&p, all));
  hv_policy_free_fields (&p);
}

static char *
explain (const hv_policy *p, char **host)
{
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&text, &len);
  hv_env_explain (p, host, out);
  fclose (out);
  return text;
}

static void
test_explain (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("env: {pass: [ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_MODEL]}\n"
            "credentials: {api: [" ANTHROPIC ", {host: api.openai.com, header: authorization, token_file: /k}]}\n",
            &p);
  char *set[] = { (char *) "ANTHROPIC_API_KEY=sk-real", NULL };
  cleanup_free char *on = explain (&p, set);
  assert_null (strstr (on, "sk-real"));
  assert_non_null (strstr (on, "    ANTHROPIC_API_KEY            set by haven while the gateway serves "
                               "api.anthropic.com (credentials.api); otherwise\n"));
  assert_non_null (strstr (on, "    ANTHROPIC_AUTH_TOKEN         never passed while the gateway serves "
                               "api.anthropic.com (credentials.api); otherwise\n"));
  assert_non_null (strstr (on, "    ANTHROPIC_MODEL              passed when set\n"));
  assert_non_null (strstr (on, "    api.anthropic.com            key from the host variable ANTHROPIC_API_KEY, sent "
                               "as x-api-key\n"
                               "                                 in the sandbox: "
                               "ANTHROPIC_BASE_URL=http://127.0.0.1:8961\n"
                               "                                                 "
                               "ANTHROPIC_API_KEY=haven-gateway-placeholder\n"
                               "                                 never passed while the gateway serves it: "
                               "ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN CLAUDE_CODE_OAUTH_TOKEN\n"
                               "                                 ANTHROPIC_API_KEY is set here: a run from this "
                               "environment uses the gateway\n"));
  assert_non_null (strstr (on, "    api.openai.com               key from the file /k (read by haven at each run; "
                               "missing: the run\n"));
  cleanup_free char *off = explain (&p, NULL);
  assert_non_null (strstr (off, "ANTHROPIC_API_KEY is not set here: a run from this environment has no gateway\n"
                                "                                 for it (inactive); the agent uses its own login, "
                                "env applies as written\n"));
  hv_policy_free_fields (&p);
  parse_ok ("env: {pass: [PATH]}\n", &p);
  cleanup_free char *none = explain (&p, NULL);
  assert_non_null (strstr (none, "  No model API keys kept by haven (credentials.api).\n"));
  hv_policy_free_fields (&p);
}

/* --- the session: the keys for the monitor, in memory ----------------- */

static void
prepare (const char *yaml, char **host, const char *home, struct hv_run_credentials *c, int want, const char *msg)
{
  hv_policy p;
  parse_ok (yaml, &p);
  struct hv_run_ctx ctx = { .host_env = host, .home = home };
  hv_error *err = NULL;
  int r = hv_run_credentials_prepare (&p, &ctx, "/nonexistent-bundle", c, &err);
  hv_policy_free_fields (&p);
  if (r != want)
    fail_msg ("prepare returned %d: %s", r, err ? err->msg : "");
  if (msg)
    {
      assert_non_null (err);
      if (strstr (err->msg, msg) == NULL)
        fail_msg ("expected \"%s\" in \"%s\"", msg, err->msg);
    }
  if (err)
    hv_error_free (&err);
}

static void
test_session_keys (void **state)
{
  (void) state;
  char dir[] = "/tmp/haven-api-keys.XXXXXX";
  assert_non_null (mkdtemp (dir));
  cleanup_free char *key_file = xasprintf ("%s/openai.key", dir);
  write_text (key_file, "sk-openai-from-a-file-0123\n");
  chmod (key_file, 0600);
  const char *yaml = "credentials:\n  api:\n    - " ANTHROPIC "\n"
                     "    - {host: api.openai.com, header: authorization, token_file: ~/openai.key}\n"
                     "    - {host: generativelanguage.googleapis.com, header: x-goog-api-key, token_env: GEMINI_API_KEY}"
                     "\n";
  char *host[] = { (char *) "ANTHROPIC_API_KEY=sk-ant-real", NULL };
  struct hv_run_credentials c = { 0 };
  prepare (yaml, host, dir, &c, 0, NULL);
  /* Gemini's variable is unset: not served, nothing read for it. */
  assert_int_equal (c.n_service_secrets, 2);
  assert_string_equal (c.service_secrets[0].service, "api:anthropic");
  assert_null (c.service_secrets[0].username);
  assert_string_equal (c.service_secrets[0].secret, "sk-ant-real");
  assert_string_equal (c.service_secrets[1].service, "api:openai");
  assert_string_equal (c.service_secrets[1].secret, "sk-openai-from-a-file-0123");
  /* Nothing of it reaches the sandbox's variables. */
  assert_int_equal (c.env.n, 0);
  assert_int_equal (c.files.n, 1);
  assert_string_equal (c.files.v[0], key_file);

  /* A compiled config that holds a key (another variable had it too). */
  hv_policy p;
  parse_ok (yaml, &p);
  hv_error *err = NULL;
  assert_int_equal (hv_run_credentials_check_config (&p, &c, "{\"env\": [\"A=1\"]}", &err), 0);
  /* A long key anywhere; a short one as a variable's whole value only. */
  assert_int_equal (hv_run_credentials_check_config (&p, &c, "{\"x\": \"/a/sk-openai-from-a-file-0123/b\"}", &err), -1);
  hv_error_free (&err);
  assert_int_equal (hv_run_credentials_check_config (&p, &c, "{\"x\": \"/a/sk-ant-real/b\"}", &err), 0);
  assert_int_equal (hv_run_credentials_check_config (&p, &c, "{\"env\": [\"X=sk-ant-real\"]}", &err), -1);
  hv_error_free (&err);
  assert_int_equal (hv_run_credentials_check_config (&p, &c, "{\"env\": [\"COPY=sk-openai-from-a-file-0123\"]}", &err), -1);
  assert_string_equal (err->msg, "t.yaml:4:7: credentials.api: the key for api.openai.com would reach the sandbox: "
                                 "its value is in the compiled config (another variable or file the policy passes "
                                 "holds it too); not starting");
  hv_error_free (&err);
  hv_policy_free_fields (&p);
  hv_run_credentials_release (&c);
  assert_int_equal (c.n_service_secrets, 0);

  /* A token file that is missing fails the run; a key no header can
   * carry is refused without being repeated. */
  unlink (key_file);
  prepare (yaml, host, dir, &c, -1, "t.yaml:4:7: credentials.api: api.openai.com: token file");
  hv_run_credentials_release (&c);
  char *spaced[] = { (char *) "ANTHROPIC_API_KEY=sk-ant real", NULL };
  prepare ("credentials: {api: [" ANTHROPIC "]}\n", spaced, dir, &c, -1,
           "t.yaml:1:21: the key for api.anthropic.com holds a space, a control or a non-ASCII character");
  hv_run_credentials_release (&c);
  char *ctl[] = { (char *) "ANTHROPIC_API_KEY=sk\r\nX-Evil: 1", NULL };
  prepare ("credentials: {api: [" ANTHROPIC "]}\n", ctl, dir, &c, -1, "holds a space, a control");
  hv_run_credentials_release (&c);
  char *none[] = { NULL };
  prepare ("credentials: {api: [" ANTHROPIC "]}\n", none, dir, &c, 0, NULL);
  assert_int_equal (c.n_service_secrets, 0);
  hv_run_credentials_release (&c);
  rmdir (dir);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_schema),     cmocka_unit_test (test_schema_errors), cmocka_unit_test (test_load),
    cmocka_unit_test (test_run_env),    cmocka_unit_test (test_run_env_secret_env), cmocka_unit_test (test_annotation),
    cmocka_unit_test (test_explain),    cmocka_unit_test (test_session_keys),
    cmocka_unit_test (test_compile_refuses_host_network),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
