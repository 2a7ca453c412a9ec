/* The host's git identity for the sandbox (git_identity.h). */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git_config.h"
#include "git_identity.h"
#include "utils.h"

#define GLOBAL_CONFIG_MAX (1u << 20)

/* A global config file's text (the user's own: a link, as dotfile
 * managers make, is followed), or NULL when there is none or it is not a
 * regular file of a sane size. */
static char *
read_config (const char *path, size_t *len)
{
  cleanup_close int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || (uint64_t) st.st_size > GLOBAL_CONFIG_MAX)
    return NULL;
  char *text = NULL;
  cleanup_error hv_error *ignored = NULL;
  if (oci_read_fd (fd, path, (size_t) st.st_size, &text, len, &ignored) < 0)
    return NULL;
  return text;
}

/* user.name and user.email as git reads them: the XDG file first, then
 * ~/.gitconfig, the last value winning.  Includes are not followed. */
static void
host_identity (const char *home, char **name, char **email)
{
  const char *xdg = getenv ("XDG_CONFIG_HOME");
  cleanup_free char *xdg_file = xdg && xdg[0] == '/' ? xasprintf ("%s/git/config", xdg)
                                                     : xasprintf ("%s/.config/git/config", home);
  cleanup_free char *home_file = xasprintf ("%s/.gitconfig", home);
  const char *files[] = { xdg_file, home_file };
  for (size_t i = 0; i < 2; i++)
    {
      size_t len = 0;
      cleanup_free char *text = read_config (files[i], &len);
      if (text == NULL)
        continue;
      char *v = hv_git_config_get (text, len, "user.name");
      if (v)
        {
          free (*name);
          *name = v;
        }
      v = hv_git_config_get (text, len, "user.email");
      if (v)
        {
          free (*email);
          *email = v;
        }
    }
}

/* A value as a quoted git config string: nothing in it can end the
 * quote, the line or the section. */
static void
append_quoted (char **out, const char *key, const char *value)
{
  size_t n = strlen (value);
  char *q = xmalloc0 (2 * n + 1), *w = q;
  for (const char *c = value; *c; c++)
    {
      if (*c == '\\' || *c == '"')
        *w++ = '\\', *w++ = *c;
      else if (*c == '\n')
        *w++ = '\\', *w++ = 'n';
      else if (*c == '\t')
        *w++ = '\\', *w++ = 't';
      else if ((unsigned char) *c >= 0x20 && *c != 0x7f)
        *w++ = *c;
    }
  *w = '\0';
  char *next = xasprintf ("%s\t%s = \"%s\"\n", *out, key, q);
  free (q);
  free (*out);
  *out = next;
}

/* Whether the policy shows the global config itself. */
static bool
policy_shows_global_config (const hv_policy *p)
{
  for (size_t i = 0; i < p->home_allow.n; i++)
    {
      const char *e = p->home_allow.v[i];
      if (strcmp (e, "~/.gitconfig") == 0 || strcmp (e, "~/.config") == 0 || strcmp (e, "~/.config/") == 0
          || strncmp (e, "~/.config/git", 13) == 0)
        return true;
    }
  return false;
}

int
hv_git_identity_write (const hv_policy *p, const struct hv_run_ctx *ctx, const char *bundle, char **path,
                       hv_error **err)
{
  *path = NULL;
  const char *home = ctx->homes && ctx->homes->n ? ctx->homes->v[0] : ctx->home;
  if (!p->hide_home.value || policy_shows_global_config (p) || home == NULL)
    return 0;
  cleanup_free char *name = NULL, *email = NULL;
  host_identity (home, &name, &email);
  if (name == NULL && email == NULL)
    return 0;
  cleanup_free char *text = xstrdup ("# Written by haven: your global git identity and nothing else of your config.\n"
                                     "[include]\n\tpath = /etc/gitconfig\n[user]\n");
  if (name)
    append_quoted (&text, "name", name);
  if (email)
    append_quoted (&text, "email", email);
  /* Readable by the sandbox's user through the bind (root without
   * CAP_DAC_OVERRIDE in a root run); the bundle directory is private. */
  static const struct hv_replace_opts mode = { .mode = 0644 };
  if (write_file_replace (bundle, "gitconfig", text, strlen (text), &mode, err) < 0)
    return hv_error_wrap (err, "git identity for the sandbox");
  *path = xasprintf ("%s/gitconfig", bundle);
  return 0;
}
