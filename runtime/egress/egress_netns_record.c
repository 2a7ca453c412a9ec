/* The egress table in a shared network namespace (egress_netns_record.h).
 *
 * A container that joins an existing network namespace (a pod's infra
 * namespace, Podman's or Docker's when it outlives the container, a
 * named `ip netns`) leaves its table there when it ends: the monitor,
 * which holds the only handle, exits with init.  The next container with
 * an allowlist in that namespace then cannot create its table ("File
 * exists"), and the namespace keeps rules nobody owns.  So create notes
 * which namespace got the table, and delete removes it once the
 * container's processes are gone (they cannot be loosened then). */
#include "config.h"
#include "egress_netns_record.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "egress_config.h"
#include "egress_table.h"
#include "file_read.h"
#include "log.h"
#include "utils.h"

static const char *
joined_netns_path (const oci_spec *spec)
{
  for (size_t i = 0; i < spec->linux_cfg.n_namespaces; i++)
    if (spec->linux_cfg.namespaces[i].type == CLONE_NEWNET)
      return spec->linux_cfg.namespaces[i].path;
  return NULL;
}

int
hv_egress_netns_record (const char *dir, const oci_spec *spec, hv_error **err)
{
  const char *path = joined_netns_path (spec);
  if (path == NULL || path[0] == '\0')
    return 0;
  /* init joined it by this path already (namespaces.c). */
  cleanup_close int ns = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (ns < 0 || fstat (ns, &st) < 0)
    return hv_error_set (err, errno, "egress: the network namespace %s", path);
  cleanup_free char *text
      = xasprintf ("%llu %llu %s\n", (unsigned long long) st.st_dev, (unsigned long long) st.st_ino, path);
  return write_file_atomic (dir, HV_EGRESS_NETNS_RECORD_FILE, text, strlen (text), err);
}

int
hv_egress_netns_cleanup (const char *dir, hv_error **err)
{
  cleanup_close int dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_free char *text = NULL;
  if (dirfd < 0 || read_file_at (dirfd, HV_EGRESS_NETNS_RECORD_FILE, &text, NULL) < 0)
    return 0; /* no table in a namespace of someone else's */
  unsigned long long dev = 0, ino = 0;
  int at = 0;
  if (sscanf (text, "%llu %llu %n", &dev, &ino, &at) != 2 || at == 0)
    return hv_error_set (err, 0, "%s/%s: not an egress namespace record", dir, HV_EGRESS_NETNS_RECORD_FILE);
  char *path = text + at;
  path[strcspn (path, "\n")] = '\0';
  /* The path may name another namespace by now (/proc/PID/ns/net of a
   * reused pid, a name `ip netns` gave again): only the very namespace
   * the table went into, held open while we check and delete, so that
   * another container's table is never removed. */
  cleanup_close int ns = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (ns < 0 || fstat (ns, &st) < 0 || (unsigned long long) st.st_dev != dev
      || (unsigned long long) st.st_ino != ino)
    {
      hv_log (HV_LOG_DEBUG, "egress: %s is gone or another namespace now: no table to remove", path);
      return 0;
    }
  hv_egress_table *t = NULL;
  if (hv_egress_table_open (HV_EGRESS_TABLE_NAME, ns, &t, err) < 0)
    return hv_error_wrap (err, "egress: remove the table from %s", path);
  int r = hv_egress_table_delete (t, err);
  hv_egress_table_close (t);
  return r < 0 ? hv_error_wrap (err, "egress: remove the table from %s", path) : 0;
}
