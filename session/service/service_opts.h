/* `haven serve`'s options and their defaults: what the command line hands
 * the service (service.h), and what its parts read through struct svc
 * (service_base.h).  Apart from service.h so that the parts below the loop
 * need not include the loop's face. */
#ifndef HAVEN_SERVICE_OPTS_H
#define HAVEN_SERVICE_OPTS_H

#include <stdbool.h>
#include <stdint.h>

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

#endif
