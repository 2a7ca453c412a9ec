/* The monitor's fd for the first refused name (run_notice.h). */
#include "config.h"
#include "run_notice.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int
hv_run_notice_open (const hv_policy *p)
{
  struct stat st;
  if (p->net_mode != HV_NET_ALLOWLIST || fstat (2, &st) < 0)
    return -1;
  if (S_ISREG (st.st_mode) || S_ISSOCK (st.st_mode))
    return fcntl (2, F_DUPFD_CLOEXEC, 3);
  if (!S_ISCHR (st.st_mode) && !S_ISFIFO (st.st_mode))
    return -1;
  int fd = open ("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0 || fd > 2)
    return fd;
  /* fd 0 or 1 was closed: keep the line's fd off the standard ones. */
  int high = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  close (fd);
  return high;
}
