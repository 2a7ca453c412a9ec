/* The way out of an allowlist sandbox, and the host probes it rests on:
 * egress_way.h (hv_probe_tun, hv_probe_pasta). */
#include "config.h"
#include "egress_way.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "array_size.h"
#include "deadline.h"
#include "utils.h"

static const char *const pasta_paths[] = { "/usr/bin/pasta", "/usr/local/bin/pasta" };
/* pasta --version answers at once; a binary that hangs is not usable. */
#define PASTA_VERSION_MS 2000

void
hv_probe_tun (hv_probe *out)
{
  /* What pasta does first in the sandbox's namespace: the open's
   * permission check is the file's mode against the caller's ids, the
   * same there (an unmapped owner counts as other) as here. */
  int fd = open ("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    {
      out->ok = false;
      snprintf (out->why, sizeof (out->why), "open /dev/net/tun: %s", strerror (errno));
      return;
    }
  close (fd);
  out->ok = true;
  snprintf (out->why, sizeof (out->why), "/dev/net/tun opens read-write");
}

/* The first line of `path --version`, or -1 with why. */
static int
pasta_version (const char *path, char *line, size_t size)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return -1;
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (p[0]);
      close (p[1]);
      return -1;
    }
  if (pid == 0)
    {
      int devnull = open ("/dev/null", O_RDWR);
      if (devnull < 0 || dup2 (devnull, 0) < 0 || dup2 (p[1], 1) < 0 || dup2 (p[1], 2) < 0)
        _exit (127);
      char *argv[] = { (char *) "pasta", (char *) "--version", NULL };
      char *envp[] = { NULL };
      execve (path, argv, envp);
      _exit (127);
    }
  close (p[1]);
  cleanup_close int rd = p[0];
  size_t used = 0;
  int64_t deadline = hv_now_ms () + PASTA_VERSION_MS;
  for (;;)
    {
      if (hv_wait_fd (rd, POLLIN, deadline) < 0)
        break;
      /* Read to the end (it exits once it has written all): only the
       * start is kept. */
      char sink[512];
      bool full = used == size - 1;
      ssize_t n = full ? read (rd, sink, sizeof (sink)) : read (rd, line + used, size - 1 - used);
      if (n <= 0)
        break;
      if (!full)
        used += (size_t) n;
    }
  line[used] = '\0';
  kill (pid, SIGKILL);
  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  char *nl = strchr (line, '\n');
  if (nl)
    *nl = '\0';
  /* Killed above only if it had not answered: an answer ends with exit 0. */
  return WIFEXITED (status) && WEXITSTATUS (status) == 0 && line[0] ? 0 : -1;
}

void
hv_probe_pasta (hv_probe *out)
{
  out->ok = false;
  for (size_t i = 0; i < N_ELEMENTS (pasta_paths); i++)
    {
      if (access (pasta_paths[i], X_OK) < 0)
        continue;
      char line[160];
      if (pasta_version (pasta_paths[i], line, sizeof (line)) < 0)
        {
          snprintf (out->why, sizeof (out->why), "%s does not answer --version", pasta_paths[i]);
          return;
        }
      out->ok = true;
      snprintf (out->why, sizeof (out->why), "%s: %s", pasta_paths[i], line);
      return;
    }
  snprintf (out->why, sizeof (out->why), "pasta not found in /usr/bin or /usr/local/bin (Debian package passt)");
}

const char *
hv_egress_way_name (hv_egress_way w)
{
  return w == HV_EGRESS_WAY_PASTA ? "pasta" : "forwarder";
}

int
hv_egress_way_choose (const char *override, hv_egress_way *out, char *why, size_t size, hv_error **err)
{
  if (override && *override)
    {
      if (strcmp (override, "pasta") == 0)
        *out = HV_EGRESS_WAY_PASTA;
      else if (strcmp (override, "forwarder") == 0)
        *out = HV_EGRESS_WAY_FORWARD;
      else
        return hv_error_set (err, 0, "%s=%s: the way out is pasta or forwarder", HV_EGRESS_WAY_ENV, override);
      snprintf (why, size, "%s=%s", HV_EGRESS_WAY_ENV, override);
      return 0;
    }
  /* pasta where it can run, the forwarder where it cannot.  The
   * forwarder measured faster here (tests/bench/README.md, "The way
   * out"), but under pasta a destination that refuses or cannot be
   * reached fails the sandbox's connect(), as on a host; the forwarder
   * accepts first and can only reset after (docs/egress.md). */
  hv_probe tun;
  hv_probe_tun (&tun);
  if (!tun.ok)
    {
      *out = HV_EGRESS_WAY_FORWARD;
      snprintf (why, size, "pasta cannot make its device here (%s)", tun.why);
      return 0;
    }
  /* Installed is enough here (hv_probe_pasta's --version is a fork and
   * exec on every start: haven doctor asks it); one that cannot run
   * fails create with its own words. */
  const char *found = NULL;
  for (size_t i = 0; i < N_ELEMENTS (pasta_paths) && found == NULL; i++)
    if (access (pasta_paths[i], X_OK) == 0)
      found = pasta_paths[i];
  if (found == NULL)
    {
      *out = HV_EGRESS_WAY_FORWARD;
      snprintf (why, size, "pasta not found in /usr/bin or /usr/local/bin (Debian package passt)");
      return 0;
    }
  *out = HV_EGRESS_WAY_PASTA;
  snprintf (why, size, "%s, %s", tun.why, found);
  return 0;
}
