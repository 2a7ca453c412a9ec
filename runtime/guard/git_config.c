/* git's config format, read the way git's config.c reads it:
 *   [section] / [section "subsection"] / [section.subsection]
 *   key = value, a bare key (true), ';' and '#' comments outside quotes,
 *   "quoted" parts, \t \n \b \\ \" escapes, a backslash-newline joining
 *   lines, CRLF read as LF, a key on the same line as its header.
 * Whatever git would reject (a stray character, an unknown escape, an
 * unterminated quote, a NUL byte) is an error here too, so that a file
 * cannot be read one way by haven and another by git: the caller treats
 * an unreadable config as suspicious. */
#include "config.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "git_config.h"
#include "utils.h"

struct reader
{
  const char *p, *end;
  size_t line;
};

/* The next character, CRLF folded to LF and the end of the text read as
 * a final LF (as git's get_next_char does); -1 after that. */
static int
next_char (struct reader *r, bool *eof)
{
  if (r->p >= r->end)
    {
      if (*eof)
        return -1;
      *eof = true;
      return '\n';
    }
  int c = (unsigned char) *r->p++;
  if (c == '\r' && r->p < r->end && *r->p == '\n')
    c = (unsigned char) *r->p++;
  if (c == '\n')
    r->line++;
  return c;
}

struct buf
{
  char *s;
  size_t n, cap;
};

static void
buf_add (struct buf *b, char c)
{
  if (b->n + 2 > b->cap)
    {
      b->cap = b->cap ? b->cap * 2 : 64;
      b->s = xrealloc (b->s, b->cap);
    }
  b->s[b->n++] = c;
  b->s[b->n] = '\0';
}

/* Empty, but a valid string. */
static void
buf_reset (struct buf *b)
{
  buf_add (b, '\0');
  b->n = 0;
}

static int
fail (struct reader *r, hv_error **err, const char *what)
{
  return hv_error_set (err, 0, "line %zu: %s (git would refuse this file)", r->line + 1, what);
}

/* The value after '=': git's parse_value. */
static int
parse_value (struct reader *r, bool *eof, struct buf *v, hv_error **err)
{
  bool quote = false, comment = false;
  size_t spaces = 0;
  buf_reset (v);
  for (;;)
    {
      int c = next_char (r, eof);
      if (c < 0 || c == '\n')
        {
          if (quote)
            return fail (r, err, "unterminated quote");
          return 0;
        }
      if (c == '\0')
        return fail (r, err, "NUL byte in a value");
      if (comment)
        continue;
      if (isspace (c) && !quote)
        {
          if (v->n)
            spaces++;
          continue;
        }
      if (!quote && (c == ';' || c == '#'))
        {
          comment = true;
          continue;
        }
      for (; spaces; spaces--)
        buf_add (v, ' ');
      if (c == '\\')
        {
          c = next_char (r, eof);
          switch (c)
            {
            case '\n':
              continue;
            case 't':
              c = '\t';
              break;
            case 'b':
              c = '\b';
              break;
            case 'n':
              c = '\n';
              break;
            case '\\':
            case '"':
              break;
            default:
              return fail (r, err, "bad escape in a value");
            }
          buf_add (v, (char) c);
          continue;
        }
      if (c == '"')
        {
          quote = !quote;
          continue;
        }
      buf_add (v, (char) c);
    }
}

/* "[name]", "[name "sub"]": git's get_base_var, after the '['. */
static int
parse_section (struct reader *r, bool *eof, struct buf *section, hv_error **err)
{
  buf_reset (section);
  for (;;)
    {
      int c = next_char (r, eof);
      if (c < 0 || c == '\n')
        return fail (r, err, "unterminated section header");
      if (c == ']')
        return section->n ? 0 : fail (r, err, "empty section name");
      if (isspace (c))
        break;
      if (!isalnum (c) && c != '-' && c != '.')
        return fail (r, err, "bad character in a section name");
      buf_add (section, (char) tolower (c));
    }
  /* Extended header: spaces, then a quoted subsection, then ']'. */
  int c;
  do
    c = next_char (r, eof);
  while (c == ' ' || c == '\t');
  if (c != '"')
    return fail (r, err, "bad section header");
  buf_add (section, '.');
  for (;;)
    {
      c = next_char (r, eof);
      if (c < 0 || c == '\n')
        return fail (r, err, "unterminated subsection name");
      if (c == '"')
        break;
      if (c == '\\')
        {
          c = next_char (r, eof);
          if (c < 0 || c == '\n')
            return fail (r, err, "unterminated subsection name");
        }
      if (c == '\0')
        return fail (r, err, "NUL byte in a subsection name");
      buf_add (section, (char) c);
    }
  if (next_char (r, eof) != ']')
    return fail (r, err, "bad section header");
  return 0;
}

