/* The egress table's handle (egress_table.h), as every part of the table
 * sees it: egress_table.c opens and closes it, the others send through
 * its socket.  Not for other callers. */
#ifndef HAVEN_EGRESS_TABLE_INTERNAL_H
#define HAVEN_EGRESS_TABLE_INTERNAL_H

#include <stdint.h>

#include "egress_table.h"

struct mnl_socket;

struct hv_egress_table
{
  char *name;
  struct mnl_socket *nl;
  uint32_t seq; /* of the next message sent */
  hv_egress_refresh refresh;
};
#endif
