/* The restricted ssh-agent view's wire code, without I/O: fingerprints,
 * public key files, and the two messages the view looks into (a sign
 * request's key, the list of identities).  See ssh_agent_view.h. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "openssl_lib.h"
#include "ssh_agent_view.h"
#include "utils.h"

/* A cursor over a message: the SSH wire's uint32 and string reads, each
 * refusing to run past the end. */
struct cursor
{
  const unsigned char *p;
  size_t left;
};

static bool
get_u32 (struct cursor *c, uint32_t *v)
{
  if (c->left < 4)
    return false;
  *v = (uint32_t) c->p[0] << 24 | (uint32_t) c->p[1] << 16 | (uint32_t) c->p[2] << 8 | c->p[3];
  c->p += 4;
  c->left -= 4;
  return true;
}

static bool
get_string (struct cursor *c, const unsigned char **s, size_t *len)
{
  uint32_t n;
  if (!get_u32 (c, &n) || n > c->left)
    return false;
  *s = c->p;
  *len = n;
  c->p += n;
  c->left -= n;
  return true;
}

static void
put_u32 (unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char) (v >> 24);
  p[1] = (unsigned char) (v >> 16);
  p[2] = (unsigned char) (v >> 8);
  p[3] = (unsigned char) v;
}

void
hv_ssh_key_fingerprint (const unsigned char *blob, size_t len, hv_ssh_fingerprint out)
{
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int dlen = 0;
  memcpy (out, "SHA256:", 7);
  /* SHA-256 of a buffer in memory fails only when OpenSSL cannot be
   * loaded or cannot allocate; then the fingerprint is one no policy can
   * name ('!' is no base64 digit), so the key is shown and signed with
   * by no one. */
  if (hv_openssl_load (NULL) < 0 || !EVP_Digest (blob, len, digest, &dlen, EVP_sha256 (), NULL) || dlen != 32)
    {
      memset (out + 7, '!', 43);
      out[HV_SSH_FINGERPRINT_LEN] = '\0';
      return;
    }
  unsigned char b64[45]; /* 4 * ceil (32 / 3) = 44, and the NUL */
  EVP_EncodeBlock (b64, digest, 32);
  /* ssh-keygen prints the digest without base64's padding. */
  memcpy (out + 7, b64, 43);
  out[HV_SSH_FINGERPRINT_LEN] = '\0';
}

bool
hv_ssh_fingerprint_valid (const char *s)
{
  if (strncmp (s, "SHA256:", 7) != 0 || strlen (s) != HV_SSH_FINGERPRINT_LEN)
    return false;
  for (size_t i = 7; i < HV_SSH_FINGERPRINT_LEN; i++)
    if (hv_base64_value ((unsigned char) s[i]) < 0)
      return false;
  /* 43 digits carry 258 bits; the last digit's two low bits are padding
   * and must be zero, or two spellings would name one digest. */
  return (hv_base64_value ((unsigned char) s[HV_SSH_FINGERPRINT_LEN - 1]) & 3) == 0;
}

int
hv_ssh_pubkey_fingerprint (const char *text, size_t len, hv_ssh_fingerprint out, hv_error **err)
{
  /* One line: a final newline (or CR LF) is the file's, any other is a
   * second key or a mangled one. */
  if (len > 0 && text[len - 1] == '\n')
    len--;
  if (len > 0 && text[len - 1] == '\r')
    len--;
  if (memchr (text, '\n', len) || memchr (text, '\r', len) || memchr (text, '\0', len))
    return hv_error_set (err, 0, "not one public key on one line");
  size_t i = 0;
  while (i < len && (text[i] == ' ' || text[i] == '\t'))
    i++;
  size_t type_at = i;
  while (i < len && text[i] != ' ' && text[i] != '\t')
    i++;
  size_t type_len = i - type_at;
  while (i < len && (text[i] == ' ' || text[i] == '\t'))
    i++;
  size_t b64_at = i;
  while (i < len && text[i] != ' ' && text[i] != '\t')
    i++;
  size_t b64_len = i - b64_at;
  if (type_len == 0 || b64_len == 0)
    return hv_error_set (err, 0, "not a public key (\"TYPE BASE64 [COMMENT]\")");
  cleanup_free unsigned char *blob = NULL;
  size_t blob_len = 0;
  if (hv_base64_decode (text + b64_at, b64_len, &blob, &blob_len) < 0)
    return hv_error_set (err, 0, "the key is not base64 (options before the key type are not taken)");
  /* The blob names its own type first; a file whose two disagree is not
   * what ssh-keygen wrote. */
  struct cursor c = { blob, blob_len };
  const unsigned char *type;
  size_t n;
  if (!get_string (&c, &type, &n) || n != type_len || memcmp (type, text + type_at, n) != 0)
    return hv_error_set (err, 0, "the key's type is not the one its line names");
  hv_ssh_key_fingerprint (blob, blob_len, out);
  return 0;
}

int
hv_ssh_agent_sign_key (const unsigned char *msg, size_t len, const unsigned char **blob, size_t *blob_len)
{
  if (len < 1 || msg[0] != HV_SSH_AGENTC_SIGN_REQUEST)
    return -1;
  struct cursor c = { msg + 1, len - 1 };
  const unsigned char *data;
  size_t data_len;
  uint32_t flags;
  if (!get_string (&c, blob, blob_len) || !get_string (&c, &data, &data_len) || !get_u32 (&c, &flags)
      || c.left != 0)
    return -1;
  return 0;
}

static bool
is_allowed (const hv_ssh_fingerprint fp, const hv_ssh_fingerprint *allowed, size_t n_allowed)
{
  for (size_t i = 0; i < n_allowed; i++)
    if (strcmp (fp, allowed[i]) == 0)
      return true;
  return false;
}

int
hv_ssh_agent_filter_identities (const unsigned char *msg, size_t len, const hv_ssh_fingerprint *allowed,
                                size_t n_allowed, unsigned char **out, size_t *out_len)
{
  if (len < 1 || msg[0] != HV_SSH_AGENT_IDENTITIES_ANSWER)
    return -1;
  struct cursor c = { msg + 1, len - 1 };
  uint32_t count;
  if (!get_u32 (&c, &count))
    return -1;
  /* The answer is never longer than the message it is filtered from. */
  cleanup_free unsigned char *buf = xmalloc0 (len);
  size_t n = 5;
  uint32_t kept = 0;
  for (uint32_t k = 0; k < count; k++)
    {
      const unsigned char *start = c.p;
      const unsigned char *blob, *comment;
      size_t blob_len, comment_len;
      if (!get_string (&c, &blob, &blob_len) || !get_string (&c, &comment, &comment_len))
        return -1;
      hv_ssh_fingerprint fp;
      hv_ssh_key_fingerprint (blob, blob_len, fp);
      if (!is_allowed (fp, allowed, n_allowed))
        continue;
      memcpy (buf + n, start, (size_t) (c.p - start));
      n += (size_t) (c.p - start);
      kept++;
    }
  if (c.left != 0)
    return -1;
  buf[0] = HV_SSH_AGENT_IDENTITIES_ANSWER;
  put_u32 (buf + 1, kept);
  *out = steal_pointer (&buf);
  *out_len = n;
  return 0;
}
