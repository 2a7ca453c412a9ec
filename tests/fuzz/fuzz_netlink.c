/* Fuzz target of the netlink messages the runtime parses: NFLOG packet
 * logs of denied egress (runtime/egress/egress_denials.c: the packet is the
 * sandbox's own, the rest the kernel's) and nf_tables acknowledgements
 * of a batch (egress_table_batch.c).  The first byte chooses the parser,
 * the rest is one datagram (copied to an aligned buffer of exactly its
 * size, so any read past it is caught).  Nothing may crash, leak or read
 * out of bounds; a parsed denial has a known family and protocol and a
 * port only for TCP and UDP; an error acknowledgement always gives text. */
#include "config.h"

#include <linux/netlink.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress_denials.h"
#include "egress_table.h"
#include "egress_table_batch.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check_denial (hv_egress_parse_result r, const hv_egress_denial *d)
{
  if (r != HV_EGRESS_PARSE_DENIAL && r != HV_EGRESS_PARSE_OTHER && r != HV_EGRESS_PARSE_BAD)
    fuzz_fail ("unknown parse result %d", r);
  if (r != HV_EGRESS_PARSE_DENIAL)
    return;
  if (d->family != AF_INET && d->family != AF_INET6)
    fuzz_fail ("denial of family %d", d->family);
  if (d->protocol > HV_EGRESS_L4_OTHER)
    fuzz_fail ("denial of protocol %d", d->protocol);
  if (d->port != 0 && d->protocol != HV_EGRESS_L4_TCP && d->protocol != HV_EGRESS_L4_UDP)
    fuzz_fail ("a port for protocol %s", hv_egress_l4_name (d->protocol));
}

static void
nflog (const void *msg, size_t len, uint8_t how)
{
  hv_egress_denial d;
  memset (&d, 0xa5, sizeof (d));
  if (how & 2)
    {
      /* The packet alone, as the parser sees NFULA_PAYLOAD. */
      check_denial (hv_egress_denial_parse_packet (how & 4 ? AF_INET6 : AF_INET, msg, len, &d), &d);
      return;
    }
  if (len < sizeof (struct nlmsghdr))
    return; /* the reader hands over whole headers only (mnl_nlmsg_ok) */
  check_denial (hv_egress_denial_parse (msg, len, how & 4 ? HV_EGRESS_LOG_PREFIX : "other", &d), &d);
}

static void
nft_acks (const void *msg, size_t len)
{
  char *what[] = { strdup ("table inet haven"), strdup ("chain out"), strdup ("set allow4") };
  hv_nft_batch b = { .first_seq = 100, .n = 3, .what = what };
  size_t acked = 0;
  char *first_err = NULL;
  int first_errno = 0;
  hv_nft_batch_read_acks (&b, msg, len, &acked, &first_err, &first_errno);
  if (first_err != NULL && first_err[0] == '\0')
    fuzz_fail ("an error without text");
  if (first_err == NULL && first_errno != 0)
    fuzz_fail ("an errno without an error");
  if (acked > len / sizeof (struct nlmsghdr))
    fuzz_fail ("more acknowledgements than messages");
  free (first_err);
  for (size_t i = 0; i < 3; i++)
    free (what[i]);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  uint8_t how = data[0];
  size_t len = size - 1;
  /* Netlink messages are 4-byte aligned in the reader's buffer; malloc
   * aligns more and ASan knows the block's exact end. */
  void *msg = malloc (len ? len : 1);
  memcpy (msg, data + 1, len);
  if (how & 1)
    nft_acks (msg, len);
  else
    nflog (msg, len, how);
  free (msg);
  return 0;
}
