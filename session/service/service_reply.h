/* The HTTP answers (service_reply.c): queued on a connection, sent as
 * the socket takes them, and the end of a request's answer, which lets
 * the connection's next request be read. */
#ifndef HAVEN_SERVICE_REPLY_H
#define HAVEN_SERVICE_REPLY_H

#include <stddef.h>

#include "service_base.h"

void svc_reply (struct svc_conn *c, int status, const char *content_type, const char *body, size_t len);
void svc_reply_json (struct svc_conn *c, int status, char *json); /* takes json */
void svc_reply_error (struct svc_conn *c, int status, const char *code, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
void svc_chunk (struct svc_conn *c, const char *data, size_t len); /* one chunk; len 0: the last */
/* Send what is queued, as much as the socket takes now; once all of an
 * answer that closes the connection is out, shut it down for writing. */
void svc_conn_output (struct svc *s, struct svc_conn *c);
void svc_request_done (struct svc *s, struct svc_conn *c); /* the answer is queued: read the next request */

#endif
