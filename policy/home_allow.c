/* Where home_allow entries are on the host, and what their state is
 * called (see home_allow.h). */
#include "config.h"
#include "home_allow.h"

#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

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
