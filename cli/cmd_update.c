/* update: change the resources of a created, running or paused container.
 *
 * The new values come as a LinuxResources object (--resources FILE, or -
 * for standard input, as Docker's shim sends them) or as runc's flags,
 * which are turned into such an object.  It is merged into the container's
 * saved config.json (json_merge.h), the merged resources are written into
 * the cgroup, and only then is the merged config saved, so that a later
 * update, exec or delete works from what the cgroup really has. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "cgroup_values.h"
#include "cli.h"
#include "container.h"
#include "file_read.h"
#include "json_gen.h"
#include "json_merge.h"
#include "log.h"
#include "state.h"
#include "utils.h"

enum
{
  U_RESOURCES = 1,
  U_BLKIO_WEIGHT,
  U_CPU_PERIOD,
  U_CPU_QUOTA,
  U_CPU_BURST,
  U_CPU_SHARES,
  U_CPU_RT_PERIOD,
  U_CPU_RT_RUNTIME,
  U_CPUSET_CPUS,
  U_CPUSET_MEMS,
  U_CPU_IDLE,
  U_MEMORY,
  U_MEMORY_RESERVATION,
  U_MEMORY_SWAP,
  U_KERNEL_MEMORY,
  U_KERNEL_MEMORY_TCP,
  U_PIDS_LIMIT,
  U_L3_CACHE_SCHEMA,
  U_MEM_BW_SCHEMA,
  U_MAX,
};

static const struct hv_opt update_opts[] = {
  { "resources", 'r', true, U_RESOURCES },
  { "blkio-weight", 0, true, U_BLKIO_WEIGHT },
  { "cpu-period", 0, true, U_CPU_PERIOD },
  { "cpu-quota", 0, true, U_CPU_QUOTA },
  { "cpu-burst", 0, true, U_CPU_BURST },
  { "cpu-share", 0, true, U_CPU_SHARES }, /* runc's spelling */
  { "cpu-shares", 0, true, U_CPU_SHARES },
  { "cpu-rt-period", 0, true, U_CPU_RT_PERIOD },
  { "cpu-rt-runtime", 0, true, U_CPU_RT_RUNTIME },
  { "cpuset-cpus", 0, true, U_CPUSET_CPUS },
  { "cpuset-mems", 0, true, U_CPUSET_MEMS },
  { "cpu-idle", 0, true, U_CPU_IDLE },
  { "memory", 0, true, U_MEMORY },
  { "memory-reservation", 0, true, U_MEMORY_RESERVATION },
  { "memory-swap", 0, true, U_MEMORY_SWAP },
  { "kernel-memory", 0, true, U_KERNEL_MEMORY },
  { "kernel-memory-tcp", 0, true, U_KERNEL_MEMORY_TCP },
  { "pids-limit", 0, true, U_PIDS_LIMIT },
  { "l3-cache-schema", 0, true, U_L3_CACHE_SCHEMA },
  { "mem-bw-schema", 0, true, U_MEM_BW_SCHEMA },
  { NULL, 0, false, 0 },
};

/* How each flag becomes a member of the LinuxResources object. */
enum kind
{
  K_U64,
  K_I64,
  K_SIZE,
  K_STRING,
};
static const struct
{
  int id;
  const char *flag, *object, *key;
  enum kind kind;
} flag_fields[] = {
  { U_MEMORY, "memory", "memory", "limit", K_SIZE },
  { U_MEMORY_RESERVATION, "memory-reservation", "memory", "reservation", K_SIZE },
  { U_MEMORY_SWAP, "memory-swap", "memory", "swap", K_SIZE },
  { U_CPU_SHARES, "cpu-shares", "cpu", "shares", K_U64 },
  { U_CPU_QUOTA, "cpu-quota", "cpu", "quota", K_I64 },
  { U_CPU_PERIOD, "cpu-period", "cpu", "period", K_U64 },
  { U_CPU_BURST, "cpu-burst", "cpu", "burst", K_U64 },
  { U_CPU_RT_RUNTIME, "cpu-rt-runtime", "cpu", "realtimeRuntime", K_I64 },
  { U_CPU_RT_PERIOD, "cpu-rt-period", "cpu", "realtimePeriod", K_U64 },
  { U_CPUSET_CPUS, "cpuset-cpus", "cpu", "cpus", K_STRING },
  { U_CPUSET_MEMS, "cpuset-mems", "cpu", "mems", K_STRING },
  { U_CPU_IDLE, "cpu-idle", "cpu", "idle", K_I64 },
  { U_PIDS_LIMIT, "pids-limit", "pids", "limit", K_I64 },
  { U_BLKIO_WEIGHT, "blkio-weight", "blockIO", "weight", K_U64 },
};

