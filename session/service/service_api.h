/* The service's API (docs/api.md): which handler a request goes to, the
 * JSON bodies it reads, the JSON it answers.  Pure functions over bytes:
 * every request comes from some process of the user, so all of it is
 * fuzzed (tests/fuzz/fuzz_service_api.c).  The HTTP framing is the
 * gateway's strict parser (http_message.h). */
#ifndef HAVEN_SERVICE_API_H
#define HAVEN_SERVICE_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "oci_spec.h"

#define HV_API_VERSION 1
/* Bounds the parsers enforce (the service may set lower ones). */
#define HV_API_BODY_MAX (16 * 1024 * 1024) /* a request body: a file written, a run's stdin */
#define HV_API_ID_MAX 64

enum hv_api_route
{
  HV_API_NOT_FOUND = 0,
  HV_API_METHOD_NOT_ALLOWED, /* a known path with another method: 405 */
  HV_API_VERSION_GET,        /* GET    /v1/version */
  HV_API_SANDBOX_CREATE,     /* POST   /v1/sandboxes */
  HV_API_SANDBOX_LIST,       /* GET    /v1/sandboxes */
  HV_API_SANDBOX_GET,        /* GET    /v1/sandboxes/ID */
  HV_API_SANDBOX_DELETE,     /* DELETE /v1/sandboxes/ID */
  HV_API_SANDBOX_RUN,        /* POST   /v1/sandboxes/ID/run */
  HV_API_FILE_PUT,           /* PUT    /v1/sandboxes/ID/files/PATH   (body: the bytes) */
  HV_API_FILE_GET,           /* GET    /v1/sandboxes/ID/files/PATH */
  HV_API_FILE_LIST,          /* GET    /v1/sandboxes/ID/list[?path=DIR] */
  HV_API_SANDBOX_DENIALS,    /* GET    /v1/sandboxes/ID/denials[?limit=N] */
};

/* GET .../denials: how many of the last denials (limit=N). */
#define HV_API_DENIALS_DEFAULT 50
#define HV_API_DENIALS_MAX 1000

struct hv_api_target
{
  enum hv_api_route route;
  char *sandbox_id; /* [A-Za-z0-9_-]{1,HV_API_ID_MAX}, or NULL */
  char *path;       /* percent-decoded, relative (files, list), or NULL */
  unsigned limit;   /* denials: 1..HV_API_DENIALS_MAX (HV_API_DENIALS_DEFAULT when not given) */
};
/* Route a request: method and target (origin-form, with its query) as the
 * HTTP parser gave them.  -1 with *err for a malformed target (bad escape,
 * a NUL, a bad id): a 400. */
int hv_api_route (const char *method, const char *target, struct hv_api_target *t, hv_error **err);
void hv_api_target_free (struct hv_api_target *t);

/* POST /v1/sandboxes: {"policy": NAME-OR-FILE, "project": DIR,
 * "pool": bool, "destroy_on_disconnect": bool, "idle_timeout_s": N} */
struct hv_api_create
{
  char *policy;  /* required */
  char *project; /* NULL: a scratch workspace */
  bool pool;     /* default true: a scratch sandbox may come from the pool */
  bool destroy_on_disconnect;
  uint32_t idle_timeout_s; /* 0: the service's default */
};
/* Errors name the JSON path ("request body: .policy: expected a string"):
 * a 400.  An unknown key is an error. */
int hv_api_parse_create (const char *body, size_t len, struct hv_api_create *out, hv_error **err);
void hv_api_create_free (struct hv_api_create *c);

/* POST /v1/sandboxes/ID/run: {"argv": [...], "env": {"NAME": "VALUE"},
 * "cwd": DIR, "stdin": TEXT | "stdin_b64": BASE64, "timeout_s": N,
 * "max_output": BYTES, "stream": bool} */
struct hv_api_run
{
  oci_strv argv; /* not empty */
  oci_strv env;  /* NAME=VALUE; names [A-Za-z_][A-Za-z0-9_]*, no NUL anywhere */
  char *cwd;     /* NULL: the workspace; relative: beneath it; absolute: as the sandbox sees it */
  char *stdin_data; /* NULL: stdin is empty (/dev/null's EOF) */
  size_t stdin_len;
  uint32_t timeout_s;  /* 0: the service's default */
  uint64_t max_output; /* per stream; 0: the service's default */
  bool stream;         /* answer as NDJSON chunks while it runs */
};
int hv_api_parse_run (const char *body, size_t len, struct hv_api_run *out, hv_error **err);
void hv_api_run_free (struct hv_api_run *r);

/* What a run gave. */
struct hv_api_run_result
{
  int exit_code;       /* as a shell: 128+N for signal N, 124 past the time limit */
  bool timed_out;
  double duration_s;
  const char *stdout_data, *stderr_data;
  size_t stdout_len, stderr_len;
  bool stdout_truncated, stderr_truncated; /* more was written than max_output: the rest was dropped */
};
/* {"exit_code":..,"stdout":TEXT,"stderr":TEXT,...}: each output as a
 * string (invalid UTF-8 bytes as U+FFFD) and, when it is not valid UTF-8,
 * also "stdout_b64"/"stderr_b64" with the exact bytes. */
char *hv_api_run_result_json (const struct hv_api_run_result *r);
/* One NDJSON line of a streamed run (newline included):
 * {"stream":"stdout"|"stderr","data":TEXT[,"data_b64":..]}. */
char *hv_api_stream_line (const char *stream, const char *data, size_t len);

/* {"error":{"code":CODE,"message":MESSAGE}} */
char *hv_api_error_json (const char *code, const char *message);

#endif
