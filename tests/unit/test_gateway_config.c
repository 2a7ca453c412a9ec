/* Unit tests of the run.haven.gateway annotation and key files
 * (runtime/gateway/gateway_config.c): what parses, every refusal naming
 * the annotation and the JSON path, and the checks a key file passes. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gateway_config.h"
#include "haven_annotations.h"
#include "utils.h"

static void
test_parses (void **state)
{
  (void) state;
  hv_gw_config *c = NULL;
  cleanup_error hv_error *err = NULL;
  assert_int_equal (hv_gw_config_parse ("{\"apis\":[{\"provider\":\"anthropic\",\"port\":8961,\"auth\":\"x-api-key\"},"
                                        "{\"provider\":\"openai\",\"port\":8962,\"auth\":\"bearer\","
                                        "\"key_file\":\"/etc/haven/openai.key\"}]}",
                                        "config.json", &c, &err),
                    0);
  assert_int_equal (c->n, 2);
  assert_string_equal (c->apis[0].api->name, "anthropic");
  assert_int_equal (c->apis[0].port, 8961);
  assert_int_equal (c->apis[0].auth, HV_GW_AUTH_X_API_KEY);
  assert_null (c->apis[0].key_file);
  assert_string_equal (c->apis[1].api->name, "openai");
  assert_int_equal (c->apis[1].auth, HV_GW_AUTH_BEARER);
  assert_string_equal (c->apis[1].key_file, "/etc/haven/openai.key");
  cleanup_free char *svc = hv_gw_service_name (c->apis[1].api);
  assert_string_equal (svc, "api:openai");
  hv_gw_config_free (c);
}

static void
refused (const char *text, const char *want)
{
  hv_gw_config *c = NULL;
  cleanup_error hv_error *err = NULL;
  assert_int_equal (hv_gw_config_parse (text, "config.json", &c, &err), -1);
  assert_null (c);
  assert_non_null (err);
  if (strstr (err->msg, want) == NULL || strstr (err->msg, "config.json: .annotations[\"run.haven.gateway\"]") == NULL)
    fail_msg ("%s: got \"%s\", want \"%s\"", text, err->msg, want);
}

static void
test_refusals (void **state)
{
  (void) state;
  refused ("[]", "expected an object");
  refused ("{", "invalid JSON");
  refused ("{}", ".apis: required field is missing");
  refused ("{\"apis\":[]}", ".apis: no API listed");
  refused ("{\"apis\":[],\"x\":1}", ".x: unknown field");
  refused ("{\"apis\":[{\"provider\":\"anthropic\",\"port\":1,\"auth\":\"x-api-key\",\"extra\":true}]}",
           ".apis[0].extra: unknown field");
  refused ("{\"apis\":[{\"provider\":\"mistral\",\"port\":1,\"auth\":\"bearer\"}]}",
           ".apis[0].provider: \"mistral\" is not one of");
  refused ("{\"apis\":[{\"port\":1,\"auth\":\"bearer\"}]}", ".apis[0].provider: required field is missing");
  refused ("{\"apis\":[{\"provider\":\"openai\",\"auth\":\"bearer\"}]}", ".apis[0].port: required field is missing");
  refused ("{\"apis\":[{\"provider\":\"openai\",\"port\":0,\"auth\":\"bearer\"}]}", ".apis[0].port: expected a port");
  refused ("{\"apis\":[{\"provider\":\"openai\",\"port\":65536,\"auth\":\"bearer\"}]}", ".apis[0].port: expected");
  refused ("{\"apis\":[{\"provider\":\"openai\",\"port\":\"80\",\"auth\":\"bearer\"}]}", ".apis[0].port: expected");
  refused ("{\"apis\":[{\"provider\":\"openai\",\"port\":80}]}", ".apis[0].auth: required field is missing");
  refused ("{\"apis\":[{\"provider\":\"openai\",\"port\":80,\"auth\":\"basic\"}]}", ".apis[0].auth: \"basic\" is not");
  refused ("{\"apis\":[{\"provider\":\"openai\",\"port\":80,\"auth\":\"x-api-key\"}]}",
           ".apis[0].auth: openai does not take its key as x-api-key");
  refused ("{\"apis\":[{\"provider\":\"openai\",\"port\":80,\"auth\":\"bearer\",\"key_file\":\"k\"}]}",
           ".apis[0].key_file: \"k\" is not an absolute path");
  refused ("{\"apis\":[{\"provider\":\"openai\",\"port\":80,\"auth\":\"bearer\"},"
           "{\"provider\":\"openai\",\"port\":81,\"auth\":\"bearer\"}]}",
           ".apis[1].provider: \"openai\" is named twice");
  refused ("{\"apis\":[{\"provider\":\"openai\",\"port\":80,\"auth\":\"bearer\"},"
           "{\"provider\":\"gemini\",\"port\":80,\"auth\":\"goog-api-key\"}]}",
           ".apis[1].port: 80 is used by openai too");
  refused ("{\"apis\":[[[[[[[[[[1]]]]]]]]]]}", "nested too deep");
}

static char dir[] = "/tmp/haven-test-gwkey-XXXXXX";

static char *
key_file (const char *name, const char *text, mode_t mode)
{
  char *path = xasprintf ("%s/%s", dir, name);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, text, strlen (text)), (ssize_t) strlen (text));
  close (fd);
  assert_int_equal (chmod (path, mode), 0);
  return path;
}

static void
key_refused (const char *path, const char *want)
{
  char *key = (char *) "unset";
  cleanup_error hv_error *err = NULL;
  assert_int_equal (hv_gw_read_key_file (path, &key, &err), -1);
  assert_null (key);
  if (strstr (err->msg, want) == NULL)
    fail_msg ("%s: got \"%s\", want \"%s\"", path, err->msg, want);
  /* The error never holds the key. */
  assert_null (strstr (err->msg, "sk-secret"));
}

