/* The tools of `haven mcp` (docs/mcp.md): their table (names, schemas,
 * descriptions), the checking of a call's arguments, the request each
 * call becomes to `haven serve`, and the result made of its answer.
 *
 * Every call is a request on a connection of its own (svc_client.h),
 * taken at once and answered when the service answers: the server loop
 * polls the calls' fds (hv_mcp_tools_pollfds) and hands them back
 * (hv_mcp_tools_progress), which completes the calls through the
 * session.  Cancelling a call closes its connection: the service kills
 * a run's process group when its connection closes. */
#ifndef HAVEN_MCP_TOOLS_H
#define HAVEN_MCP_TOOLS_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_session.h"
#include "svc_client.h"

/* Calls in flight: at most HV_MCP_CALLS_MAX (mcp_session.h), as the
 * session takes them; the service's own cap on commands running at once
 * (--max-runs) answers 429 past it, a tool error. */
/* The refusals this session keeps for `why`. */
#define HV_MCP_REFUSALS_MAX 100

/* The sandbox the tools run in, as the service described it. */
struct hv_mcp_sandbox
{
  const char *id;
  const char *policy;    /* its name, as the service says it */
  const char *workspace; /* the path commands see */
  int shell;             /* 1 a shell may run, 0 not (process.block_shell...), -1 the service did not say */
  const char *about;     /* the policy in a few words (network, description), or NULL */
};

struct hv_mcp_tools_conf
{
  const struct hv_svc_endpoint *endpoint;
  struct hv_mcp_sandbox sandbox;
  uint64_t max_output;
  unsigned timeout_s;
  bool verbose;
};

typedef struct hv_mcp_tools hv_mcp_tools;

/* The strings of conf are copied. */
hv_mcp_tools *hv_mcp_tools_new (const struct hv_mcp_tools_conf *conf);
void hv_mcp_tools_free (hv_mcp_tools *t);
/* The session the calls are answered through (set before any call). */
void hv_mcp_tools_set_session (hv_mcp_tools *t, hv_mcp_session *s);
/* The ops for hv_mcp_session_new, with t as their ctx. */
extern const struct hv_mcp_tools_ops hv_mcp_tools_session_ops;
/* The initialize result's instructions (what the tools are for). */
const char *hv_mcp_tools_instructions (const hv_mcp_tools *t);

/* The fds of the calls in flight (at most max, POLLIN), and the time in
 * ms until the first call's deadline (-1: none). */
size_t hv_mcp_tools_pollfds (hv_mcp_tools *t, struct pollfd *fds, size_t max, int *timeout_ms);
/* Read what the calls' connections have; answer those complete, failed
 * or past their deadline. */
void hv_mcp_tools_progress (hv_mcp_tools *t);
/* The sandbox ended under the session (its held connection closed):
 * every later call is answered with a tool error saying so. */
void hv_mcp_tools_sandbox_gone (hv_mcp_tools *t, const char *why);
/* Close every call in flight, answering none (the session ends). */
void hv_mcp_tools_cancel_all (hv_mcp_tools *t);
size_t hv_mcp_tools_in_flight (const hv_mcp_tools *t);

#endif
