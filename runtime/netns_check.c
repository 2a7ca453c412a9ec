/* Network `none` held after the engine's hooks: netns_check.h. */
#include "config.h"
#include "file_read.h"
#include "netns_check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "haven_annotations.h"
#include "utils.h"

int
hv_netns_none_wanted (const oci_spec *spec, const char *name, bool *none, hv_error **err)
{
  const char *v = oci_kv_get (&spec->annotations, HV_NETWORK_ANNOTATION);
  *none = false;
  if (v == NULL)
    return 0;
  if (strcmp (v, HV_NETWORK_NONE) != 0)
    return hv_error_set (err, 0, "%s: .annotations[\"%s\"]: \"%s\": the only value is \"%s\"", name,
                         HV_NETWORK_ANNOTATION, v, HV_NETWORK_NONE);
  *none = true;
  return 0;
}

char *
hv_netns_other_interfaces (const char *text)
{
  char *names = NULL;
  /* Two header lines, then "  NAME: counters..." per interface. */
  const char *line = text;
  for (int n = 0; line && *line; n++)
    {
      const char *nl = strchr (line, '\n');
      size_t len = nl ? (size_t) (nl - line) : strlen (line);
      const char *colon = memchr (line, ':', len);
      if (n >= 2 && colon)
        {
          const char *start = line;
          while (start < colon && (*start == ' ' || *start == '\t'))
            start++;
          size_t nlen = (size_t) (colon - start);
          if (!(nlen == 2 && memcmp (start, "lo", 2) == 0))
            {
              char *more = xasprintf ("%s%s%.*s", names ? names : "", names ? ", " : "", (int) nlen, start);
              free (names);
              names = more;
            }
        }
      line = nl ? nl + 1 : NULL;
    }
  return names;
}

/* /proc/PID/net/dev shows the interfaces of that process's network
 * namespace: no setns, so it works the same for a rootless runtime. */
#define NET_DEV_MAX (256 * 1024)

int
hv_netns_check_loopback_only (pid_t pid, const char *what, hv_error **err)
{
  char path[64];
  snprintf (path, sizeof (path), "/proc/%d/net/dev", pid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "network none: open %s", path);
  cleanup_free char *buf = NULL;
  /* Refused from NET_DEV_MAX bytes on, not past them. */
  if (hv_read_fd_max (fd, 0, NET_DEV_MAX - 1, &buf, NULL, NULL) < 0)
    return errno == EFBIG ? hv_error_set (err, 0, "network none: %s: larger than %d bytes", path, NET_DEV_MAX)
                          : hv_error_set (err, errno, "network none: read %s", path);
  cleanup_free char *others = hv_netns_other_interfaces (buf);
  if (others)
    return hv_error_set (err, 0,
                         "the policy's network is none, but the container's network namespace has interface(s) %s "
                         "%s (the engine's network set-up put them there): refused rather than run with a network",
                         others, what);
  return 0;
}
