#include "config.h"
#include "unix_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "utils.h"

/* Fill addr for path; *dirfd is the directory fd a long path goes
 * through (-1 for a short one), to be closed after the call. */
static int
unix_address (const char *path, struct sockaddr_un *addr, int *dirfd, hv_error **err)
{
  memset (addr, 0, sizeof (*addr));
  addr->sun_family = AF_UNIX;
  *dirfd = -1;
  if (strlen (path) < sizeof (addr->sun_path))
    {
      strcpy (addr->sun_path, path);
      return 0;
    }
  const char *slash = strrchr (path, '/');
  if (slash == NULL || strlen (slash + 1) + 32 >= sizeof (addr->sun_path))
    return hv_error_set (err, 0, "socket path too long: %s", path);
  cleanup_free char *dir = slash == path ? xstrdup ("/") : xasprintf ("%.*s", (int) (slash - path), path);
  *dirfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (*dirfd < 0)
    return hv_error_set (err, errno, "socket directory %s", dir);
  snprintf (addr->sun_path, sizeof (addr->sun_path), "/proc/self/fd/%d/%s", *dirfd, slash + 1);
  return 0;
}

/* A stream socket connected to, or listening on, path. */
static int
unix_socket_at (const char *path, bool listening, int backlog, hv_error **err)
{
  struct sockaddr_un addr;
  cleanup_close int dirfd = -1;
  if (unix_address (path, &addr, &dirfd, err) < 0)
    return -1;
  int sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return hv_error_set (err, errno, "socket");
  const struct sockaddr *sa = (const struct sockaddr *) &addr;
  int r = listening ? bind (sock, sa, sizeof (addr)) : connect (sock, sa, sizeof (addr));
  if (r < 0 || (listening && listen (sock, backlog) < 0))
    {
      int e = errno;
      close (sock);
      return hv_error_set (err, e, "%s %s", listening ? "listen on" : "connect to", path);
    }
  return sock;
}

int
hv_unix_connect (const char *path, hv_error **err)
{
  return unix_socket_at (path, false, 0, err);
}

int
hv_unix_listen (const char *path, int backlog, hv_error **err)
{
  return unix_socket_at (path, true, backlog, err);
}
