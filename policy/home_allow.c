/* Where home_allow entries are on the host, and what their state is
 * called (see home_allow.h). */
#include "config.h"
#include "home_allow.h"

#include <stdbool.h>
#include <string.h>

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
