#include "config.h"
#include "base64.h"

#include <stdint.h>

#include "error.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int
hv_base64_value (unsigned char c)
{
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

char *
hv_base64_encode (const void *data, size_t len)
{
  const unsigned char *in = data;
  char *out = xmalloc0 ((len + 2) / 3 * 4 + 1), *o = out;
  for (size_t i = 0; i < len; i += 3)
    {
      size_t left = len - i;
      uint32_t w = (uint32_t) in[i] << 16 | (left > 1 ? (uint32_t) in[i + 1] << 8 : 0) | (left > 2 ? in[i + 2] : 0);
      *o++ = alphabet[w >> 18 & 63];
      *o++ = alphabet[w >> 12 & 63];
      *o++ = left > 1 ? alphabet[w >> 6 & 63] : '=';
      *o++ = left > 2 ? alphabet[w & 63] : '=';
    }
  *o = '\0';
  return out;
}

int
hv_base64_decode (const char *s, size_t len, unsigned char **out, size_t *out_len)
{
  if (len % 4 != 0)
    return -1;
  size_t pad = len == 0 ? 0 : s[len - 1] == '=' ? (s[len - 2] == '=' ? 2 : 1) : 0;
  unsigned char *buf = xmalloc0 (len / 4 * 3 + 1);
  size_t n = 0;
  for (size_t i = 0; i < len; i += 4)
    {
      int v[4];
      for (size_t j = 0; j < 4; j++)
        {
          bool is_pad = i + j >= len - pad;
          v[j] = is_pad ? 0 : hv_base64_value ((unsigned char) s[i + j]);
          if (v[j] < 0 || (is_pad && s[i + j] != '='))
            {
              free (buf);
              return -1;
            }
        }
      uint32_t w = (uint32_t) v[0] << 18 | (uint32_t) v[1] << 12 | (uint32_t) v[2] << 6 | (uint32_t) v[3];
      buf[n++] = (unsigned char) (w >> 16);
      buf[n++] = (unsigned char) (w >> 8);
      buf[n++] = (unsigned char) w;
    }
  /* The bits the padding leaves over must be zero: "QQ==" and "QR==" would
   * otherwise both be "A". */
  if ((pad == 2 && (buf[n - 2] != 0 || buf[n - 1] != 0)) || (pad == 1 && buf[n - 1] != 0))
    {
      free (buf);
      return -1;
    }
  n -= pad;
  buf[n] = '\0';
  *out = buf;
  *out_len = n;
  return 0;
}
