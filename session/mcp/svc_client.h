/* A client of `haven serve` (docs/api.md) for `haven mcp`: finding the
 * service or starting a private one, and HTTP/1.1 requests over its Unix
 * socket, each on a connection of its own so that a run in flight can be
 * polled beside the MCP client's input and cancelled by closing it (the
 * service then kills the run's process group, docs/api.md "run").
 *
 * What the service answers is parsed strictly (status line, headers,
 * Content-Length or chunked body, bounded sizes): it is the same user's
 * process, but a bug there must not become one here. */
#ifndef HAVEN_SVC_CLIENT_H
#define HAVEN_SVC_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* An answer's body is at most this (a file read, a run's output: the
 * service bounds both below it). */
#define HV_SVC_BODY_MAX (40 * 1024 * 1024)

/* Where the service is. */
struct hv_svc_endpoint
{
  char *socket;      /* the socket's path */
  pid_t private_pid; /* a private `haven serve` this process started, or 0 */
  char *private_dir; /* its 0700 directory (removed at close), or NULL */
};
#define HV_SVC_ENDPOINT_INIT { .socket = NULL, .private_pid = 0, .private_dir = NULL }

/* socket_path: the service's socket (NULL: the user's default,
 * $XDG_RUNTIME_DIR/haven/haven.sock, root's /run/haven/haven.sock).  If a
 * service answers GET /v1/version there, use it (its pool).  Otherwise,
 * unless socket_path was given explicitly (then: the error), start a
 * private `haven_exe serve --socket DIR/haven.sock --pool-size 0` in a new
 * 0700 directory, a child of this process that dies with it
 * (PR_SET_PDEATHSIG: SIGTERM, so that it destroys its sandboxes) and
 * answers before this returns (bounded wait).  haven_exe: how haven was
 * invoked (argv[0]); a name without a '/' (found in PATH) runs the
 * binary running now (/proc/self/exe) under that name.  The
 * private service's stdout and stderr go to a log in its directory (this
 * process's stdout is the MCP stream), quoted in the error when it fails
 * to start. */
int hv_svc_endpoint_open (const char *haven_exe, const char *socket_path, struct hv_svc_endpoint *e, hv_error **err);
/* Stop a private service (SIGTERM, bounded wait, then SIGKILL; it destroys
 * its sandboxes on SIGTERM), remove its directory, free. */
void hv_svc_endpoint_close (struct hv_svc_endpoint *e);

/* One request on a connection of its own. */
typedef struct hv_svc_call hv_svc_call;

/* Connect and send the request (method, target as docs/api.md has it,
 * an optional body with its content type: NULL for none).  The request
 * goes out whole before this returns (bodies are bounded). */
int hv_svc_call_start (const struct hv_svc_endpoint *e, const char *method, const char *target,
                       const char *content_type, const void *body, size_t len, hv_svc_call **out, hv_error **err);
/* The connection's fd, to poll for reading. */
int hv_svc_call_fd (const hv_svc_call *c);
/* Read what is there without blocking: 1 the answer is complete, 0 more to
 * come, -1 an error (the connection closed early, a malformed answer). */
int hv_svc_call_progress (hv_svc_call *c, hv_error **err);
/* Block until complete or timeout_ms (-1: no limit): 0, or -1 with *err. */
int hv_svc_call_wait (hv_svc_call *c, int timeout_ms, hv_error **err);
/* The complete answer: its status and body (NUL-terminated for convenience; len excludes it). */
int hv_svc_call_status (const hv_svc_call *c);
const char *hv_svc_call_body (const hv_svc_call *c, size_t *len);
/* Close the connection (a run still in flight is killed by the service)
 * and free. */
void hv_svc_call_free (hv_svc_call *c);

/* start + wait + check: the body of a 2xx answer (malloc'd, *len), or -1
 * with *err: the service's error message ({"error":{"message":..}}) as
 * it is (a policy's FILE:LINE:COL kept), and its status (*status 0 when
 * no answer came: a timeout, a connection refused or cut short; *out is
 * then left as it was).  status, out and out_len may be NULL. */
int hv_svc_request (const struct hv_svc_endpoint *e, const char *method, const char *target, const char *content_type,
                    const void *body, size_t len, int timeout_ms, char **out, size_t *out_len, int *status, hv_error **err);

/* A connection held open for a sandbox created with
 * "destroy_on_disconnect": true: the sandbox lives while it is open (so
 * when haven mcp dies, even by SIGKILL, the service destroys it).  The
 * create is sent on it; the fd is kept by the caller and closed to end
 * the sandbox.  body: the create request's JSON.  Returns the answer's
 * body (the sandbox's JSON) in *out. */
int hv_svc_create_held (const struct hv_svc_endpoint *e, const char *body, int *held_fd, char **out, hv_error **err);

/* The answer's parser alone, without a connection (the unit tests read
 * canned answers through it): a call with no fd, and the bytes a
 * connection would have given (eof: it closed after them), with
 * progress()'s result. */
hv_svc_call *hv_svc_call_new_for_test (void);
int hv_svc_call_feed_for_test (hv_svc_call *c, const void *data, size_t len, bool eof, hv_error **err);

#endif
