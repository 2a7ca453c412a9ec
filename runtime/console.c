#include "config.h"
#include "console.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <termios.h>
#include <unistd.h>

#include "mounts.h"
#include "safe_path.h"
#include "utils.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO ('T', 0x41)
#endif

int
hv_console_setup (const oci_process *p, bool mount_console, hv_error **err)
{
  struct statfs sfs;
  struct stat st;
  cleanup_close int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return hv_error_set (err, errno, "open /");
  cleanup_close int master = hv_open_in_root (rootfd, "/dev/pts/ptmx", O_RDWR | O_NOCTTY, 0);
  if (master < 0)
    return hv_error_set (err, errno, "open /dev/pts/ptmx (a terminal needs a devpts mount at /dev/pts)");
  /* The image could have put anything at /dev/pts/ptmx: insist on the
   * real multiplexer of a devpts instance. */
  if (fstatfs (master, &sfs) < 0 || sfs.f_type != DEVPTS_SUPER_MAGIC || fstat (master, &st) < 0
      || !S_ISCHR (st.st_mode) || major (st.st_rdev) != 5 || minor (st.st_rdev) != 2)
    return hv_error_set (err, 0, "/dev/pts/ptmx is not a devpts pty multiplexer");
  int unlock = 0;
  if (ioctl (master, TIOCSPTLCK, &unlock) < 0)
    return hv_error_set (err, errno, "unlock pty");
  /* TIOCGPTPEER opens the slave without a path lookup that the container
   * could redirect. */
  cleanup_close int slave = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return hv_error_set (err, errno, "open pty slave");
  if (p->has_console_size)
    {
      struct winsize ws = { .ws_row = (unsigned short) p->console_height, .ws_col = (unsigned short) p->console_width };
      if (ioctl (slave, TIOCSWINSZ, &ws) < 0)
        return hv_error_set (err, errno, "set terminal size");
    }
  if (mount_console)
    {
      cleanup_close int target = hv_create_in_root (rootfd, "/dev/console", false, 0755, err);
      if (target < 0)
        return hv_error_wrap (err, "create /dev/console");
      cleanup_close int tree = open_tree (slave, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
      if (tree < 0)
        return hv_error_set (err, errno, "clone pty for /dev/console");
      if (hv_mount_tree_onto (tree, target, err) < 0)
        return hv_error_wrap (err, "bind /dev/console");
    }
  if (setsid () < 0)
    return hv_error_set (err, errno, "setsid");
  if (ioctl (slave, TIOCSCTTY, 0) < 0)
    return hv_error_set (err, errno, "set controlling terminal");
  for (int fd = 0; fd < 3; fd++)
    if (dup2 (slave, fd) < 0)
      return hv_error_set (err, errno, "dup2 terminal");
  return steal_fd (&master);
}

/* Without a terminal of its own, the container process would share the
 * caller's session and with it the caller's controlling terminal when
 * its stdin or stdout is one (haven run with a pipe on one side, or any
 * OCI client started from a shell): it could open /dev/tty, and TIOCSTI
 * types into a terminal only for a process whose controlling terminal it
 * is (or with CAP_SYS_ADMIN).  A new session has no controlling terminal.
 * Done for every container, as runc does for each init and exec process,
 * not only for haven run: no caller wants its terminal handed over. */
int
hv_console_detach (hv_error **err)
{
  if (setsid () < 0)
    return hv_error_set (err, errno, "setsid (leave the caller's terminal session)");
  return 0;
}

int
hv_console_send (const char *socket_path, int master, hv_error **err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (socket_path) >= sizeof (addr.sun_path))
    return hv_error_set (err, 0, "console socket path too long: %s", socket_path);
  strcpy (addr.sun_path, socket_path);
  cleanup_close int sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return hv_error_set (err, errno, "socket");
  if (connect (sock, (struct sockaddr *) &addr, sizeof (addr)) < 0)
    return hv_error_set (err, errno, "connect to console socket %s", socket_path);
  /* Payload: the pty name, as runc sends it (conmon and the shim ignore it). */
  char name[64] = "/dev/ptmx";
  int n = 0;
  if (ioctl (master, TIOCGPTN, &n) == 0)
    snprintf (name, sizeof (name), "/dev/pts/%d", n);
  struct iovec iov = { name, strlen (name) };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  memset (&ctl, 0, sizeof (ctl));
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof (ctl.buf) };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &master, sizeof (int));
  if (sendmsg (sock, &msg, MSG_NOSIGNAL) < 0)
    return hv_error_set (err, errno, "send pty to console socket");
  return 0;
}
