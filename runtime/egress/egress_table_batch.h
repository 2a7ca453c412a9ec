/* The egress table's messages to the kernel (egress_table_batch.c): a
 * batch of changes the kernel applies whole or not at all, and requests
 * that read the table back.  Used by the parts that build the table,
 * pin and read it; not for other callers. */
#ifndef HAVEN_EGRESS_TABLE_BATCH_H
#define HAVEN_EGRESS_TABLE_BATCH_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress_table_internal.h"

typedef struct hv_nft_batch
{
  char *buf;
  size_t len, cap;
  uint32_t first_seq; /* of the first message after BEGIN */
  size_t n;           /* messages after BEGIN */
  char **what;        /* what[i]: the object message i makes, for errors */
} hv_nft_batch;

void hv_nft_batch_init (hv_nft_batch *b, hv_egress_table *t);
void hv_nft_batch_free (hv_nft_batch *b);
/* Start message TYPE (NFT_MSG_*); the caller builds its payload and then
 * calls hv_nft_batch_done. what: the object, for error messages (owned). */
struct nlmsghdr *hv_nft_batch_msg (hv_nft_batch *b, hv_egress_table *t, uint16_t type, uint16_t flags, char *what);
void hv_nft_batch_done (hv_nft_batch *b, struct nlmsghdr *nlh);
/* Send the batch and read every answer.  The first error names its
 * object; the kernel undid the whole batch then. */
int hv_nft_batch_send (hv_nft_batch *b, hv_egress_table *t, hv_error **err);
/* One datagram of answers to b (len bytes, what hv_nft_batch_send reads):
 * counts its acknowledgements in *acked and keeps the first error's text
 * (*first_err, owned, when still NULL) and errno.  Public for the fuzz
 * target (tests/fuzz). */
void hv_nft_batch_read_acks (const hv_nft_batch *b, const void *buf, size_t len, size_t *acked, char **first_err,
                             int *first_errno);

/* Called with each answer to a request (MNL_CB_OK to go on). */
typedef int (*hv_nft_answer_cb) (const struct nlmsghdr *nlh, void *data);
/* One GET request of type NFT_MSG_GET* (a dump unless single; build, when
 * not NULL, adds its attributes) and every answer to it. */
int hv_nft_get (hv_egress_table *t, uint16_t type, bool single, void (*build) (struct nlmsghdr *, void *), void *arg,
                hv_nft_answer_cb cb, void *data, hv_error **err);
#endif
