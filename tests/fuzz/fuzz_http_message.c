/* Fuzz target of the gateway's HTTP/1.1 parser (runtime/gateway/
 * http_message.c) and of the request head rewrite (gateway_route.c).
 *
 * The first byte picks request or response (bit 0), a response to HEAD
 * (bit 1), a body limit of 64 bytes or none (bit 2), the peer closing
 * after the input (bit 3), and the size of the pieces the second pass
 * feeds (bits 4-7: 1 to 16 bytes); the rest is the message.  The message
 * is parsed twice, whole and in pieces: both must end the same way (the
 * same error after the same head, or the same head, body and end at the
 * same byte), never
 * use more than they were given, and hand out body ranges of the input.
 * A request head that parses holds only what the parser promises (token
 * names, values without control characters, an origin-form target
 * without '#'), and for each provider the rewrite either refuses it or
 * gives a head that parses again to the same method and target, with the
 * provider's host, the same framing, no header the rewrite drops, and
 * exactly one credential header: the one it set, holding the real key. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz_util.h"
#include "gateway_route.h"
#include "http_message.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

struct outcome
{
  bool failed;
  char err[256];
  int heads;
  bool end;
  size_t used;
  uint8_t *body;
  size_t body_len;
};

static void
run (hv_http_parser *p, const uint8_t *msg, size_t len, size_t piece, bool close, struct outcome *o)
{
  memset (o, 0, sizeof (*o));
  o->body = malloc (len + 1);
  size_t off = 0;
  while (!o->end && !o->failed)
    {
      size_t stop = piece == 0 || len - off < piece ? len : off + piece;
      size_t at = off;
      for (;;)
        {
          size_t used = (size_t) -1;
          hv_http_data d;
          hv_error *err = NULL;
          int ev = hv_http_feed (p, msg + at, stop - at, &used, &d, &err);
          if (ev < 0)
            {
              if (err == NULL || err->msg == NULL || err->msg[0] == '\0')
                fuzz_fail ("refusal without a reason");
              snprintf (o->err, sizeof (o->err), "%s", err->msg);
              hv_error_free (&err);
              o->failed = true;
              break;
            }
          if (err != NULL)
            fuzz_fail ("error set on success");
          if (used > stop - at)
            fuzz_fail ("used %zu of %zu bytes", used, stop - at);
          at += used;
          if (ev == HV_HTTP_MORE)
            {
              if (at != stop)
                fuzz_fail ("MORE with bytes left");
              break;
            }
          if (ev == HV_HTTP_HEAD && ++o->heads > 1)
            fuzz_fail ("two heads");
          if (ev == HV_HTTP_DATA)
            {
              if (o->heads != 1 || d.len == 0 || d.data < msg + off || d.data + d.len > msg + stop)
                fuzz_fail ("body range outside the input or before the head");
              memcpy (o->body + o->body_len, d.data, d.len);
              o->body_len += d.len;
            }
          if (ev == HV_HTTP_END)
            {
              if (o->heads != 1)
                fuzz_fail ("end without a head");
              o->end = true;
              o->used = at;
              break;
            }
        }
      off = stop;
      if (off == len)
        break;
    }
  if (!o->end && !o->failed && close)
    {
      hv_error *err = NULL;
      if (hv_http_finish (p, &err) < 0)
        {
          snprintf (o->err, sizeof (o->err), "%s", err->msg);
          hv_error_free (&err);
          o->failed = true;
        }
      else
        {
          o->end = true;
          o->used = len;
        }
    }
}

static bool
dropped_or_set (const char *name)
{
  return strcasecmp (name, "authorization") == 0 || strcasecmp (name, "x-api-key") == 0
         || strcasecmp (name, "x-goog-api-key") == 0;
}

static void
check_request_head (const hv_http_head *h)
{
  if (h->target[0] != '/' || strchr (h->target, '#') != NULL)
    fuzz_fail ("target not origin-form");
  for (const char *c = h->method; *c; c++)
    if (!hv_http_tchar ((unsigned char) *c))
      fuzz_fail ("method not a token");
  for (size_t k = 0; k < h->n_headers; k++)
    {
      for (const char *c = h->headers[k].name; *c; c++)
        if (!hv_http_tchar ((unsigned char) *c))
          fuzz_fail ("header name not a token");
      for (const unsigned char *c = (const unsigned char *) h->headers[k].value; *c; c++)
        if ((*c < 0x20 && *c != '\t') || *c == 0x7f)
          fuzz_fail ("control character in a value");
    }

  static const char secret[] = "REAL-SECRET-0123";
  for (hv_gw_provider id = 0; id < HV_GW_N_PROVIDERS; id++)
    {
      const hv_gw_api *api = hv_gw_api_get (id);
      hv_gw_credential cred = { id == HV_GW_GEMINI ? HV_GW_AUTH_GOOG_API_KEY : HV_GW_AUTH_BEARER, secret };
      char *out = NULL;
      size_t len = 0;
      hv_error *err = NULL;
      if (hv_gw_request_head (api, &cred, h, &out, &len, &err) < 0)
        {
          if (out != NULL)
            fuzz_fail ("output on refusal");
          hv_error_free (&err);
          continue;
        }
      hv_http_parser *q = malloc (sizeof (*q));
      hv_http_parser_init (q, HV_HTTP_REQUEST, false, 0);
      size_t used;
      hv_http_data d;
      if (hv_http_feed (q, (const uint8_t *) out, len, &used, &d, &err) != HV_HTTP_HEAD || used != len)
        fuzz_fail ("rewritten head does not parse: %s", err ? err->msg : "");
      if (strcmp (q->head.method, h->method) != 0 || strcmp (q->head.target, h->target) != 0)
        fuzz_fail ("rewritten head has another method or target");
      if (strcmp (hv_http_header_get (&q->head, "host"), api->host) != 0)
        fuzz_fail ("rewritten head has another host");
      if (q->head.framing != h->framing || q->head.content_length != h->content_length)
        fuzz_fail ("rewritten head has another framing");
      size_t creds = 0;
      for (size_t k = 0; k < q->head.n_headers; k++)
        {
          const hv_http_header *f = &q->head.headers[k];
          if (dropped_or_set (f->name))
            {
              const char *v = f->value;
              if (strncmp (v, "Bearer ", 7) == 0)
                v += 7;
              if (strcmp (v, secret) != 0)
                fuzz_fail ("a credential header that is not the real key's");
              creds++;
            }
          else if (hv_gw_header_dropped (f->name) && strcasecmp (f->name, "host") != 0
                   && strcasecmp (f->name, "content-length") != 0 && strcasecmp (f->name, "transfer-encoding") != 0)
            fuzz_fail ("header %s kept", f->name);
        }
      if (creds != 1)
        fuzz_fail ("%zu credential headers in the rewritten head", creds);
      free (q);
      free (out);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  uint8_t flags = data[0];
  const uint8_t *msg = data + 1;
  size_t len = size - 1;
  hv_http_kind kind = (flags & 1) ? HV_HTTP_RESPONSE : HV_HTTP_REQUEST;
  bool head_request = (flags & 2) != 0;
  uint64_t body_max = (flags & 4) ? 64 : 0;
  bool close = (flags & 8) != 0;
  size_t piece = (size_t) (flags >> 4) + 1;

  /* An exact copy, so a read past the end is the sanitizers' to see. */
  uint8_t *copy = malloc (len ? len : 1);
  memcpy (copy, msg, len);

  hv_http_parser *p = malloc (sizeof (*p));
  hv_http_parser *q = malloc (sizeof (*q));
  struct outcome whole, pieces;
  hv_http_parser_init (p, kind, head_request, body_max);
  run (p, copy, len, 0, close, &whole);
  hv_http_parser_init (q, kind, head_request, body_max);
  run (q, copy, len, piece, close, &pieces);

  if (whole.failed != pieces.failed || strcmp (whole.err, pieces.err) != 0)
    fuzz_fail ("whole and in pieces differ: \"%s\" and \"%s\"", whole.err, pieces.err);
  if (whole.heads != pieces.heads)
    fuzz_fail ("whole and in pieces give a head and none");
  /* Body bytes handed out before a refusal depend on the pieces (a body
   * over its limit is refused when the piece that passes it comes). */
  if (!whole.failed
      && (whole.end != pieces.end || whole.used != pieces.used || whole.body_len != pieces.body_len
          || memcmp (whole.body, pieces.body, whole.body_len) != 0))
    fuzz_fail ("whole and in pieces give other messages");
  if (whole.end && whole.used > len)
    fuzz_fail ("end past the input");
  if (body_max && whole.body_len > body_max)
    fuzz_fail ("body over its limit");
  /* A head once given stays valid whatever the body does after it. */
  if (whole.heads == 1 && kind == HV_HTTP_REQUEST)
    check_request_head (&p->head);
  if (whole.failed)
    {
      /* After a refusal nothing is read. */
      size_t used;
      hv_http_data d;
      hv_error *err = NULL;
      if (hv_http_feed (p, copy, len, &used, &d, &err) >= 0)
        fuzz_fail ("fed after a refusal");
      hv_error_free (&err);
    }
  free (whole.body);
  free (pieces.body);
  free (p);
  free (q);
  free (copy);
  return 0;
}
