/* The MCP stdio wire: lines from a byte stream, JSON-RPC 2.0 messages
 * from lines, and the lines haven writes (mcp_proto.h).  Everything a
 * client sends is hostile here: it is bounded before it is buffered,
 * checked before yajl's recursive tree reads it, and never echoed as
 * anything but valid, one-line JSON. */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>

#include "json_gen.h"
#include "json_walk.h"
#include "mcp_proto.h"
#include "utf8.h"

/* --- framing ----------------------------------------------------------- */

struct hv_mcp_reader
{
  size_t line_max;
  char *buf;
  size_t cap;
  size_t start;   /* the first byte not yet returned */
  size_t end;     /* the end of what was fed */
  size_t scanned; /* [start, scanned) holds no '\n' */
  bool skipping;  /* dropping a too-long line's bytes up to its '\n' */
  bool eof;
};

hv_mcp_reader *
hv_mcp_reader_new (size_t line_max)
{
  hv_mcp_reader *r = xmalloc0 (sizeof (*r));
  r->line_max = line_max;
  r->cap = 4096;
  r->buf = xmalloc0 (r->cap);
  return r;
}

void
hv_mcp_reader_free (hv_mcp_reader *r)
{
  if (r == NULL)
    return;
  free (r->buf);
  free (r);
}

void
hv_mcp_reader_feed (hv_mcp_reader *r, const void *buf, size_t len)
{
  const char *in = buf;
  if (r->skipping)
    {
      /* The rest of a line already refused: never buffered, so a client
       * cannot make haven hold more than line_max of one line. */
      const char *nl = memchr (in, '\n', len);
      if (nl == NULL)
        return;
      r->skipping = false;
      len -= (size_t) (nl + 1 - in);
      in = nl + 1;
    }
  if (len == 0)
    return;
  /* Lines handed out are valid until this call: move what is left to
   * the front. */
  if (r->start > 0)
    {
      memmove (r->buf, r->buf + r->start, r->end - r->start);
      r->end -= r->start;
      r->scanned -= r->start;
      r->start = 0;
    }
  /* One byte more than the data: a line at EOF is NUL-terminated in place. */
  if (r->end + len + 1 > r->cap)
    {
      size_t cap = r->cap;
      while (cap < r->end + len + 1)
        cap = cap * 2 > cap ? cap * 2 : r->end + len + 1;
      r->buf = xrealloc (r->buf, cap);
      r->cap = cap;
    }
  memcpy (r->buf + r->end, in, len);
  r->end += len;
}

void
hv_mcp_reader_eof (hv_mcp_reader *r)
{
  r->eof = true;
}

int
hv_mcp_reader_next (hv_mcp_reader *r, const char **line, size_t *len)
{
  for (;;)
    {
      char *nl = memchr (r->buf + r->scanned, '\n', r->end - r->scanned);
      char *s = r->buf + r->start;
      size_t n;
      if (nl != NULL)
        {
          n = (size_t) (nl - s);
          r->start = r->scanned = (size_t) (nl + 1 - r->buf);
        }
      else
        {
          r->scanned = r->end;
          n = r->end - r->start;
          /* One byte over the bound may still be the '\r' before the
           * '\n'; more is a line that cannot be taken whatever follows:
           * let go of it now and drop the rest as it comes. */
          if (n > r->line_max + 1)
            {
              r->start = r->end = r->scanned = 0;
              r->skipping = !r->eof;
              return 2;
            }
          if (!r->eof)
            return 0;
          if (n == 0)
            return -1;
          /* A last line without its '\n'. */
          r->start = r->scanned = r->end;
        }
      if (n > 0 && s[n - 1] == '\r')
        n--;
      if (n > r->line_max)
        return 2;
      if (n == 0)
        continue;
      s[n] = '\0';
      *line = s;
      *len = n;
      return 1;
    }
}

/* --- checks before the tree -------------------------------------------- */

/* The strict pass: where the top-level value ends.  yajl takes a
 * token that is still open at the end of the text as one more may come
 * ({...}" passes yajl_complete_parse, and yajl's tree): the caller
 * checks that only blanks follow the end. */
struct strict
{
  yajl_handle h;
  unsigned depth;
  size_t end; /* just past the top-level object or array, 0 before */
};

static int
strict_open (void *ctx)
{
  struct strict *st = ctx;
  st->depth++;
  return 1;
}
static int
strict_close (void *ctx)
{
  struct strict *st = ctx;
  /* yajl counts the bytes it has lexed as it goes: here, up to this
   * bracket. */
  if (--st->depth == 0)
    st->end = yajl_get_bytes_consumed (st->h);
  return 1;
}
/* A number yajl's event parser converts itself fails past a long long:
 * taken as text, as the tree takes it (an argument may be any number). */
