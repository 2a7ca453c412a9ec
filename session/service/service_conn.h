/* The service's connections (service_conn.c): accepted, read, each
 * request routed to its handler, and let go. */
#ifndef HAVEN_SERVICE_CONN_H
#define HAVEN_SERVICE_CONN_H

#include "service_base.h"

void svc_conn_accept (struct svc *s);
void svc_conn_input (struct svc *s, struct svc_conn *c);
void svc_conn_gone (struct svc *s, struct svc_conn *c); /* the peer left */
void svc_conn_free (struct svc *s, struct svc_conn *c);

#endif
