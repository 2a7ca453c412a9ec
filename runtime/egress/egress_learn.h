/* Learn mode's answer to a refused name (`haven run --learn`,
 * policies/README.md "Learn mode and haven policy suggest").
 *
 * Under an allowlist a refused name never reaches a connect, so the port
 * the program wanted is never seen.  In learn mode the resolver answers
 * a name refused as "not in the policy" with a sinkhole instead: an A
 * record of an address of its own per name, in HV_RES_LEARN_NET
 * (240.0.0.0/8, reserved: no upstream answer is ever pinned there, it is
 * "special" to egress_decide.c), and AAAA with no data.  Nothing is
 * pinned, so the sandbox's table refuses the connect at once like any
 * other, and its net-denied record names the name (the resolver
 * remembers sinkhole -> name as it does an answer's addresses) with the
 * port.  The refusal is still reported (dns-refused) and the reply
 * carries the same Extended DNS Error text, saying it is a sinkhole.
 *
 * Nothing is widened: never for a name the policy denies or a refused
 * type, never when an allow CIDR of the policy reaches into the sinkhole
 * range (the table would let the connect out), and at most
 * HV_RES_LEARN_MAX names (the rest refused as usual). */
#ifndef HAVEN_EGRESS_LEARN_H
#define HAVEN_EGRESS_LEARN_H

#include <stdbool.h>
#include <stdint.h>

#include "dns_message.h"
#include "egress_resolver_config.h"

#define HV_RES_LEARN_NET 240u /* 240.0.0.0/8 */
#define HV_RES_LEARN_MAX 4096
#define HV_RES_LEARN_TTL 5 /* seconds: a program that asks again gets it again */

typedef struct hv_res_learn hv_res_learn;

/* NULL when cfg is not in learn mode, or when an allow CIDR reaches into
 * the sinkhole range (then refused names are refused as usual). */
hv_res_learn *hv_res_learn_new (const hv_egress_resolver_config *cfg);
void hv_res_learn_free (hv_res_learn *l);

/* The answer to a query refused for why: true with *reply made (and,
 * for an A answer, addr the sinkhole, *has_addr true) when learn mode
 * answers it; false: refuse it as usual.  text: the EDE text. */
bool hv_res_learn_answer (hv_res_learn *l, const hv_dns_message *query, const char *qname, uint16_t qtype,
                          const char *why, const char *text, hv_dns_message *reply, uint8_t addr[4],
                          bool *has_addr);
#endif
