/* `haven serve`: the sandbox service (session/service/service.h) with
 * its options. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "haven_help.h"
#include "serve_cmd.h"
#include "service.h"

/* A whole number in [min, max], the whole argument. */
static int
number (const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *out, hv_error **err)
{
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull (arg, &end, 10);
  if (arg[0] < '0' || arg[0] > '9' || errno || end == arg || *end || v < min || v > max)
    return hv_error_set (err, 0, "haven serve: --%s: \"%s\" is not a number from %" PRIu64 " to %" PRIu64, opt, arg,
                         min, max);
  *out = v;
  return 0;
}

int
hv_cmd_serve (int argc, char **argv, const char *haven_argv0, hv_error **err)
{
  static const struct hv_opt opts[] = { { "socket", 0, true, 1 },        { "pool-size", 0, true, 2 },
                                        { "max-sandboxes", 0, true, 3 }, { "idle-timeout", 0, true, 4 },
                                        { "pool-max-age", 0, true, 5 },  { "max-output", 0, true, 6 },
                                        { "verbose", 'v', false, 7 },    { "max-runs", 0, true, 8 },
                                        { "help", 'h', false, 9 },       { NULL, 0, false, 0 } };
  struct hv_service_opts o = { .haven_argv0 = haven_argv0,
                               .pool_size = HV_SERVICE_DEFAULT_POOL_SIZE,
                               .max_sandboxes = HV_SERVICE_DEFAULT_MAX_SANDBOXES,
                               .max_runs = HV_SERVICE_DEFAULT_MAX_RUNS,
                               .idle_timeout_s = HV_SERVICE_DEFAULT_IDLE_S,
                               .pool_max_age_s = HV_SERVICE_DEFAULT_POOL_MAX_AGE_S,
                               .max_output = HV_SERVICE_MAX_OUTPUT };
  struct hv_opt_iter it = { argc, argv, 1, "haven serve" };
  const char *arg;
  int id;
  uint64_t v;
  while ((id = hv_opt_next (&it, opts, &arg, err)) > 0)
    switch (id)
      {
      case 1:
        o.socket_path = arg;
        break;
      case 2:
        if (number ("pool-size", arg, 0, 64, &v, err) < 0)
          return -1;
        o.pool_size = (unsigned) v;
        break;
      case 3:
        if (number ("max-sandboxes", arg, 1, 4096, &v, err) < 0)
          return -1;
        o.max_sandboxes = (unsigned) v;
        break;
      case 4:
        if (number ("idle-timeout", arg, 1, HV_SERVICE_MAX_IDLE_S, &v, err) < 0)
          return -1;
        o.idle_timeout_s = (uint32_t) v;
        break;
      case 5:
        if (number ("pool-max-age", arg, 1, HV_SERVICE_MAX_IDLE_S, &v, err) < 0)
          return -1;
        o.pool_max_age_s = (uint32_t) v;
        break;
      case 6:
        if (number ("max-output", arg, 1, HV_SERVICE_MAX_OUTPUT, &v, err) < 0)
          return -1;
        o.max_output = v;
        break;
      case 7:
        o.verbose = true;
        break;
      case 8:
        if (number ("max-runs", arg, 1, 1024, &v, err) < 0)
          return -1;
        o.max_runs = (unsigned) v;
        break;
      case 9:
        hv_haven_usage (stdout, "serve");
        return 0;
      }
  if (id < 0)
    return -1;
  if (it.index < argc)
    return hv_error_set (err, 0, "haven serve: unexpected argument \"%s\"", argv[it.index]);
  return hv_service_run (&o, err);
}
