/* The Model Context Protocol's wire (stdio transport): messages are
 * JSON-RPC 2.0 objects, one per line, UTF-8, no newline inside a message.
 * Everything here is a pure function over bytes: a client is any program
 * that starts `haven mcp`, so all of it is fuzzed (tests/fuzz/fuzz_mcp_proto.c).
 *
 * The reader frames lines from a byte stream with a size bound; the parser
 * turns one line into a message or into the JSON-RPC error to answer
 * (with the request's id when one could be read); the writers make the
 * lines haven sends (always one line, '\n'-terminated, valid UTF-8). */
#ifndef HAVEN_MCP_PROTO_H
#define HAVEN_MCP_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_tree.h>

#include "error.h"

/* A line longer than this is refused (answered with a parse error, then
 * skipped to its newline): a write_file's content is in one message. */
#define HV_MCP_LINE_MAX (24 * 1024 * 1024)
/* JSON nesting a message may have (yajl's tree is recursive). */
#define HV_MCP_DEPTH_MAX 64
/* A request's id, as JSON text: it is echoed in the answer, so a client
 * cannot make each answer as long as its request. */
#define HV_MCP_ID_MAX 1024

/* JSON-RPC 2.0's error codes. */
#define HV_JSONRPC_PARSE_ERROR (-32700)
#define HV_JSONRPC_INVALID_REQUEST (-32600)
#define HV_JSONRPC_METHOD_NOT_FOUND (-32601)
#define HV_JSONRPC_INVALID_PARAMS (-32602)
#define HV_JSONRPC_INTERNAL_ERROR (-32603)
/* MCP: a request before the session is initialized. */
#define HV_MCP_NOT_INITIALIZED (-32002)

/* --- framing ----------------------------------------------------------- */
typedef struct hv_mcp_reader hv_mcp_reader;
hv_mcp_reader *hv_mcp_reader_new (size_t line_max);
void hv_mcp_reader_free (hv_mcp_reader *r);
/* Hand the reader bytes as they arrive (any split), then take lines
 * until hv_mcp_reader_next answers 0: the reader then holds at most
 * line_max + 1 bytes of a line besides the piece fed (the rest of a line
 * too long is dropped as it comes, never held). */
void hv_mcp_reader_feed (hv_mcp_reader *r, const void *buf, size_t len);
/* The next complete line (without its '\n', and without a '\r' before it),
 * valid until the next call: 1 a line, 0 none yet, 2 a line was too long
 * (it is being skipped; answer a parse error), -1 none and the stream
 * ended (after hv_mcp_reader_eof) with no partial line left over.  A
 * partial line at EOF is returned as a line.  Empty lines are skipped. */
int hv_mcp_reader_next (hv_mcp_reader *r, const char **line, size_t *len);
void hv_mcp_reader_eof (hv_mcp_reader *r);

/* --- messages ---------------------------------------------------------- */
enum hv_mcp_kind
{
  HV_MCP_REQUEST,      /* method and id */
  HV_MCP_NOTIFICATION, /* method, no id */
  HV_MCP_RESPONSE,     /* id and result or error: haven sends no requests, so it ignores these */
};

struct hv_mcp_message
{
  enum hv_mcp_kind kind;
  char *id;      /* the id as JSON text ("7", "\"abc\""), or NULL (notification) */
  char *method;  /* NULL for a response */
  yajl_val params; /* an object or NULL (absent); points into root */
  yajl_val root;
};
#define HV_MCP_MESSAGE_INIT { .kind = HV_MCP_NOTIFICATION, .id = NULL, .method = NULL, .params = NULL, .root = NULL }

/* Parse one line.  0: *m filled (free with hv_mcp_message_free).  -1: the
 * line is no valid message; *code is the JSON-RPC error to answer
 * (PARSE_ERROR: not JSON (comments included), a NUL byte, too deep, not
 * UTF-8; INVALID_REQUEST: not an object, no "jsonrpc":"2.0", a bad id
 * (not a string or an integer, or longer than HV_MCP_ID_MAX), a method
 * that is not a string, params not an object, a member JSON-RPC does not
 * define, a member name given twice in any object, a string holding
 * U+0000 or a lone surrogate (yajl's tree would cut or change it), a
 * batch: MCP since 2025-06-18 has none), *id_out the request's id as
 * JSON text when it could be read (else NULL: answer with id null), and
 * *err the reason, for the error's message.  Never answers a line that
 * was a notification (a "method" without an "id") or a response (a
 * "result" or "error" without a "method"): *code 0 then, say nothing.
 * A message taken holds only strings that are valid UTF-8 without NUL,
 * and no member name twice in one object. */
int hv_mcp_parse (const char *line, size_t len, struct hv_mcp_message *m, int *code, char **id_out, hv_error **err);
void hv_mcp_message_free (struct hv_mcp_message *m);

/* A request id (a tree value) as JSON text, as hv_mcp_message.id holds
 * it: a string (at most HV_MCP_ID_MAX bytes) written again by yajl_gen,
 * or an integer's digits as sent; NULL for anything else.  Two ids are
 * the same id exactly when these texts are equal (7 and "7" are not). */
char *hv_mcp_id_json (yajl_val v);

/* The lines haven writes, each a malloc'd '\n'-terminated string of
 * one JSON object, its strings made valid UTF-8 (bytes that are not:
 * U+FFFD; a U+0000 is kept, escaped).
 * result_json: a JSON object as text (the caller made it with json_gen);
 * text that is not one gives an INTERNAL_ERROR line for the id instead.
 * id_json: as hv_mcp_message.id, or NULL for null. */
char *hv_mcp_result_line (const char *id_json, const char *result_json);
char *hv_mcp_error_line (const char *id_json, int code, const char *message);
/* A notification (haven sends notifications/message for logging only if
 * the client asked): params_json an object as text, or NULL; NULL when
 * params_json is not an object. */
char *hv_mcp_notification_line (const char *method, const char *params_json);

/* Typed access to params: the member key of params, or NULL if absent or
 * null (JSON null counts as absent, as json_walk does). */
yajl_val hv_mcp_param (yajl_val params, const char *key);

#endif