int
hv_git_config_parse (const char *text, size_t len, hv_git_config_fn fn, void *data, hv_error **err)
{
  struct reader r = { text, text + len, 0 };
  struct buf section = { 0 }, name = { 0 }, value = { 0 };
  bool eof = false;
  int ret = -1;
  /* A UTF-8 byte order mark is skipped, as git does. */
  if (len >= 3 && memcmp (text, "\xef\xbb\xbf", 3) == 0)
    r.p += 3;
  for (;;)
    {
      int c = next_char (&r, &eof);
      if (c < 0)
        break;
      if (c == '\n' || isspace (c))
        continue;
      if (c == '#' || c == ';')
        {
          while (c >= 0 && c != '\n')
            c = next_char (&r, &eof);
          continue;
        }
      if (c == '[')
        {
          if (parse_section (&r, &eof, &section, err) < 0)
            goto out;
          continue;
        }
      if (!isalpha (c))
        {
          fail (&r, err, "a key must start with a letter");
          goto out;
        }
      if (section.n == 0)
        {
          fail (&r, err, "a key outside any section");
          goto out;
        }
      /* The key: "section.name" with the name lowercased. */
      buf_reset (&name);
      for (size_t i = 0; i < section.n; i++)
        buf_add (&name, section.s[i]);
      buf_add (&name, '.');
      while (c >= 0 && (isalnum (c) || c == '-'))
        {
          buf_add (&name, (char) tolower (c));
          c = next_char (&r, &eof);
        }
      while (c == ' ' || c == '\t')
        c = next_char (&r, &eof);
      bool has_value = false;
      if (c == '=')
        {
          if (parse_value (&r, &eof, &value, err) < 0)
            goto out;
          has_value = true;
        }
      else if (c >= 0 && c != '\n')
        {
          fail (&r, err, "bad key name");
          goto out;
        }
      if (fn (name.s, has_value ? value.s : NULL, data) < 0)
        goto out;
    }
  ret = 0;
out:
  free (section.s);
  free (name.s);
  free (value.s);
  return ret;
}

/* Settings with which git runs a program: commands, hooks, helpers,
 * drivers, pagers and editors, and what redirects git to other files or
 * repositories (include, core.worktree, url rewriting, protocol policy).
 * Whole sections first: every key in them names or selects a program or
 * another file. */
static const char *const exec_sections[] = {
  "alias",    /* "!cmd" runs a shell command */
  "hook",     /* hook.<name>.command (config-based hooks, git 2.46) */
  "filter",   /* clean/smudge/process run on checkout, add, status */
  "credential", "difftool", "mergetool", "browser", "man", "guitool", "sendemail",
  "gpg",      /* gpg.program, gpg.<fmt>.program, gpg.ssh.defaultKeyCommand */
  "include", "includeif", /* another config file, which may hold any of these */
  "url",      /* insteadOf: a harmless URL becomes an ext:: or local one */
  "protocol", /* protocol.ext.allow lets a remote URL run a command */
  "pager",    /* pager.<cmd> */
  "trailer",  /* trailer.<token>.command */
  "tar",      /* tar.<format>.command for git archive */
  "imap",     /* imap.tunnel */
  "instaweb", "lfs", /* lfs.customtransfer.<name>.path, lfs.extension */
  NULL,
};

/* Single keys; "*" stands for one subsection. */
static const char *const exec_keys[] = {
  "core.fsmonitor", "core.hookspath", "core.sshcommand", "core.pager", "core.editor", "core.askpass",
  "core.gitproxy", "core.worktree", "core.alternaterefscommand", "core.attributesfile",
  "sequence.editor", "diff.external", "diff.tool", "diff.guitool", "diff.*.textconv", "diff.*.command",
  "merge.tool", "merge.guitool", "merge.*.driver", "remote.*.uploadpack", "remote.*.receivepack",
  "remote.*.vcs", "submodule.*.update", "uploadpack.packobjectshook", "interactive.difffilter",
  "web.browser", "extensions.worktreeconfig", NULL,
};

static bool
key_matches (const char *pattern, const char *key)
{
  const char *star = strchr (pattern, '*');
  if (star == NULL)
    return strcmp (pattern, key) == 0;
  /* "diff.*.textconv": the section and the final name match, anything
   * (the subsection, which may itself hold dots) in between. */
  size_t pre = (size_t) (star - pattern), post = strlen (star + 1), n = strlen (key);
  return n > pre + post && strncmp (pattern, key, pre) == 0 && strcmp (key + n - post, star + 1) == 0;
}

bool
hv_git_config_key_executes (const char *key)
{
  const char *dot = strchr (key, '.');
  size_t section_len = dot ? (size_t) (dot - key) : strlen (key);
  for (size_t i = 0; exec_sections[i]; i++)
    if (strlen (exec_sections[i]) == section_len && strncmp (exec_sections[i], key, section_len) == 0)
      return true;
  for (size_t i = 0; exec_keys[i]; i++)
    if (key_matches (exec_keys[i], key))
      return true;
  return false;
}

static int
collect_exec (const char *key, const char *value, void *data)
{
  if (hv_git_config_key_executes (key))
    {
      cleanup_free char *entry = xasprintf ("%s=%s", key, value ? value : "(true)");
      oci_strv_push (data, entry);
    }
  return 0;
}

int
hv_git_config_exec_entries (const char *text, size_t len, oci_strv *out, hv_error **err)
{
  return hv_git_config_parse (text, len, collect_exec, out, err);
}

struct get_ctx
{
  const char *key;
  char *value;
};

static int
collect_get (const char *key, const char *value, void *data)
{
  struct get_ctx *g = data;
  if (strcmp (key, g->key) == 0)
    {
      free (g->value);
      g->value = xstrdup (value ? value : "true");
    }
  return 0;
}

char *
hv_git_config_get (const char *text, size_t len, const char *key)
{
  struct get_ctx g = { key, NULL };
  cleanup_error hv_error *ignored = NULL;
  if (hv_git_config_parse (text, len, collect_get, &g, &ignored) < 0)
    {
      free (g.value);
      return NULL;
    }
  return g.value;
}
