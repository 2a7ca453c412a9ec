/* Interface-file access and the writers common to cgroup v1 and v2. */
#include "config.h"
#include "cgroup_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_values.h"
#include "file_read.h"
#include "utils.h"

int
hv_cg_write (const char *dir, const char *file, const char *value, hv_error **err)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, file);
  cleanup_close int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return hv_error_set (err, ENOENT, "%s: no such cgroup file (controller not enabled, or not supported by this "
                                          "kernel)", path);
      return hv_error_set (err, errno, "open %s", path);
    }
  if (write_all (fd, value, strlen (value)) < 0)
    return hv_error_set (err, errno, "write \"%s\" to %s", value, path);
  return 0;
}

int
hv_cg_write_i64 (const char *dir, const char *file, int64_t value, hv_error **err)
{
  char buf[32];
  snprintf (buf, sizeof (buf), "%lld", (long long) value);
  return hv_cg_write (dir, file, buf, err);
}

int
hv_cg_write_u64 (const char *dir, const char *file, uint64_t value, hv_error **err)
{
  char buf[32];
  snprintf (buf, sizeof (buf), "%llu", (unsigned long long) value);
  return hv_cg_write (dir, file, buf, err);
}

int
hv_cg_write_lines (const char *dir, const char *file, const char *value, hv_error **err)
{
  cleanup_free char *copy = xstrdup (value);
  char *save = NULL;
  for (char *line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    if (line[0] && hv_cg_write (dir, file, line, err) < 0)
      return -1;
  return 0;
}

bool
hv_cg_has (const char *dir, const char *file)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, file);
  return access (path, F_OK) == 0;
}

int
hv_cg_read_i64 (const char *dir, const char *file, int64_t *out, hv_error **err)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, file);
  cleanup_free char *text = NULL;
  if (read_file_at (AT_FDCWD, path, &text, err) < 0)
    return -1;
  if (str_has_prefix (text, "max"))
    {
      *out = INT64_MAX;
      return 0;
    }
  char *end;
  errno = 0;
  long long v = strtoll (text, &end, 10);
  if (end == text || errno)
    return hv_error_set (err, 0, "%s: not a number: %.40s", path, text);
  *out = v;
  return 0;
}

bool
hv_cg_v2_has_controller (const char *dir, const char *name)
{
  cleanup_free char *path = xasprintf ("%s/cgroup.controllers", dir);
  cleanup_free char *text = NULL;
  if (read_file_at (AT_FDCWD, path, &text, NULL) < 0)
    return false;
  size_t l = strlen (name);
  for (char *p = text; (p = strstr (p, name)) != NULL; p += l)
    if ((p == text || p[-1] == ' ') && (p[l] == ' ' || p[l] == '\n' || p[l] == '\0'))
      return true;
  return false;
}

int
hv_cg_cpuset (const char *dir, const oci_resources *r, hv_error **err)
{
  /* mems first: a task's cpus and mems must both be non-empty. */
  if (r->cpu.mems && r->cpu.mems[0] && hv_cg_write (dir, "cpuset.mems", r->cpu.mems, err) < 0)
    return -1;
  if (r->cpu.cpus && r->cpu.cpus[0] && hv_cg_write (dir, "cpuset.cpus", r->cpu.cpus, err) < 0)
    return -1;
  return 0;
}

int
hv_cg_pids (const char *dir, const oci_resources *r, hv_error **err)
{
  if (!r->pids.present || !r->pids.limit.set)
    return 0;
  /* runtime-spec 1.2 (which this runtime implements) and runc read 0 and
   * -1 as "no limit"; Docker sends -1 for both. */
  if (r->pids.limit.value <= 0)
    return hv_cg_write (dir, "pids.max", "max", err);
  return hv_cg_write_i64 (dir, "pids.max", r->pids.limit.value, err);
}

int
hv_cg_rdma (const char *dir, const oci_resources *r, hv_error **err)
{
  for (size_t i = 0; i < r->n_rdma; i++)
    {
      if (hv_cg_check_name ("rdma device", r->rdma[i].device, err) < 0)
        return -1;
      cleanup_free char *line = hv_cg_rdma_line (&r->rdma[i]);
      if (line && hv_cg_write (dir, "rdma.max", line, err) < 0)
        return -1;
    }
  return 0;
}
