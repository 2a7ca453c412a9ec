#include "config.h"
#include "toml_scan.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct scanner
{
  const char *text;
  const char *file;
  size_t pos;
  unsigned line;
};

static int
fail (struct scanner *s, hv_error **err, const char *what)
{
  return hv_error_set (err, 0, "%s:%u: %s", s->file, s->line, what);
}

static char
peek (const struct scanner *s)
{
  return s->text[s->pos];
}

static bool
at (const struct scanner *s, const char *lit)
{
  return strncmp (s->text + s->pos, lit, strlen (lit)) == 0;
}

static void
skip_blank (struct scanner *s)
{
  while (peek (s) == ' ' || peek (s) == '\t')
    s->pos++;
}

/* A newline (LF or CRLF) at the current position, consumed. */
static bool
take_newline (struct scanner *s)
{
  if (peek (s) == '\n')
    s->pos++;
  else if (at (s, "\r\n"))
    s->pos += 2;
  else
    return false;
  s->line++;
  return true;
}

static void
skip_comment (struct scanner *s)
{
  if (peek (s) != '#')
    return;
  while (peek (s) && peek (s) != '\n' && !at (s, "\r\n"))
    s->pos++;
}

/* After a statement: blanks, a comment, then the end of the line or of
 * the file. */
static int
end_of_line (struct scanner *s, hv_error **err)
{
  skip_blank (s);
  skip_comment (s);
  if (peek (s) == '\0' || take_newline (s))
    return 0;
  return fail (s, err, "expected the end of the line");
}

/* Blanks, comments and newlines, inside arrays. */
static void
skip_space (struct scanner *s)
{
  for (;;)
    {
      skip_blank (s);
      skip_comment (s);
      if (!take_newline (s))
        return;
    }
}

