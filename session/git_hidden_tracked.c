/* Tracked files the policy hides (git_hidden_tracked.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "block_match.h"
#include "file_read.h"
#include "git_config.h"
#include "git_hidden_tracked.h"
#include "git_identity_mount.h"
#include "git_index.h"
#include "safe_path.h"
#include "utils.h"

#define INDEX_MAX (256u << 20)  /* bytes of .git/index read */
#define PLACEHOLDER_MAX (16u << 20) /* a hidden file larger than this stays /dev/null */
#define PLACEHOLDERS_MAX 1024
#define PLACEHOLDER_BYTES_MAX (64u << 20) /* all of them: the bundle may be on /run, in memory */
#define ATTRIBUTES_MAX (1u << 20)

/* A regular file beneath the project, never through a link (the sandbox
 * wrote the project); its content in *out when it is at most max bytes. */
static int
read_beneath (int projfd, const char *rel, size_t max, char **out, size_t *len)
{
  cleanup_close int fd = hv_openat2 (projfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0,
                                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  cleanup_error hv_error *ignored = NULL;
  return fd < 0 ? -1 : hv_read_regular_fd (fd, rel, max, out, len, &ignored);
}

/* Whether a file beneath the project exists in any form (a link too). */
static bool
exists_beneath (int projfd, const char *rel)
{
  struct stat st;
  return fstatat (projfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* SHA-256 repositories name blobs differently: not read (their hidden
 * files stay /dev/null). */
static bool
sha1_repository (const char *config, size_t len)
{
  if (config == NULL)
    return true; /* no config: git's default, SHA-1 */
  cleanup_free char *format = hv_git_config_get (config, len, "extensions.objectformat");
  return format == NULL || strcasecmp (format, "sha1") == 0;
}

/* An attributes file that names any filter (git-crypt's `.env
 * filter=git-crypt`, git-lfs) or that cannot be read as text: the
 * repository's own attributes win over haven's, and a filter other than
 * haven's would see the placeholder's blank lines as the file's content.
 * Absent: no objection. */
static bool
attributes_object (int projfd, const char *rel)
{
  if (!exists_beneath (projfd, rel))
    return false;
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (read_beneath (projfd, rel, ATTRIBUTES_MAX, &text, &len) < 0)
    return true;
  return memmem (text, len, "filter", 6) != NULL;
}

/* Whether haven's filter decides for the tracked file rel: no
 * .gitattributes in its directories nor .git/info/attributes names a
 * filter.  (The repository's core.attributesFile is checked once.) */
static bool
filter_would_apply (int projfd, const char *rel)
{
  if (attributes_object (projfd, ".git/info/attributes") || attributes_object (projfd, ".gitattributes"))
    return false;
  cleanup_free char *dir = xstrdup (rel);
  for (char *slash = strchr (dir, '/'); slash; slash = strchr (slash + 1, '/'))
    {
      *slash = '\0';
      cleanup_free char *attrs = xasprintf ("%s/.gitattributes", dir);
      *slash = '/';
      if (attributes_object (projfd, attrs))
        return false;
    }
  return true;
}

/* A path git's attribute files can name literally: no white space,
 * quote, escape or glob character, nothing a pattern reads otherwise. */
static bool
plain_path (const char *rel)
{
  if (rel[0] == '#' || rel[0] == '!')
    return false;
  for (const unsigned char *c = (const unsigned char *) rel; *c; c++)
    if (*c <= ' ' || *c == 0x7f || strchr ("\"\\*?[]", *c))
      return false;
  return true;
}

/* A config text that may name an attributes file of its own: directly,
 * or through an include haven does not follow. */
static bool
may_set_attributes_file (const char *text, size_t len)
{
  static const char *const words[] = { "attributesfile", "[include" };
  for (size_t w = 0; w < 2; w++)
    for (size_t i = 0; i + strlen (words[w]) <= len; i++)
      if (strncasecmp (text + i, words[w], strlen (words[w])) == 0)
        return true;
  return false;
}

/* Whether the sandbox sees the host's global git config (the home is not
 * hidden, or home_allow shows the file) and it may replace haven's
 * attributes file. */
static bool
global_config_objects (const hv_policy *p, const struct hv_run_ctx *ctx)
{
  bool shown = !p->hide_home.value;
  for (size_t i = 0; i < p->home_allow.n && !shown; i++)
    {
      const char *e = p->home_allow.v[i];
      shown = strcmp (e, "~/.gitconfig") == 0 || strcmp (e, "~/.config") == 0 || strcmp (e, "~/.config/") == 0
              || strncmp (e, "~/.config/git", 13) == 0;
    }
  const char *home = ctx->homes && ctx->homes->n ? ctx->homes->v[0] : ctx->home;
  if (!shown || home == NULL)
    return false;
  const char *xdg = getenv ("XDG_CONFIG_HOME");
  cleanup_free char *xdg_file = xdg && xdg[0] == '/' ? xasprintf ("%s/git/config", xdg)
                                                     : xasprintf ("%s/.config/git/config", home);
  cleanup_free char *home_file = xasprintf ("%s/.gitconfig", home);
  const char *files[] = { xdg_file, home_file };
  for (size_t i = 0; i < 2; i++)
    {
      /* The user's own files (a dotfile manager's link is followed). */
      cleanup_close int fd = open (files[i], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      struct stat st;
      if (fd < 0)
        continue;
      if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_size > (off_t) (1u << 20))
        return true;
      cleanup_free char *text = NULL;
      size_t len = 0;
      cleanup_error hv_error *ignored = NULL;
      if (hv_read_fd (fd, files[i], (size_t) st.st_size, &text, &len, &ignored) < 0
          || may_set_attributes_file (text, len))
        return true;
    }
  return false;
}

/* Blank lines of the staged size, read-only, executable as the staged
 * mode says (git compares the owner's execute bit). */
static int
placeholder (int dirfd, size_t n, const struct hv_git_index_entry *e, char **name, hv_error **err)
{
  /* Flat in the bundle, whose removal does not descend (run_leftovers.c). */
  *name = xasprintf ("git-shown-%zu", n);
  mode_t mode = (e->mode & 0100) ? 0555 : 0444;
  cleanup_free char *data = xmalloc0 (e->size + 1);
  memset (data, '\n', e->size);
  cleanup_close int fd = openat (dirfd, *name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
  if (fd < 0 || write_all (fd, data, e->size) < 0 || fchmod (fd, mode) < 0)
    return hv_error_set (err, errno, "placeholder %s", *name);
  return 0;
}

static void
append (char **text, char *line)
{
  char *next = xasprintf ("%s%s", *text ? *text : "", line);
  free (*text);
  free (line);
  *text = next;
}

/* The filters and the attributes naming them: added to <bundle>/git-config
 * (written with the identity, or made here with the same include) and
 * written as <bundle>/git-attributes. */
static int
write_filters (int dirfd, const char *bundle, const char *config_add, const char *attributes, char **git_config,
               char **git_attributes, hv_error **err)
{
  cleanup_free char *config = NULL;
  if (*git_config && read_file_at (dirfd, "git-config", &config, err) < 0)
    return -1;
  const char *base = config ? config
                            : "# Written by haven (policies/README.md, \"Git in the sandbox\").\n"
                              "[include]\n\tpath = /etc/gitconfig\n";
  cleanup_free char *text = xasprintf ("%s[core]\n\tattributesFile = %s\n%s", base, HV_GIT_ATTRIBUTES_PATH,
                                       config_add);
  static const struct hv_replace_opts mode = { .mode = 0644 };
  if (write_file_replace (bundle, "git-config", text, strlen (text), &mode, err) < 0
      || write_file_replace (bundle, "git-attributes", attributes, strlen (attributes), &mode, err) < 0)
    return hv_error_wrap (err, "git config for hidden tracked files");
  if (*git_config == NULL)
    *git_config = xasprintf ("%s/git-config", bundle);
  *git_attributes = xasprintf ("%s/git-attributes", bundle);
  return 0;
}

int
hv_git_hidden_tracked (const hv_policy *p, const struct hv_run_ctx *ctx, const char *bundle, char **git_config,
                       char **git_attributes, oci_strv *paths, oci_strv *snapshots, hv_error **err)
{
  *git_attributes = NULL;
  if (p->block.n == 0)
    return 0;
  cleanup_close int projfd = open (ctx->project, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_free char *index = NULL, *repo_config = NULL;
  size_t len = 0, config_len = 0;
  if (projfd < 0 || read_beneath (projfd, ".git/index", INDEX_MAX, &index, &len) < 0)
    return 0;
  if (read_beneath (projfd, ".git/config", 1u << 20, &repo_config, &config_len) < 0 && exists_beneath (projfd, ".git/config"))
    return 0; /* a config haven cannot read could name anything */
  if (!sha1_repository (repo_config, config_len))
    return 0;
  /* The repository's own attributes file replaces haven's (a repository's
   * config, and the global one where the sandbox sees it, win over the
   * system level): every hidden file stays /dev/null. */
  const char *own_attributes = repo_config && may_set_attributes_file (repo_config, config_len)
                                   ? "the repository's core.attributesFile or include"
                               : global_config_objects (p, ctx) ? "your global git config's core.attributesFile or include"
                                                                : NULL;
  struct hv_git_index idx;
  cleanup_error hv_error *perr = NULL;
  if (hv_git_index_parse ((const unsigned char *) index, len, &idx, &perr) < 0)
    {
      oci_strv_pushf (ctx->notes, "%s/.git/index: %s; hidden files git tracks stay /dev/null", ctx->project, perr->msg);
      return 0;
    }
  struct hv_block_matcher *matcher = hv_block_matcher_new (p, ctx);
  cleanup_close int dirfd = -1;
  cleanup_free char *config_add = NULL, *attributes = NULL;
  size_t total = 0;
  int r = 0;
  for (size_t i = 0; i < idx.n && r == 0; i++)
    {
      const struct hv_git_index_entry *e = &idx.v[i];
      if ((e->mode & 0170000) != 0100000)
        continue;
      cleanup_free char *path = xasprintf ("%s/%s", ctx->project, e->path);
      if (!hv_block_matcher_hides (matcher, path))
        continue;
      const char *why = NULL;
      if (own_attributes)
        why = own_attributes;
      else if (!plain_path (e->path))
        why = "its name (white space, quotes or glob characters)";
      else if (!filter_would_apply (projfd, e->path))
        why = "a .gitattributes naming a filter";
      else if (e->size > PLACEHOLDER_MAX || paths->n >= PLACEHOLDERS_MAX || total + e->size > PLACEHOLDER_BYTES_MAX)
        why = "its size (16 MiB each, 64 MiB or 1024 files in all)";
      if (why)
        {
          if (exists_beneath (projfd, e->path))
            oci_strv_pushf (ctx->notes,
                            "%s is tracked by git and hidden; because of %s it is /dev/null, so git add -A and "
                            "git commit -a in the sandbox refuse it (\"can only add regular files\"); name the files "
                            "to commit instead",
                            e->path, why);
          continue;
        }
      if (dirfd < 0)
        {
          dirfd = open (bundle, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (dirfd < 0)
            {
              r = hv_error_set (err, errno, "open %s", bundle);
              break;
            }
        }
      cleanup_free char *name = NULL;
      r = placeholder (dirfd, paths->n, e, &name, err);
      if (r < 0)
        break;
      /* git reads the file through the filter: the clean filter gives
       * the blob the index named at the start, so git finds the file
       * unchanged and stages nothing for it. */
      char hex[41];
      for (size_t k = 0; k < 20; k++)
        snprintf (hex + 2 * k, 3, "%02x", e->oid[k]);
      cleanup_free char *driver = xasprintf ("haven-hidden-%zu", paths->n);
      append (&config_add, xasprintf ("[filter \"%s\"]\n\tclean = git cat-file blob %s\n\trequired = true\n", driver, hex));
      append (&attributes, xasprintf ("/%s filter=%s\n", e->path, driver));
      cleanup_free char *snap = xasprintf ("%s/%s", bundle, name);
      oci_strv_push (paths, path);
      oci_strv_push (snapshots, snap);
      total += e->size;
    }
  hv_git_index_clear (&idx);
  hv_block_matcher_free (matcher);
  if (r == 0 && attributes)
    r = write_filters (dirfd, bundle, config_add, attributes, git_config, git_attributes, err);
  return r;
}
