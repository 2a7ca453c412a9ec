/* The egress table's rules (egress_table_rules.c).  Used by
 * egress_table_create.c; not for other callers. */
#ifndef HAVEN_EGRESS_TABLE_RULES_H
#define HAVEN_EGRESS_TABLE_RULES_H

#include "egress_table_batch.h"

/* Every rule of chains "deny", "output" and "dns" (made earlier in the
 * batch, with the sets the rules look up), in that order. */
void hv_nft_add_rules (hv_nft_batch *b, hv_egress_table *t, const hv_egress_spec *spec);
#endif