static bool
bare_char (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static void
put_utf8 (char **p, uint32_t c)
{
  char *o = *p;
  if (c < 0x80)
    *o++ = (char) c;
  else if (c < 0x800)
    {
      *o++ = (char) (0xc0 | (c >> 6));
      *o++ = (char) (0x80 | (c & 0x3f));
    }
  else if (c < 0x10000)
    {
      *o++ = (char) (0xe0 | (c >> 12));
      *o++ = (char) (0x80 | ((c >> 6) & 0x3f));
      *o++ = (char) (0x80 | (c & 0x3f));
    }
  else
    {
      *o++ = (char) (0xf0 | (c >> 18));
      *o++ = (char) (0x80 | ((c >> 12) & 0x3f));
      *o++ = (char) (0x80 | ((c >> 6) & 0x3f));
      *o++ = (char) (0x80 | (c & 0x3f));
    }
  *p = o;
}

/* One escape after a backslash in a basic string, decoded into *p (NULL:
 * only checked). */
static int
escape (struct scanner *s, char **p, hv_error **err)
{
  char c = peek (s);
  const char *simple = "btnfr\"\\";
  const char *value = "\b\t\n\f\r\"\\";
  const char *hit = c ? strchr (simple, c) : NULL;
  if (hit)
    {
      if (p)
        *(*p)++ = value[hit - simple];
      s->pos++;
      return 0;
    }
  if (c != 'u' && c != 'U')
    return fail (s, err, "invalid escape in a string");
  size_t n = c == 'u' ? 4 : 8;
  uint32_t code = 0;
  s->pos++;
  for (size_t i = 0; i < n; i++)
    {
      char h = peek (s);
      int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      if (d < 0)
        return fail (s, err, "invalid \\u escape in a string");
      code = code * 16 + (uint32_t) d;
      s->pos++;
    }
  if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
    return fail (s, err, "escape of an invalid Unicode scalar in a string");
  if (p)
    put_utf8 (p, code);
  return 0;
}

/* A one-line basic ("...") or literal ('...') string; *out its decoded
 * text when out is not NULL. */
static int
one_line_string (struct scanner *s, char **out, hv_error **err)
{
  char quote = peek (s);
  s->pos++;
  char *buf = out ? xmalloc0 (strlen (s->text + s->pos) * 4 + 1) : NULL, *p = buf;
  for (;;)
    {
      char c = peek (s);
      if (c == '\0' || c == '\n' || c == '\r')
        {
          free (buf);
          return fail (s, err, "unterminated string");
        }
      s->pos++;
      if (c == quote)
        break;
      if (c == '\\' && quote == '"')
        {
          if (escape (s, p ? &p : NULL, err) < 0)
            {
              free (buf);
              return -1;
            }
          continue;
        }
      if (p)
        *p++ = c;
    }
  if (out)
    *out = buf;
  return 0;
}

/* A multi-line string ("""...""" or '''...'''), not decoded. */
static int
multi_line_string (struct scanner *s, hv_error **err)
{
  char quote = peek (s);
  const char *delim = quote == '"' ? "\"\"\"" : "'''";
  unsigned first = s->line;
  s->pos += 3;
  for (;;)
    {
      if (peek (s) == '\0')
        {
          s->line = first;
          return fail (s, err, "unterminated multi-line string");
        }
      if (take_newline (s))
        continue;
      if (quote == '"' && peek (s) == '\\')
        {
          /* A backslash before a newline trims it; any other escapes. */
          s->pos++;
          if (peek (s) == '\n' || peek (s) == '\r' || peek (s) == ' ' || peek (s) == '\t')
            continue;
          if (escape (s, NULL, err) < 0)
            return -1;
          continue;
        }
      if (at (s, delim))
        {
          s->pos += 3;
          /* Up to two quotes of the same kind may end the content. */
          for (int i = 0; i < 2 && peek (s) == quote; i++)
            s->pos++;
          return 0;
        }
      s->pos++;
    }
}

/* A key (dotted, bare or quoted parts) into path[*depth...]. */
static int
key (struct scanner *s, char **path, size_t *depth, hv_error **err)
{
  for (;;)
    {
      skip_blank (s);
      char *part = NULL;
      char c = peek (s);
      if (c == '"' || c == '\'')
        {
          if (at (s, "\"\"\"") || at (s, "'''"))
            return fail (s, err, "a multi-line string cannot be a key");
          if (one_line_string (s, &part, err) < 0)
            return -1;
        }
      else if (bare_char (c))
        {
          size_t start = s->pos;
          while (bare_char (peek (s)))
            s->pos++;
          part = strndup (s->text + start, s->pos - start);
          if (part == NULL)
            return hv_error_set (err, 0, "out of memory");
        }
      else
        return fail (s, err, "expected a key");
      if (*depth >= HV_TOML_MAX_DEPTH)
        {
          free (part);
          return fail (s, err, "key nested too deep");
        }
      path[(*depth)++] = part;
      skip_blank (s);
      if (peek (s) != '.')
        return 0;
      s->pos++;
    }
}

static int value (struct scanner *s, enum hv_toml_value *kind, hv_error **err);

/* [a, b, ...] over any number of lines. */
static int
array (struct scanner *s, hv_error **err)
{
  s->pos++;
  for (;;)
    {
      skip_space (s);
      if (peek (s) == ']')
        {
          s->pos++;
          return 0;
        }
      enum hv_toml_value k;
      if (value (s, &k, err) < 0)
        return -1;
      skip_space (s);
      if (peek (s) == ',')
        s->pos++;
      else if (peek (s) != ']')
        return fail (s, err, "expected ',' or ']' in an array");
    }
}

/* {k = v, ...} on one line. */
static int
inline_table (struct scanner *s, hv_error **err)
{
  s->pos++;
  skip_blank (s);
  if (peek (s) == '}')
    {
      s->pos++;
      return 0;
    }
  for (;;)
    {
      char *path[HV_TOML_MAX_DEPTH];
      size_t depth = 0;
      int r = key (s, path, &depth, err);
      for (size_t i = 0; i < depth; i++)
        free (path[i]);
      if (r < 0)
        return -1;
      if (peek (s) != '=')
        return fail (s, err, "expected '=' after a key");
      s->pos++;
      skip_blank (s);
      enum hv_toml_value k;
      if (value (s, &k, err) < 0)
        return -1;
      skip_blank (s);
      if (peek (s) == '}')
        {
          s->pos++;
          return 0;
        }
      if (peek (s) != ',')
        return fail (s, err, "expected ',' or '}' in an inline table");
      s->pos++;
      skip_blank (s);
    }
}

static int
value (struct scanner *s, enum hv_toml_value *kind, hv_error **err)
{
  char c = peek (s);
  if (at (s, "\"\"\"") || at (s, "'''"))
    {
      *kind = HV_TOML_V_STRING;
      return multi_line_string (s, err);
    }
  if (c == '"' || c == '\'')
    {
      *kind = HV_TOML_V_STRING;
      return one_line_string (s, NULL, err);
    }
  if (c == '[')
    {
      *kind = HV_TOML_V_ARRAY;
      return array (s, err);
    }
  if (c == '{')
    {
      *kind = HV_TOML_V_INLINE_TABLE;
      return inline_table (s, err);
    }
  /* Numbers, booleans and dates: what may follow a value ends them (a
   * date's time may follow a single space). */
  size_t start = s->pos;
  while (peek (s) && !strchr (" \t\r\n,]}#", peek (s)))
    s->pos++;
  if (s->pos > start && peek (s) == ' ' && s->pos - start == 10 && s->text[start + 4] == '-'
      && s->text[s->pos + 1] >= '0' && s->text[s->pos + 1] <= '9')
    {
      s->pos++;
      while (peek (s) && !strchr (" \t\r\n,]}#", peek (s)))
        s->pos++;
    }
  if (s->pos == start)
    return fail (s, err, "expected a value");
  *kind = HV_TOML_V_OTHER;
  return 0;
}

static struct hv_toml_item *
add_item (struct hv_toml_doc *doc, enum hv_toml_kind kind, unsigned line, size_t start)
{
  doc->items = xrealloc (doc->items, (doc->n + 1) * sizeof (*doc->items));
  struct hv_toml_item *it = &doc->items[doc->n++];
  memset (it, 0, sizeof (*it));
  it->kind = kind;
  it->line = line;
  it->start = start;
  return it;
}

static void
copy_path (struct hv_toml_item *it, char *const *path, size_t depth)
{
  for (size_t i = 0; i < depth; i++)
    it->path[it->depth++] = xstrdup (path[i]);
}

/* [a.b] or [[a.b]]; the current table becomes it. */
static int
header (struct scanner *s, struct hv_toml_doc *doc, char **table, size_t *table_depth, hv_error **err)
{
  size_t start = s->pos;
  unsigned line = s->line;
  bool array_table = at (s, "[[");
  s->pos += array_table ? 2 : 1;
  for (size_t i = 0; i < *table_depth; i++)
    free (table[i]);
  *table_depth = 0;
  if (key (s, table, table_depth, err) < 0)
    return -1;
  if (!at (s, array_table ? "]]" : "]"))
    return fail (s, err, array_table ? "expected ']]' after a table name" : "expected ']' after a table name");
  s->pos += array_table ? 2 : 1;
  if (end_of_line (s, err) < 0)
    return -1;
  struct hv_toml_item *it = add_item (doc, array_table ? HV_TOML_ARRAY_TABLE : HV_TOML_TABLE, line, start);
  copy_path (it, table, *table_depth);
  it->table_depth = *table_depth;
  it->end = s->pos;
  return 0;
}

static int
keyval (struct scanner *s, struct hv_toml_doc *doc, char *const *table, size_t table_depth, hv_error **err)
{
  size_t start = s->pos;
  unsigned line = s->line;
  char *path[HV_TOML_MAX_DEPTH];
  size_t depth = 0;
  for (; depth < table_depth; depth++)
    path[depth] = xstrdup (table[depth]);
  int r = key (s, path, &depth, err);
  if (r == 0 && peek (s) != '=')
    r = fail (s, err, "expected '=' after a key");
  enum hv_toml_value kind = HV_TOML_V_NONE;
  size_t vstart = 0;
  if (r == 0)
    {
      s->pos++;
      skip_blank (s);
      vstart = s->pos;
      r = value (s, &kind, err);
    }
  size_t vend = s->pos;
  if (r == 0)
    r = end_of_line (s, err);
  if (r == 0)
    {
      struct hv_toml_item *it = add_item (doc, HV_TOML_KEYVAL, line, start);
      copy_path (it, path, depth);
      it->table_depth = table_depth;
      it->value_kind = kind;
      it->value = strndup (s->text + vstart, vend - vstart);
      it->end = s->pos;
    }
  for (size_t i = 0; i < depth; i++)
    free (path[i]);
  return r;
}

int
hv_toml_scan (const char *text, const char *path, struct hv_toml_doc *doc, hv_error **err)
{
  struct scanner s = { text ? text : "", path, 0, 1 };
  char *table[HV_TOML_MAX_DEPTH];
  size_t table_depth = 0;
  int r = 0;
  doc->items = NULL;
  doc->n = 0;
  while (r == 0 && peek (&s))
    {
      size_t line_start = s.pos;
      skip_blank (&s);
      if (take_newline (&s))
        continue;
      if (peek (&s) == '#')
        {
          struct hv_toml_item *it = add_item (doc, HV_TOML_COMMENT, s.line, line_start);
          skip_comment (&s);
          it->comment = strndup (text + line_start, s.pos - line_start);
          take_newline (&s);
          it->end = s.pos;
          continue;
        }
      if (peek (&s) == '[')
        r = header (&s, doc, table, &table_depth, err);
      else
        r = keyval (&s, doc, table, table_depth, err);
      /* Statements begin at their line's start: indentation is theirs. */
      if (r == 0)
        doc->items[doc->n - 1].start = line_start;
    }
  for (size_t i = 0; i < table_depth; i++)
    free (table[i]);
  if (r < 0)
    hv_toml_doc_free (doc);
  return r;
}

void
hv_toml_doc_free (struct hv_toml_doc *doc)
{
  for (size_t i = 0; i < doc->n; i++)
    {
      for (size_t j = 0; j < doc->items[i].depth; j++)
        free (doc->items[i].path[j]);
      free (doc->items[i].value);
      free (doc->items[i].comment);
    }
  free (doc->items);
  doc->items = NULL;
  doc->n = 0;
}

char *
hv_toml_string (const char *s)
{
  size_t n = strlen (s);
  char *out = xmalloc0 (n * 6 + 3), *p = out;
  *p++ = '"';
  for (; *s; s++)
    {
      unsigned char c = (unsigned char) *s;
      if (c == '"' || c == '\\')
        {
          *p++ = '\\';
          *p++ = (char) c;
        }
      else if (c < 0x20 || c == 0x7f)
        p += sprintf (p, "\\u%04x", c);
      else
        *p++ = (char) c;
    }
  *p++ = '"';
  return out;
}

char *
hv_toml_key (const char *s)
{
  bool bare = s[0] != '\0';
  for (const char *p = s; *p; p++)
    if (!bare_char (*p))
      bare = false;
  return bare ? xstrdup (s) : hv_toml_string (s);
}
