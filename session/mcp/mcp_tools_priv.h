/* What the parts of the tools layer share (mcp_tools.c: calls and
 * requests; mcp_tools_table.c: the list and the instructions;
 * mcp_tools_result.c: the results made of the service's answers). */
#ifndef HAVEN_MCP_TOOLS_PRIV_H
#define HAVEN_MCP_TOOLS_PRIV_H

#include <stdint.h>
#include <yajl/yajl_gen.h>

#include "mcp_tools.h"

enum hv_mcp_tool
{
  HV_TOOL_RUN_COMMAND,
  HV_TOOL_RUN_CODE,
  HV_TOOL_READ_FILE,
  HV_TOOL_WRITE_FILE,
  HV_TOOL_LIST_FILES,
  HV_TOOL_WHY,
  HV_TOOL_N
};

extern const char *const hv_mcp_tool_names[HV_TOOL_N];

/* A refusal the service gave this session, for `why`. */
struct hv_mcp_refusal
{
  char *time; /* RFC 3339, UTC: as the audit trail writes its times */
  char *kind;
  char *what;
  char *rule;
};

/* A call in flight (slot free when id_json is NULL). */
struct hv_mcp_pending
{
  char *id_json;
  enum hv_mcp_tool tool;
  hv_svc_call *call;
  char *what;          /* run: the program (argv[0]); files: the path */
  unsigned timeout_s;  /* run: the limit asked for */
  unsigned limit;      /* why: the entries asked for */
  int64_t deadline_ms; /* CLOCK_MONOTONIC: past it, the call is answered as failed */
};

struct hv_mcp_tools
{
  const struct hv_svc_endpoint *endpoint;
  char *id, *policy, *workspace, *about;
  int shell;
  uint64_t max_output;
  unsigned timeout_s;
  bool verbose;
  char *gone; /* why the sandbox is gone, or NULL */
  hv_mcp_session *session;
  char *list_json;
  char *instructions;
  struct hv_mcp_pending calls[HV_MCP_CALLS_MAX];
  struct hv_mcp_refusal refusals[HV_MCP_REFUSALS_MAX]; /* a ring: the oldest at first_refusal */
  size_t n_refusals, first_refusal;
};

/* mcp_tools_table.c */
char *hv_mcp_tools_list_make (const hv_mcp_tools *t);
char *hv_mcp_tools_instructions_make (const hv_mcp_tools *t);

/* mcp_tools_result.c */
/* {"content":[{"type":"text","text":TEXT}],"isError":true} */
char *hv_mcp_tool_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
/* The result of a call the service answered (status, body). */
char *hv_mcp_tools_answer (hv_mcp_tools *t, const struct hv_mcp_pending *p, int status, const char *body, size_t len);
/* Remember a refusal for `why` (the oldest goes past HV_MCP_REFUSALS_MAX). */
void hv_mcp_tools_refused (hv_mcp_tools *t, const char *kind, const char *what, const char *rule);
/* The service's error message in an error answer's body, or the body. */
char *hv_mcp_service_message (int status, const char *body, size_t len);

#endif
