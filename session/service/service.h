/* `haven serve`: the sandbox service.  One process, one poll loop, no
 * threads (the sandbox layer forks its makers, and a fork of a threaded
 * process keeps only the forking thread).  It holds the sandboxes its
 * makers made (it is their child subreaper), answers the API
 * (service_api.h) on a Unix socket only its own user may use, and keeps a
 * warm pool of sandboxes per policy. */
#ifndef HAVEN_SERVICE_H
#define HAVEN_SERVICE_H

#include "error.h"
#include "service_opts.h"

/* Serve until SIGTERM or SIGINT (0: every sandbox destroyed, the socket
 * removed), or fail to start (-1 with *err: a live service already
 * answers on the socket, the socket cannot be made). */
int hv_service_run (const struct hv_service_opts *o, hv_error **err);

#endif
