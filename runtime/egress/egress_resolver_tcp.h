/* The egress resolver's TCP clients (egress_resolver_tcp.c): bytes in
 * and out, framed.  The loop (egress_resolver.c) takes the queries out
 * and answers them; this part never answers anything itself.  Not for
 * other callers. */
#ifndef HAVEN_EGRESS_RESOLVER_TCP_H
#define HAVEN_EGRESS_RESOLVER_TCP_H

#include <stddef.h>
#include <stdint.h>

#include "egress_resolver_state.h"

void hv_res_tcp_accept (hv_egress_resolver *r, int listen_fd);
/* Write what client slot has not taken yet, read what it sent. */
void hv_res_tcp_event (hv_egress_resolver *r, uint32_t slot, uint32_t gen, uint32_t events);
/* Move the first whole query client slot sent into query: its length;
 * 0 when none is whole yet, or the client is gone (a query of a length
 * no query has closes it). */
size_t hv_res_tcp_take_query (hv_egress_resolver *r, uint32_t slot, uint32_t gen,
                              uint8_t query[HV_RES_QUERY_MAX]);
/* Queue a reply to client slot (framed); dropped when the client is gone. */
void hv_res_tcp_send (hv_egress_resolver *r, uint32_t slot, uint32_t gen, const uint8_t *buf, size_t len);
void hv_res_tcp_close (hv_egress_resolver *r, hv_res_tcp_client *c);
/* Close idle clients; the earliest idle deadline left (UINT64_MAX: none). */
uint64_t hv_res_tcp_expire (hv_egress_resolver *r, uint64_t now);
#endif
