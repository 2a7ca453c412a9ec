/* The requests on sandboxes themselves (service_handlers.c). */
#ifndef HAVEN_SERVICE_HANDLERS_H
#define HAVEN_SERVICE_HANDLERS_H

#include "service_base.h"

void svc_handle_create (struct svc *s, struct svc_conn *c);
void svc_handle_list (struct svc *s, struct svc_conn *c);
void svc_handle_get (struct svc *s, struct svc_conn *c, const char *id);
void svc_handle_delete (struct svc *s, struct svc_conn *c, const char *id);
void svc_handle_denials (struct svc *s, struct svc_conn *c, const char *id, unsigned limit);

#endif
