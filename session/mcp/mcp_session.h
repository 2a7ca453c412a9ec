/* One MCP session's lifecycle (the protocol's "initialize" handshake,
 * version negotiation, ping, tools/list, tools/call, cancellation),
 * independent of what the tools do and of any I/O: the server loop
 * (mcp_server.c) hands it each line read from the client and writes what
 * it returns; the tools (mcp_tools.c) answer calls, at once or later.
 *
 * Version negotiation (the MCP spec, "Lifecycle"): the client's
 * initialize names the revision it wants; if haven speaks it, it answers
 * with it, else with the newest it speaks (HV_MCP_VERSIONS[0]) and the
 * client decides.  Before "initialize" only "ping" is answered (others:
 * HV_MCP_NOT_INITIALIZED); a second initialize is INVALID_REQUEST. */
#ifndef HAVEN_MCP_SESSION_H
#define HAVEN_MCP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_tree.h>

#include "error.h"
#include "mcp_proto.h"

/* Calls in flight at once: one more is answered INTERNAL_ERROR "too
 * many calls in flight" (each holds a connection to the service). */
#define HV_MCP_CALLS_MAX 64
/* The output queue: above HIGH the server stops reading the client until
 * it has read what waits (each line read adds at most one answer, each
 * call in flight one result, so the queue stays near HIGH); above MAX a
 * result is answered with an INTERNAL_ERROR line instead, should a
 * caller not do so. */
#define HV_MCP_OUTPUT_HIGH (4 * 1024 * 1024)
#define HV_MCP_OUTPUT_MAX (256 * 1024 * 1024)

/* Newest first. */
extern const char *const HV_MCP_VERSIONS[];
extern const size_t HV_MCP_N_VERSIONS;

typedef struct hv_mcp_session hv_mcp_session;

/* What the tools layer gives the session. */
struct hv_mcp_tools_ops
{
  /* The "tools" array of tools/list as JSON text (name, title,
   * description, inputSchema; outputSchema where given). */
  const char *(*list_json) (void *ctx);
  /* A tools/call: the tool's name and its "arguments" (an object or
   * NULL).  Return 0 when the call was taken: its answer comes later
   * through hv_mcp_session_complete (or at once, called from here).
   * Return -1 for a call that is no call at all (unknown tool: *code
   * INVALID_PARAMS, *message why, malloc'd); a tool that ran and failed
   * answers with a result whose isError is true, not with -1 (the MCP
   * spec: tool errors go to the model, protocol errors to the client). */
  int (*call) (void *ctx, const char *id_json, const char *name, yajl_val arguments, int *code, char **message);
  /* notifications/cancelled for a call in flight: stop it; the session
   * then answers nothing for that id (the spec: a cancelled request gets
   * no response), so hv_mcp_session_complete for it is dropped.  The
   * call is over for the session when this returns: the tools layer must
   * not complete it later (the client may reuse the id for a new call,
   * which that late answer would then answer). */
  void (*cancel) (void *ctx, const char *id_json);
};

struct hv_mcp_server_info
{
  const char *name;         /* "haven" */
  const char *version;      /* PACKAGE_VERSION */
  const char *instructions; /* the initialize result's "instructions": what the tools are for */
};

hv_mcp_session *hv_mcp_session_new (const struct hv_mcp_server_info *info, const struct hv_mcp_tools_ops *ops, void *ctx);
void hv_mcp_session_free (hv_mcp_session *s);

/* One line the client sent (as hv_mcp_reader_next gave it; too_long: the
 * reader's 2).  Lines to write to the client are appended to the
 * session's output queue (hv_mcp_session_output). */
void hv_mcp_session_input (hv_mcp_session *s, const char *line, size_t len, bool too_long);

/* The answer to a call the tools layer took: result_json a CallToolResult
 * object as text ({"content":[...],"isError":B,"structuredContent":{..}}).
 * Dropped when the call was cancelled. */
void hv_mcp_session_complete (hv_mcp_session *s, const char *id_json, const char *result_json);

/* The queued output, '\n'-separated lines; the caller writes it and then
 * calls hv_mcp_session_output_consumed with what it wrote. */
const char *hv_mcp_session_output (hv_mcp_session *s, size_t *len);
void hv_mcp_session_output_consumed (hv_mcp_session *s, size_t n);

/* Whether the server should stop reading the client for now (more than
 * HV_MCP_OUTPUT_HIGH bytes wait to be written). */
bool hv_mcp_session_output_full (const hv_mcp_session *s);

/* The negotiated protocol revision, or NULL before initialize. */
const char *hv_mcp_session_version (const hv_mcp_session *s);
/* Whether the client has sent notifications/initialized. */
bool hv_mcp_session_ready (const hv_mcp_session *s);
/* Whether a call with this id is in flight (taken, not completed or cancelled). */
bool hv_mcp_session_in_flight (const hv_mcp_session *s, const char *id_json);

#endif
