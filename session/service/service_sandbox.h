/* The service's sandboxes' lives (service_sandbox.c): under the pool and
 * the handlers, which start makers and destroy sandboxes; above the runs,
 * which destroy fails. */
#ifndef HAVEN_SERVICE_SANDBOX_H
#define HAVEN_SERVICE_SANDBOX_H

#include <stdint.h>

#include "service_base.h"

/* A new id, none of the live, being made or ended sandboxes'. */
void svc_new_id (struct svc *s, char id[SVC_ID_LEN + 1]);
/* The sandbox named id, or NULL after answering 404 (ended or unknown). */
struct svc_sandbox *svc_sandbox_find (struct svc *s, struct svc_conn *c, const char *id);
void svc_sandbox_destroy (struct svc *s, struct svc_sandbox *x, oci_strv *notes, const char *why);
void svc_sandbox_ended (struct svc *s, struct svc_sandbox *x); /* its keeper is gone */
void svc_sandbox_keeper_input (struct svc *s, struct svc_sandbox *x); /* events from its keeper */
/* Start mk (its id, policy, project and made set): in the service's list
 * until it is done or aborted. */
int svc_maker_start (struct svc *s, struct svc_maker *mk, hv_error **err);
void svc_maker_done (struct svc *s, struct svc_maker *mk); /* its fd is readable: tells mk->made */
void svc_maker_abort (struct svc *s, struct svc_maker *mk);
void svc_maker_free (struct svc_maker *mk); /* one not started, or out of the list */
void svc_idle_check (struct svc *s, uint64_t now, uint64_t *next);
void svc_reap (struct svc *s);

#endif
