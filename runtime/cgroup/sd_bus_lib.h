/* sd-bus, loaded when the systemd cgroup driver first needs it.
 *
 * Why not linked: libsystemd brings five more libraries (libgcrypt,
 * liblzma, libzstd, liblz4, libgpg-error) whose loading and relocation
 * cost every start of haven about 0.35 ms of CPU, twice per `haven run`
 * (haven re-executes itself), while only `--systemd-cgroup` containers
 * ever talk to systemd.  The header still comes from libsystemd-dev, so
 * every pointer below has exactly the type the library declares. */
#ifndef HAVEN_SD_BUS_LIB_H
#define HAVEN_SD_BUS_LIB_H

#include <systemd/sd-bus.h>

#include "error.h"

/* The sd_bus_* functions the driver calls, by the part after "sd_bus_". */
#define HV_SD_BUS_FUNCTIONS(X)                                                                                       \
  X (open_system)                                                                                                    \
  X (flush_close_unref)                                                                                              \
  X (message_unref)                                                                                                  \
  X (slot_unref)                                                                                                     \
  X (error_is_set)                                                                                                   \
  X (error_free)                                                                                                     \
  X (error_has_name)                                                                                                 \
  X (message_new_method_call)                                                                                        \
  X (message_open_container)                                                                                         \
  X (message_close_container)                                                                                        \
  X (message_append)                                                                                                 \
  X (message_append_array)                                                                                           \
  X (message_read)                                                                                                   \
  X (match_signal)                                                                                                   \
  X (call_method)                                                                                                    \
  X (call)                                                                                                           \
  X (process)                                                                                                        \
  X (wait)

struct hv_sd_bus_lib
{
#define HV_SD_BUS_FIELD(name) __typeof__ (sd_bus_##name) *name;
  HV_SD_BUS_FUNCTIONS (HV_SD_BUS_FIELD)
#undef HV_SD_BUS_FIELD
};

/* libsystemd.so.0's sd-bus functions, loaded on the first call; NULL and
 * *err when the library or one of them cannot be loaded. */
const struct hv_sd_bus_lib *hv_sd_bus_lib (hv_error **err);

#endif
