/* git's credential-helper protocol: the request reader, the answer writer
 * and the broker's decision.  See git_credential.h. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "git_credential.h"

void
hv_git_credential_clear (hv_git_credential *c)
{
  if (c->password)
    explicit_bzero (c->password, strlen (c->password));
  free (c->protocol);
  free (c->host);
  free (c->path);
  free (c->username);
  free (c->password);
  for (size_t i = 0; i < c->n_capability; i++)
    free (c->capability[i]);
  for (size_t i = 0; i < c->n_wwwauth; i++)
    free (c->wwwauth[i]);
  memset (c, 0, sizeof *c);
}

/* A URL scheme (RFC 3986): a letter, then letters, digits, '+', '-', '.'. */
static bool
valid_protocol (const char *p)
{
  if (!isalpha ((unsigned char) *p))
    return false;
  for (; *p; p++)
    if (!isalnum ((unsigned char) *p) && *p != '+' && *p != '-' && *p != '.')
      return false;
  return true;
}

/* Split "name[:port]" or "[v6]:port"; *port 0 when none.  False when the
 * port is not 1..65535 or the name holds a byte no host name has: a path,
 * userinfo, space or control character would make the name git asks for
 * differ from the one the broker checked. */
static bool
split_host (const char *host, size_t *name_len, unsigned *port)
{
  const char *colon;
  if (host[0] == '[')
    {
      const char *close = strchr (host, ']');
      if (!close)
        return false;
      colon = close[1] == ':' ? close + 1 : NULL;
      if (close[1] && !colon)
        return false;
    }
  else
    colon = strchr (host, ':');
  *name_len = colon ? (size_t) (colon - host) : strlen (host);
  for (size_t i = 0; i < *name_len; i++)
    {
      unsigned char ch = (unsigned char) host[i];
      if (host[0] == '[')
        {
          /* An IPv6 literal: hex digits, ':' and '.' between the brackets. */
          bool edge = i == 0 || i == *name_len - 1;
          if (edge ? ch != (i == 0 ? '[' : ']') || *name_len < 3 : !isxdigit (ch) && ch != ':' && ch != '.')
            return false;
          continue;
        }
      if (ch <= ' ' || ch == 0x7f || ch == '/' || ch == '@' || ch == '\\' || ch == '?' || ch == '#' || ch == '%'
          || ch == '[' || ch == ']')
        return false;
    }
  *port = 0;
  if (!colon)
    return true;
  const char *d = colon + 1;
  if (strlen (d) > 5)
    return false;
  unsigned v = 0;
  for (; *d; d++)
    {
      if (!isdigit ((unsigned char) *d))
        return false;
      v = v * 10 + (unsigned) (*d - '0');
    }
  if (v == 0 || v > 65535)
    return false;
  *port = v;
  return true;
}

bool
hv_git_credential_path_valid (const char *p)
{
  if (!*p)
    return false;
  for (;;)
    {
      const char *end = strchrnul (p, '/');
      size_t n = (size_t) (end - p);
      if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
        return false;
      for (const char *q = p; q < end; q++)
        if ((unsigned char) *q < ' ' || *q == 0x7f)
          return false;
      if (!*end)
        return true;
      p = end + 1;
    }
}

/* Set a single-valued field; a second value is refused, not overridden:
 * which of two a reader keeps is exactly what an attacker plays on. */
static int
set_once (char **field, const char *key, const char *value, size_t len, hv_error **err)
{
  if (*field)
    return hv_error_set (err, 0, "credential request: \"%s\" given twice", key);
  *field = strndup (value, len);
  if (!*field)
    return hv_error_set (err, errno, "credential request");
  return 0;
}