static int
strict_number (void *ctx, const char *s, size_t len)
{
  (void) ctx;
  (void) s;
  (void) len;
  return 1;
}

static const yajl_callbacks strict_callbacks = {
  .yajl_number = strict_number,
  .yajl_start_map = strict_open,
  .yajl_end_map = strict_close,
  .yajl_start_array = strict_open,
  .yajl_end_array = strict_close,
};

/* Four hex digits' value, or 0x10000 when s does not start with four
 * (never read past a NUL). */
static unsigned
hex4 (const char *s)
{
  unsigned v = 0;
  for (int i = 0; i < 4; i++)
    {
      char c = s[i];
      if (!isxdigit ((unsigned char) c))
        return 0x10000;
      v = v << 4 | (unsigned) (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
  return v;
}

/* The escapes yajl's tree would change in silence, in text yajl has
 * accepted (so every string is closed and every \u has four hex digits):
 * "\u0000" ends a tree string early (a write_file's content would be cut
 * there), a high surrogate without its low one becomes "?" and swallows
 * the next character, a pair is combined without checking its low half.
 * Returns the reason, or NULL. */
static const char *
bad_escape (const char *text)
{
  for (const char *s = text; *s; s++)
    {
      if (*s != '"')
        continue;
      /* (The NUL checks and hex4's make this safe on any text.) */
      for (s++; *s && *s != '"'; s++)
        {
          if (*s != '\\')
            continue;
          s++;
          if (*s != 'u')
            {
              if (*s == '\0')
                return NULL;
              continue;
            }
          unsigned u = hex4 (s + 1);
          if (u > 0xffff)
            return NULL; /* not from yajl: nothing to say */
          s += 4;
          if (u == 0)
            return "a string holds U+0000 (\\u0000), which haven cannot carry (write such bytes with encoding "
                   "base64)";
          if (u >= 0xdc00 && u <= 0xdfff)
            return "a string holds a lone low surrogate (not a Unicode character)";
          if (u >= 0xd800 && u <= 0xdbff)
            {
              if (s[1] != '\\' || s[2] != 'u')
                return "a string holds a lone high surrogate (not a Unicode character)";
              unsigned lo = hex4 (s + 3);
              if (lo < 0xdc00 || lo > 0xdfff)
                return "a string holds a high surrogate without its low one (not a Unicode character)";
              s += 6;
            }
        }
      if (*s == '\0')
        break;
    }
  return NULL;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* The first member name given twice in one object anywhere in v, or
 * NULL.  yajl's tree keeps both and readers differ on which counts (the
 * last, in json_walk): a message must mean one thing.  The depth is
 * bounded by the check before the tree. */
static const char *
duplicate_key (yajl_val v)
{
  if (YAJL_IS_ARRAY (v))
    {
      for (size_t i = 0; i < v->u.array.len; i++)
        {
          const char *d = duplicate_key (v->u.array.values[i]);
          if (d)
            return d;
        }
      return NULL;
    }
  if (!YAJL_IS_OBJECT (v))
    return NULL;
  size_t n = v->u.object.len;
  if (n > 1)
    {
      cleanup_free const char **keys = xmalloc0 (n * sizeof (*keys));
      memcpy (keys, v->u.object.keys, n * sizeof (*keys));
      qsort (keys, n, sizeof (*keys), cmp_str);
      for (size_t i = 1; i < n; i++)
        if (strcmp (keys[i - 1], keys[i]) == 0)
          return keys[i]; /* the tree's own string, which outlives keys */
    }
  for (size_t i = 0; i < n; i++)
    {
      const char *d = duplicate_key (v->u.object.values[i]);
      if (d)
        return d;
    }
  return NULL;
}

/* yajl's message on one line, each run of blanks one space (it draws an
 * arrow under the error on a second line). */
static void
one_line (char *s)
{
  size_t l = 0;
  for (char *p = s; *p; p++)
    {
      char c = *p == '\n' || *p == '\r' || *p == '\t' ? ' ' : *p;
      if (c == ' ' && (l == 0 || s[l - 1] == ' '))
        continue;
      s[l++] = c;
    }
  while (l > 0 && s[l - 1] == ' ')
    l--;
  s[l] = '\0';
}

/* --- messages ---------------------------------------------------------- */

char *
hv_mcp_id_json (yajl_val v)
{
  if (v == NULL)
    return NULL;
  if (YAJL_IS_STRING (v))
    {
      size_t n = strlen (v->u.string);
      if (n > HV_MCP_ID_MAX || !hv_utf8_valid (v->u.string, n))
        return NULL;
      yajl_gen g = yajl_gen_alloc (NULL);
      jg_str (g, v->u.string);
      return jg_finish (g);
    }
  /* yajl's INTEGER: digits only (a fraction or an exponent, 1.0 or 1e3,
   * is not one), within a long long; echoed as the client wrote it. */
  if (!YAJL_IS_INTEGER (v))
    return NULL;
  return xstrdup (v->u.number.r);
}

static int
refuse (int *code, int value, hv_error **err, const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));

static int
refuse (int *code, int value, hv_error **err, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  *code = value;
  hv_error_setv (err, 0, fmt, ap);
  va_end (ap);
  return -1;
}

static bool
known_member (const char *key, const char *const *known)
{
  for (size_t i = 0; known[i]; i++)
    if (strcmp (key, known[i]) == 0)
      return true;
  return false;
}

/* The checks of a parsed object (everything but the id, read before). */
static int
check_message (yajl_val root, enum hv_mcp_kind kind, int *code, hv_error **err)
{
  const char *dup = duplicate_key (root);
  if (dup)
    return refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "the member \"%.64s\" is given twice in one object", dup);
  yajl_val version = jw_lookup (root, "jsonrpc");
  if (version == NULL || !YAJL_IS_STRING (version) || strcmp (version->u.string, "2.0") != 0)
    return refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "\"jsonrpc\" must be \"2.0\"");
  static const char *const request_keys[] = { "jsonrpc", "id", "method", "params", NULL };
  static const char *const response_keys[] = { "jsonrpc", "id", "result", "error", NULL };
  const char *const *known = kind == HV_MCP_RESPONSE ? response_keys : request_keys;
  for (size_t i = 0; i < root->u.object.len; i++)
    if (!known_member (root->u.object.keys[i], known))
      return refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "unknown member \"%.64s\"", root->u.object.keys[i]);
  if (kind == HV_MCP_RESPONSE)
    {
      if ((jw_lookup (root, "result") != NULL) == (jw_lookup (root, "error") != NULL))
        return refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "a response has either \"result\" or \"error\"");
      return 0;
    }
  yajl_val method = jw_lookup (root, "method");
  if (!YAJL_IS_STRING (method))
    return refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "\"method\" must be a string");
  yajl_val params = jw_lookup (root, "params");
  if (params != NULL && !YAJL_IS_OBJECT (params))
    return refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "\"params\" must be an object (MCP's params are)");
  return 0;
}

