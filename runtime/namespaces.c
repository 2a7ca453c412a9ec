#include "config.h"
#include "namespaces.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exit_status.h"
#include "utils.h"

/* Order in which joined namespaces are entered by the child. */
static const int join_order[] = { CLONE_NEWUSER, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWNET, CLONE_NEWCGROUP, CLONE_NEWNS };

static int
open_ns (const oci_namespace *ns, hv_error **err)
{
  int fd = open (ns->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return hv_error_set (err, errno, "open %s namespace %s", oci_namespace_name (ns->type), ns->path);
  int type = ioctl (fd, NS_GET_NSTYPE);
  if (type >= 0 && type != ns->type)
    {
      close (fd);
      return hv_error_set (err, 0, "%s is not a %s namespace", ns->path, oci_namespace_name (ns->type));
    }
  return fd;
}

int
hv_ns_plan_build (const oci_spec *spec, struct hv_ns_plan *plan, hv_error **err)
{
  memset (plan, 0, sizeof (*plan));
  plan->parent_join_fd[0] = plan->parent_join_fd[1] = -1;
  const oci_linux *l = &spec->linux_cfg;
  bool new_pid = false;
  for (size_t i = 0; i < l->n_namespaces; i++)
    {
      const oci_namespace *ns = &l->namespaces[i];
      bool join = ns->path && ns->path[0];
      if (!join)
        {
          if (ns->type == CLONE_NEWUSER)
            plan->new_user = true;
          else if (ns->type == CLONE_NEWPID)
            new_pid = true;
          else
            plan->unshare_flags |= ns->type;
          continue;
        }
      int fd = open_ns (ns, err);
      if (fd < 0)
        {
          hv_ns_plan_close (plan);
          return -1;
        }
      if (ns->type == CLONE_NEWPID || ns->type == CLONE_NEWTIME)
        {
          int slot = ns->type == CLONE_NEWPID ? 0 : 1;
          plan->parent_join_fd[slot] = fd;
          plan->parent_join_type[slot] = ns->type;
          continue;
        }
      if (ns->type == CLONE_NEWUSER)
        plan->join_user = true;
      plan->join_fd[plan->n_join] = fd;
      plan->join_type[plan->n_join++] = ns->type;
    }
  if (plan->new_user)
    plan->clone_flags |= CLONE_NEWUSER;
  if (new_pid)
    {
      if (plan->join_user)
        plan->double_fork = true;
      else
        plan->clone_flags |= CLONE_NEWPID;
    }
  if ((l->has_time_boottime || l->has_time_monotonic) && !(plan->unshare_flags & CLONE_NEWTIME))
    {
      hv_ns_plan_close (plan);
      return hv_error_set (err, 0, "linux.timeOffsets need a new time namespace");
    }
  if ((spec->hostname || spec->domainname) && oci_spec_find_namespace (spec, CLONE_NEWUTS) == NULL)
    {
      hv_ns_plan_close (plan);
      return hv_error_set (err, 0, "setting the hostname needs a new uts namespace");
    }
  return 0;
}

void
hv_ns_plan_close (struct hv_ns_plan *plan)
{
  for (size_t i = 0; i < plan->n_join; i++)
    if (plan->join_fd[i] >= 0)
      close (plan->join_fd[i]);
  plan->n_join = 0;
  for (int i = 0; i < 2; i++)
    if (plan->parent_join_fd[i] >= 0)
      {
        close (plan->parent_join_fd[i]);
        plan->parent_join_fd[i] = -1;
      }
}

int
hv_ns_parent_join (struct hv_ns_plan *plan, hv_error **err)
{
  for (int i = 0; i < 2; i++)
    if (plan->parent_join_fd[i] >= 0 && setns (plan->parent_join_fd[i], plan->parent_join_type[i]) < 0)
      return hv_error_set (err, errno, "join %s namespace", oci_namespace_name (plan->parent_join_type[i]));
  return 0;
}

int
hv_ns_child_join (struct hv_ns_plan *plan, hv_error **err)
{
  for (size_t o = 0; o < N_ELEMENTS (join_order); o++)
    for (size_t i = 0; i < plan->n_join; i++)
      if (plan->join_type[i] == join_order[o])
        {
          if (setns (plan->join_fd[i], plan->join_type[i]) < 0)
            return hv_error_set (err, errno, "join %s namespace", oci_namespace_name (plan->join_type[i]));
          close (plan->join_fd[i]);
          plan->join_fd[i] = -1;
        }
  return 0;
}

static char *
format_map (const oci_id_mappings *m)
{
  char *out = xstrdup ("");
  for (size_t i = 0; i < m->n; i++)
    {
      char *n = xasprintf ("%s%u %u %u\n", out, m->v[i].container_id, m->v[i].host_id, m->v[i].size);
      free (out);
      out = n;
    }
  return out;
}

/* Unprivileged callers may only map themselves; multi-range maps need the
 * setuid newuidmap/newgidmap helpers from shadow-utils. */
static int
write_map_with_helper (const char *helper, pid_t pid, const oci_id_mappings *m, hv_error **err)
{
  char **argv = xmalloc0 ((2 + m->n * 3 + 1) * sizeof (char *));
  size_t n = 0;
  argv[n++] = xstrdup (helper);
  argv[n++] = xasprintf ("%d", pid);
  for (size_t i = 0; i < m->n; i++)
    {
      argv[n++] = xasprintf ("%u", m->v[i].container_id);
      argv[n++] = xasprintf ("%u", m->v[i].host_id);
      argv[n++] = xasprintf ("%u", m->v[i].size);
    }
  pid_t child = fork ();
  if (child == 0)
    {
      execvp (helper, argv);
      _exit (HV_EXIT_NOT_FOUND);
    }
  int status = -1;
  if (child > 0)
    waitpid (child, &status, 0);
  for (size_t i = 0; i < n; i++)
    free (argv[i]);
  free (argv);
  if (child < 0 || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return hv_error_set (err, 0, "%s %d failed", helper, pid);
  return 0;
}

int
hv_ns_write_id_maps (pid_t pid, const oci_spec *spec, hv_error **err)
{
  const oci_linux *l = &spec->linux_cfg;
  char path[64];
  cleanup_free char *uid_map = format_map (&l->uid_mappings);
  cleanup_free char *gid_map = format_map (&l->gid_mappings);
  cleanup_error hv_error *first = NULL;

  snprintf (path, sizeof (path), "/proc/%d/uid_map", pid);
  if (l->uid_mappings.n && write_file_at (AT_FDCWD, path, uid_map, strlen (uid_map), 0, &first) < 0)
    {
      if (write_map_with_helper ("newuidmap", pid, &l->uid_mappings, NULL) < 0)
        return hv_error_set (err, first->errno_code, "write uid_map \"%s\"", uid_map);
    }
  hv_error_free (&first);
  if (geteuid () != 0)
    {
      /* Without privilege, gid_map can only be written once setgroups is
       * denied (the user could otherwise drop supplementary groups). */
      snprintf (path, sizeof (path), "/proc/%d/setgroups", pid);
      write_file_at (AT_FDCWD, path, "deny", 4, 0, NULL);
    }
  snprintf (path, sizeof (path), "/proc/%d/gid_map", pid);
  if (l->gid_mappings.n && write_file_at (AT_FDCWD, path, gid_map, strlen (gid_map), 0, &first) < 0)
    {
      if (write_map_with_helper ("newgidmap", pid, &l->gid_mappings, NULL) < 0)
        return hv_error_set (err, first->errno_code, "write gid_map \"%s\"", gid_map);
    }
  return 0;
}

int
hv_ns_write_time_offsets (const oci_spec *spec, hv_error **err)
{
  const oci_linux *l = &spec->linux_cfg;
  cleanup_free char *text = xstrdup ("");
  if (l->has_time_monotonic)
    {
      char *n = xasprintf ("%smonotonic %lld %u\n", text, (long long) l->time_monotonic.secs, l->time_monotonic.nanosecs);
      free (text);
      text = n;
    }
  if (l->has_time_boottime)
    {
      char *n = xasprintf ("%sboottime %lld %u\n", text, (long long) l->time_boottime.secs, l->time_boottime.nanosecs);
      free (text);
      text = n;
    }
  if (text[0] == '\0')
    return 0;
  /* One write per line: the kernel parses a single offset per write on
   * older versions. */
  for (char *line = text, *nl; line && *line; line = nl)
    {
      nl = strchr (line, '\n');
      if (nl)
        *nl++ = '\0';
      if (write_file_at (AT_FDCWD, "/proc/self/timens_offsets", line, strlen (line), 0, err) < 0)
        return hv_error_wrap (err, "time namespace offsets");
    }
  return 0;
}

int
hv_ns_enter_new_time_ns (const oci_spec *spec, hv_error **err)
{
  if (hv_ns_write_time_offsets (spec, err) < 0)
    return -1;
  /* unshare(CLONE_NEWTIME) only moves our future children; kernels before
   * 6.3 do not move the process itself on exec either, so init (exec'd
   * directly, never forked) would keep the host's clocks.  Enter it now,
   * while single-threaded, after the offsets are fixed (they cannot be
   * written once a process is inside). */
  cleanup_close int fd = open ("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns (fd, CLONE_NEWTIME) < 0)
    return hv_error_set (err, errno, "enter the new time namespace");
  return 0;
}

static uint32_t
map_zero (const oci_id_mappings *m)
{
  for (size_t i = 0; i < m->n; i++)
    if (m->v[i].container_id == 0)
      return m->v[i].host_id;
  return 0;
}

uid_t
hv_ns_host_root_uid (const oci_spec *spec)
{
  return map_zero (&spec->linux_cfg.uid_mappings);
}

gid_t
hv_ns_host_root_gid (const oci_spec *spec)
{
  return map_zero (&spec->linux_cfg.gid_mappings);
}