static int
emit_number (yajl_gen g, enum kind kind, const char *flag, const char *value, hv_error **err)
{
  char *end;
  errno = 0;
  if (kind == K_SIZE)
    {
      int64_t v;
      if (hv_cg_parse_size (value, &v) < 0)
        return hv_error_set (err, 0, "update: invalid value for --%s: \"%s\" (bytes, or a size such as 512m)", flag,
                             value);
      yajl_gen_integer (g, v);
      return 0;
    }
  if (kind == K_U64)
    {
      if (value[0] == '-')
        return hv_error_set (err, 0, "update: invalid value for --%s: \"%s\" (a non-negative integer)", flag, value);
      unsigned long long v = strtoull (value, &end, 10);
      if (end == value || *end || errno)
        return hv_error_set (err, 0, "update: invalid value for --%s: \"%s\" (a non-negative integer)", flag, value);
      char buf[32];
      int n = snprintf (buf, sizeof (buf), "%llu", v);
      yajl_gen_number (g, buf, (size_t) n);
      return 0;
    }
  long long v = strtoll (value, &end, 10);
  if (end == value || *end || errno)
    return hv_error_set (err, 0, "update: invalid value for --%s: \"%s\" (an integer)", flag, value);
  yajl_gen_integer (g, v);
  return 0;
}

/* The flags as a LinuxResources object: {"memory": {"limit": ...}, ...}. */
static int
flags_to_json (const char *const *values, char **out, hv_error **err)
{
  static const char *const objects[] = { "memory", "cpu", "pids", "blockIO" };
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  for (size_t o = 0; o < N_ELEMENTS (objects); o++)
    {
      bool opened = false;
      for (size_t i = 0; i < N_ELEMENTS (flag_fields); i++)
        {
          const char *v = values[flag_fields[i].id];
          if (v == NULL || strcmp (flag_fields[i].object, objects[o]) != 0)
            continue;
          if (!opened)
            {
              jg_str (g, objects[o]);
              yajl_gen_map_open (g);
              opened = true;
            }
          jg_str (g, flag_fields[i].key);
          if (flag_fields[i].kind == K_STRING)
            jg_str (g, v);
          else if (emit_number (g, flag_fields[i].kind, flag_fields[i].flag, v, err) < 0)
            {
              yajl_gen_free (g);
              return -1;
            }
        }
      if (opened)
        yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
  *out = jg_finish (g);
  return 0;
}

/* The flags into VALUES (indexed by option id) and the container id;
 * refuses what cannot be done, warns about what is ignored. */
static int
parse_update_opts (int argc, char **argv, const char **values, const char **id, hv_error **err)
{
  struct hv_opt_iter it = { argc, argv, 1, "update" };
  const char *arg;
  int opt;
  while ((opt = hv_opt_next (&it, update_opts, &arg, err)) > 0)
    values[opt] = arg;
  if (opt < 0 || cli_require_id ("update", &it, id, err) < 0)
    return -1;
  if (values[U_L3_CACHE_SCHEMA] || values[U_MEM_BW_SCHEMA])
    return hv_error_set (err, 0, "update: Intel RDT is not supported (--l3-cache-schema, --mem-bw-schema)");
  if (values[U_KERNEL_MEMORY] || values[U_KERNEL_MEMORY_TCP])
    hv_log (HV_LOG_WARNING, "update: kernel memory limits are deprecated and ignored (as by runc)");
  return 0;
}

/* The new resources as JSON (*patch, named *patch_name in errors), checked
 * on their own first so that an error names the path inside what the
 * caller sent (stdin: .memory.limit: ...); *devices: they bring device
 * rules. */
static int
read_patch (const char **values, char **patch, char **patch_name, bool *devices, hv_error **err)
{
  const char *file = values[U_RESOURCES];
  if (file)
    {
      /* As runc: with --resources, the other flags are ignored. */
      *patch_name = xstrdup (strcmp (file, "-") == 0 ? "stdin" : file);
      if (strcmp (file, "-") == 0 ? hv_read_fd (0, *patch_name, 0, patch, NULL, err) < 0
                                  : hv_read_file (file, patch, NULL, err) < 0)
        return hv_error_wrap (err, "update");
    }
  else
    {
      *patch_name = xstrdup ("update flags");
      if (flags_to_json (values, patch, err) < 0)
        return -1;
    }
  oci_resources *parsed = NULL;
  if (oci_resources_parse (*patch, strlen (*patch), *patch_name, &parsed, err) < 0)
    return hv_error_wrap (err, "update");
  *devices = parsed->n_devices > 0;
  /* runc's rule: an unlimited memory without a swap value lifts the swap
   * limit too (v1 refuses memory+swap below memory). */
  bool lift_swap = parsed->memory.limit.set && parsed->memory.limit.value == -1 && !parsed->memory.swap.set;
  oci_resources_free (parsed);
  if (lift_swap)
    {
      char *with_swap = NULL;
      if (jm_merge_at (*patch, *patch_name, NULL, 0, "{\"memory\": {\"swap\": -1}}", "update", &with_swap, err) < 0)
        return hv_error_wrap (err, "update");
      free (*patch);
      *patch = with_swap;
    }
  return 0;
}

int
cmd_update (struct hv_global *g, int argc, char **argv, hv_error **err)
{
  const char *id, *values[U_MAX] = { 0 };
  if (parse_update_opts (argc, argv, values, &id, err) < 0)
    return -1;
  cleanup_free char *patch = NULL;
  cleanup_free char *patch_name = NULL;
  bool devices = false;
  if (read_patch (values, &patch, &patch_name, &devices, err) < 0)
    return -1;
  cleanup_container hv_container *c = NULL;
  if (hv_container_load (&g->rt, id, &c, err) < 0)
    return -1;
  return hv_container_update (&g->rt, c, patch, patch_name, devices, err);
}
