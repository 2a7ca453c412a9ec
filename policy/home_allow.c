/* Where home_allow entries are on the host, and what their state is
 * called (see home_allow.h). */
#include "config.h"
#include "home_allow.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

void
hv_home_allow_expand (const char *pattern, const struct hv_run_ctx *ctx, oci_strv *out)
{
  if (pattern[0] == '~' && (pattern[1] == '/' || pattern[1] == '\0'))
    {
      if (ctx->homes)
        for (size_t i = 0; i < ctx->homes->n; i++)
          {
            cleanup_free char *path = xasprintf ("%s%s", ctx->homes->v[i], pattern + 1);
            oci_strv_push_unique (out, path);
          }
      else if (ctx->home)
        {
          cleanup_free char *path = xasprintf ("%s%s", ctx->home, pattern + 1);
          oci_strv_push_unique (out, path);
        }
      return;
    }
  oci_strv_push_unique (out, pattern);
}

static unsigned long long
fnv1a (const char *s)
{
  unsigned long long h = 0xcbf29ce484222325ULL;
  for (; *s; s++)
    h = (h ^ (unsigned char) *s) * 0x100000001b3ULL;
  return h;
}

char *
hv_state_tag (const char *path)
{
  const char *base = strrchr (path, '/') ? strrchr (path, '/') + 1 : path;
  char clean[64];
  size_t n = 0;
  for (; *base && n < sizeof (clean) - 1; base++)
    {
      char c = *base;
      bool ok = c == '-' || c == '_' || (c == '.' && n > 0) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9');
      clean[n] = ok ? c : '_';
      n++;
    }
  clean[n] = '\0';
  return xasprintf ("%s-%016llx", clean, fnv1a (path));
}

char *
hv_home_state_entry (const char *state, const char *path)
{
  cleanup_free char *tag = hv_state_tag (path);
  return xasprintf ("%s/home/%s", state, tag);
}

char *
hv_home_layers_dir (const char *state, const char *home)
{
  cleanup_free char *tag = hv_state_tag (home);
  return xasprintf ("%s/home-layers/%s", state, tag);
}

/* The id of the mount a path lies on (its last component not followed),
 * or 0 when the kernel does not say. */
static unsigned long long
mount_id (const char *path)
{
  struct statx stx;
  if (statx (AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_MNT_ID, &stx) < 0
      || !(stx.stx_mask & STATX_MNT_ID))
    return 0;
  return stx.stx_mnt_id;
}

static const char *
layers_home_of (const char *home, const char *path)
{
  size_t n = strlen (home);
  /* Strictly beneath the home, which is not "/" (an overlay of the whole
   * host for a home of "/" is not something to make). */
  if (n < 2 || strncmp (path, home, n) != 0 || path[n] != '/' || path[n + 1] == '\0')
    return NULL;
  unsigned long long id = mount_id (home);
  return id != 0 && id == mount_id (path) ? home : NULL;
}

const char *
hv_home_layers_home (const struct hv_run_ctx *ctx, const char *path)
{
  if (ctx->homes)
    {
      for (size_t i = 0; i < ctx->homes->n; i++)
        if (layers_home_of (ctx->homes->v[i], path))
          return ctx->homes->v[i];
      return NULL;
    }
  return ctx->home ? layers_home_of (ctx->home, path) : NULL;
}

static bool
ends_with (const char *s, size_t n, const char *suffix)
{
  size_t k = strlen (suffix);
  return n >= k && strncmp (s + n - k, suffix, k) == 0;
}

bool
hv_home_path_is_file (const char *path)
{
  size_t n = strlen (path);
  if (n == 0 || path[n - 1] == '/')
    return false;
  const char *base = strrchr (path, '/') ? strrchr (path, '/') + 1 : path;
  n = strlen (base);
  if (strcmp (base, ".config") == 0)
    return false;
  const char *dot = strrchr (base, '.');
  if (dot && dot != base && dot[1] != '\0')
    return true;
  return ends_with (base, n, "rc") || ends_with (base, n, "config") || ends_with (base, n, "profile")
         || ends_with (base, n, "history");
}

/* The next code point of UTF-8 text as JavaScript sees a decoded path:
 * bytes that are not valid UTF-8 are one U+FFFD each. */
static uint32_t
next_code_point (const unsigned char **p)
{
  const unsigned char *s = *p;
  uint32_t c = s[0];
  int n = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : -1;
  if (n < 0)
    {
      *p = s + 1;
      return 0xfffd;
    }
  c &= n == 0 ? 0x7fu : (0x3fu >> n);
  for (int i = 1; i <= n; i++)
    {
      if ((s[i] & 0xc0) != 0x80)
        {
          *p = s + 1;
          return 0xfffd;
        }
      c = (c << 6) | (s[i] & 0x3f);
    }
  *p = s + n + 1;
  return c;
}

