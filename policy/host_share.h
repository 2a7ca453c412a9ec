/* Limits for engine containers given as a share of the host
 * (`resources.containers.memory: 75%`, `cpus: 90%`: without them the
 * default let one container take every CPU of the host, and a fixed 8g
 * was more than a small host has and less than a big build wants).
 * Worked out at create, from what the runtime sees of the host: its
 * memory (sysinfo) and the CPUs it may run on (its affinity mask, so a
 * cpuset the engine runs in counts). */
#ifndef HAVEN_POLICY_HOST_SHARE_H
#define HAVEN_POLICY_HOST_SHARE_H

#include <stdint.h>

#include "policy.h"

/* The host's memory in bytes, its CPUs in thousandths. */
uint64_t hv_host_memory (void);
uint64_t hv_host_cpus_milli (void);
/* p's container limits in absolute terms (0: none): bytes, thousandths
 * of a CPU.  A share of memory is whole MiB, at least 1 MiB; of CPUs at
 * least 0.01. */
uint64_t hv_container_memory_limit (const hv_policy *p);
uint64_t hv_container_cpus_limit (const hv_policy *p);
#endif