int
hv_mcp_parse (const char *line, size_t len, struct hv_mcp_message *m, int *code, char **id_out, hv_error **err)
{
  *m = (struct hv_mcp_message) HV_MCP_MESSAGE_INIT;
  *code = 0;
  *id_out = NULL;
  /* yajl's tree reads NUL-terminated text: a NUL byte would end the
   * message early.  JSON has no place for one. */
  if (memchr (line, '\0', len))
    return refuse (code, HV_JSONRPC_PARSE_ERROR, err, "a NUL byte (JSON text has none)");
  if (!hv_utf8_valid (line, len))
    return refuse (code, HV_JSONRPC_PARSE_ERROR, err, "not UTF-8");
  cleanup_free char *text = xmalloc0 (len + 1);
  memcpy (text, line, len);
  if (jw_too_deep (text, HV_MCP_DEPTH_MAX))
    return refuse (code, HV_JSONRPC_PARSE_ERROR, err, "nested deeper than %d levels", HV_MCP_DEPTH_MAX);

  /* yajl's event parser first, strict (no comments, one value; the tree
   * allows comments): it does not recurse. */
  struct strict strict = { 0 };
  yajl_handle h = strict.h = yajl_alloc (&strict_callbacks, NULL, &strict);
  yajl_status st = yajl_parse (h, (const unsigned char *) text, len);
  if (st == yajl_status_ok)
    st = yajl_complete_parse (h);
  /* (A scalar's end is not seen: it is no message, and refused below.) */
  if (st == yajl_status_ok && strict.end > 0 && text[strict.end + strspn (text + strict.end, " \t\r\n")] != '\0')
    {
      yajl_free (h);
      return refuse (code, HV_JSONRPC_PARSE_ERROR, err, "invalid JSON: trailing garbage after the message");
    }
  if (st != yajl_status_ok)
    {
      unsigned char *e = yajl_get_error (h, 1, (const unsigned char *) text, len);
      cleanup_free char *msg = xstrdup (e ? (const char *) e : "parse error");
      yajl_free_error (h, e);
      yajl_free (h);
      one_line (msg);
      return refuse (code, HV_JSONRPC_PARSE_ERROR, err, "invalid JSON: %s", msg);
    }
  yajl_free (h);

  char ebuf[256] = "";
  yajl_val root = yajl_tree_parse (text, ebuf, sizeof (ebuf));
  if (root == NULL)
    {
      one_line (ebuf);
      return refuse (code, HV_JSONRPC_PARSE_ERROR, err, "invalid JSON: %s", ebuf[0] ? ebuf : "parse error");
    }
  if (YAJL_IS_ARRAY (root))
    {
      yajl_tree_free (root);
      return refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "a batch (an array): MCP sends one message per line");
    }
  if (!YAJL_IS_OBJECT (root))
    {
      yajl_tree_free (root);
      return refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "not a JSON object");
    }
  const char *escape = bad_escape (text);

  /* What the message is, and its id, before anything else is checked:
   * a request's refusal is answered with its id (its sender is waiting
   * for it), a notification's or a response's is not answered at all
   * (JSON-RPC: nothing answers a notification; answering a response
   * could start two peers answering each other without end). */
  size_t n_id = 0, n_method = 0, n_answer = 0;
  yajl_val id = NULL;
  for (size_t i = 0; i < root->u.object.len; i++)
    {
      const char *k = root->u.object.keys[i];
      if (strcmp (k, "id") == 0)
        {
          n_id++;
          id = root->u.object.values[i];
        }
      else if (strcmp (k, "method") == 0)
        n_method++;
      else if (strcmp (k, "result") == 0 || strcmp (k, "error") == 0)
        n_answer++;
    }
  enum hv_mcp_kind kind;
  if (n_method > 0)
    kind = n_id > 0 ? HV_MCP_REQUEST : HV_MCP_NOTIFICATION;
  else if (n_answer > 0)
    kind = HV_MCP_RESPONSE;
  else
    {
      yajl_tree_free (root);
      return refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "neither a request (\"method\") nor a response");
    }
  char *id_text = n_id == 1 ? hv_mcp_id_json (id) : NULL;
  int r = 0;
  if (kind == HV_MCP_REQUEST && n_id > 1)
    r = refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "\"id\" is given twice");
  else if (kind == HV_MCP_REQUEST && id_text == NULL)
    r = refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "\"id\" must be a string (at most %d bytes) or an integer",
                HV_MCP_ID_MAX);
  else if (kind == HV_MCP_RESPONSE && id_text == NULL && !(n_id == 1 && YAJL_IS_NULL (id)))
    r = refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "a response's \"id\" is not one haven could have sent");
  else if (escape)
    r = refuse (code, HV_JSONRPC_INVALID_REQUEST, err, "%s", escape);
  else
    r = check_message (root, kind, code, err);
  if (r < 0)
    {
      yajl_tree_free (root);
      if (kind != HV_MCP_REQUEST)
        {
          *code = 0;
          free (id_text);
        }
      else
        *id_out = id_text;
      return -1;
    }
  m->kind = kind;
  m->id = kind == HV_MCP_NOTIFICATION ? NULL : id_text;
  if (kind == HV_MCP_NOTIFICATION)
    free (id_text);
  if (kind != HV_MCP_RESPONSE)
    {
      m->method = xstrdup (jw_lookup (root, "method")->u.string);
      m->params = jw_lookup (root, "params");
    }
  m->root = root;
  return 0;
}

