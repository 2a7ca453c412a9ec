/* linux.resources through cgroup v1 controllers (v1 and hybrid hosts). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_devices.h"
#include "cgroup_files.h"
#include "cgroup_values.h"
#include "log.h"
#include "utils.h"

/* Some pairs of files constrain each other (quota within period, runtime
 * within period): the kernel refuses the first write when the new value
 * does not fit the other file's old one.  Then write the second and retry
 * the first, as runc does. */
static int
write_pair (const char *dir, const char *first, const char *first_val, const char *second, const char *second_val,
            hv_error **err)
{
  bool retry = false;
  if (first_val)
    {
      cleanup_error hv_error *e = NULL;
      if (hv_cg_write (dir, first, first_val, &e) < 0)
        {
          if (e->errno_code != EINVAL || second_val == NULL)
            {
              *err = steal_pointer (&e);
              return -1;
            }
          retry = true;
        }
    }
  if (second_val && hv_cg_write (dir, second, second_val, err) < 0)
    return -1;
  if (retry && hv_cg_write (dir, first, first_val, err) < 0)
    return -1;
  return 0;
}

static void
fmt_i64 (char *buf, size_t n, bool set, int64_t v, const char **out)
{
  *out = NULL;
  if (!set || v == 0)
    return;
  snprintf (buf, n, "%lld", (long long) v);
  *out = buf;
}

static int
check_usage (const char *dir, const char *usage_file, const oci_resources *r, unsigned flags, hv_error **err)
{
  int64_t usage;
  if (!(flags & HV_CG_UPDATE) || !r->memory.check_before_update.value || !r->memory.limit.set
      || r->memory.limit.value <= 0)
    return 0;
  if (hv_cg_read_i64 (dir, usage_file, &usage, err) < 0)
    return -1;
  if (usage > r->memory.limit.value)
    return hv_error_set (err, 0, "memory.limit %lld is below the current usage %lld (checkBeforeUpdate)",
                         (long long) r->memory.limit.value, (long long) usage);
  return 0;
}

int
hv_cg_v1_memory (const char *dir, const oci_resources *r, unsigned flags, hv_error **err)
{
  static const char memsw[] = "memory.memsw.limit_in_bytes", limit_file[] = "memory.limit_in_bytes";
  if (!r->memory.present)
    return 0;
  if (hv_cg_check_memory (r, err) < 0 || check_usage (dir, "memory.usage_in_bytes", r, flags, err) < 0)
    return -1;
  int64_t limit = r->memory.limit.set ? r->memory.limit.value : 0;
  int64_t swap = r->memory.swap.set ? r->memory.swap.value : 0;
  bool has_memsw = hv_cg_has (dir, memsw);
  /* memsw can never be below the memory limit: unlimited memory makes it
   * unlimited too (runc's rule), and a finite memsw cannot go with it. */
  if (limit == -1 && swap == 0)
    swap = -1;
  if (limit == -1 && swap > 0)
    return hv_error_set (err, 0, "memory.swap %lld with an unlimited memory.limit cannot be set on cgroup v1",
                         (long long) swap);
  if (swap != 0 && !has_memsw)
    {
      /* Without swap accounting nothing can be limited beyond memory; an
       * unlimited swap, or swap equal to memory (no swap), asks for
       * nothing more than what the memory limit does. */
      if (swap != -1 && swap != limit)
        return hv_error_set (err, 0, "memory.swap: this kernel has no swap accounting (%s)", memsw);
      hv_log (HV_LOG_DEBUG, "memory.swap %lld: no swap accounting, nothing to set", (long long) swap);
      swap = 0;
    }
  if (limit != 0 && swap != 0)
    {
      int64_t cur;
      if (hv_cg_read_i64 (dir, limit_file, &cur, err) < 0)
        return -1;
      /* Raising: memsw first; lowering: the limit first. */
      if (swap == -1 || cur < swap)
        {
          if (hv_cg_write_i64 (dir, memsw, swap, err) < 0 || hv_cg_write_i64 (dir, limit_file, limit, err) < 0)
            return -1;
        }
      else if (hv_cg_write_i64 (dir, limit_file, limit, err) < 0 || hv_cg_write_i64 (dir, memsw, swap, err) < 0)
        return -1;
    }
  else
    {
      if (limit != 0 && hv_cg_write_i64 (dir, limit_file, limit, err) < 0)
        return -1;
      if (swap != 0 && hv_cg_write_i64 (dir, memsw, swap, err) < 0)
        return -1;
    }
  if (r->memory.reservation.set && r->memory.reservation.value != 0
      && hv_cg_write_i64 (dir, "memory.soft_limit_in_bytes", r->memory.reservation.value, err) < 0)
    return -1;
  if (r->memory.swappiness.set && hv_cg_write_u64 (dir, "memory.swappiness", r->memory.swappiness.value, err) < 0)
    return -1;
  if (r->memory.disable_oom_killer.set
      && hv_cg_write (dir, "memory.oom_control", r->memory.disable_oom_killer.value ? "1" : "0", err) < 0)
    return -1;
  if (r->memory.kernel.set)
    hv_log (HV_LOG_DEBUG, "memory.kernel is deprecated and ignored (kernels since 5.16 refuse kmem limits)");
  /* The TCP buffer limit still works on v1 memory cgroups: a configured
   * limit is applied where the kernel has the file, not dropped. */
  if (r->memory.kernel_tcp.set)
    {
      cleanup_free char *path = xasprintf ("%s/memory.kmem.tcp.limit_in_bytes", dir);
      if (access (path, F_OK) < 0)
        hv_log (HV_LOG_DEBUG, "memory.kernelTCP ignored: this kernel has no memory.kmem.tcp.limit_in_bytes");
      else if (hv_cg_write_i64 (dir, "memory.kmem.tcp.limit_in_bytes", r->memory.kernel_tcp.value, err) < 0)
        return -1;
    }
  return 0;
}

