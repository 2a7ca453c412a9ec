/* The host's git identity for the sandbox (git_identity.h). */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_read.h"
#include "git_config.h"
#include "git_identity.h"
#include "git_identity_mount.h"
#include "utils.h"

#define GLOBAL_CONFIG_MAX (1u << 20)

/* A global config file's text (the user's own: a link, as dotfile
 * managers make, is followed), or NULL when there is none or it is not a
 * regular file of a sane size. */
static char *
read_config (const char *path, size_t *len)
{
  cleanup_close int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  char *text = NULL;
  cleanup_error hv_error *ignored = NULL;
  if (fd < 0 || hv_read_regular_fd (fd, path, GLOBAL_CONFIG_MAX, &text, len, &ignored) < 0)
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

/* A block entry in the project as a gitignore line: "{project}/x" (and
 * "/project/x", relative "x") is "/x" from the repository's top; "!"
 * stays an exception.  git reads the lines in order and the last match
 * wins, as block does.  NULL for entries outside the project. */
static char *
exclude_line (const char *entry, const char *project)
{
  bool neg = entry[0] == '!';
  const char *pat = entry + neg, *rest = NULL;
  size_t n = strlen (project);
  if (strncmp (pat, "{project}/", 10) == 0)
    rest = pat + 10;
  else if (strncmp (pat, "/project/", 9) == 0)
    rest = pat + 9;
  else if (pat[0] == '/' && strncmp (pat, project, n) == 0 && pat[n] == '/')
    rest = pat + n + 1;
  else if (pat[0] != '/' && pat[0] != '~' && pat[0] != '{')
    rest = pat;
  /* A newline would start another pattern; a leading '#' or '\' means
   * something else to git; such names are simply not excluded. */
  if (rest == NULL || rest[0] == '\0' || strpbrk (rest, "\n\r\\") || rest[0] == '#')
    return NULL;
  return xasprintf ("%s/%s\n", neg ? "!" : "", rest);
}

/* Hidden files are a bind of /dev/null, which git lists as untracked
 * (readdir says it is a regular file) and then cannot add: `git add -A`
 * failed on an untracked hidden .env.local.  The block entries in the
 * project, as git excludes (core.excludesFile at the system level), make
 * git skip them.  Tracked files are not affected by excludes
 * (git_hidden_tracked.h). */
static char *
excludes (const hv_policy *p, const struct hv_run_ctx *ctx)
{
  char *text = NULL;
  for (size_t i = 0; i < p->block.n; i++)
    {
      cleanup_free char *line = exclude_line (p->block.v[i], ctx->project);
      if (line == NULL)
        continue;
      char *next = xasprintf ("%s%s", text ? text : "", line);
      free (text);
      text = next;
    }
  return text;
}

int
hv_git_identity_write (const hv_policy *p, const struct hv_run_ctx *ctx, const char *bundle, char **path,
                       char **excludes_path, hv_error **err)
{
  *path = NULL;
  *excludes_path = NULL;
  const char *home = ctx->homes && ctx->homes->n ? ctx->homes->v[0] : ctx->home;
  cleanup_free char *name = NULL, *email = NULL;
  if (p->hide_home.value && !policy_shows_global_config (p) && home)
    host_identity (home, &name, &email);
  cleanup_free char *ignore = excludes (p, ctx);
  if (name == NULL && email == NULL && ignore == NULL)
    return 0;
  cleanup_free char *text = xstrdup ("# Written by haven (policies/README.md, \"Git in the sandbox\").\n"
                                     "[include]\n\tpath = /etc/gitconfig\n");
  if (name || email)
    {
      char *next = xasprintf ("%s[user]\n", text);
      free (text);
      text = next;
    }
  if (name)
    append_quoted (&text, "name", name);
  if (email)
    append_quoted (&text, "email", email);
  if (ignore)
    {
      char *next = xasprintf ("%s[core]\n\texcludesFile = %s\n", text, HV_GIT_EXCLUDES_PATH);
      free (text);
      text = next;
    }
  /* Readable by the sandbox's user through the bind (root without
   * CAP_DAC_OVERRIDE in a root run); the bundle directory is private. */
  static const struct hv_replace_opts mode = { .mode = 0644 };
  if (write_file_replace (bundle, "git-config", text, strlen (text), &mode, err) < 0
      || (ignore && write_file_replace (bundle, "git-ignore", ignore, strlen (ignore), &mode, err) < 0))
    return hv_error_wrap (err, "git config for the sandbox");
  /* Flat in the bundle, whose removal does not descend (run_leftovers.c). */
  *path = xasprintf ("%s/git-config", bundle);
  if (ignore)
    *excludes_path = xasprintf ("%s/git-ignore", bundle);
  return 0;
}
