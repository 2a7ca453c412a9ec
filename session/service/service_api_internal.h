/* What the API's parsers share (service_api_*.c); not for the service. */
#ifndef HAVEN_SERVICE_API_INTERNAL_H
#define HAVEN_SERVICE_API_INTERNAL_H

#include <stddef.h>

#include "error.h"

/* How deep a request body may nest: the bodies are two levels deep;
 * yajl's tree is built and freed recursively. */
#define HV_API_JSON_DEPTH_MAX 16

/* The checks a request body passes before yajl's tree reads it: its
 * size, no NUL byte, nesting, and no string or member name holding
 * U+0000 (yajl's tree keeps strings NUL-terminated without their length:
 * "a\u0000b" would be read as "a", an argument or a name cut short in
 * silence).  *text: the body as a NUL-terminated copy.  Errors read
 * "request body: ...", naming the JSON path. */
int hv_api_body_scan (const char *body, size_t len, char **text, hv_error **err);

#endif
