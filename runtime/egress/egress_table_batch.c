/* What goes over the egress table's netlink socket: batches of changes
 * with their acknowledgements, and requests with their answers.  Every
 * change is one batch with NLM_F_ACK on each message: the kernel
 * processes the batch while sendto() runs and queues one acknowledgement
 * or error per message before it returns, so reading without waiting
 * afterwards sees every answer, and an error's sequence number tells
 * which object failed. */
#include "config.h"
#include "egress_table_batch.h"

#include <stdio.h> /* before libnftnl's headers, which use FILE */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>

#include "netlink_msg.h"
#include "utils.h"

/* Room kept free for the next message: libnftnl writes payloads without
 * a bound, and no message built here comes near this. */
#define MSG_ROOM 16384

/* Room for the kernel's answers: four of libmnl's socket buffers.  Its
 * MNL_SOCKET_BUFFER_SIZE is a long, the page size from sysconf capped at
 * 8192; sysconf cannot fail for the page size on Linux, but a value that
 * is not positive falls back to one page rather than wrapping. */
static size_t
answer_room (void)
{
  long one = MNL_SOCKET_BUFFER_SIZE;
  return 4 * (one > 0 ? (size_t) one : 4096);
}

void
hv_nft_batch_init (hv_nft_batch *b, hv_egress_table *t)
{
  memset (b, 0, sizeof (*b));
  b->cap = 4 * MSG_ROOM;
  b->buf = xmalloc0 (b->cap);
  nftnl_batch_begin (b->buf, t->seq++);
  b->len = NLMSG_ALIGN (((struct nlmsghdr *) b->buf)->nlmsg_len);
  b->first_seq = t->seq;
}

void
hv_nft_batch_free (hv_nft_batch *b)
{
  for (size_t i = 0; i < b->n; i++)
    free (b->what[i]);
  free (b->what);
  free (b->buf);
}

static void
batch_room (hv_nft_batch *b)
{
  if (b->cap - b->len >= MSG_ROOM)
    return;
  b->cap *= 2;
  b->buf = xrealloc (b->buf, b->cap);
  memset (b->buf + b->len, 0, b->cap - b->len);
}

struct nlmsghdr *
hv_nft_batch_msg (hv_nft_batch *b, hv_egress_table *t, uint16_t type, uint16_t flags, char *what)
{
  batch_room (b);
  b->what = xrealloc (b->what, (b->n + 1) * sizeof (*b->what));
  b->what[b->n++] = what;
  return nftnl_nlmsg_build_hdr (b->buf + b->len, type, NFPROTO_INET, flags | NLM_F_ACK, t->seq++);
}

void
hv_nft_batch_done (hv_nft_batch *b, struct nlmsghdr *nlh)
{
  b->len += NLMSG_ALIGN (nlh->nlmsg_len);
}

/* The error's text: errno's, and the kernel's extended-ack message when
 * it gave one. */
static char *
nlerr_text (const struct nlmsghdr *nlh, int error)
{
  const char *ext = NULL;
  if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
    {
      const struct nlmsgerr *e = mnl_nlmsg_get_payload (nlh);
      size_t off = sizeof (*e);
      /* The echoed request's length is the message's word: an offset
       * past the payload made mnl_attr_for_each read far outside it
       * (found by tests/fuzz/fuzz_netlink). */
      if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
        {
          if (e->msg.nlmsg_len < sizeof (struct nlmsghdr)
              || e->msg.nlmsg_len - sizeof (struct nlmsghdr) > mnl_nlmsg_get_payload_len (nlh) - off)
            return xstrdup (strerror (error));
          off += e->msg.nlmsg_len - sizeof (struct nlmsghdr);
        }
      const struct nlattr *a;
      /* libmnl's macro hands mnl_attr_ok the distance to the message's end
       * as an int: hv_nlmsg_ok held nlmsg_len within an int's count. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
      mnl_attr_for_each (a, nlh, off)
#pragma GCC diagnostic pop
      {
        /* Text only when it ends, within the message (libmnl rounds
         * the message's end up to 4 bytes), in its NUL: an unterminated
         * one was read past its end (found by tests/fuzz/fuzz_netlink). */
        if (mnl_attr_get_type (a) == NLMSGERR_ATTR_MSG
            && (const char *) a + a->nla_len <= (const char *) nlh + nlh->nlmsg_len
            && mnl_attr_validate (a, MNL_TYPE_NUL_STRING) == 0)
          ext = mnl_attr_get_str (a);
      }
    }
  return ext ? xasprintf ("%s (%s)", strerror (error), ext) : xstrdup (strerror (error));
}

