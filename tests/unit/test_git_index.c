/* git's blob names, the index reader and the file-or-directory rule for
 * home paths made before a run. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "git_index.h"
#include "home_allow.h"
#include "utils.h"

static void
hex (const uint8_t oid[20], char out[41])
{
  for (int i = 0; i < 20; i++)
    snprintf (out + 2 * i, 3, "%02x", oid[i]);
}

static void
test_blob_oid (void **state)
{
  (void) state;
  uint8_t oid[20];
  char h[41];
  /* git hash-object of "hello\n" and of an empty file. */
  hv_git_blob_oid ((const unsigned char *) "hello\n", 6, oid);
  hex (oid, h);
  assert_string_equal (h, "ce013625030ba8dba906f756967f9e9ca394464a");
  hv_git_blob_oid ((const unsigned char *) "", 0, oid);
  hex (oid, h);
  assert_string_equal (h, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  /* Across SHA-1's 64-byte blocks. */
  char big[200];
  memset (big, 'a', sizeof (big));
  hv_git_blob_oid ((const unsigned char *) big, sizeof (big), oid);
  hex (oid, h);
  assert_string_equal (h, "1d33d17ad3abab24046a78cf5a4abc31e69865b3");
}

static size_t
put_entry (unsigned char *p, const char *path, uint32_t mode, uint32_t size, unsigned stage, int version,
           const char *prev)
{
  memset (p, 0, 62);
  p[24] = (unsigned char) (mode >> 24), p[25] = (unsigned char) (mode >> 16), p[26] = (unsigned char) (mode >> 8),
  p[27] = (unsigned char) mode;
  p[36] = (unsigned char) (size >> 24), p[37] = (unsigned char) (size >> 16), p[38] = (unsigned char) (size >> 8),
  p[39] = (unsigned char) size;
  memset (p + 40, 0xab, 20);
  size_t len = strlen (path);
  unsigned flags = (stage << 12) | (unsigned) (len < 0xfff ? len : 0xfff);
  p[60] = (unsigned char) (flags >> 8), p[61] = (unsigned char) flags;
  if (version == 4)
    {
      size_t common = 0;
      while (prev[common] && prev[common] == path[common])
        common++;
      p[62] = (unsigned char) (strlen (prev) - common); /* < 128: one varint byte */
      memcpy (p + 63, path + common, strlen (path + common) + 1);
      return 63 + strlen (path + common) + 1;
    }
  memcpy (p + 62, path, len);
  size_t entry = (62 + len + 8) & ~(size_t) 7;
  memset (p + 62 + len, 0, entry - 62 - len);
  return entry;
}

static size_t
make_index (unsigned char *buf, int version)
{
  memcpy (buf, "DIRC", 4);
  memset (buf + 4, 0, 8);
  buf[7] = (unsigned char) version;
  buf[11] = 3;
  size_t n = 12;
  n += put_entry (buf + n, ".env", 0100644, 12, 0, version, "");
  n += put_entry (buf + n, ".envrc", 0100644, 3, 2, version, ".env"); /* a conflict's stage: left out */
  n += put_entry (buf + n, "sub/.env", 0100755, 7, 0, version, ".envrc");
  memset (buf + n, 0, 20); /* checksum, not checked */
  return n + 20;
}

static void
test_index_versions (void **state)
{
  (void) state;
  for (int version = 2; version <= 4; version += 2)
    {
      unsigned char buf[512];
      size_t len = make_index (buf, version);
      struct hv_git_index idx;
      hv_error *err = NULL;
      assert_int_equal (hv_git_index_parse (buf, len, &idx, &err), 0);
      assert_int_equal (idx.n, 2);
      assert_string_equal (idx.v[0].path, ".env");
      assert_int_equal (idx.v[0].size, 12);
      assert_int_equal (idx.v[0].mode, 0100644);
      assert_int_equal (idx.v[0].oid[0], 0xab);
      assert_string_equal (idx.v[1].path, "sub/.env");
      assert_int_equal (idx.v[1].mode, 0100755);
      hv_git_index_clear (&idx);
      /* Cut anywhere: an error, never a read past the end. */
      for (size_t cut = 0; cut < len - 20; cut++)
        {
          hv_error *e = NULL;
          unsigned char copy[512];
          memcpy (copy, buf, cut);
          memset (copy + cut, 0, 20);
          if (hv_git_index_parse (copy, cut + 20, &idx, &e) == 0)
            hv_git_index_clear (&idx);
          else
            hv_error_free (&e);
        }
    }
  hv_error *err = NULL;
  struct hv_git_index idx;
  assert_int_equal (hv_git_index_parse ((const unsigned char *) "DIRC\0\0\0\x09\0\0\0\0xxxxxxxxxxxxxxxxxxxx", 32, &idx,
                                        &err),
                    -1);
  assert_non_null (strstr (err->msg, "version 9"));
  hv_error_free (&err);
}

static void
test_home_path_is_file (void **state)
{
  (void) state;
  assert_true (hv_home_path_is_file ("/h/.claude.json"));
  assert_true (hv_home_path_is_file ("/h/.config/x/settings.toml"));
  assert_true (hv_home_path_is_file ("/h/.gitconfig"));
  assert_true (hv_home_path_is_file ("/h/.npmrc"));
  assert_true (hv_home_path_is_file ("/h/.profile"));
  assert_true (hv_home_path_is_file ("/h/.bash_history"));
  assert_false (hv_home_path_is_file ("/h/.claude"));
  assert_false (hv_home_path_is_file ("/h/.config"));
  assert_false (hv_home_path_is_file ("/h/.config/claude"));
  assert_false (hv_home_path_is_file ("/h/.local/share/virtualenvs"));
  assert_false (hv_home_path_is_file ("/h/.app.d/"));
  assert_false (hv_home_path_is_file ("hooks"));
  assert_true (hv_home_path_is_file ("CLAUDE.md"));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_blob_oid),
    cmocka_unit_test (test_index_versions),
    cmocka_unit_test (test_home_path_is_file),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
