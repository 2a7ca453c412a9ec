/* The API's routes: which handler a request target goes to, with its
 * sandbox id and path decoded and checked (docs/api.md, "Endpoints").
 *
 * The target comes from any process of the user, through the gateway's
 * HTTP parser; this file does not rely on what that parser refuses, since
 * it is fuzzed on its own: every byte that is not a URI character is
 * refused here too. */
#include "config.h"

#include <string.h>

#include "safe_path.h"
#include "service_api.h"

/* Characters RFC 3986 allows raw in a path and a query (pchar, '/' and
 * '?'): unreserved, sub-delims, ':', '@', and '%' for escapes. */
static bool
uri_char (unsigned char c)
{
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
    return true;
  return c != '\0' && strchr ("-._~!$&'()*+,;=:@/?%", c) != NULL;
}

static int
hex_value (unsigned char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Percent-decode s[0..len): a new NUL-terminated string, its length in
 * *out_len (a "%00" makes a NUL inside, which the callers refuse).  In a
 * query, '+' is a space, as HTML forms and Python's urlencode write it
 * (a '+' itself is sent as %2B by both). */
static int
percent_decode (const char *s, size_t len, bool query, char **out, size_t *out_len, const char *what,
                hv_error **err)
{
  cleanup_free char *buf = xmalloc0 (len + 1);
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    {
      unsigned char c = (unsigned char) s[i];
      if (c == '%')
        {
          int hi = i + 2 < len ? hex_value ((unsigned char) s[i + 1]) : -1;
          int lo = i + 2 < len ? hex_value ((unsigned char) s[i + 2]) : -1;
          if (hi < 0 || lo < 0)
            return hv_error_set (err, 0, "%s: a '%%' not followed by two hex digits", what);
          buf[n++] = (char) (hi << 4 | lo);
          i += 2;
        }
      else
        buf[n++] = query && c == '+' ? ' ' : (char) c;
    }
  buf[n] = '\0';
  *out = steal_pointer (&buf);
  *out_len = n;
  return 0;
}

/* A sandbox id: [A-Za-z0-9_-]{1,HV_API_ID_MAX} once decoded. */
static int
sandbox_id (const char *seg, size_t len, char **out, hv_error **err)
{
  cleanup_free char *id = NULL;
  size_t n;
  if (percent_decode (seg, len, false, &id, &n, "sandbox id", err) < 0)
    return -1;
  bool ok = n >= 1 && n <= HV_API_ID_MAX;
  for (size_t i = 0; ok && i < n; i++)
    {
      unsigned char c = (unsigned char) id[i];
      ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    }
  if (!ok)
    return hv_error_set (err, 0, "sandbox id: not 1 to %d of A-Z, a-z, 0-9, '_' and '-'", HV_API_ID_MAX);
  *out = steal_pointer (&id);
  return 0;
}

/* A decoded path beneath the workspace (a file, a listed directory). */
static int
relative_path (const char *s, size_t len, bool query, const char *what, char **out, hv_error **err)
{
  cleanup_free char *p = NULL;
  size_t n;
  if (percent_decode (s, len, query, &p, &n, what, err) < 0 || hv_relative_path_check (p, n, what, err) < 0)
    return -1;
  *out = steal_pointer (&p);
  return 0;
}

/* The query of GET .../list: only `path`, once.  An empty query (a bare
 * '?') is none. */
static int
list_query (const char *q, size_t len, char **path, hv_error **err)
{
  for (size_t at = 0; at < len;)
    {
      const char *amp = memchr (q + at, '&', len - at);
      size_t end = amp ? (size_t) (amp - q) : len;
      const char *eq = memchr (q + at, '=', end - at);
      size_t name_end = eq ? (size_t) (eq - q) : end;
      cleanup_free char *name = NULL;
      size_t name_len;
      if (end == at)
        return hv_error_set (err, 0, "query: an empty parameter (\"&&\" or a '&' at an end)");
      if (percent_decode (q + at, name_end - at, true, &name, &name_len, "query", err) < 0)
        return -1;
      if (name_len != 4 || memcmp (name, "path", 4) != 0)
        {
          cleanup_free char *shown = NULL;
          /* The name is the caller's bytes: only its printable ASCII is shown. */
          shown = xstrdup (name);
          for (char *c = shown; *c; c++)
            if ((unsigned char) *c < 0x20 || (unsigned char) *c > 0x7e)
              *c = '?';
          return hv_error_set (err, 0, "query: unknown parameter \"%s\" (only \"path\" is taken)", shown);
        }
      if (*path != NULL)
        return hv_error_set (err, 0, "query: \"path\" given twice");
      if (eq == NULL)
        return hv_error_set (err, 0, "query: \"path\" without a value (\"path=DIR\")");
      /* path= (empty) is the workspace itself, as no path is. */
      if (end > name_end + 1 && relative_path (eq + 1, end - name_end - 1, true, "query: path", path, err) < 0)
        return -1;
      if (*path == NULL)
        *path = xstrdup ("");
      at = end + (amp ? 1 : 0);
      if (amp && at == len)
        return hv_error_set (err, 0, "query: an empty parameter (\"&&\" or a '&' at an end)");
    }
  if (*path != NULL && (*path)[0] == '\0')
    {
      free (*path);
      *path = NULL;
    }
  return 0;
}

/* The query of GET .../denials: only `limit`, once, a decimal number
 * from 1 to HV_API_DENIALS_MAX. */
static int
denials_query (const char *q, size_t len, unsigned *limit, hv_error **err)
{
  bool seen = false;
  for (size_t at = 0; at < len;)
    {
      const char *amp = memchr (q + at, '&', len - at);
      size_t end = amp ? (size_t) (amp - q) : len;
      if (end == at || (amp && end + 1 == len))
        return hv_error_set (err, 0, "query: an empty parameter (\"&&\" or a '&' at an end)");
      cleanup_free char *param = NULL;
      size_t plen;
      if (percent_decode (q + at, end - at, true, &param, &plen, "query", err) < 0)
        return -1;
      if (plen < 6 || memcmp (param, "limit=", 6) != 0)
        return hv_error_set (err, 0, "query: only \"limit=N\" is taken");
      if (seen)
        return hv_error_set (err, 0, "query: \"limit\" given twice");
      seen = true;
      unsigned long v = 0;
      bool ok = plen > 6 && plen <= 6 + 4;
      for (size_t i = 6; ok && i < plen; i++)
        {
          ok = param[i] >= '0' && param[i] <= '9';
          v = v * 10 + (unsigned long) (param[i] - '0');
        }
      if (!ok || v < 1 || v > HV_API_DENIALS_MAX)
        return hv_error_set (err, 0, "query: limit: not a number from 1 to %d", HV_API_DENIALS_MAX);
      *limit = (unsigned) v;
      at = end + (amp ? 1 : 0);
    }
  return 0;
}

struct segs
{
  const char *at[5]; /* v1, sandboxes, ID, ACTION, the rest (files' path) */
  size_t len[5];
  size_t n;
};

/* The path's first five segments, the fifth holding the rest. */
static void
split_path (const char *path, size_t len, struct segs *s)
{
  s->n = 0;
  size_t at = 1; /* after the leading '/' */
  while (s->n < 5)
    {
      const char *slash = s->n < 4 ? memchr (path + at, '/', len - at) : NULL;
      size_t end = slash ? (size_t) (slash - path) : len;
      s->at[s->n] = path + at;
      s->len[s->n] = end - at;
      s->n++;
      if (slash == NULL)
        break;
      at = end + 1;
    }
}

static bool
seg_is (const struct segs *s, size_t i, const char *lit)
{
  return i < s->n && s->len[i] == strlen (lit) && memcmp (s->at[i], lit, s->len[i]) == 0;
}

/* Which route the path names, and the method each of its routes takes
 * (HV_API_NOT_FOUND: none). */
static enum hv_api_route
route_of (const struct segs *s, const char *method)
{
  bool get = strcmp (method, "GET") == 0, post = strcmp (method, "POST") == 0;
  bool put = strcmp (method, "PUT") == 0, del = strcmp (method, "DELETE") == 0;
  if (!seg_is (s, 0, "v1") || s->n < 2)
    return HV_API_NOT_FOUND;
  if (s->n == 2 && seg_is (s, 1, "version"))
    return get ? HV_API_VERSION_GET : HV_API_METHOD_NOT_ALLOWED;
  if (!seg_is (s, 1, "sandboxes"))
    return HV_API_NOT_FOUND;
  switch (s->n)
    {
    case 2:
      return get ? HV_API_SANDBOX_LIST : post ? HV_API_SANDBOX_CREATE : HV_API_METHOD_NOT_ALLOWED;
    case 3:
      return get ? HV_API_SANDBOX_GET : del ? HV_API_SANDBOX_DELETE : HV_API_METHOD_NOT_ALLOWED;
    case 4:
      if (seg_is (s, 3, "run"))
        return post ? HV_API_SANDBOX_RUN : HV_API_METHOD_NOT_ALLOWED;
      if (seg_is (s, 3, "list"))
        return get ? HV_API_FILE_LIST : HV_API_METHOD_NOT_ALLOWED;
      if (seg_is (s, 3, "denials"))
        return get ? HV_API_SANDBOX_DENIALS : HV_API_METHOD_NOT_ALLOWED;
      return HV_API_NOT_FOUND;
    default:
      if (seg_is (s, 3, "files"))
        return get ? HV_API_FILE_GET : put ? HV_API_FILE_PUT : HV_API_METHOD_NOT_ALLOWED;
      return HV_API_NOT_FOUND;
    }
}

int
hv_api_route (const char *method, const char *target, struct hv_api_target *t, hv_error **err)
{
  memset (t, 0, sizeof (*t));
  if (target[0] != '/')
    return hv_error_set (err, 0, "target: not a path (it must start with '/')");
  for (const char *c = target; *c; c++)
    if (!uri_char ((unsigned char) *c))
      return hv_error_set (err, 0, "target: a character that is not allowed in a URI path or query (byte 0x%02x)",
                           (unsigned char) *c);
  const char *qmark = strchr (target, '?');
  size_t path_len = qmark ? (size_t) (qmark - target) : strlen (target);
  const char *query = qmark ? qmark + 1 : NULL;
  struct segs s;
  split_path (target, path_len, &s);
  enum hv_api_route r = route_of (&s, method);
  if (r == HV_API_NOT_FOUND || r == HV_API_METHOD_NOT_ALLOWED)
    {
      t->route = r;
      return 0;
    }
  cleanup_free char *id = NULL, *path = NULL;
  if (s.n >= 3 && sandbox_id (s.at[2], s.len[2], &id, err) < 0)
    return -1;
  if (r == HV_API_FILE_GET || r == HV_API_FILE_PUT)
    {
      if (relative_path (s.at[4], s.len[4], false, "file path", &path, err) < 0)
        return -1;
    }
  unsigned limit = r == HV_API_SANDBOX_DENIALS ? HV_API_DENIALS_DEFAULT : 0;
  if (query && *query)
    {
      if (r == HV_API_SANDBOX_DENIALS)
        {
          if (denials_query (query, strlen (query), &limit, err) < 0)
            return -1;
        }
      else if (r != HV_API_FILE_LIST)
        return hv_error_set (err, 0, "query: this endpoint takes no query parameters");
      else if (list_query (query, strlen (query), &path, err) < 0)
        return -1;
    }
  t->limit = limit;
  t->route = r;
  t->sandbox_id = steal_pointer (&id);
  t->path = steal_pointer (&path);
  return 0;
}

void
hv_api_target_free (struct hv_api_target *t)
{
  free (t->sandbox_id);
  free (t->path);
  t->sandbox_id = NULL;
  t->path = NULL;
}
