/* The egress descriptors create hands to the monitor (egress_fds.h). */
#include "config.h"

#include <stddef.h>
#include <unistd.h>

#include "egress_fds.h"

const char *const hv_egress_socket_names[HV_EGRESS_N_SOCKETS] = { "udp4", "tcp4", "udp6", "tcp6", "nft", "nflog", "fwd4", "fwd6" };

int
hv_egress_fd_take (int *fd)
{
  int taken = *fd;
  *fd = -1;
  return taken;
}

int *
hv_egress_fds_socket (struct hv_egress_fds *f, unsigned i)
{
  int *slots[HV_EGRESS_N_SOCKETS] = { &f->udp4, &f->tcp4, &f->udp6, &f->tcp6, &f->nft, &f->nflog, &f->fwd4, &f->fwd6 };
  return i < HV_EGRESS_N_SOCKETS ? slots[i] : NULL;
}

void
hv_egress_fds_close (struct hv_egress_fds *f)
{
  int fd = hv_egress_fd_take (&f->netns);
  if (fd >= 0)
    close (fd);
  for (unsigned i = 0; i < HV_EGRESS_N_SOCKETS; i++)
    if ((fd = hv_egress_fd_take (hv_egress_fds_socket (f, i))) >= 0)
      close (fd);
}