void
hv_mcp_message_free (struct hv_mcp_message *m)
{
  free (m->id);
  free (m->method);
  if (m->root)
    yajl_tree_free (m->root);
  *m = (struct hv_mcp_message) HV_MCP_MESSAGE_INIT;
}

yajl_val
hv_mcp_param (yajl_val params, const char *key)
{
  yajl_val v = jw_lookup (params, key);
  return jw_absent (v) ? NULL : v;
}

/* --- writers ------------------------------------------------------------ */

/* A JSON text copied into a generator event by event: numbers as
 * written, strings made valid UTF-8 with their full length (a tree
 * would cut them at a U+0000 that a command's output may hold), strict
 * (no comments, one value).  yajl_gen refuses nesting past its 128
 * levels, and a refusal stops the copy: the caller then writes an error
 * instead, never a line that is not JSON. */
static int
copy_null (void *g)
{
  return yajl_gen_null (g) == yajl_gen_status_ok;
}
static int
copy_bool (void *g, int b)
{
  return yajl_gen_bool (g, b) == yajl_gen_status_ok;
}
static int
copy_number (void *g, const char *s, size_t len)
{
  return yajl_gen_number (g, s, len) == yajl_gen_status_ok;
}
static int
copy_string (void *g, const unsigned char *s, size_t len)
{
  size_t n = 0;
  cleanup_free char *clean = hv_utf8_sanitize ((const char *) s, len, &n);
  return yajl_gen_string (g, (const unsigned char *) clean, n) == yajl_gen_status_ok;
}
static int
copy_start_map (void *g)
{
  return yajl_gen_map_open (g) == yajl_gen_status_ok;
}
static int
copy_end_map (void *g)
{
  return yajl_gen_map_close (g) == yajl_gen_status_ok;
}
static int
copy_start_array (void *g)
{
  return yajl_gen_array_open (g) == yajl_gen_status_ok;
}
static int
copy_end_array (void *g)
{
  return yajl_gen_array_close (g) == yajl_gen_status_ok;
}

