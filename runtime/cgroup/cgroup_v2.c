/* linux.resources through the cgroup v2 interface files
 * (Documentation/admin-guide/cgroup-v2.rst): on v2 hosts, and on hybrid
 * hosts for controllers that no v1 hierarchy holds. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgroup_files.h"
#include "cgroup_values.h"
#include "log.h"
#include "utils.h"

/* -1 is "max" in v2 files. */
static int
write_limit (const char *dir, const char *file, int64_t v, hv_error **err)
{
  if (v < 0)
    return hv_cg_write (dir, file, "max", err);
  return hv_cg_write_i64 (dir, file, v, err);
}

int
hv_cg_v2_memory (const char *dir, const oci_resources *r, unsigned flags, hv_error **err)
{
  char swap[32];
  if (!r->memory.present)
    return 0;
  if (hv_cg_swap_v2 (r, swap, sizeof (swap), err) < 0)
    return -1;
  if ((flags & HV_CG_UPDATE) && r->memory.check_before_update.value && r->memory.limit.set
      && r->memory.limit.value > 0)
    {
      int64_t usage;
      if (hv_cg_read_i64 (dir, "memory.current", &usage, err) < 0)
        return -1;
      if (usage > r->memory.limit.value)
        return hv_error_set (err, 0, "memory.limit %lld is below the current usage %lld (checkBeforeUpdate)",
                             (long long) r->memory.limit.value, (long long) usage);
    }
  if (swap[0])
    {
      cleanup_error hv_error *e = NULL;
      if (hv_cg_write (dir, "memory.swap.max", swap, &e) < 0)
        {
          /* Without swap accounting the file is missing: "no swap" and
           * "any swap" then need nothing written (runc does the same). */
          if (e->errno_code != ENOENT || (strcmp (swap, "max") != 0 && strcmp (swap, "0") != 0))
            {
              *err = steal_pointer (&e);
              return -1;
            }
        }
    }
  if (r->memory.limit.set && r->memory.limit.value != 0
      && write_limit (dir, "memory.max", r->memory.limit.value, err) < 0)
    return -1;
  if (r->memory.reservation.set && r->memory.reservation.value != 0
      && write_limit (dir, "memory.low", r->memory.reservation.value, err) < 0)
    return -1;
  /* No v2 counterparts; runc ignores them too.  Neither weakens
   * confinement: the OOM killer stays on, swappiness stays the system's. */
  if (r->memory.disable_oom_killer.set && r->memory.disable_oom_killer.value)
    hv_log (HV_LOG_DEBUG, "memory.disableOOMKiller: cgroup v2 cannot disable the OOM killer; ignored");
  if (r->memory.swappiness.set)
    hv_log (HV_LOG_DEBUG, "memory.swappiness: cgroup v2 has no per-cgroup swappiness; ignored");
  if (r->memory.kernel.set || r->memory.kernel_tcp.set)
    hv_log (HV_LOG_DEBUG, "memory.kernel and memory.kernelTCP are deprecated and ignored (as by runc)");
  return 0;
}

int
hv_cg_v2_cpu (const char *dir, const oci_resources *r, hv_error **err)
{
  if (!r->cpu.present)
    return 0;
  if ((r->cpu.realtime_period.set && r->cpu.realtime_period.value)
      || (r->cpu.realtime_runtime.set && r->cpu.realtime_runtime.value))
    return hv_error_set (err, 0, "cpu.realtimePeriod and cpu.realtimeRuntime: cgroup v2 has no realtime group "
                                 "scheduling");
  if (r->cpu.idle.set && hv_cg_write_i64 (dir, "cpu.idle", r->cpu.idle.value, err) < 0)
    return -1;
  uint64_t weight = r->cpu.shares.set ? hv_cg_shares_to_weight (r->cpu.shares.value) : 0;
  if (weight && hv_cg_write_u64 (dir, "cpu.weight", weight, err) < 0)
    return -1;
  cleanup_free char *max = hv_cg_cpu_max (r);
  bool burst_later = false;
  if (r->cpu.burst.set)
    {
      cleanup_error hv_error *e = NULL;
      /* A burst above the old quota is refused until cpu.max grows. */
      if (hv_cg_write_u64 (dir, "cpu.max.burst", r->cpu.burst.value, &e) < 0)
        {
          if (e->errno_code != EINVAL || max == NULL)
            {
              *err = steal_pointer (&e);
              return -1;
            }
          burst_later = true;
        }
    }
  if (max && hv_cg_write (dir, "cpu.max", max, err) < 0)
    return -1;
  if (burst_later && hv_cg_write_u64 (dir, "cpu.max.burst", r->cpu.burst.value, err) < 0)
    return -1;
  return 0;
}

