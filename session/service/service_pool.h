/* The warm pool (service_pool.c): pristine sandboxes per policy, made by
 * makers in the background and claimed by creates. */
#ifndef HAVEN_SERVICE_POOL_H
#define HAVEN_SERVICE_POOL_H

#include <stdint.h>

#include "service_base.h"

/* A pristine sandbox of policy, or NULL (none, or the pool was stale). */
struct svc_sandbox *svc_pool_claim (struct svc *s, const char *policy);
/* After the first create of a policy: keep a pool of it. */
void svc_pool_want (struct svc *s, const char *policy, const char *config);
void svc_pool_refill (struct svc *s);
void svc_pool_age_check (struct svc *s, uint64_t now, uint64_t *next);
void svc_pool_free_all (struct svc *s);

#endif
