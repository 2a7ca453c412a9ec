/* sd-bus loaded on first use (sd_bus_lib.h says why). */
#include "config.h"
#include "sd_bus_lib.h"

#include <dlfcn.h>
#include <stdbool.h>

/* The soname: the ABI the header describes (libsystemd0). */
#define LIBSYSTEMD "libsystemd.so.0"

const struct hv_sd_bus_lib *
hv_sd_bus_lib (hv_error **err)
{
  /* The runtime's systemd driver runs in one thread (create, update,
   * delete), so a plain once-flag is enough. */
  static struct hv_sd_bus_lib lib;
  static bool loaded;
  if (loaded)
    return &lib;
  /* Never unloaded: the pointers stay valid for the process's life.  The
   * search path is the dynamic linker's, the one a linked libsystemd
   * would have come from. */
  void *h = dlopen (LIBSYSTEMD, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    {
      const char *why = dlerror ();
      hv_error_set (err, 0, "--systemd-cgroup: cannot load %s (%s); install libsystemd0 or use the cgroupfs driver",
                    LIBSYSTEMD, why ? why : "unknown error");
      return NULL;
    }
  struct hv_sd_bus_lib l;
#define HV_SD_BUS_LOAD(name)                                                                                         \
  if ((l.name = (__typeof__ (l.name)) dlsym (h, "sd_bus_" #name)) == NULL)                                           \
    {                                                                                                                \
      hv_error_set (err, 0, "--systemd-cgroup: %s has no sd_bus_" #name " (libsystemd too old?)", LIBSYSTEMD);     \
      dlclose (h);                                                                                                   \
      return NULL;                                                                                                   \
    }
  HV_SD_BUS_FUNCTIONS (HV_SD_BUS_LOAD)
#undef HV_SD_BUS_LOAD
  lib = l;
  loaded = true;
  return &lib;
}