static const yajl_callbacks copy_callbacks = {
  .yajl_null = copy_null,
  .yajl_boolean = copy_bool,
  .yajl_number = copy_number,
  .yajl_string = copy_string,
  .yajl_start_map = copy_start_map,
  .yajl_map_key = copy_string,
  .yajl_end_map = copy_end_map,
  .yajl_start_array = copy_start_array,
  .yajl_end_array = copy_end_array,
};

/* Copy text (a JSON value whose first character is one of first) into g. */
static int
copy_json (yajl_gen g, const char *text, const char *first)
{
  if (text == NULL)
    return -1;
  size_t len = strlen (text);
  size_t lead = strspn (text, " \t\r\n");
  if (text[lead] == '\0' || strchr (first, text[lead]) == NULL)
    return -1;
  yajl_handle h = yajl_alloc (&copy_callbacks, NULL, g);
  /* Bytes that are not UTF-8 are made so by copy_string, not refused:
   * a command's output is whatever it wrote. */
  yajl_config (h, yajl_dont_validate_strings, 1);
  yajl_status st = yajl_parse (h, (const unsigned char *) text, len);
  if (st == yajl_status_ok)
    st = yajl_complete_parse (h);
  yajl_free (h);
  return st == yajl_status_ok ? 0 : -1;
}

/* The id: a string or an integer as hv_mcp_id_json wrote it; anything
 * else (a caller's mistake) as null. */
static void
gen_id (yajl_gen g, const char *id_json)
{
  if (id_json != NULL && strlen (id_json) <= HV_MCP_ID_MAX + 2)
    {
      yajl_gen probe = yajl_gen_alloc (NULL);
      int r = copy_json (probe, id_json, "\"-0123456789");
      yajl_gen_free (probe);
      if (r == 0 && copy_json (g, id_json, "\"-0123456789") == 0)
        return;
    }
  yajl_gen_null (g);
}

static char *
finish_line (yajl_gen g)
{
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (g, &buf, &len);
  char *line = xmalloc0 (len + 2);
  memcpy (line, buf, len);
  line[len] = '\n';
  yajl_gen_free (g);
  return line;
}

static yajl_gen
message_open (void)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv (g, "jsonrpc", "2.0");
  return g;
}

char *
hv_mcp_error_line (const char *id_json, int code, const char *message)
{
  yajl_gen g = message_open ();
  jg_str (g, "id");
  gen_id (g, id_json);
  jg_str (g, "error");
  yajl_gen_map_open (g);
  jg_str (g, "code");
  yajl_gen_integer (g, code);
  jg_kv_utf8 (g, "message", message ? message : "");
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  return finish_line (g);
}

char *
hv_mcp_result_line (const char *id_json, const char *result_json)
{
  yajl_gen g = message_open ();
  jg_str (g, "id");
  gen_id (g, id_json);
  jg_str (g, "result");
  if (copy_json (g, result_json, "{") < 0 || yajl_gen_map_close (g) != yajl_gen_status_ok)
    {
      yajl_gen_free (g);
      return hv_mcp_error_line (id_json, HV_JSONRPC_INTERNAL_ERROR, "haven made an answer that is not a JSON object");
    }
  return finish_line (g);
}

char *
hv_mcp_notification_line (const char *method, const char *params_json)
{
  yajl_gen g = message_open ();
  jg_kv_utf8 (g, "method", method);
  if (params_json != NULL)
    {
      jg_str (g, "params");
      if (copy_json (g, params_json, "{") < 0)
        {
          yajl_gen_free (g);
          return NULL;
        }
    }
  yajl_gen_map_close (g);
  return finish_line (g);
}