/* A weight for io.weight (converted to its range) and io.bfq.weight (BFQ
 * takes blkio's range as is), whichever exist. */
static int
write_io_weight (const char *dir, const char *prefix, uint64_t blkio_weight, const char *what, hv_error **err)
{
  bool done = false;
  if (hv_cg_has (dir, "io.weight"))
    {
      cleanup_free char *v = xasprintf ("%s%llu", prefix, (unsigned long long) hv_cg_blkio_to_io_weight (blkio_weight));
      if (hv_cg_write (dir, "io.weight", v, err) < 0)
        return -1;
      done = true;
    }
  if (hv_cg_has (dir, "io.bfq.weight"))
    {
      cleanup_free char *v = xasprintf ("%s%llu", prefix, (unsigned long long) blkio_weight);
      if (hv_cg_write (dir, "io.bfq.weight", v, err) < 0)
        return -1;
      done = true;
    }
  if (!done)
    return hv_error_set (err, 0, "%s: %s has neither io.weight nor io.bfq.weight (no I/O scheduler with weights)",
                         what, dir);
  return 0;
}

int
hv_cg_v2_io (const char *dir, const oci_resources *r, hv_error **err)
{
  if (!r->block_io.present)
    return 0;
  if (r->block_io.weight.set && r->block_io.weight.value != 0
      && write_io_weight (dir, "", r->block_io.weight.value, "blockIO.weight", err) < 0)
    return -1;
  bool leaf = r->block_io.leaf_weight.set;
  for (size_t i = 0; i < r->block_io.weight_device.n; i++)
    {
      const oci_blkio_device *d = &r->block_io.weight_device.v[i];
      leaf = leaf || d->leaf_weight.set;
      if (!d->weight.set)
        continue;
      cleanup_free char *prefix = xasprintf ("%lld:%lld ", (long long) d->major, (long long) d->minor);
      if (write_io_weight (dir, prefix, d->weight.value, "blockIO.weightDevice", err) < 0)
        return -1;
    }
  if (leaf)
    hv_log (HV_LOG_WARNING, "blockIO leafWeight ignored: cgroup v2 has no leaf weights (a cgroup with children "
                            "holds no processes)");
  char **lines = hv_cg_io_max_lines (r);
  int ret = 0;
  for (size_t i = 0; lines[i]; i++)
    if (ret == 0 && hv_cg_write (dir, "io.max", lines[i], err) < 0)
      ret = -1;
  for (size_t i = 0; lines[i]; i++)
    free (lines[i]);
  free (lines);
  return ret;
}

int
hv_cg_v2_hugetlb (const char *dir, const oci_resources *r, hv_error **err)
{
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    {
      const oci_hugepage_limit *h = &r->hugepage_limits[i];
      if (hv_cg_check_page_size (h->page_size, err) < 0)
        return -1;
      cleanup_free char *file = xasprintf ("hugetlb.%s.max", h->page_size);
      cleanup_free char *rsvd = xasprintf ("hugetlb.%s.rsvd.max", h->page_size);
      if (!hv_cg_has (dir, file))
        return hv_error_set (err, 0, "page size %s: no %s in %s (no such huge page size on this machine?)",
                             h->page_size, file, dir);
      if (hv_cg_write_u64 (dir, file, h->limit, err) < 0)
        return -1;
      if (hv_cg_has (dir, rsvd) && hv_cg_write_u64 (dir, rsvd, h->limit, err) < 0)
        return -1;
    }
  return 0;
}

int
hv_cg_v2_unified (const char *dir, const oci_resources *r, hv_error **err)
{
  for (size_t i = 0; i < r->unified.n; i++)
    {
      const char *key = r->unified.v[i].key, *value = r->unified.v[i].value;
      if (hv_cg_check_unified_key (key, err) < 0)
        return -1;
      if (!hv_cg_has (dir, key))
        {
          cleanup_free char *ctrl = xasprintf ("%.*s", (int) (strchr (key, '.') - key), key);
          return hv_error_set (err, 0, "unified key \"%s\": no such file in %s (is the %s controller available on "
                                       "cgroup v2 here?)", key, dir, ctrl);
        }
      /* Keyed files (io.max, ...) take one entry per write. */
      int r2 = strchr (value, '\n') ? hv_cg_write_lines (dir, key, value, err) : hv_cg_write (dir, key, value, err);
      if (r2 < 0)
        return hv_error_wrap (err, "unified key \"%s\"", key);
    }
  return 0;
}