char *
hv_project_dashed (const char *path)
{
  size_t len = strlen (path);
  /* At most two UTF-16 units per byte. */
  char *out = xmalloc0 (2 * len + 16);
  size_t n = 0;
  int32_t hash = 0;
  const unsigned char *p = (const unsigned char *) path;
  while (*p)
    {
      uint32_t c = next_code_point (&p);
      uint16_t units[2];
      int k = 1;
      if (c >= 0x10000)
        {
          units[0] = (uint16_t) (0xd800 + ((c - 0x10000) >> 10));
          units[1] = (uint16_t) (0xdc00 + ((c - 0x10000) & 0x3ff));
          k = 2;
        }
      else
        units[0] = (uint16_t) c;
      for (int i = 0; i < k; i++)
        {
          uint16_t u = units[i];
          hash = (int32_t) ((uint32_t) hash * 31u + u);
          bool alnum = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9');
          out[n++] = alnum ? (char) u : '-';
        }
    }
  out[n] = '\0';
  if (n <= 200)
    return out;
  /* Math.abs of a 32-bit int: INT32_MIN stays 2^31. */
  uint32_t a = hash < 0 ? (uint32_t) 0 - (uint32_t) hash : (uint32_t) hash;
  char digits[16];
  size_t d = 0;
  do
    {
      digits[d++] = "0123456789abcdefghijklmnopqrstuvwxyz"[a % 36];
      a /= 36;
    }
  while (a);
  out[200] = '-';
  for (size_t i = 0; i < d; i++)
    out[201 + i] = digits[d - 1 - i];
  out[201 + d] = '\0';
  return out;
}

char *
hv_home_sub_expand (const char *sub, const struct hv_run_ctx *ctx)
{
  static const char pkey[] = "{project_dashed}", ckey[] = "{cwd_dashed}";
  const char *p = strstr (sub, pkey), *c = strstr (sub, ckey);
  const char *at = p && (!c || p < c) ? p : c;
  if (at == NULL)
    return xstrdup (sub);
  const char *key = at == p ? pkey : ckey;
  const char *value = at == p ? ctx->project : (ctx->cwd ? ctx->cwd : ctx->project);
  cleanup_free char *dashed = value ? hv_project_dashed (value) : xstrdup ("");
  cleanup_free char *rest = hv_home_sub_expand (at + strlen (key), ctx);
  return xasprintf ("%.*s%s%s", (int) (at - sub), sub, dashed, rest);
}

bool
hv_home_sub_repeated (const oci_strv *v, size_t k, const struct hv_run_ctx *ctx)
{
  cleanup_free char *mine = hv_home_sub_expand (v->v[k], ctx);
  for (size_t i = 0; i < k; i++)
    {
      cleanup_free char *other = hv_home_sub_expand (v->v[i], ctx);
      if (strcmp (mine, other) == 0)
        return true;
    }
  return false;
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static bool
is_private (const hv_home_access *a, const struct hv_run_ctx *ctx, const char *name)
{
  for (size_t i = 0; i < a->data.n; i++)
    {
      cleanup_free char *d = hv_home_sub_expand (a->data.v[i], ctx);
      if (strcmp (d, name) == 0)
        return false;
    }
  for (size_t i = a->own.n; i-- > 0;)
    {
      const char *pat = a->own.v[i];
      bool keep = pat[0] == '!';
      cleanup_free char *x = hv_home_sub_expand (pat + keep, ctx);
      if (fnmatch (x, name, 0) == 0)
        return !keep;
    }
  return false;
}

void
hv_home_private_names (const hv_home_access *a, const struct hv_run_ctx *ctx, const char *dir, oci_strv *out)
{
  if (a->own.n == 0)
    return;
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return;
    }
  size_t first = out->n;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      struct stat st;
      if (fstatat (dirfd (d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !(S_ISDIR (st.st_mode) || S_ISREG (st.st_mode)))
        continue;
      if (is_private (a, ctx, e->d_name))
        oci_strv_push (out, e->d_name);
    }
  closedir (d);
  if (out->n > first)
    qsort (out->v + first, out->n - first, sizeof (char *), compare_names);
}

char *
hv_home_private_entry (const char *state, const char *dir, const char *name)
{
  cleanup_free char *full = xasprintf ("%s/%s", dir, name);
  cleanup_free char *tag = hv_state_tag (full);
  return xasprintf ("%s/private/%s", state, tag);
}
