/* What the API's parsers share (service_api_*.c); not for the service. */
#ifndef HAVEN_SERVICE_API_INTERNAL_H
#define HAVEN_SERVICE_API_INTERNAL_H

#include <stddef.h>

#include "error.h"

/* The longest path the API takes (a file, a listed directory, a run's
 * cwd), and the longest component: what the kernel would refuse anyway
 * (ENAMETOOLONG), refused here with a message that says which. */
#define HV_API_PATH_MAX 4095
#define HV_API_NAME_MAX 255
/* How deep a request body may nest: the bodies are two levels deep;
 * yajl's tree is built and freed recursively. */
#define HV_API_JSON_DEPTH_MAX 16

/* A path beneath the workspace, as the caller wrote it: relative (no
 * leading '/'), no empty, "." or ".." component, no NUL (len bytes: a
 * decoded target may hold one).  what names it in the message. */
int hv_api_relative_path_check (const char *p, size_t len, const char *what, hv_error **err);

/* The checks a request body passes before yajl's tree reads it: its
 * size, no NUL byte, nesting, and no string or member name holding
 * U+0000 (yajl's tree keeps strings NUL-terminated without their length:
 * "a\u0000b" would be read as "a", an argument or a name cut short in
 * silence).  *text: the body as a NUL-terminated copy.  Errors read
 * "request body: ...", naming the JSON path. */
int hv_api_body_scan (const char *body, size_t len, char **text, hv_error **err);

#endif
