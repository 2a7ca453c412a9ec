#include "config.h"
#include "cgroup_resources.h"

#include <string.h>

#include "cgroup.h"
#include "cgroup_devices.h"
#include "cgroup_devices_bpf.h"
#include "cgroup_values.h"
#include "utils.h"

struct target
{
  const char *path;    /* the container's cgroup path */
  const char *unified; /* its directory in the unified hierarchy, or NULL */
  bool v2_host;
};

/* The directory holding a controller's files for the container: its v1
 * hierarchy if one has it, else the unified hierarchy if the v2 controller
 * (v2name, NULL if it has none) is enabled there.  `what` names the config
 * field in errors. */
static char *
locate (const struct target *t, const char *v1name, const char *v2name, const char *what, bool *is_v2,
        hv_error **err)
{
  if (!t->v2_host)
    {
      char *dir = hv_cgroup_dir (t->path, v1name);
      if (dir)
        {
          *is_v2 = false;
          return dir;
        }
    }
  if (t->unified && v2name && hv_cg_v2_has_controller (t->unified, v2name))
    {
      *is_v2 = true;
      return xstrdup (t->unified);
    }
  if (v2name == NULL)
    hv_error_set (err, 0, "linux.resources.%s: needs the cgroup v1 %s controller, which %s (cgroup v2 has no "
                          "equivalent)", what, v1name, t->v2_host ? "a cgroup v2 host does not have" : "is not mounted");
  else if (t->unified)
    hv_error_set (err, 0, "linux.resources.%s: the %s controller is %snot available in %s (cgroup.controllers)", what,
                  v2name, t->v2_host ? "" : "not mounted as cgroup v1 and ", t->unified);
  else
    hv_error_set (err, 0, "linux.resources.%s: the %s controller is not mounted", what, v1name);
  return NULL;
}

static int
apply_devices (const struct target *t, const oci_linux *l, hv_error **err)
{
  if (l->resources.n_devices == 0)
    return 0;
  cleanup_free char *v1 = t->v2_host ? NULL : hv_cgroup_dir (t->path, "devices");
  if (v1)
    return hv_cg_v1_devices (v1, l, err);
  if (t->unified == NULL)
    return hv_error_set (err, 0, "linux.resources.devices: no devices cgroup controller and no cgroup v2 hierarchy");
  cleanup_free struct hv_dev_rule *rules = NULL;
  size_t n = hv_dev_rules_build (l, &rules);
  if (hv_dev_bpf_apply (t->unified, rules, n, err) < 0)
    return hv_error_wrap (err, "linux.resources.devices");
  return 0;
}

/* One controller's settings: located, then written by the v1 or v2 writer. */
typedef int (*writer_fn) (const char *dir, const oci_resources *r, hv_error **err);
static int
apply_one (const struct target *t, const oci_resources *r, const char *v1name, const char *v2name, const char *what,
           writer_fn v1, writer_fn v2, hv_error **err)
{
  bool is_v2 = false;
  cleanup_free char *dir = locate (t, v1name, v2name, what, &is_v2, err);
  if (dir == NULL)
    return -1;
  if ((is_v2 ? v2 : v1) (dir, r, err) < 0)
    return hv_error_wrap (err, "linux.resources.%s", what);
  return 0;
}

static int
apply_memory (const struct target *t, const oci_resources *r, unsigned flags, hv_error **err)
{
  bool is_v2 = false;
  cleanup_free char *dir = locate (t, "memory", "memory", "memory", &is_v2, err);
  if (dir == NULL)
    return -1;
  if ((is_v2 ? hv_cg_v2_memory : hv_cg_v1_memory) (dir, r, flags, err) < 0)
    return hv_error_wrap (err, "linux.resources.memory");
  return 0;
}

