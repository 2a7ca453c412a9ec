#include "config.h"
#include "host_probe_child.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "utils.h"

int
hv_probe_in_child (hv_probe *out, void (*child) (int fd, void *data), void *data)
{
  int p[2];
  out->ok = false;
  out->why[0] = '\0';
  if (pipe2 (p, O_CLOEXEC) < 0)
    {
      snprintf (out->why, sizeof (out->why), "pipe for the probe's process: %s", strerror (errno));
      return -1;
    }
  pid_t pid = fork ();
  if (pid < 0)
    {
      snprintf (out->why, sizeof (out->why), "fork for the probe's process: %s", strerror (errno));
      close (p[0]);
      close (p[1]);
      return -1;
    }
  if (pid == 0)
    {
      close (p[0]);
      child (p[1], data);
      _exit (0);
    }
  close (p[1]);
  read_upto (p[0], out->why, sizeof (out->why));
  close (p[0]);
  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  out->ok = WIFEXITED (status) && WEXITSTATUS (status) == 0;
  if (out->ok)
    out->why[0] = '\0';
  else if (out->why[0] == '\0')
    snprintf (out->why, sizeof (out->why), "the probe's child ended with status %d", status);
  return status;
}
