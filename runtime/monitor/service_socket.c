/* A monitor service's socket in a caller's directory: service_socket.h. */
#include "config.h"
#include "service_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "safe_path.h"
#include "utils.h"

int
hv_service_listen_in (const char *dir, const char *name, const char *what, const char *service, hv_error **err)
{
  cleanup_close int dfd = hv_open_host_nofollow (dir, O_PATH | O_DIRECTORY);
  if (dfd < 0)
    return hv_error_set (err, errno, "config.json: %s: %s", what, dir);
  struct stat st;
  if (fstat (dfd, &st) < 0)
    return hv_error_set (err, errno, "config.json: %s: %s", what, dir);
  if (st.st_uid != geteuid () || (st.st_mode & 077))
    return hv_error_set (err, 0, "config.json: %s: %s is not a directory of yours that only you can enter (uid %u, mode %04o)",
                         what, dir, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s", dfd, name);
  cleanup_close int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return hv_error_set (err, errno, "%s: socket", service);
  if (bind (fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen (fd, 16) < 0)
    return hv_error_set (err, errno, "%s: listen on %s/%s", service, dir, name);
  return steal_fd (&fd);
}
