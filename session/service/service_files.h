/* The files API of a sandbox's workspace (service_files.c). */
#ifndef HAVEN_SERVICE_FILES_H
#define HAVEN_SERVICE_FILES_H

#include "service_base.h"

void svc_handle_file_put (struct svc *s, struct svc_conn *c, struct svc_sandbox *x, const char *path);
void svc_handle_file_get (struct svc *s, struct svc_conn *c, struct svc_sandbox *x, const char *path);
void svc_handle_file_list (struct svc *s, struct svc_conn *c, struct svc_sandbox *x, const char *path);

#endif
