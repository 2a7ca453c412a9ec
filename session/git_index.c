/* git's index and blob names (git_index.h).  Format:
 * Documentation/gitformat-index.txt. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git_index.h"
#include "utils.h"

/* --- SHA-1 (FIPS 180-4), enough for git's object names --------------- */

struct sha1
{
  uint32_t h[5];
  uint64_t len;
  unsigned char buf[64];
  size_t fill;
};

static uint32_t
rol (uint32_t x, int n)
{
  return (x << n) | (x >> (32 - n));
}

static void
sha1_block (struct sha1 *s, const unsigned char *p)
{
  uint32_t w[80];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 | (uint32_t) p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 80; i++)
    w[i] = rol (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4];
  for (int i = 0; i < 80; i++)
    {
      uint32_t f, k;
      if (i < 20)
        f = (b & c) | (~b & d), k = 0x5a827999;
      else if (i < 40)
        f = b ^ c ^ d, k = 0x6ed9eba1;
      else if (i < 60)
        f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
      else
        f = b ^ c ^ d, k = 0xca62c1d6;
      uint32_t t = rol (a, 5) + f + e + k + w[i];
      e = d, d = c, c = rol (b, 30), b = a, a = t;
    }
  s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d, s->h[4] += e;
}

static void
sha1_init (struct sha1 *s)
{
  *s = (struct sha1) { { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0 }, 0, { 0 }, 0 };
}

static void
sha1_update (struct sha1 *s, const unsigned char *p, size_t n)
{
  s->len += n;
  while (n > 0)
    {
      size_t take = 64 - s->fill < n ? 64 - s->fill : n;
      memcpy (s->buf + s->fill, p, take);
      s->fill += take, p += take, n -= take;
      if (s->fill == 64)
        {
          sha1_block (s, s->buf);
          s->fill = 0;
        }
    }
}

static void
sha1_final (struct sha1 *s, uint8_t out[20])
{
  uint64_t bits = s->len * 8;
  unsigned char pad = 0x80;
  sha1_update (s, &pad, 1);
  pad = 0;
  while (s->fill != 56)
    sha1_update (s, &pad, 1);
  unsigned char l[8];
  for (int i = 0; i < 8; i++)
    l[i] = (unsigned char) (bits >> (56 - 8 * i));
  sha1_update (s, l, 8);
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 4; j++)
      out[4 * i + j] = (uint8_t) (s->h[i] >> (24 - 8 * j));
}

void
hv_git_blob_oid (const unsigned char *data, size_t len, uint8_t oid[20])
{
  char head[32];
  int n = snprintf (head, sizeof (head), "blob %zu", len);
  struct sha1 s;
  sha1_init (&s);
  sha1_update (&s, (const unsigned char *) head, (size_t) n + 1); /* with its NUL */
  sha1_update (&s, data, len);
  sha1_final (&s, oid);
}

/* --- the index ------------------------------------------------------- */

static uint32_t
be32 (const unsigned char *p)
{
  return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

#define ENTRY_FIXED 62 /* ctime..flags: 10 words, a 20-byte name, 2 bytes of flags */
#define MAX_ENTRIES (16u << 20)
/* Longer names than git itself makes: a version 4 index whose names
 * each keep a long prefix would otherwise cost memory quadratic in its
 * size. */
#define MAX_PATH_LEN 4096

/* Version 4's prefix length: git's offset varint. */
static int
read_varint (const unsigned char **p, const unsigned char *end, size_t *out)
{
  size_t v = 0;
  if (*p >= end)
    return -1;
  unsigned char c = *(*p)++;
  v = c & 127;
  while (c & 128)
    {
      if (*p >= end || v > (SIZE_MAX >> 8))
        return -1;
      c = *(*p)++;
      v = ((v + 1) << 7) | (c & 127);
    }
  *out = v;
  return 0;
}

void
hv_git_index_clear (struct hv_git_index *idx)
{
  for (size_t i = 0; i < idx->n; i++)
    free (idx->v[i].path);
  free (idx->v);
  idx->v = NULL;
  idx->n = 0;
}

int
hv_git_index_parse (const unsigned char *data, size_t len, struct hv_git_index *out, hv_error **err)
{
  memset (out, 0, sizeof (*out));
  if (len < 12 + 20 || memcmp (data, "DIRC", 4) != 0)
    return hv_error_set (err, 0, "not a git index");
  uint32_t version = be32 (data + 4), count = be32 (data + 8);
  if (version < 2 || version > 4)
    return hv_error_set (err, 0, "git index version %u is not known", (unsigned) version);
  if (count > MAX_ENTRIES)
    return hv_error_set (err, 0, "git index with %u entries", (unsigned) count);
  const unsigned char *p = data + 12, *end = data + len - 20; /* the trailing checksum */
  cleanup_free char *prev = xstrdup ("");
  size_t prev_len = 0, cap = 0;
  for (uint32_t i = 0; i < count; i++)
    {
      const unsigned char *start = p;
      if ((size_t) (end - p) < ENTRY_FIXED)
        goto bad;
      uint32_t mode = be32 (p + 24), size = be32 (p + 36);
      const unsigned char *oid = p + 40;
      unsigned flags = (unsigned) p[60] << 8 | p[61];
      p += ENTRY_FIXED;
      if (flags & 0x4000)
        {
          if (version < 3 || end - p < 2)
            goto bad;
          p += 2;
        }
      char *path;
      size_t path_len;
      if (version == 4)
        {
          size_t strip;
          if (read_varint (&p, end, &strip) < 0 || strip > prev_len)
            goto bad;
          const unsigned char *nul = memchr (p, '\0', (size_t) (end - p));
          if (nul == NULL)
            goto bad;
          size_t keep = prev_len - strip, add = (size_t) (nul - p);
          if (keep + add > MAX_PATH_LEN)
            goto bad;
          path = xmalloc0 (keep + add + 1);
          memcpy (path, prev, keep);
          memcpy (path + keep, p, add);
          path_len = keep + add;
          p = nul + 1;
        }
      else
        {
          const unsigned char *nul = memchr (p, '\0', (size_t) (end - p));
          if (nul == NULL)
            goto bad;
          path_len = (size_t) (nul - p);
          if (path_len > MAX_PATH_LEN)
            goto bad;
          path = strndup ((const char *) p, path_len);
          /* Padded with 1 to 8 NULs to a multiple of 8 bytes. */
          size_t entry = ((size_t) (nul - start) + 8) & ~(size_t) 7;
          if ((size_t) (end - start) < entry)
            {
              free (path);
              goto bad;
            }
          p = start + entry;
        }
      free (prev);
      prev = xstrdup (path);
      prev_len = path_len;
      if (((flags >> 12) & 3) != 0 || strlen (path) != path_len)
        {
          free (path); /* a merge conflict's stages, or a NUL inside a name */
          continue;
        }
      if (out->n == cap)
        out->v = xrealloc (out->v, (cap = cap ? 2 * cap : 64) * sizeof (*out->v));
      struct hv_git_index_entry *e = &out->v[out->n++];
      e->path = path;
      e->mode = mode;
      e->size = size;
      memcpy (e->oid, oid, 20);
    }
  return 0;
bad:
  hv_git_index_clear (out);
  return hv_error_set (err, 0, "malformed git index");
}