static int
unhex (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  c = (char) tolower ((unsigned char) c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decode [s, s+len) into a new string as git does for the parts
 * of a url; a bad escape, or one that makes a NUL or line break (the
 * decoded value could not be passed on in the protocol), is refused. */
static int
url_decode (const char *s, size_t len, char **out, hv_error **err)
{
  cleanup_free char *r = xmalloc0 (len + 1);
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    {
      if (s[i] != '%')
        {
          r[n++] = s[i];
          continue;
        }
      if (i + 2 >= len || unhex (s[i + 1]) < 0 || unhex (s[i + 2]) < 0)
        return hv_error_set (err, 0, "credential request: url: bad percent escape");
      char c = (char) (unhex (s[i + 1]) * 16 + unhex (s[i + 2]));
      if (c == '\0' || c == '\n' || c == '\r')
        return hv_error_set (err, 0, "credential request: url: escape of a NUL or line break");
      r[n++] = c;
      i += 2;
    }
  *out = steal_pointer (&r);
  return 0;
}

static int
set_decoded (char **field, const char *key, const char *s, size_t len, hv_error **err)
{
  if (*field)
    return hv_error_set (err, 0, "credential request: \"%s\" given twice (once in url)", key);
  return url_decode (s, len, field, err);
}

/* url=proto://[user[:password]@]host[:port][/path], split as git splits
 * it: userinfo ends at the first '@' before the first '/'. */
static int
expand_url (hv_git_credential *c, const char *url, hv_error **err)
{
  const char *sep = strstr (url, "://");
  if (!sep || sep == url)
    return hv_error_set (err, 0, "credential request: url without a protocol");
  /* git splits off a query or fragment in some versions and not in
   * others; a url whose parts depend on the version is refused. */
  if (strpbrk (url, "?#"))
    return hv_error_set (err, 0, "credential request: url with a query or fragment");
  if (c->protocol)
    return hv_error_set (err, 0, "credential request: \"protocol\" given twice (once in url)");
  c->protocol = strndup (url, (size_t) (sep - url));
  const char *cp = sep + 3;
  const char *slash = strchrnul (cp, '/');
  const char *at = strchr (cp, '@');
  const char *host = cp;
  if (at && at < slash)
    {
      const char *colon = memchr (cp, ':', (size_t) (at - cp));
      const char *user_end = colon ? colon : at;
      if (set_decoded (&c->username, "username", cp, (size_t) (user_end - cp), err) < 0)
        return -1;
      if (colon && set_decoded (&c->password, "password", colon + 1, (size_t) (at - colon - 1), err) < 0)
        return -1;
      host = at + 1;
    }
  if (set_decoded (&c->host, "host", host, (size_t) (slash - host), err) < 0)
    return -1;
  if (*slash)
    {
      /* git drops the slashes that end the path; nothing left is no path. */
      const char *p = slash + 1;
      size_t n = strlen (p);
      while (n && p[n - 1] == '/')
        n--;
      if (n && set_decoded (&c->path, "path", p, n, err) < 0)
        return -1;
    }
  return 0;
}

static int
add_list (char **list, size_t *n, const char *key, const char *value, size_t len, hv_error **err)
{
  if (*n >= HV_GIT_CREDENTIAL_MAX_LIST)
    return hv_error_set (err, 0, "credential request: more than %d \"%s\" entries", HV_GIT_CREDENTIAL_MAX_LIST,
                         key);
  list[(*n)++] = strndup (value, len);
  return 0;
}

static int
parse_line (hv_git_credential *c, const char *line, size_t len, bool *seen_url, hv_error **err)
{
  const char *eq = memchr (line, '=', len);
  if (!eq)
    return hv_error_set (err, 0, "credential request: a line without '='");
  size_t klen = (size_t) (eq - line);
  const char *v = eq + 1;
  size_t vlen = len - klen - 1;
  if (klen == 0)
    return hv_error_set (err, 0, "credential request: a line with an empty key");
#define KEY_IS(k) (klen == sizeof (k) - 1 && memcmp (line, k, klen) == 0)
  if (KEY_IS ("protocol"))
    return set_once (&c->protocol, "protocol", v, vlen, err);
  if (KEY_IS ("host"))
    return set_once (&c->host, "host", v, vlen, err);
  if (KEY_IS ("path"))
    return set_once (&c->path, "path", v, vlen, err);
  if (KEY_IS ("username"))
    return set_once (&c->username, "username", v, vlen, err);
  if (KEY_IS ("password"))
    return set_once (&c->password, "password", v, vlen, err);
  if (KEY_IS ("capability[]"))
    return add_list (c->capability, &c->n_capability, "capability[]", v, vlen, err);
  if (KEY_IS ("wwwauth[]"))
    return add_list (c->wwwauth, &c->n_wwwauth, "wwwauth[]", v, vlen, err);
  if (KEY_IS ("url"))
    {
      if (*seen_url)
        return hv_error_set (err, 0, "credential request: \"url\" given twice");
      *seen_url = true;
      cleanup_free char *url = strndup (v, vlen);
      return expand_url (c, url, err);
    }
#undef KEY_IS
  return 0;
}

static int
parse (const char *buf, size_t len, hv_git_credential *c, hv_error **err)
{
  if (len > HV_GIT_CREDENTIAL_MAX_BYTES)
    return hv_error_set (err, 0, "credential request: over %d bytes", HV_GIT_CREDENTIAL_MAX_BYTES);
  if (memchr (buf, '\0', len))
    return hv_error_set (err, 0, "credential request: a NUL byte");
  bool seen_url = false;
  size_t pos = 0;
  while (pos < len)
    {
      const char *line = buf + pos;
      const char *nl = memchr (line, '\n', len - pos);
      size_t n = nl ? (size_t) (nl - line) : len - pos;
      pos += n + (nl ? 1 : 0);
      if (n == 0)
        {
          /* The blank line ends the request; a second request behind it
           * on the same stream is not this request's. */
          if (pos < len)
            return hv_error_set (err, 0, "credential request: bytes after the blank line");
          break;
        }
      if (parse_line (c, line, n, &seen_url, err) < 0)
        return -1;
    }
  if (c->protocol && !valid_protocol (c->protocol))
    return hv_error_set (err, 0, "credential request: protocol is not a URL scheme");
  size_t name_len;
  unsigned port;
  if (c->host && !split_host (c->host, &name_len, &port))
    return hv_error_set (err, 0, "credential request: host is not a host name with an optional port");
  if (c->path && !hv_git_credential_path_valid (c->path))
    return hv_error_set (err, 0, "credential request: path has an empty, \".\" or \"..\" segment");
  return 0;
}

int
hv_git_credential_parse (const char *buf, size_t len, hv_git_credential *out, hv_error **err)
{
  if (parse (buf, len, out, err) < 0)
    {
      hv_git_credential_clear (out);
      return -1;
    }
  return 0;
}

/* One header line of the cache client's message, "KEY=VALUE\n" at
 * *pos: the value's bounds, or false when the line is not KEY's or has
 * no newline (the header is always followed by one). */
static bool
header_line (const char *buf, size_t len, size_t *pos, const char *key, const char **value, size_t *vlen)
{
  size_t klen = strlen (key);
  const char *line = buf + *pos;
  size_t left = len - *pos;
  if (left <= klen || memcmp (line, key, klen) != 0 || line[klen] != '=')
    return false;
  const char *nl = memchr (line, '\n', left);
  if (!nl)
    return false;
  *value = line + klen + 1;
  *vlen = (size_t) (nl - *value);
  *pos += (size_t) (nl - line) + 1;
  return true;
}

int
hv_git_credential_parse_cache (const char *buf, size_t len, char **action, hv_git_credential *out, hv_error **err)
{
  *action = NULL;
  if (len > HV_GIT_CREDENTIAL_CACHE_MAX_BYTES)
    return hv_error_set (err, 0, "credential request: over %d bytes", HV_GIT_CREDENTIAL_CACHE_MAX_BYTES);
  size_t pos = 0;
  const char *v;
  size_t vlen;
  if (!header_line (buf, len, &pos, "action", &v, &vlen) || vlen == 0 || vlen > 16)
    return hv_error_set (err, 0, "credential request: no \"action=\" line first");
  for (size_t i = 0; i < vlen; i++)
    if (!islower ((unsigned char) v[i]))
      return hv_error_set (err, 0, "credential request: the action is not a word");
  cleanup_free char *a = strndup (v, vlen);
  /* The timeout is the cache's own business (how long to keep a stored
   * credential); the broker stores nothing, so it is only checked. */
  if (header_line (buf, len, &pos, "timeout", &v, &vlen))
    {
      if (vlen == 0 || vlen > 10)
        return hv_error_set (err, 0, "credential request: timeout is not a number");
      for (size_t i = 0; i < vlen; i++)
        if (!isdigit ((unsigned char) v[i]))
          return hv_error_set (err, 0, "credential request: timeout is not a number");
    }
  if (hv_git_credential_parse (buf + pos, len - pos, out, err) < 0)
    return -1;
  *action = steal_pointer (&a);
  return 0;
}

int
hv_git_credential_answer (const char *username, const char *password, char **out, hv_error **err)
{
  if (strpbrk (username, "\r\n") || strpbrk (password, "\r\n"))
    return hv_error_set (err, 0, "credential answer: username or password holds a line break");
  *out = xasprintf ("username=%s\npassword=%s\n\n", username, password);
  return 0;
}

/* Whether path lies under prefix, by whole segments ("org/repo" covers
 * "org/repo" and "org/repo/x", not "org/repository"). */
static bool
path_under (const char *path, const char *prefix)
{
  size_t n = strlen (prefix);
  if (n == 0 || !path || strncmp (path, prefix, n) != 0)
    return false;
  return path[n] == '\0' || path[n] == '/';
}

int
hv_git_credential_decide (const char *action, const hv_git_credential *req, const hv_git_credential_host *hosts,
                          size_t n_hosts, const char **why)
{
  if (strcmp (action, "store") == 0 || strcmp (action, "erase") == 0)
    {
      *why = "the sandbox may not store or erase credentials";
      return -1;
    }
  if (strcmp (action, "get") != 0)
    {
      *why = "unknown action";
      return -1;
    }
  if (!req->protocol || strcmp (req->protocol, "https") != 0)
    {
      *why = "only https is answered";
      return -1;
    }
  size_t name_len;
  unsigned port;
  if (!req->host || !split_host (req->host, &name_len, &port) || name_len == 0)
    {
      *why = "no valid host";
      return -1;
    }
  if (port == 0)
    port = 443;
  *why = "host not listed";
  for (size_t i = 0; i < n_hosts; i++)
    {
      const hv_git_credential_host *h = &hosts[i];
      if (strlen (h->host) != name_len || strncasecmp (h->host, req->host, name_len) != 0)
        continue;
      if ((h->port ? h->port : 443) != port)
        continue;
      if (h->path_prefix && !path_under (req->path, h->path_prefix))
        {
          *why = req->path ? "path not under the listed prefix" : "the listed host needs a path (credential.useHttpPath)";
          continue;
        }
      *why = NULL;
      return (int) i;
    }
  return -1;
}