int
hv_cg_v1_cpu (const char *dir, const oci_resources *r, hv_error **err)
{
  char b1[32], b2[32];
  const char *period, *quota;
  if (!r->cpu.present)
    return 0;
  if (r->cpu.shares.set && r->cpu.shares.value != 0
      && hv_cg_write_u64 (dir, "cpu.shares", r->cpu.shares.value, err) < 0)
    return -1;
  fmt_i64 (b1, sizeof (b1), r->cpu.period.set, (int64_t) r->cpu.period.value, &period);
  fmt_i64 (b2, sizeof (b2), r->cpu.quota.set, r->cpu.quota.value, &quota);
  if (write_pair (dir, "cpu.cfs_period_us", period, "cpu.cfs_quota_us", quota, err) < 0)
    return -1;
  if (r->cpu.burst.set && hv_cg_write_u64 (dir, "cpu.cfs_burst_us", r->cpu.burst.value, err) < 0)
    return -1;
  fmt_i64 (b1, sizeof (b1), r->cpu.realtime_period.set, (int64_t) r->cpu.realtime_period.value, &period);
  fmt_i64 (b2, sizeof (b2), r->cpu.realtime_runtime.set, r->cpu.realtime_runtime.value, &quota);
  if (write_pair (dir, "cpu.rt_period_us", period, "cpu.rt_runtime_us", quota, err) < 0)
    return -1;
  if (r->cpu.idle.set && hv_cg_write_i64 (dir, "cpu.idle", r->cpu.idle.value, err) < 0)
    return -1;
  return 0;
}

/* Write `line` to each of the files that exist (CFQ's or BFQ's name for
 * the same knob); error when neither does. */
static int
write_weight (const char *dir, const char *cfq, const char *bfq, const char *what, const char *line, hv_error **err)
{
  bool done = false;
  if (hv_cg_has (dir, cfq))
    {
      if (hv_cg_write (dir, cfq, line, err) < 0)
        return -1;
      done = true;
    }
  if (hv_cg_has (dir, bfq))
    {
      if (hv_cg_write (dir, bfq, line, err) < 0)
        return -1;
      done = true;
    }
  if (!done)
    return hv_error_set (err, 0, "%s: this kernel has neither %s (CFQ) nor %s (BFQ) in %s", what, cfq, bfq, dir);
  return 0;
}

