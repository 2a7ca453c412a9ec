/* The kernel's own mechanisms, which need no namespace: Landlock and
 * seccomp, each probed as a sandbox without namespaces uses them. */
#include "config.h"
#include "host_probe.h"
#include "host_probe_child.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "landlock.h"

int
hv_probe_landlock_abi (void)
{
  return hv_landlock_abi ();
}

/* A filter that allows everything, installed after no_new_privs, in a
 * child: the calling process keeps no filter.  A container whose own
 * profile refuses seccomp(2) or prctl(PR_SET_SECCOMP) answers here. */
static void
seccomp_child (int fd, void *data)
{
  (void) data;
  struct sock_filter allow[] = { BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
  struct sock_fprog prog = { .len = 1, .filter = allow };
  const char *step = "prctl(PR_SET_NO_NEW_PRIVS)";
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0)
    {
      step = "seccomp(SECCOMP_SET_MODE_FILTER)";
      if (syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
        _exit (0);
    }
  char buf[128];
  int n = snprintf (buf, sizeof (buf), "%s: %s", step, strerror (errno));
  if (write (fd, buf, (size_t) n) < 0)
    _exit (2);
  _exit (1);
}

void
hv_probe_seccomp (hv_probe *out)
{
  hv_probe_in_child (out, seccomp_child, NULL);
}