int
hv_cgroup_apply_resources (const char *path, const oci_linux *l, unsigned flags, hv_error **err)
{
  const oci_resources *r = &l->resources;
  enum hv_cgroup_mode mode = hv_cgroup_mode ();
  cleanup_free char *unified = mode == HV_CGROUP_V1 ? NULL : hv_cgroup_dir (path, NULL);
  struct target t = { path, unified, mode == HV_CGROUP_V2 };
  if (unified)
    {
      char **wanted = hv_cg_wanted_controllers (r);
      int rc = hv_cgroup_enable_controllers (path, (const char *const *) wanted, err);
      hv_cg_controllers_free (wanted);
      if (rc < 0)
        return -1;
    }
  if (!r->present)
    return 0;
  if ((flags & HV_CG_DEVICES) && apply_devices (&t, l, err) < 0)
    return -1;
  if (r->memory.present && apply_memory (&t, r, flags, err) < 0)
    return -1;
  if (r->cpu.present)
    {
      bool cpu_set = r->cpu.shares.set || r->cpu.quota.set || r->cpu.period.set || r->cpu.burst.set
                     || r->cpu.realtime_period.set || r->cpu.realtime_runtime.set || r->cpu.idle.set;
      if (cpu_set && apply_one (&t, r, "cpu", "cpu", "cpu", hv_cg_v1_cpu, hv_cg_v2_cpu, err) < 0)
        return -1;
      if (((r->cpu.cpus && r->cpu.cpus[0]) || (r->cpu.mems && r->cpu.mems[0]))
          && apply_one (&t, r, "cpuset", "cpuset", "cpu", hv_cg_cpuset, hv_cg_cpuset, err) < 0)
        return -1;
    }
  if (r->pids.present && apply_one (&t, r, "pids", "pids", "pids", hv_cg_pids, hv_cg_pids, err) < 0)
    return -1;
  if (r->block_io.present && apply_one (&t, r, "blkio", "io", "blockIO", hv_cg_v1_blkio, hv_cg_v2_io, err) < 0)
    return -1;
  if (r->n_hugepage_limits
      && apply_one (&t, r, "hugetlb", "hugetlb", "hugepageLimits", hv_cg_v1_hugetlb, hv_cg_v2_hugetlb, err) < 0)
    return -1;
  if (r->network.class_id.set
      && apply_one (&t, r, "net_cls", NULL, "network.classID", hv_cg_v1_net_cls, NULL, err) < 0)
    return -1;
  if (r->network.n_priorities
      && apply_one (&t, r, "net_prio", NULL, "network.priorities", hv_cg_v1_net_prio, NULL, err) < 0)
    return -1;
  if (r->n_rdma && apply_one (&t, r, "rdma", "rdma", "rdma", hv_cg_rdma, hv_cg_rdma, err) < 0)
    return -1;
  /* Last, so that its raw values win over the converted ones. */
  if (r->unified.n)
    {
      if (unified == NULL)
        return hv_error_set (err, 0, "linux.resources.unified: this host has no cgroup v2 hierarchy");
      if (hv_cg_v2_unified (unified, r, err) < 0)
        return hv_error_wrap (err, "linux.resources.unified");
    }
  return 0;
}

static const char *
first_memory_limit (const oci_resources *r)
{
  if (!r->memory.present)
    return NULL;
  /* 0 leaves the file alone and -1 writes "unlimited" (hv_cg_v1_memory,
   * hv_cg_v2_memory); memory.kernel is ignored by both. */
  if (r->memory.limit.set && r->memory.limit.value > 0)
    return "memory.limit";
  if (r->memory.reservation.set && r->memory.reservation.value > 0)
    return "memory.reservation";
  if (r->memory.swap.set && r->memory.swap.value > 0)
    return "memory.swap";
  if (r->memory.kernel_tcp.set && r->memory.kernel_tcp.value > 0)
    return "memory.kernelTCP";
  if (r->memory.swappiness.set)
    return "memory.swappiness";
  if (r->memory.disable_oom_killer.set && r->memory.disable_oom_killer.value)
    return "memory.disableOOMKiller";
  return NULL;
}

static const char *
first_cpu_limit (const oci_resources *r)
{
  if (!r->cpu.present)
    return NULL;
  if (r->cpu.shares.set && r->cpu.shares.value != 0)
    return "cpu.shares";
  if (r->cpu.quota.set && r->cpu.quota.value > 0)
    return "cpu.quota";
  if (r->cpu.burst.set && r->cpu.burst.value != 0)
    return "cpu.burst";
  if (r->cpu.realtime_runtime.set && r->cpu.realtime_runtime.value != 0)
    return "cpu.realtimeRuntime";
  if (r->cpu.idle.set && r->cpu.idle.value != 0)
    return "cpu.idle";
  if (r->cpu.cpus && r->cpu.cpus[0])
    return "cpu.cpus";
  if (r->cpu.mems && r->cpu.mems[0])
    return "cpu.mems";
  return NULL;
}

static const char *
first_block_io_limit (const oci_resources *r)
{
  if (!r->block_io.present)
    return NULL;
  if (r->block_io.weight.set && r->block_io.weight.value != 0)
    return "blockIO.weight";
  if (r->block_io.leaf_weight.set && r->block_io.leaf_weight.value != 0)
    return "blockIO.leafWeight";
  if (r->block_io.weight_device.n)
    return "blockIO.weightDevice";
  if (r->block_io.throttle_read_bps.n)
    return "blockIO.throttleReadBpsDevice";
  if (r->block_io.throttle_write_bps.n)
    return "blockIO.throttleWriteBpsDevice";
  if (r->block_io.throttle_read_iops.n)
    return "blockIO.throttleReadIOPSDevice";
  if (r->block_io.throttle_write_iops.n)
    return "blockIO.throttleWriteIOPSDevice";
  return NULL;
}

const char *
hv_cgroup_first_limit (const oci_resources *r)
{
  /* Device rules are left out, as runc leaves them out for rootless
   * containers: in a user namespace no device node can be made (mknod
   * needs CAP_MKNOD in the initial namespace) and the nodes bound in
   * keep their host permissions for the user. */
  const char *f;
  if (!r->present)
    return NULL;
  if ((f = first_memory_limit (r)) || (f = first_cpu_limit (r)) || (f = first_block_io_limit (r)))
    return f;
  /* pids.limit 0 and -1 both mean "max" (hv_cg_pids). */
  if (r->pids.present && r->pids.limit.set && r->pids.limit.value > 0)
    return "pids.limit";
  if (r->n_hugepage_limits)
    return "hugepageLimits";
  if (r->network.class_id.set)
    return "network.classID";
  if (r->network.n_priorities)
    return "network.priorities";
  if (r->n_rdma)
    return "rdma";
  if (r->unified.n)
    return "unified";
  return NULL;
}
