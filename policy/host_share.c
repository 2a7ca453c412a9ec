/* Container limits as shares of the host (host_share.h). */
#include "config.h"

#include <sched.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "host_share.h"

uint64_t
hv_host_memory (void)
{
  struct sysinfo si;
  if (sysinfo (&si) < 0)
    return 0;
  return (uint64_t) si.totalram * (si.mem_unit ? si.mem_unit : 1);
}

uint64_t
hv_host_cpus_milli (void)
{
  cpu_set_t set;
  long n = 0;
  if (sched_getaffinity (0, sizeof (set), &set) == 0)
    n = CPU_COUNT (&set);
  if (n <= 0)
    n = sysconf (_SC_NPROCESSORS_ONLN);
  return n > 0 ? (uint64_t) n * 1000 : 1000;
}

uint64_t
hv_container_memory_limit (const hv_policy *p)
{
  if (!p->container_memory.set)
    return 0;
  if (!p->container_memory_pct)
    return p->container_memory.value;
  /* Whole MiB: a cgroup counts pages, and people read MiB. */
  uint64_t share = (hv_host_memory () / 100 * p->container_memory.value) & ~((uint64_t) (1u << 20) - 1);
  return share < (1u << 20) ? (1u << 20) : share;
}

uint64_t
hv_container_cpus_limit (const hv_policy *p)
{
  if (!p->container_cpus_milli.set)
    return 0;
  if (!p->container_cpus_pct)
    return p->container_cpus_milli.value;
  uint64_t share = hv_host_cpus_milli () * p->container_cpus_milli.value / 100;
  return share < 10 ? 10 : share;
}
