/* --api-key PROVIDER=FILE: the file on the host that holds a model API's
 * key for an engine runtime (haven install docker --api-key, and the
 * runtime argument haven-runc gets from daemon.json).  The key itself is
 * never in daemon.json, the config or the container: the policy filter
 * names the file in run.haven.gateway and the runtime reads it at create,
 * outside the container (docs/gateway.md, "Engine containers"). */
#ifndef HAVEN_ENGINE_API_KEY_H
#define HAVEN_ENGINE_API_KEY_H

#include <sys/types.h>

#include "error.h"
#include "gateway_route.h"

#define HV_API_KEY_OPTION "api-key"

/* One "PROVIDER=FILE" into files[provider]: PROVIDER one of gateway_route.c's
 * names, FILE an absolute path without "." or ".." components, each provider
 * at most once.  Errors say which part is wrong; opt names the option in
 * them ("--api-key"). */
int hv_api_key_arg (const char *opt, const char *arg, const char *files[HV_GW_N_PROVIDERS], hv_error **err);

/* Registration's check of a key file: reached through no symbolic link, a
 * regular non-empty file, owned by root or uid, neither
 * readable nor writable by its group or others (the key is root's, or the
 * registering user's, alone), and read as create reads it
 * (hv_gw_read_key_file: its size bound, a key a header can carry). */
int hv_api_key_file_check (const char *path, uid_t uid, hv_error **err);
#endif
