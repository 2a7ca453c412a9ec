/* Fuzz target of the restricted ssh-agent view's wire code (runtime/
 * guard/ssh_agent_msg.c, and the message reader of ssh_agent_view.c).
 *
 * The first byte picks what the rest is (its value mod 4):
 * 0: a sign request: when its key is taken, the key lies inside the input
 *    and the message is exactly type, key, data and flags (rebuilt from
 *    the parts, it is the input);
 * 1: an identities answer, filtered to the keys whose blob is "KEY" or the
 *    input's last 8 bytes: a filtered answer is no longer than the input,
 *    parses again, filtering it again gives it unchanged, and every key in
 *    it is an allowed one;
 * 2: a public key file's text: a fingerprint it gives is well spelled;
 * 3: a stream from the sandbox, read message by message from a socket
 *    pair: each message is 1 to 256 KiB and exactly what the stream's
 *    lengths say, and the reader stops at the first bad length. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "ssh_agent_view.h"
#include "utils.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static uint32_t
get32 (const uint8_t *p)
{
  return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static void
sign_request (const uint8_t *msg, size_t len)
{
  const unsigned char *blob;
  size_t blob_len;
  if (hv_ssh_agent_sign_key (msg, len, &blob, &blob_len) < 0)
    return;
  if (blob < msg + 5 || blob + blob_len > msg + len)
    fuzz_fail ("the key is outside the message");
  /* type, u32 key length, key, u32 data length, data, u32 flags */
  if (get32 (msg + 1) != blob_len || 1 + 4 + blob_len + 4 > len)
    fuzz_fail ("the key is not the message's first string");
  uint32_t data_len = get32 (msg + 5 + blob_len);
  if ((size_t) 1 + 4 + blob_len + 4 + data_len + 4 != len)
    fuzz_fail ("a message with bytes besides type, key, data and flags was taken");
}

/* The identities of an answer: their count, or -1 when it does not parse. */
static long
check_answer (const uint8_t *msg, size_t len, const hv_ssh_fingerprint *allowed, size_t n_allowed)
{
  if (len < 5 || msg[0] != HV_SSH_AGENT_IDENTITIES_ANSWER)
    return -1;
  uint32_t n = get32 (msg + 1);
  size_t off = 5;
  for (uint32_t i = 0; i < n; i++)
    {
      if (len - off < 4 || len - off - 4 < get32 (msg + off))
        return -1;
      size_t blob_len = get32 (msg + off);
      hv_ssh_fingerprint fp;
      hv_ssh_key_fingerprint (msg + off + 4, blob_len, fp);
      bool ok = false;
      for (size_t j = 0; j < n_allowed; j++)
        ok = ok || strcmp (fp, allowed[j]) == 0;
      if (allowed && !ok)
        fuzz_fail ("a key that is not allowed is in the filtered answer");
      off += 4 + blob_len;
      if (len - off < 4 || len - off - 4 < get32 (msg + off))
        return -1;
      off += 4 + get32 (msg + off);
    }
  return off == len ? (long) n : -1;
}

static void
identities (const uint8_t *msg, size_t len)
{
  hv_ssh_fingerprint allowed[2];
  hv_ssh_key_fingerprint ((const unsigned char *) "KEY", 3, allowed[0]);
  size_t tail = len < 8 ? len : 8;
  hv_ssh_key_fingerprint (msg + len - tail, tail, allowed[1]);
  unsigned char *out = NULL;
  size_t out_len = 0;
  if (hv_ssh_agent_filter_identities (msg, len, allowed, 2, &out, &out_len) < 0)
    {
      if (check_answer (msg, len, NULL, 0) >= 0)
        fuzz_fail ("a well-formed answer was refused");
      return;
    }
  long in_n = check_answer (msg, len, NULL, 0);
  if (in_n < 0)
    fuzz_fail ("a malformed answer was taken");
  if (out_len > len)
    fuzz_fail ("the filtered answer is longer than the answer");
  long out_n = check_answer (out, out_len, allowed, 2);
  if (out_n < 0 || out_n > in_n)
    fuzz_fail ("the filtered answer does not parse, or has more keys");
  unsigned char *again = NULL;
  size_t again_len = 0;
  if (hv_ssh_agent_filter_identities (out, out_len, allowed, 2, &again, &again_len) < 0 || again_len != out_len
      || memcmp (again, out, out_len) != 0)
    fuzz_fail ("filtering the filtered answer changed it");
  free (again);
  free (out);
}

static void
pubkey (const uint8_t *text, size_t len)
{
  hv_ssh_fingerprint fp;
  hv_error *err = NULL;
  if (hv_ssh_pubkey_fingerprint ((const char *) text, len, fp, &err) < 0)
    {
      hv_error_free (&err);
      return;
    }
  if (!hv_ssh_fingerprint_valid (fp))
    fuzz_fail ("a fingerprint that is not well spelled: %s", fp);
}

static void
stream (const uint8_t *bytes, size_t len)
{
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return;
  /* Small inputs fit the socket's buffer: written whole, then the end. */
  if (write_all (sv[0], bytes, len) < 0)
    fuzz_fail ("the stream could not be written");
  close (sv[0]);
  size_t off = 0;
  for (;;)
    {
      unsigned char *msg = NULL;
      size_t n = 0;
      hv_error *err = NULL;
      int r = hv_ssh_agent_read_msg (sv[1], 1000, &msg, &n, &err);
      if (r == 0)
        {
          if (off != len)
            fuzz_fail ("the stream ended early at %zu of %zu", off, len);
          break;
        }
      if (r < 0)
        {
          /* Only a bad or cut length, or a cut body, ends it. */
          uint32_t want = len - off >= 4 ? get32 (bytes + off) : 0;
          if (len - off >= 4 && want >= 1 && want <= HV_SSH_AGENT_MAX_MSG && len - off - 4 >= want)
            fuzz_fail ("a good message was refused: %s", err->msg);
          hv_error_free (&err);
          break;
        }
      if (len - off < 4 || n != get32 (bytes + off) || n < 1 || n > HV_SSH_AGENT_MAX_MSG
          || memcmp (msg, bytes + off + 4, n) != 0)
        fuzz_fail ("a message is not what the stream says");
      off += 4 + n;
      free (msg);
    }
  close (sv[1]);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  const uint8_t *msg = data + 1;
  size_t len = size - 1;
  switch (data[0] % 4)
    {
    case 0:
      sign_request (msg, len);
      break;
    case 1:
      identities (msg, len);
      break;
    case 2:
      pubkey (msg, len);
      break;
    default:
      if (len <= 64 * 1024)
        stream (msg, len);
      break;
    }
  return 0;
}
