/* The seccomp profile the compiler writes names the architecture this
 * program runs as (libseccomp's native one) and no other, and a native
 * architecture the runtime's table cannot name fails the compile instead
 * of leaving the list empty (which would filter nothing).
 * seccomp_arch_native is wrapped (-Wl,--wrap) so that another machine's
 * answer can be shown on this one. */
#include "config.h"

#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <seccomp.h>
#include <yajl/yajl_tree.h>

#include "oci_tables.h"
#include "policy.h"
#include "policy_compile.h"
#include "policy_parse.h"
#include "policy_parse_check.h"
#include "seccomp_arch.h"
#include "utils.h"

uint32_t __real_seccomp_arch_native (void);
uint32_t __wrap_seccomp_arch_native (void);

/* What the wrapped seccomp_arch_native answers; 0: the real answer. */
static uint32_t fake_native;

uint32_t
__wrap_seccomp_arch_native (void)
{
  return fake_native != 0 ? fake_native : __real_seccomp_arch_native ();
}

/* libseccomp's token for an SCMP_ARCH_* name, found without haven's table:
 * libseccomp's own name for each is the rest of it in lower case. */
static uint32_t
token_of (const char *name)
{
  const char *prefix = "SCMP_ARCH_";
  if (strncmp (name, prefix, strlen (prefix)) != 0)
    return 0;
  char lower[64] = { 0 };
  for (size_t i = 0; name[strlen (prefix) + i] && i < sizeof (lower) - 1; i++)
    lower[i] = (char) tolower ((unsigned char) name[strlen (prefix) + i]);
  return seccomp_arch_resolve_name (lower);
}

/* The profile's "architectures", which must hold exactly one name. */
static char *
compiled_arch (void)
{
  hv_policy p;
  parse_ok ("name: t\n", &p);
  cleanup_free char *json = NULL;
  hv_error *err = NULL;
  if (hv_policy_seccomp_json (&p, &json, &err) < 0)
    fail_msg ("compile: %s", err->msg);
  hv_policy_free_fields (&p);
  yajl_val root = yajl_tree_parse (json, NULL, 0);
  assert_non_null (root);
  const char *path[] = { "seccomp", "architectures", NULL };
  yajl_val a = yajl_tree_get (root, path, yajl_t_array);
  assert_non_null (a);
  assert_int_equal (a->u.array.len, 1);
  assert_true (YAJL_IS_STRING (a->u.array.values[0]));
  char *name = xstrdup (YAJL_GET_STRING (a->u.array.values[0]));
  yajl_tree_free (root);
  return name;
}

static void
test_native_arch (void **state)
{
  (void) state;
  fake_native = 0;
  cleanup_free char *name = compiled_arch ();
  assert_int_equal (token_of (name), __real_seccomp_arch_native ());
}

/* Another machine's answer gives another name: the compiler follows
 * libseccomp, it does not write one of its own. */
static void
test_other_native_arch (void **state)
{
  (void) state;
  uint32_t x86_64 = seccomp_arch_resolve_name ("x86_64"), aarch64 = seccomp_arch_resolve_name ("aarch64");
  bool on_x86_64 = __real_seccomp_arch_native () == x86_64;
  fake_native = on_x86_64 ? aarch64 : x86_64;
  cleanup_free char *name = compiled_arch ();
  fake_native = 0;
  assert_string_equal (name, on_x86_64 ? "SCMP_ARCH_AARCH64" : "SCMP_ARCH_X86_64");
}

static void
test_unknown_native_arch (void **state)
{
  (void) state;
  hv_policy p;
  parse_ok ("name: t\n", &p);
  char *json = NULL;
  hv_error *err = NULL;
  fake_native = 0x7fff1234;
  int r = hv_policy_seccomp_json (&p, &json, &err);
  fake_native = 0;
  hv_policy_free_fields (&p);
  assert_int_equal (r, -1);
  assert_null (json);
  assert_non_null (err);
  assert_non_null (strstr (err->msg, "seccomp: libseccomp's architecture 0x7fff1234 (machine "));
  assert_non_null (strstr (err->msg, ") has no SCMP_ARCH_ name in haven's table"));
  hv_error_free (&err);
}

/* Every name libseccomp supports maps to its token and back. */
static void
test_arch_table_round_trip (void **state)
{
  (void) state;
  size_t supported = 0;
  for (const char *const *a = oci_seccomp_arch_names; *a; a++)
    {
      uint32_t token = hv_seccomp_arch_token (*a);
      if (token == 0)
        continue; /* unknown to this libseccomp */
      supported++;
      assert_int_equal (token, token_of (*a));
      hv_error *err = NULL;
      const char *back = hv_seccomp_arch_name (token, &err);
      if (back == NULL)
        fail_msg ("%s: %s", *a, err->msg);
      assert_string_equal (back, *a);
    }
  assert_true (supported >= 2);
  hv_error *err = NULL;
  assert_null (hv_seccomp_arch_name (0, &err));
  assert_non_null (err);
  hv_error_free (&err);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_native_arch),
    cmocka_unit_test (test_other_native_arch),
    cmocka_unit_test (test_unknown_native_arch),
    cmocka_unit_test (test_arch_table_round_trip),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
