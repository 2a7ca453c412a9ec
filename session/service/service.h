/* `haven serve`: the sandbox service.  One process, one poll loop, no
 * threads (the sandbox layer forks its makers, and a fork of a threaded
 * process keeps only the forking thread).  It holds the sandboxes its
 * makers made (it is their child subreaper), answers the API
 * (service_api.h) on a Unix socket only its own user may use, and keeps a
 * warm pool of sandboxes per policy. */
#ifndef HAVEN_SERVICE_H
#define HAVEN_SERVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

struct hv_service_opts
{
  const char *socket_path;   /* NULL: hv_service_default_socket () */
  const char *haven_argv0;   /* how haven was invoked (run_trust.h) */
  unsigned pool_size;        /* pristine sandboxes kept per pooled policy */
  unsigned max_sandboxes;    /* claimed or being made; pooled ones do not count */
  unsigned max_runs;         /* running commands per sandbox */
  uint32_t idle_timeout_s;   /* the default of a sandbox's idle timeout */
  uint32_t pool_max_age_s;   /* a pooled sandbox older than this is remade */
  uint64_t max_output;       /* the cap of a run's max_output, per stream */
  bool verbose;              /* one line per request too, not only per event */
};

#define HV_SERVICE_DEFAULT_POOL_SIZE 2
#define HV_SERVICE_DEFAULT_MAX_SANDBOXES 128
#define HV_SERVICE_DEFAULT_MAX_RUNS 16
#define HV_SERVICE_DEFAULT_IDLE_S 600
#define HV_SERVICE_MAX_IDLE_S (24 * 3600)
#define HV_SERVICE_DEFAULT_POOL_MAX_AGE_S 300
#define HV_SERVICE_DEFAULT_RUN_OUTPUT (1024 * 1024)
#define HV_SERVICE_MAX_OUTPUT (16 * 1024 * 1024)
#define HV_SERVICE_DEFAULT_RUN_TIMEOUT_S 300

/* $XDG_RUNTIME_DIR/haven/haven.sock; root: /run/haven/haven.sock. */
char *hv_service_default_socket (void);

/* Serve until SIGTERM or SIGINT (0: every sandbox destroyed, the socket
 * removed), or fail to start (-1 with *err: a live service already
 * answers on the socket, the socket cannot be made). */
int hv_service_run (const struct hv_service_opts *o, hv_error **err);

#endif
