#include "config.h"
#include "cgroup_resources.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "utils.h"

static int
write_value (const char *path, const char *controller, const char *file, const char *value, hv_error **err)
{
  cleanup_free char *dir = hv_cgroup_dir (path, controller);
  if (dir == NULL)
    return hv_error_set (err, 0, "cgroup controller %s is not available", controller ? controller : "unified");
  cleanup_free char *full = xasprintf ("%s/%s", dir, file);
  if (write_file_at (AT_FDCWD, full, value, strlen (value), 0, err) < 0)
    return hv_error_wrap (err, "set %s=%s", file, value);
  return 0;
}

static int
write_i64 (const char *path, const char *controller, const char *file, long long v, hv_error **err)
{
  char buf[32];
  snprintf (buf, sizeof (buf), "%lld", v);
  return write_value (path, controller, file, buf, err);
}

/* v1 devices cgroup: the config's rules in order, then the devices every
 * container gets (those the runtime creates in /dev and the ptys), as
 * runc does, so "deny all" configs keep a working /dev.  Also as runc:
 * mknod of any node (using one still needs a rule) and /dev/net/tun;
 * Docker's configs rely on these (a VPN client or a package that makes
 * device nodes works under runc). */
static int
apply_devices_v1 (const char *path, const oci_linux *l, hv_error **err)
{
  const oci_resources *r = &l->resources;
  static const char *const defaults[] = { "c *:* m",   "b *:* m",   "c 1:3 rwm",  "c 1:5 rwm",   "c 1:7 rwm",
                                          "c 1:8 rwm", "c 1:9 rwm", "c 5:0 rwm",  "c 5:1 rwm",   "c 5:2 rwm",
                                          "c 136:* rwm", "c 10:200 rwm", NULL };
  for (size_t i = 0; i < r->n_devices; i++)
    {
      const oci_device_rule *d = &r->devices[i];
      char major[24] = "*", minor[24] = "*", rule[96];
      const char *type = d->type ? d->type : "a";
      if (d->major.set && d->major.value >= 0)
        snprintf (major, sizeof (major), "%lld", (long long) d->major.value);
      if (d->minor.set && d->minor.value >= 0)
        snprintf (minor, sizeof (minor), "%lld", (long long) d->minor.value);
      if (strcmp (type, "a") == 0)
        snprintf (rule, sizeof (rule), "a");
      else
        snprintf (rule, sizeof (rule), "%s %s:%s %s", type, major, minor, d->access ? d->access : "rwm");
      if (write_value (path, "devices", d->allow ? "devices.allow" : "devices.deny", rule, err) < 0)
        return -1;
    }
  for (size_t i = 0; defaults[i]; i++)
    if (write_value (path, "devices", "devices.allow", defaults[i], err) < 0)
      return -1;
  for (size_t i = 0; i < l->n_devices; i++)
    {
      const oci_device *d = &l->devices[i];
      char rule[96];
      if (d->type == 'p')
        continue;
      snprintf (rule, sizeof (rule), "%c %lld:%lld rwm", d->type == 'u' ? 'c' : d->type, (long long) d->major,
                (long long) d->minor);
      if (write_value (path, "devices", "devices.allow", rule, err) < 0)
        return -1;
    }
  return 0;
}

