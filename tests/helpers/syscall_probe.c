/* What a container may do, asked of the kernel directly: each argument
 * names one attempt, and one line "NAME: ok" or "NAME: <error>" is printed
 * for it.  Built static (no libc in the test image) and without the
 * sanitizers, so that it runs in any root filesystem. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

static long
attempt (const char *name)
{
  if (strcmp (name, "ptrace") == 0)
    return ptrace (PTRACE_TRACEME, 0, 0, 0);
  if (strcmp (name, "io_uring") == 0)
    {
      unsigned char params[120] = { 0 };
      long fd = syscall (__NR_io_uring_setup, 1, params);
      if (fd >= 0)
        close ((int) fd);
      return fd < 0 ? -1 : 0;
    }
  if (strcmp (name, "tiocsti") == 0)
    {
      char c = 'x';
      return ioctl (0, TIOCSTI, &c);
    }
  if (strcmp (name, "setuid-file") == 0)
    {
      int fd = open ("/tmp/.probe-setuid", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
      if (fd < 0)
        return -1;
      close (fd);
      return chmod ("/tmp/.probe-setuid", 04755);
    }
  if (strcmp (name, "write-workspace") == 0)
    {
      int fd = open ("/workspace/.probe-write", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0)
        return -1;
      close (fd);
      return unlink ("/workspace/.probe-write");
    }
  if (strcmp (name, "sleep") == 0)
    return sleep (3600) ? -1 : 0; /* a long-running program that is no shell */
  if (strcmp (name, "userns") == 0)
    return unshare (CLONE_NEWUSER);
  errno = EINVAL;
  return -1;
}

int
main (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      errno = 0;
      long r = attempt (argv[i]);
      printf ("%s: %s\n", argv[i], r < 0 ? strerror (errno) : "ok");
    }
  return 0;
}
