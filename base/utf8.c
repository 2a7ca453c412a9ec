#include "config.h"
#include "utf8.h"

#include <string.h>

#include "error.h"

/* How many continuation bytes the lead byte c wants, and the range its
 * first one must fall in (the ranges shut out overlong forms, the
 * surrogates and code points above U+10FFFF); 0 for a byte that leads
 * nothing. */
static size_t
utf8_lead (unsigned char c, unsigned char *lo, unsigned char *hi)
{
  *lo = 0x80;
  *hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf)
    return 1;
  if (c >= 0xe0 && c <= 0xef)
    {
      *lo = c == 0xe0 ? 0xa0 : 0x80;
      *hi = c == 0xed ? 0x9f : 0xbf;
      return 2;
    }
  if (c >= 0xf0 && c <= 0xf4)
    {
      *lo = c == 0xf0 ? 0x90 : 0x80;
      *hi = c == 0xf4 ? 0x8f : 0xbf;
      return 3;
    }
  return 0;
}

/* How many bytes of s[0..n) continue the sequence led by s[0] (at most
 * need). */
static size_t
utf8_continued (const unsigned char *s, size_t n, size_t need, unsigned char lo, unsigned char hi)
{
  size_t k = 1;
  for (; k <= need && k < n; k++)
    {
      unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xbf;
      if (s[k] < l || s[k] > h)
        break;
    }
  return k - 1;
}

size_t
hv_utf8_seq_len (const unsigned char *s, size_t n)
{
  if (s[0] < 0x80)
    return 1;
  unsigned char lo, hi;
  size_t need = utf8_lead (s[0], &lo, &hi);
  if (need == 0 || utf8_continued (s, n, need, lo, hi) != need)
    return 0;
  return need + 1;
}

bool
hv_utf8_valid (const char *s, size_t len)
{
  const unsigned char *in = (const unsigned char *) s;
  for (size_t i = 0; i < len;)
    {
      size_t l = hv_utf8_seq_len (in + i, len - i);
      if (l == 0)
        return false;
      i += l;
    }
  return true;
}

char *
hv_utf8_sanitize (const char *s, size_t len, size_t *out_len)
{
  const unsigned char *in = (const unsigned char *) s;
  unsigned char *out = xmalloc0 (3 * len + 1), *o = out;
  for (size_t i = 0; i < len;)
    {
      size_t l = hv_utf8_seq_len (in + i, len - i);
      if (l > 0)
        {
          memcpy (o, in + i, l);
          o += l;
          i += l;
        }
      else
        {
          memcpy (o, "\xef\xbf\xbd", 3);
          o += 3;
          i++;
        }
    }
  *o = '\0';
  if (out_len)
    *out_len = (size_t) (o - out);
  return (char *) out;
}

size_t
hv_utf8_partial_tail (const char *s, size_t len)
{
  const unsigned char *in = (const unsigned char *) s;
  /* A sequence is at most 4 bytes: an unfinished one starts in the last 3. */
  for (size_t back = 1; back <= 3 && back <= len; back++)
    {
      const unsigned char *p = in + len - back;
      if (*p >= 0x80 && *p <= 0xbf)
        continue; /* a continuation byte: its lead is further back */
      unsigned char lo, hi;
      size_t need = utf8_lead (*p, &lo, &hi);
      if (need >= back && utf8_continued (p, back, need, lo, hi) == back - 1)
        return back;
      return 0;
    }
  return 0;
}
