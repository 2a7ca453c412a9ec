/* HTTP/1.1 parser of the model API gateway: what it accepts and refuses,
 * and why, is in http_message.h. */
#include "config.h"

#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "http_message.h"

enum
{
  S_HEAD,        /* request or status line, header lines */
  S_BODY_LENGTH, /* Content-Length bytes */
  S_BODY_CLOSE,  /* everything until the peer closes */
  S_CHUNK_SIZE,  /* a chunk's size line */
  S_CHUNK_DATA,  /* a chunk's bytes */
  S_CHUNK_CRLF,  /* the CRLF after a chunk's bytes */
  S_TRAILER,     /* trailer fields after the last chunk */
  S_END,         /* complete: the next call says so */
  S_DONE,        /* complete and said */
  S_ERROR,       /* refused: everything after is refused */
};

bool
hv_http_tchar (unsigned char c)
{
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
    return true;
  return c != '\0' && strchr ("!#$%&'*+-.^_`|~", c) != NULL;
}

/* A field value's or reason phrase's bytes: HTAB, SP, visible ASCII and
 * obs-text, never another control character (RFC 9110 5.5). */
static bool
field_char (unsigned char c)
{
  return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static bool
hex_digit (unsigned char c, unsigned *v)
{
  if (c >= '0' && c <= '9')
    *v = c - '0';
  else if (c >= 'a' && c <= 'f')
    *v = c - 'a' + 10;
  else if (c >= 'A' && c <= 'F')
    *v = c - 'A' + 10;
  else
    return false;
  return true;
}

void
hv_http_parser_init (hv_http_parser *p, hv_http_kind kind, bool head_request, uint64_t body_max)
{
  memset (p, 0, sizeof (*p));
  p->kind = kind;
  p->head_request = head_request;
  p->body_max = body_max;
  p->state = S_HEAD;
}

static int
refuse (hv_http_parser *p, hv_error **err, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

static int
refuse (hv_http_parser *p, hv_error **err, const char *fmt, ...)
{
  va_list ap;
  p->state = S_ERROR;
  va_start (ap, fmt);
  hv_error_setv (err, 0, fmt, ap);
  va_end (ap);
  return hv_error_wrap (err, "HTTP %s", p->kind == HV_HTTP_REQUEST ? "request" : "response");
}

/* Reads one line's bytes into buf at p->line_len, at most limit of them
 * (CRLF not counted).  1: the line is complete (NUL-terminated, CRLF
 * taken off); 0: every byte was used; -1: refused (*err); -2: longer than
 * limit (the caller names the limit). */
static int
read_line (hv_http_parser *p, char *buf, size_t limit, const uint8_t *data, size_t len, size_t *i,
           hv_error **err)
{
  while (*i < len)
    {
      unsigned char c = data[(*i)++];
      if (p->line_cr)
        {
          if (c != '\n')
            return refuse (p, err, "bare CR (not followed by LF)");
          p->line_cr = false;
          buf[p->line_len] = '\0';
          return 1;
        }
      if (c == '\r')
        {
          p->line_cr = true;
          continue;
        }
      if (c == '\n')
        return refuse (p, err, "bare LF (a line must end in CRLF)");
      if (c == '\0')
        return refuse (p, err, "NUL byte");
      if (p->line_len >= limit)
        {
          p->state = S_ERROR;
          return -2;
        }
      buf[p->line_len++] = (char) c;
    }
  return 0;
}

/* "name: value" in place: name must be a token right before the colon,
 * the value is trimmed of white space and holds no control character. */
static int
split_field (hv_http_parser *p, char *line, hv_http_header *out, hv_error **err)
{
  if (line[0] == ' ' || line[0] == '\t')
    return refuse (p, err, "header line folded onto the one before (obs-fold)");
  char *colon = strchr (line, ':');
  if (colon == NULL)
    return refuse (p, err, "header line without a colon");
  if (colon == line)
    return refuse (p, err, "header line with an empty name");
  for (char *c = line; c < colon; c++)
    if (!hv_http_tchar ((unsigned char) *c))
      return refuse (p, err, "header name with a character a token may not hold (white space before the colon?)");
  *colon = '\0';
  char *v = colon + 1;
  while (*v == ' ' || *v == '\t')
    v++;
  size_t n = strlen (v);
  while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
    v[--n] = '\0';
  for (size_t k = 0; k < n; k++)
    if (!field_char ((unsigned char) v[k]))
      return refuse (p, err, "control character in the value of header %s", line);
  out->name = line;
  out->value = v;
  return 0;
}

/* The characters RFC 3986 allows in an origin-form target: unreserved,
 * sub-delims, ':', '@', '/', '?' and %HH. */
static int
check_target (hv_http_parser *p, const char *t, hv_error **err)
{
  if (t[0] != '/')
    return refuse (p, err, "target is not a path (only origin-form, starting with '/', is served)");
  for (const char *c = t; *c; c++)
    {
      unsigned char ch = (unsigned char) *c;
      unsigned d;
      if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
          || strchr ("-._~!$&'()*+,;=:@/?", ch) != NULL)
        continue;
      if (ch == '%')
        {
          if (!hex_digit ((unsigned char) c[1], &d) || !hex_digit ((unsigned char) c[2], &d))
            return refuse (p, err, "target with a '%%' not followed by two hex digits");
          c += 2;
          continue;
        }
      if (ch == '#')
        return refuse (p, err, "target with a fragment ('#')");
      return refuse (p, err, "target with a character a URI may not hold (0x%02x)", ch);
    }
  return 0;
}

static int
parse_request_line (hv_http_parser *p, char *line, hv_error **err)
{
  char *sp1 = strchr (line, ' ');
  if (sp1 == NULL)
    return refuse (p, err, "request line without a target");
  size_t mlen = (size_t) (sp1 - line);
  if (mlen == 0 || mlen > HV_HTTP_METHOD_MAX)
    return refuse (p, err, "method empty or longer than %d bytes", HV_HTTP_METHOD_MAX);
  for (size_t k = 0; k < mlen; k++)
    if (!hv_http_tchar ((unsigned char) line[k]))
      return refuse (p, err, "method with a character a token may not hold");
  char *target = sp1 + 1;
  char *sp2 = strchr (target, ' ');
  if (sp2 == NULL)
    return refuse (p, err, "request line without a version");
  *sp1 = '\0';
  *sp2 = '\0';
  if (strcmp (sp2 + 1, "HTTP/1.1") != 0)
    return refuse (p, err, "version is not HTTP/1.1 (or the line has extra spaces)");
  if (check_target (p, target, err) < 0)
    return -1;
  p->head.method = line;
  p->head.target = target;
  p->head.minor_version = 1;
  return 0;
}

static int
parse_status_line (hv_http_parser *p, char *line, hv_error **err)
{
  if (strncmp (line, "HTTP/1.", 7) != 0 || (line[7] != '0' && line[7] != '1') || line[8] != ' ')
    return refuse (p, err, "status line does not start with HTTP/1.0 or HTTP/1.1 and a space");
  const char *s = line + 9;
  if (s[0] < '1' || s[0] > '5' || s[1] < '0' || s[1] > '9' || s[2] < '0' || s[2] > '9')
    return refuse (p, err, "status code is not three digits from 100 to 599");
  if (s[3] != '\0' && s[3] != ' ')
    return refuse (p, err, "status code is not three digits from 100 to 599");
  const char *reason = s[3] ? s + 4 : s + 3;
  for (const char *c = reason; *c; c++)
    if (!field_char ((unsigned char) *c))
      return refuse (p, err, "control character in the reason phrase");
  p->head.minor_version = line[7] - '0';
  p->head.status = (s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0');
  p->head.reason = reason;
  return 0;
}

/* Content-Length: digits only (no sign, no list, no spaces), at most 19
 * of them so the value fits 64 bits. */
static int
parse_length (hv_http_parser *p, const char *v, uint64_t *out, hv_error **err)
{
  size_t n = strlen (v);
  if (n == 0 || n > 19)
    return refuse (p, err, "Content-Length empty or of more than 19 digits");
  uint64_t x = 0;
  for (size_t k = 0; k < n; k++)
    {
      if (v[k] < '0' || v[k] > '9')
        return refuse (p, err, "Content-Length is not a number of digits");
      x = x * 10 + (uint64_t) (v[k] - '0');
    }
  *out = x;
  return 0;
}

static bool
response_without_body (const hv_http_parser *p)
{
  int s = p->head.status;
  return p->head_request || (s >= 100 && s < 200) || s == 204 || s == 304;
}

/* The framing the head announces, refusing the ambiguous shapes. */
static int
finish_head (hv_http_parser *p, hv_error **err)
{
  hv_http_head *h = &p->head;
  size_t n_length = 0, n_te = 0, n_host = 0;
  uint64_t length = 0;
  for (size_t k = 0; k < h->n_headers; k++)
    {
      const hv_http_header *f = &h->headers[k];
      if (strcasecmp (f->name, "content-length") == 0)
        {
          uint64_t v = 0;
          if (parse_length (p, f->value, &v, err) < 0)
            return -1;
          if (n_length > 0 && v != length)
            return refuse (p, err, "several Content-Length headers that differ");
          length = v;
          n_length++;
        }
      else if (strcasecmp (f->name, "transfer-encoding") == 0)
        {
          if (++n_te > 1)
            return refuse (p, err, "more than one Transfer-Encoding header");
          if (strcasecmp (f->value, "chunked") != 0)
            return refuse (p, err, "Transfer-Encoding other than exactly \"chunked\"");
        }
      else if (strcasecmp (f->name, "host") == 0)
        n_host++;
    }
  if (n_length > 0 && n_te > 0)
    return refuse (p, err, "both Content-Length and Transfer-Encoding");
  if (p->kind == HV_HTTP_REQUEST && n_host != 1)
    return refuse (p, err, "%s Host header", n_host == 0 ? "no" : "more than one");
  if (p->kind == HV_HTTP_RESPONSE && h->status == 101)
    return refuse (p, err, "status 101: the gateway never asks to switch protocols");

  if (p->kind == HV_HTTP_RESPONSE && response_without_body (p))
    h->framing = HV_HTTP_BODY_NONE;
  else if (n_te > 0)
    h->framing = HV_HTTP_BODY_CHUNKED;
  else if (n_length > 0)
    {
      h->framing = HV_HTTP_BODY_LENGTH;
      h->content_length = length;
    }
  else
    h->framing = p->kind == HV_HTTP_REQUEST ? HV_HTTP_BODY_NONE : HV_HTTP_BODY_CLOSE;

  if (h->framing == HV_HTTP_BODY_LENGTH && p->body_max > 0 && length > p->body_max)
    return refuse (p, err, "body of %" PRIu64 " bytes, over the limit of %" PRIu64, length, p->body_max);

  switch (h->framing)
    {
    case HV_HTTP_BODY_NONE:
      p->state = S_END;
      break;
    case HV_HTTP_BODY_LENGTH:
      p->remaining = length;
      p->state = length > 0 ? S_BODY_LENGTH : S_END;
      break;
    case HV_HTTP_BODY_CHUNKED:
      p->state = S_CHUNK_SIZE;
      break;
    case HV_HTTP_BODY_CLOSE:
      p->state = S_BODY_CLOSE;
      break;
    }
  return 0;
}

/* One complete head line at head_buf + head_len (line_len bytes). */
static int
head_line (hv_http_parser *p, bool *head_done, hv_error **err)
{
  char *line = p->head_buf + p->head_len;
  size_t n = p->line_len;
  p->head_len += n + 1;
  p->line_len = 0;
  if (!p->saw_request_line)
    {
      if (n == 0)
        return refuse (p, err, "empty line before the %s line", p->kind == HV_HTTP_REQUEST ? "request" : "status");
      p->saw_request_line = true;
      return p->kind == HV_HTTP_REQUEST ? parse_request_line (p, line, err) : parse_status_line (p, line, err);
    }
  if (n == 0)
    {
      *head_done = true;
      return finish_head (p, err);
    }
  if (p->head.n_headers >= HV_HTTP_HEADERS_MAX)
    return refuse (p, err, "more than %d header fields", HV_HTTP_HEADERS_MAX);
  return split_field (p, line, &p->head.headers[p->head.n_headers++], err);
}

/* The head's bytes so far, CRLFs counted (each line is stored with one NUL
 * where its CRLF was, and the line being read is not stored yet). */
static size_t
head_bytes (const hv_http_parser *p)
{
  size_t lines = p->head.n_headers + (p->saw_request_line ? 1 : 0);
  return p->head_len + lines;
}

/* At most HV_HTTP_LINE_MAX per line and HV_HTTP_HEAD_MAX in all, CRLF
 * counted in both: the room for the next line's bytes, or -1 when not even
 * its CRLF fits; *by_head when the head's bound is the nearer one. */
static int
line_room (size_t used, size_t *limit, bool *by_head)
{
  size_t room = used < HV_HTTP_HEAD_MAX ? HV_HTTP_HEAD_MAX - used : 0;
  *by_head = room < HV_HTTP_LINE_MAX;
  if (room < 2)
    return -1;
  *limit = (*by_head ? room : HV_HTTP_LINE_MAX) - 2;
  return 0;
}

static int
feed_head (hv_http_parser *p, const uint8_t *data, size_t len, size_t *i, hv_error **err)
{
  for (;;)
    {
      bool by_head, done = false;
      size_t limit = 0;
      int r = line_room (head_bytes (p), &limit, &by_head);
      if (r == 0)
        r = read_line (p, p->head_buf + p->head_len, limit, data, len, i, err);
      else
        r = -2;
      if (r == -2)
        return refuse (p, err, by_head ? "head longer than %d bytes" : "line longer than %d bytes",
                       by_head ? HV_HTTP_HEAD_MAX : HV_HTTP_LINE_MAX);
      if (r <= 0)
        return r;
      if (head_line (p, &done, err) < 0)
        return -1;
      if (done)
        return 1;
    }
}

/* "SIZE[ BWS ; extensions]" */
static int
chunk_size_line (hv_http_parser *p, hv_error **err)
{
  const char *c = p->line_buf;
  uint64_t size = 0;
  size_t digits = 0;
  unsigned d;
  while (hex_digit ((unsigned char) *c, &d))
    {
      if (++digits > HV_HTTP_CHUNK_DIGITS_MAX)
        return refuse (p, err, "chunk size of more than %d hex digits", HV_HTTP_CHUNK_DIGITS_MAX);
      size = size * 16 + d;
      c++;
    }
  if (digits == 0)
    return refuse (p, err, "chunk size is not a hex number");
  if (*c != '\0')
    {
      size_t ext = strlen (c);
      if (ext > HV_HTTP_CHUNK_EXT_MAX)
        return refuse (p, err, "chunk extensions longer than %d bytes", HV_HTTP_CHUNK_EXT_MAX);
      while (*c == ' ' || *c == '\t')
        c++;
      if (*c != ';')
        return refuse (p, err, "chunk size followed by something other than an extension");
      for (; *c; c++)
        if (!field_char ((unsigned char) *c))
          return refuse (p, err, "control character in a chunk extension");
    }
  p->line_len = 0;
  if (size == 0)
    {
      p->trailer_fields = 0;
      p->trailer_bytes = 0;
      p->state = S_TRAILER;
      return 0;
    }
  if (p->body_max > 0 && size > p->body_max - p->body_total)
    return refuse (p, err, "chunked body over the limit of %" PRIu64 " bytes", p->body_max);
  p->remaining = size;
  p->state = S_CHUNK_DATA;
  return 0;
}

/* A trailer field: checked like a header, then dropped (the gateway
 * forwards none). */
static int
trailer_line (hv_http_parser *p, hv_error **err)
{
  size_t n = p->line_len;
  p->line_len = 0;
  p->trailer_bytes += n + 2;
  if (n == 0)
    {
      p->state = S_END;
      return 0;
    }
  if (++p->trailer_fields > HV_HTTP_HEADERS_MAX)
    return refuse (p, err, "more than %d trailer fields", HV_HTTP_HEADERS_MAX);
  hv_http_header f;
  return split_field (p, p->line_buf, &f, err);
}

static int
body_bytes (hv_http_parser *p, const uint8_t *data, size_t len, size_t *i, uint64_t most, hv_http_data *out,
            hv_error **err)
{
  size_t n = len - *i;
  if ((uint64_t) n > most)
    n = (size_t) most;
  if (p->body_max > 0 && (uint64_t) n > p->body_max - p->body_total)
    return refuse (p, err, "body over the limit of %" PRIu64 " bytes", p->body_max);
  out->data = data + *i;
  out->len = n;
  *i += n;
  p->body_total += n;
  return HV_HTTP_DATA;
}

int
hv_http_feed (hv_http_parser *p, const uint8_t *data, size_t len, size_t *used, hv_http_data *out,
              hv_error **err)
{
  size_t i = 0;
  int r = HV_HTTP_MORE;
  out->data = NULL;
  out->len = 0;
  for (;;)
    {
      bool by_head;
      size_t limit = 0;
      switch (p->state)
        {
        case S_ERROR:
          *used = 0;
          return hv_error_set (err, 0, "HTTP %s: refused after an earlier error",
                               p->kind == HV_HTTP_REQUEST ? "request" : "response");
        case S_DONE:
          *used = 0;
          return HV_HTTP_END;
        case S_END:
          p->state = S_DONE;
          *used = i;
          return HV_HTTP_END;
        case S_HEAD:
          r = feed_head (p, data, len, &i, err);
          if (r < 0)
            return -1;
          *used = i;
          return r == 1 ? HV_HTTP_HEAD : HV_HTTP_MORE;
        case S_BODY_LENGTH:
          if (i == len)
            break;
          r = body_bytes (p, data, len, &i, p->remaining, out, err);
          if (r < 0)
            return -1;
          p->remaining -= out->len;
          if (p->remaining == 0)
            p->state = S_END;
          *used = i;
          return r;
        case S_BODY_CLOSE:
          if (i == len)
            break;
          r = body_bytes (p, data, len, &i, UINT64_MAX, out, err);
          if (r < 0)
            return -1;
          *used = i;
          return r;
        case S_CHUNK_DATA:
          if (i == len)
            break;
          r = body_bytes (p, data, len, &i, p->remaining, out, err);
          if (r < 0)
            return -1;
          p->remaining -= out->len;
          if (p->remaining == 0)
            p->state = S_CHUNK_CRLF;
          *used = i;
          return r;
        case S_CHUNK_SIZE:
          r = read_line (p, p->line_buf, HV_HTTP_CHUNK_DIGITS_MAX + HV_HTTP_CHUNK_EXT_MAX, data, len, &i, err);
          if (r == -2)
            return refuse (p, err, "chunk size line longer than %d bytes (size and extensions)",
                           HV_HTTP_CHUNK_DIGITS_MAX + HV_HTTP_CHUNK_EXT_MAX);
          if (r < 0)
            return -1;
          if (r == 0)
            break;
          if (chunk_size_line (p, err) < 0)
            return -1;
          continue;
        case S_CHUNK_CRLF:
          r = read_line (p, p->line_buf, 0, data, len, &i, err);
          if (r == -2)
            return refuse (p, err, "chunk longer than its size (no CRLF after its data)");
          if (r < 0)
            return -1;
          if (r == 0)
            break;
          p->state = S_CHUNK_SIZE;
          continue;
        case S_TRAILER:
          r = line_room (p->trailer_bytes, &limit, &by_head);
          if (r == 0)
            r = read_line (p, p->line_buf, limit, data, len, &i, err);
          else
            r = -2;
          if (r == -2)
            return refuse (p, err, by_head ? "trailer section longer than %d bytes" : "trailer line longer than %d bytes",
                           by_head ? HV_HTTP_HEAD_MAX : HV_HTTP_LINE_MAX);
          if (r < 0)
            return -1;
          if (r == 0)
            break;
          if (trailer_line (p, err) < 0)
            return -1;
          continue;
        }
      /* Every byte given was used and the message wants more. */
      *used = len;
      return HV_HTTP_MORE;
    }
}

int
hv_http_finish (hv_http_parser *p, hv_error **err)
{
  switch (p->state)
    {
    case S_BODY_CLOSE:
    case S_END:
    case S_DONE:
      p->state = S_DONE;
      return HV_HTTP_END;
    case S_ERROR:
      return hv_error_set (err, 0, "HTTP %s: refused after an earlier error",
                           p->kind == HV_HTTP_REQUEST ? "request" : "response");
    case S_HEAD:
      return refuse (p, err, "connection closed before the head was complete");
    default:
      return refuse (p, err, "connection closed before the body was complete");
    }
}

const char *
hv_http_header_get (const hv_http_head *h, const char *name)
{
  for (size_t k = 0; k < h->n_headers; k++)
    if (strcasecmp (h->headers[k].name, name) == 0)
      return h->headers[k].value;
  return NULL;
}
