/* HTTP/1.1 messages as the model API gateway reads them: an incremental,
 * bounded parser (RFC 9112) for the requests the sandbox sends and the
 * responses the API returns.
 *
 * Every request byte comes from the sandbox, and what the gateway forwards
 * is re-written from what this parser understood, so the parser decides
 * where one message ends and the next begins.  If it disagreed with the
 * API's server about that, a request could be hidden inside another one's
 * body (request smuggling) and reach the API unchecked.  It therefore
 * accepts one spelling of each thing and refuses every ambiguous shape:
 *
 * Requests
 *  - request line `METHOD SP origin-form SP HTTP/1.1` with single spaces,
 *    a token method, a target that starts with '/' and holds only the URI
 *    characters RFC 3986 allows in a path and query ('#' and a bad
 *    percent escape refused); only HTTP/1.1;
 *  - exactly one Host header (RFC 9112 3.2);
 *  - body framed by Content-Length or by chunked Transfer-Encoding, or
 *    none; refused: both at once, several Content-Length values that
 *    differ, a Content-Length that is not all digits, Transfer-Encoding
 *    other than exactly one `chunked`.
 * Responses
 *  - status line `HTTP/1.x SP 3DIGIT [SP reason]`; 101 (a protocol switch
 *    the gateway never asks for) refused;
 *  - no body for 1xx, 204, 304 and a response to HEAD; otherwise chunked,
 *    Content-Length, or until the connection closes (server-sent events
 *    come as chunks or until close, and flow out as they arrive);
 *    the same refusals as requests for the framing headers.
 * Both
 *  - every line ends in CRLF: a bare CR or a bare LF is refused, so is a
 *    NUL anywhere in the head or in a chunk's framing;
 *  - header names are tokens with the colon right after them; values hold
 *    no control character but HTAB; a line that starts with white space
 *    (obs-fold) is refused;
 *  - limits: HV_HTTP_LINE_MAX per line, HV_HTTP_HEADERS_MAX fields,
 *    HV_HTTP_HEAD_MAX bytes for the whole head, the same for the trailer
 *    section; chunk sizes of at most HV_HTTP_CHUNK_DIGITS_MAX hex digits
 *    with extensions of at most HV_HTTP_CHUNK_EXT_MAX bytes (ignored); a
 *    body of at most body_max bytes (0: no limit) however it is framed.
 *
 * Input comes in pieces of any size (hv_http_feed); the parser reads only
 * the bytes it is given and says how many it used, so the bytes of a next
 * message stay with the caller.  Body data is handed back as ranges of
 * the caller's buffer, the chunk framing taken off.  After an error the
 * parser refuses everything (the connection is to be closed). */
#ifndef HAVEN_HTTP_MESSAGE_H
#define HAVEN_HTTP_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* One line of the head or of the trailer section, CRLF included.  Large
 * enough for the API's own headers (the longest are a few hundred bytes);
 * a longer one is something we do not forward anyway. */
#define HV_HTTP_LINE_MAX 8192
/* Header fields in one head (and trailer fields in one trailer section). */
#define HV_HTTP_HEADERS_MAX 100
/* The whole head, request or status line and header lines and the empty
 * line, in bytes (and the trailer section, separately). */
#define HV_HTTP_HEAD_MAX 32768
/* A chunk size: 15 hex digits keep it below 2^60, far above any body_max,
 * and leading zeros beyond that are refused rather than skipped. */
#define HV_HTTP_CHUNK_DIGITS_MAX 15
/* A chunk's extensions (";name=value..." after the size), which carry
 * nothing the gateway uses: bounded so a chunk line cannot grow without end. */
#define HV_HTTP_CHUNK_EXT_MAX 128
/* The longest method name we keep (the APIs use GET, POST, DELETE). */
#define HV_HTTP_METHOD_MAX 16

typedef enum hv_http_kind
{
  HV_HTTP_REQUEST,
  HV_HTTP_RESPONSE,
} hv_http_kind;

typedef enum hv_http_framing
{
  HV_HTTP_BODY_NONE,    /* no body */
  HV_HTTP_BODY_LENGTH,  /* Content-Length bytes */
  HV_HTTP_BODY_CHUNKED, /* chunked transfer coding */
  HV_HTTP_BODY_CLOSE,   /* until the connection closes (responses only) */
} hv_http_framing;

/* A header field as it came (name's case kept), both NUL-terminated
 * inside the parser, valid until the parser is reset; the value has its
 * leading and trailing white space taken off. */
typedef struct hv_http_header
{
  const char *name;
  const char *value;
} hv_http_header;

typedef struct hv_http_head
{
  /* Requests */
  const char *method;
  const char *target;
  /* Responses */
  int status;
  const char *reason;
  int minor_version; /* 1 for HTTP/1.1; 0 or 1 in responses */
  size_t n_headers;
  hv_http_header headers[HV_HTTP_HEADERS_MAX];
  hv_http_framing framing;
  uint64_t content_length; /* when framing is HV_HTTP_BODY_LENGTH */
} hv_http_head;

typedef enum hv_http_event
{
  HV_HTTP_MORE, /* every byte given was used; give more */
  HV_HTTP_HEAD, /* the head is complete: hv_http_parser.head */
  HV_HTTP_DATA, /* body bytes: data[0..len) of the caller's input */
  HV_HTTP_END,  /* the message is complete; later bytes are not its own */
} hv_http_event;

typedef struct hv_http_data
{
  const uint8_t *data;
  size_t len;
} hv_http_data;

typedef struct hv_http_parser
{
  hv_http_kind kind;
  bool head_request; /* a response to HEAD: no body whatever it says */
  uint64_t body_max; /* 0: no limit */
  int state;
  hv_http_head head;
  /* The head's lines, NUL-terminated where they were split. */
  char head_buf[HV_HTTP_HEAD_MAX + 1];
  size_t head_len;
  /* The line being read: its bytes so far (in head_buf for the head, in
   * line_buf for a chunk size or trailer line) and whether the last one
   * was a CR. */
  char line_buf[HV_HTTP_LINE_MAX + 1];
  size_t line_len;
  bool line_cr;
  bool saw_request_line;
  uint64_t remaining;  /* bytes left of the body or of the chunk */
  uint64_t body_total; /* body bytes so far */
  size_t trailer_fields;
  size_t trailer_bytes;
} hv_http_parser;

/* Ready to read one request, or one response (head_request: the request
 * was HEAD).  body_max bounds the body (0: no limit). */
void hv_http_parser_init (hv_http_parser *p, hv_http_kind kind, bool head_request, uint64_t body_max);

/* Read from data[0..len).  Returns an hv_http_event (>= 0) and sets
 * *used to the bytes consumed (never more than len, and len when the
 * event is HV_HTTP_MORE); for HV_HTTP_DATA *out is the body's bytes.
 * Call again with the bytes after *used until HV_HTTP_END (which a call
 * with len 0 can return, for a message with no body).  On a refusal
 * returns -1 with *err saying why. */
int hv_http_feed (hv_http_parser *p, const uint8_t *data, size_t len, size_t *used, hv_http_data *out,
                  hv_error **err);

/* The peer closed the connection: HV_HTTP_END when that ends the message
 * (a body framed by close), otherwise -1 with *err (cut short). */
int hv_http_finish (hv_http_parser *p, hv_error **err);

/* The first header named name (any case), or NULL. */
const char *hv_http_header_get (const hv_http_head *h, const char *name);

/* Whether c may appear in a token (RFC 9110 5.6.2: method, header name). */
bool hv_http_tchar (unsigned char c);

#endif
