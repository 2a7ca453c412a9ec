/* SHA-256 (base/sha256.c) against the NIST vectors of FIPS 180-4's
 * examples (the one-block and two-block messages, the 896-bit one, the
 * million 'a's), the empty message, and the same digests however the
 * message is split into updates (each length across block ends). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sha256.h"

static void
check (const char *msg, const char *want)
{
  char hex[HV_SHA256_HEX_SIZE];
  hv_sha256_hex (msg, strlen (msg), hex);
  assert_string_equal (hex, want);
}

static void
test_nist_vectors (void **state)
{
  (void) state;
  check ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  check ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  check ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  check ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void
test_million_a (void **state)
{
  (void) state;
  hv_sha256 c;
  hv_sha256_init (&c);
  char chunk[1000];
  memset (chunk, 'a', sizeof (chunk));
  for (int i = 0; i < 1000; i++)
    hv_sha256_update (&c, chunk, sizeof (chunk));
  unsigned char d[HV_SHA256_SIZE];
  hv_sha256_final (&c, d);
  static const unsigned char want[HV_SHA256_SIZE] = {
    0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1, 0xc7, 0xe2, 0x84, 0xd7, 0x3e, 0x67,
    0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97, 0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0,
  };
  assert_memory_equal (d, want, sizeof (want));
}

/* Padding at every length around the block ends (55, 56, 63, 64 bytes
 * are the edges), the message in one update and split at every offset:
 * the same digest, and the known one for lengths checked with
 * sha256sum ("a" repeated). */
static void
test_splits_and_lengths (void **state)
{
  (void) state;
  static const struct
  {
    size_t n;
    const char *hex;
  } known[] = {
    { 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
    { 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
    { 63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34" },
    { 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
    { 65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0" },
  };
  char msg[200];
  memset (msg, 'a', sizeof (msg));
  for (size_t k = 0; k < sizeof (known) / sizeof (known[0]); k++)
    {
      char one[HV_SHA256_HEX_SIZE];
      hv_sha256_hex (msg, known[k].n, one);
      assert_string_equal (one, known[k].hex);
    }
  for (size_t n = 0; n < sizeof (msg); n++)
    {
      unsigned char whole[HV_SHA256_SIZE];
      hv_sha256 c;
      hv_sha256_init (&c);
      hv_sha256_update (&c, msg, n);
      hv_sha256_final (&c, whole);
      for (size_t at = 0; at <= n; at++)
        {
          unsigned char split[HV_SHA256_SIZE];
          hv_sha256_init (&c);
          hv_sha256_update (&c, msg, at);
          hv_sha256_update (&c, msg + at, n - at);
          hv_sha256_final (&c, split);
          assert_memory_equal (whole, split, sizeof (whole));
        }
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_nist_vectors),
    cmocka_unit_test (test_million_a),
    cmocka_unit_test (test_splits_and_lengths),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