int
hv_cgroup_apply_resources (const char *path, const oci_linux *l, hv_error **err)
{
  const oci_resources *r = &l->resources;
  if (!r->present)
    return 0;
  bool v2 = hv_cgroup_mode () == HV_CGROUP_V2;
  /* Docker sends "blockIO": {"weight": 0} for every container: weight 0
   * means "not set" (as in runc), so only a real weight or a device rule
   * is refused. */
  bool block_io = (r->block_io.weight.set && r->block_io.weight.value)
                  || (r->block_io.leaf_weight.set && r->block_io.leaf_weight.value) || r->block_io.weight_device.n
                  || r->block_io.throttle_read_bps.n || r->block_io.throttle_write_bps.n
                  || r->block_io.throttle_read_iops.n || r->block_io.throttle_write_iops.n;
  if (block_io || r->n_hugepage_limits || r->network.present || r->n_rdma || r->unified.n)
    return hv_error_set (err, 0, "linux.resources: blockIO, hugepageLimits, network, rdma and unified are not "
                                 "supported yet");
  /* v2 device rules need an eBPF program (not written yet); on v1 the
   * devices controller enforces them. */
  if (r->n_devices && !v2 && apply_devices_v1 (path, l, err) < 0)
    return -1;
  if (r->memory.present)
    {
      if (r->memory.limit.set)
        {
          if (v2)
            {
              if (r->memory.limit.value < 0)
                {
                  if (write_value (path, NULL, "memory.max", "max", err) < 0)
                    return -1;
                }
              else if (write_i64 (path, NULL, "memory.max", r->memory.limit.value, err) < 0)
                return -1;
            }
          else if (write_i64 (path, "memory", "memory.limit_in_bytes", r->memory.limit.value, err) < 0)
            return -1;
        }
      if (r->memory.reservation.set
          && write_i64 (path, v2 ? NULL : "memory", v2 ? "memory.low" : "memory.soft_limit_in_bytes",
                        r->memory.reservation.value, err)
                 < 0)
        return -1;
      if (r->memory.swap.set)
        {
          /* v1 memsw includes memory; v2 swap.max excludes it.  Hosts
           * without swap accounting simply lack the file: then the swap
           * limit cannot be stricter than "none beyond memory". */
          cleanup_error hv_error *ignored = NULL;
          if (v2)
            {
              long long swap = r->memory.swap.value < 0 ? -1
                               : r->memory.limit.set ? r->memory.swap.value - r->memory.limit.value
                                                     : r->memory.swap.value;
              if (swap < 0)
                write_value (path, NULL, "memory.swap.max", r->memory.swap.value < 0 ? "max" : "0", &ignored);
              else
                write_i64 (path, NULL, "memory.swap.max", swap, &ignored);
            }
          else
            write_i64 (path, "memory", "memory.memsw.limit_in_bytes", r->memory.swap.value, &ignored);
        }
      if (r->memory.swappiness.set && !v2
          && write_i64 (path, "memory", "memory.swappiness", (long long) r->memory.swappiness.value, err) < 0)
        return -1;
      if (r->memory.disable_oom_killer.set && r->memory.disable_oom_killer.value && !v2
          && write_value (path, "memory", "memory.oom_control", "1", err) < 0)
        return -1;
    }
  if (r->pids.present && r->pids.limit.set)
    {
      if (r->pids.limit.value <= 0)
        {
          if (write_value (path, v2 ? NULL : "pids", "pids.max", "max", err) < 0)
            return -1;
        }
      else if (write_i64 (path, v2 ? NULL : "pids", "pids.max", r->pids.limit.value, err) < 0)
        return -1;
    }
  if (r->cpu.present)
    {
      unsigned long long period = r->cpu.period.set ? r->cpu.period.value : 100000;
      if (v2)
        {
          if (r->cpu.quota.set || r->cpu.period.set)
            {
              char buf[64];
              if (r->cpu.quota.set && r->cpu.quota.value > 0)
                snprintf (buf, sizeof (buf), "%lld %llu", (long long) r->cpu.quota.value, period);
              else
                snprintf (buf, sizeof (buf), "max %llu", period);
              if (write_value (path, NULL, "cpu.max", buf, err) < 0)
                return -1;
            }
          /* Docker sends "shares": 0 for "not set" (runc skips it); written,
           * the kernel would clamp it to the minimum weight. */
          if (r->cpu.shares.set && r->cpu.shares.value)
            {
              /* runc's mapping of shares [2, 262144] onto weight [1, 10000]. */
              unsigned long long s = r->cpu.shares.value;
              long long weight = s == 0 ? 100 : (long long) (1 + ((s - 2) * 9999) / 262142);
              if (write_i64 (path, NULL, "cpu.weight", weight, err) < 0)
                return -1;
            }
        }
      else
        {
          if (r->cpu.period.set && write_i64 (path, "cpu", "cpu.cfs_period_us", (long long) period, err) < 0)
            return -1;
          if (r->cpu.quota.set && write_i64 (path, "cpu", "cpu.cfs_quota_us", r->cpu.quota.value, err) < 0)
            return -1;
          if (r->cpu.shares.set && r->cpu.shares.value
              && write_i64 (path, "cpu", "cpu.shares", (long long) r->cpu.shares.value, err) < 0)
            return -1;
        }
      if (r->cpu.cpus && r->cpu.cpus[0] && write_value (path, v2 ? NULL : "cpuset", "cpuset.cpus", r->cpu.cpus, err) < 0)
        return -1;
      if (r->cpu.mems && r->cpu.mems[0] && write_value (path, v2 ? NULL : "cpuset", "cpuset.mems", r->cpu.mems, err) < 0)
        return -1;
    }
  return 0;
}