int
hv_cg_v1_blkio (const char *dir, const oci_resources *r, hv_error **err)
{
  const struct
  {
    const oci_blkio_devices *list;
    const char *file;
  } throttles[] = {
    { &r->block_io.throttle_read_bps, "blkio.throttle.read_bps_device" },
    { &r->block_io.throttle_write_bps, "blkio.throttle.write_bps_device" },
    { &r->block_io.throttle_read_iops, "blkio.throttle.read_iops_device" },
    { &r->block_io.throttle_write_iops, "blkio.throttle.write_iops_device" },
  };
  char line[96];
  if (!r->block_io.present)
    return 0;
  if (r->block_io.weight.set && r->block_io.weight.value != 0)
    {
      snprintf (line, sizeof (line), "%llu", (unsigned long long) r->block_io.weight.value);
      if (write_weight (dir, "blkio.weight", "blkio.bfq.weight", "blockIO.weight", line, err) < 0)
        return -1;
    }
  if (r->block_io.leaf_weight.set && r->block_io.leaf_weight.value != 0)
    {
      snprintf (line, sizeof (line), "%llu", (unsigned long long) r->block_io.leaf_weight.value);
      if (!hv_cg_has (dir, "blkio.leaf_weight"))
        hv_log (HV_LOG_WARNING, "blockIO.leafWeight ignored: leaf weights went with CFQ (Linux 5.0)");
      else if (hv_cg_write (dir, "blkio.leaf_weight", line, err) < 0)
        return -1;
    }
  for (size_t i = 0; i < r->block_io.weight_device.n; i++)
    {
      const oci_blkio_device *d = &r->block_io.weight_device.v[i];
      if (d->weight.set)
        {
          snprintf (line, sizeof (line), "%lld:%lld %llu", (long long) d->major, (long long) d->minor,
                    (unsigned long long) d->weight.value);
          if (write_weight (dir, "blkio.weight_device", "blkio.bfq.weight_device", "blockIO.weightDevice", line, err)
              < 0)
            return -1;
        }
      if (d->leaf_weight.set)
        {
          snprintf (line, sizeof (line), "%lld:%lld %llu", (long long) d->major, (long long) d->minor,
                    (unsigned long long) d->leaf_weight.value);
          if (!hv_cg_has (dir, "blkio.leaf_weight_device"))
            hv_log (HV_LOG_WARNING, "blockIO.weightDevice leafWeight ignored: leaf weights went with CFQ (Linux 5.0)");
          else if (hv_cg_write (dir, "blkio.leaf_weight_device", line, err) < 0)
            return -1;
        }
    }
  for (size_t t = 0; t < N_ELEMENTS (throttles); t++)
    for (size_t i = 0; i < throttles[t].list->n; i++)
      {
        const oci_blkio_device *d = &throttles[t].list->v[i];
        snprintf (line, sizeof (line), "%lld:%lld %llu", (long long) d->major, (long long) d->minor,
                  (unsigned long long) d->rate);
        if (hv_cg_write (dir, throttles[t].file, line, err) < 0)
          return -1;
      }
  return 0;
}

int
hv_cg_v1_hugetlb (const char *dir, const oci_resources *r, hv_error **err)
{
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    {
      const oci_hugepage_limit *h = &r->hugepage_limits[i];
      if (hv_cg_check_page_size (h->page_size, err) < 0)
        return -1;
      cleanup_free char *file = xasprintf ("hugetlb.%s.limit_in_bytes", h->page_size);
      cleanup_free char *rsvd = xasprintf ("hugetlb.%s.rsvd.limit_in_bytes", h->page_size);
      if (hv_cg_write_u64 (dir, file, h->limit, err) < 0)
        return -1;
      /* Reservations (Linux 5.7) count pages reserved at mmap time. */
      if (hv_cg_has (dir, rsvd) && hv_cg_write_u64 (dir, rsvd, h->limit, err) < 0)
        return -1;
    }
  return 0;
}

int
hv_cg_v1_net_cls (const char *dir, const oci_resources *r, hv_error **err)
{
  if (r->network.class_id.set && hv_cg_write_u64 (dir, "net_cls.classid", r->network.class_id.value, err) < 0)
    return -1;
  return 0;
}

int
hv_cg_v1_net_prio (const char *dir, const oci_resources *r, hv_error **err)
{
  for (size_t i = 0; i < r->network.n_priorities; i++)
    {
      const oci_net_priority *p = &r->network.priorities[i];
      if (hv_cg_check_name ("network interface", p->name, err) < 0)
        return -1;
      cleanup_free char *line = xasprintf ("%s %u", p->name, p->priority);
      if (hv_cg_write (dir, "net_prio.ifpriomap", line, err) < 0)
        return -1;
    }
  return 0;
}

int
hv_cg_v1_devices (const char *dir, const oci_linux *l, hv_error **err)
{
  cleanup_free struct hv_dev_rule *rules = NULL;
  size_t n = hv_dev_rules_build (l, &rules);
  for (size_t i = 0; i < n; i++)
    {
      char line[96];
      hv_dev_rule_v1_line (&rules[i], line, sizeof (line));
      if (hv_cg_write (dir, rules[i].allow ? "devices.allow" : "devices.deny", line, err) < 0)
        return -1;
    }
  return 0;
}
