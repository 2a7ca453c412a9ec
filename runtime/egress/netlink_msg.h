/* Walking the messages of one netlink datagram.  libmnl's mnl_nlmsg_ok
 * compares (int) nlmsg_len with what is left, so a length of 2^31 or
 * more passes as negative, and mnl_nlmsg_next then steps by
 * MNL_ALIGN (nlmsg_len), which wraps to 0 for 0xfffffffd..0xffffffff: the
 * loop never ends (found by tests/fuzz/fuzz_netlink).  This check
 * compares unsigned lengths, so every message it accepts lies within the
 * datagram and the next one starts past it. */
#ifndef HAVEN_NETLINK_MSG_H
#define HAVEN_NETLINK_MSG_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>

static inline bool
hv_nlmsg_ok (const struct nlmsghdr *nlh, int len)
{
  return len >= (int) sizeof (struct nlmsghdr) && nlh->nlmsg_len >= sizeof (struct nlmsghdr)
         && nlh->nlmsg_len <= (unsigned) len;
}

/* A length rounded up to netlink's 4-byte alignment, in size_t.  libmnl's
 * MNL_ALIGN masks with ~(MNL_ALIGNTO - 1), a negative int, which
 * -Wconversion rightly flags when the length is a size_t. */
static inline size_t
hv_nl_align (size_t len)
{
  return (len + NLMSG_ALIGNTO - 1) & ~((size_t) NLMSG_ALIGNTO - 1);
}
#endif
