/* The egress resolver's upstream attempts (egress_upstream.c), called by
 * its loop (egress_resolver.c).  Not for other callers. */
#ifndef HAVEN_EGRESS_UPSTREAM_H
#define HAVEN_EGRESS_UPSTREAM_H

#include <stdint.h>

#include "dns_message.h"
#include "egress_resolver_state.h"

/* Start the attempt p->upstream/p->over_tcp, or the next ones when it
 * cannot start; 1: started, 0: none left, -1: fatal (the resolver's
 * netns could not be restored). */
int hv_res_upstream_start (hv_egress_resolver *r, uint32_t slot, hv_error **err);
/* The upstream socket of pending slot is ready: 1: an answer in *resp
 * (ID, source and question checked), 0: nothing yet, -1: this attempt
 * failed (try the next). */
int hv_res_upstream_read (hv_egress_resolver *r, hv_res_pending *p, uint32_t events, hv_dns_message *resp);
void hv_res_upstream_close (hv_egress_resolver *r, hv_res_pending *p);
#endif