static void
test_key_file (void **state)
{
  (void) state;
  assert_non_null (mkdtemp (dir));
  cleanup_free char *good = key_file ("good", "sk-secret-123\n", 0600);
  char *key = NULL;
  cleanup_error hv_error *err = NULL;
  assert_int_equal (hv_gw_read_key_file (good, &key, &err), 0);
  assert_string_equal (key, "sk-secret-123");
  free (key);

  cleanup_free char *group_w = key_file ("group", "sk-secret\n", 0620);
  key_refused (group_w, "writable by group or others");
  cleanup_free char *world_w = key_file ("world", "sk-secret\n", 0602);
  key_refused (world_w, "writable by group or others");
  cleanup_free char *space = key_file ("space", "sk-secret with space\n", 0600);
  key_refused (space, "a character a header cannot carry");
  cleanup_free char *inner_nl = key_file ("nl", "sk-secret\nHost: evil\n", 0600);
  key_refused (inner_nl, "a character a header cannot carry");
  cleanup_free char *empty = key_file ("empty", "\n", 0600);
  key_refused (empty, "the key is empty");
  char big[HV_GW_KEY_FILE_MAX + 2];
  memset (big, 'a', sizeof (big) - 1);
  big[sizeof (big) - 1] = '\0';
  cleanup_free char *large = key_file ("large", big, 0600);
  key_refused (large, "larger than");
  cleanup_free char *link = xasprintf ("%s/link", dir);
  assert_int_equal (symlink (good, link), 0);
  key_refused (link, "key file");
  key_refused (dir, "not a regular file");
  cleanup_free char *missing = xasprintf ("%s/missing", dir);
  key_refused (missing, "no such file");
  if (geteuid () == 0)
    {
      /* Another user's file (not root's, not ours). */
      cleanup_free char *other = key_file ("other", "sk-secret\n", 0600);
      assert_int_equal (chown (other, 12345, 12345), 0);
      key_refused (other, "owned by uid 12345");
      unlink (other);
    }
  const char *names[] = { "good", "group", "world", "space", "nl", "empty", "large", "link" };
  for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
    {
      cleanup_free char *p = xasprintf ("%s/%s", dir, names[i]);
      unlink (p);
    }
  rmdir (dir);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_parses),
    cmocka_unit_test (test_refusals),
    cmocka_unit_test (test_key_file),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