void
hv_nft_batch_read_acks (const hv_nft_batch *b, const void *buf, size_t len, size_t *acked, char **first_err,
                        int *first_errno)
{
  const struct nlmsghdr *nlh = buf;
  int left = (int) len;
  for (; hv_nlmsg_ok (nlh, left); nlh = mnl_nlmsg_next (nlh, &left))
    {
      /* Too short to hold its error: not an acknowledgement (the batch
       * then counts as not acknowledged, an error). */
      if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_len < NLMSG_LENGTH (sizeof (struct nlmsgerr)))
        continue;
      const struct nlmsgerr *e = mnl_nlmsg_get_payload (nlh);
      uint32_t seq = nlh->nlmsg_seq;
      const char *what = seq >= b->first_seq && seq - b->first_seq < b->n ? b->what[seq - b->first_seq]
                                                                          : "the batch";
      (*acked)++;
      if (e->error != 0 && *first_err == NULL)
        {
          /* The kernel sends -errno; anything else (INT_MIN could not
           * even be negated: found by tests/fuzz/fuzz_netlink) is a
           * protocol error, and still an error. */
          int error = e->error < 0 && e->error > -4096 ? -e->error : EPROTO;
          cleanup_free char *text = nlerr_text (nlh, error);
          *first_err = xasprintf ("%s: %s", what, text);
          *first_errno = error;
        }
    }
}

int
hv_nft_batch_send (hv_nft_batch *b, hv_egress_table *t, hv_error **err)
{
  batch_room (b);
  nftnl_batch_end (b->buf + b->len, t->seq++);
  b->len += NLMSG_ALIGN (((struct nlmsghdr *) (b->buf + b->len))->nlmsg_len);
  if (mnl_socket_sendto (t->nl, b->buf, b->len) < 0)
    return hv_error_set (err, errno, "send nf_tables batch of %zu messages", b->n);

  size_t acked = 0;
  char *first_err = NULL;
  int first_errno = 0;
  size_t room = answer_room ();
  cleanup_free char *rbuf = xmalloc0 (room);
  while (acked < b->n)
    {
      ssize_t r = recv (mnl_socket_get_fd (t->nl), rbuf, room, MSG_DONTWAIT);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        break; /* nothing more comes: see the comment at the top */
      if (r < 0)
        {
          free (first_err);
          return hv_error_set (err, errno, "read nf_tables acknowledgements");
        }
      hv_nft_batch_read_acks (b, rbuf, (size_t) r, &acked, &first_err, &first_errno);
    }
  if (first_err != NULL)
    {
      hv_error_set (err, 0, "%s", first_err);
      (*err)->errno_code = first_errno; /* strerror is in the text already */
      free (first_err);
      return -1;
    }
  if (acked < b->n)
    return hv_error_set (err, 0, "the kernel acknowledged %zu of %zu nf_tables messages", acked, b->n);
  return 0;
}

int
hv_nft_get (hv_egress_table *t, uint16_t type, bool single, void (*build) (struct nlmsghdr *, void *), void *arg,
            hv_nft_answer_cb cb, void *data, hv_error **err)
{
  size_t room = answer_room ();
  cleanup_free char *buf = xmalloc0 (room);
  uint32_t seq = t->seq++;
  struct nlmsghdr *nlh
      = nftnl_nlmsg_build_hdr (buf, type, NFPROTO_INET, single ? NLM_F_ACK : NLM_F_DUMP, seq);
  if (build != NULL)
    build (nlh, arg);
  if (mnl_socket_sendto (t->nl, nlh, nlh->nlmsg_len) < 0)
    return hv_error_set (err, errno, "send nf_tables request");
  uint32_t portid = mnl_socket_get_portid (t->nl);
  for (int guard = 0; guard < 1000000; guard++)
    {
      ssize_t n = mnl_socket_recvfrom (t->nl, buf, room);
      if (n < 0)
        return hv_error_set (err, errno, "read nf_tables answer");
      int r = mnl_cb_run (buf, (size_t) n, seq, portid, (mnl_cb_t) cb, data);
      if (r < 0)
        return hv_error_set (err, errno, "nf_tables answer");
      if (r == MNL_CB_STOP)
        return 0;
    }
  return hv_error_set (err, 0, "nf_tables answer never ended");
}
