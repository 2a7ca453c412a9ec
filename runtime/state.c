#include "config.h"
#include "file_read.h"
#include "oci_json.h"
#include "state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cgroup.h"
#include "json_gen.h"
#include "json_walk.h"
#include "utils.h"

static const char *const status_names[] = { "creating", "created", "running", "paused", "stopped" };

const char *
hv_status_name (enum hv_status s)
{
  return status_names[s];
}

int
hv_state_dir (const struct hv_runtime *rt, const char *id, char **out, hv_error **err)
{
  /* The id becomes a directory name: refuse anything that could walk out of
   * the state root. */
  if (id[0] == '\0' || strcmp (id, ".") == 0 || strcmp (id, "..") == 0 || strlen (id) > 1024)
    return hv_error_set (err, 0, "invalid container id \"%s\"", id);
  for (const char *p = id; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'
          || *p == '-' || *p == '.' || *p == '+'))
      return hv_error_set (err, 0, "invalid container id \"%s\": only [A-Za-z0-9_+.-] are allowed", id);
  *out = xasprintf ("%s/%s", rt->root, id);
  return 0;
}

static void
gen_annotations (yajl_gen g, const oci_kv_list *a)
{
  jg_str (g, "annotations");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < a->n; i++)
    jg_kv (g, a->v[i].key, a->v[i].value);
  yajl_gen_map_close (g);
}

char *
hv_container_state_json (const hv_container *c, enum hv_status status, bool pretty)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_config (g, yajl_gen_beautify, pretty ? 1 : 0);
  yajl_gen_config (g, yajl_gen_indent_string, "  ");
  yajl_gen_map_open (g);
  jg_kv (g, "ociVersion", HAVEN_OCI_VERSION);
  jg_kv (g, "id", c->id);
  jg_str (g, "pid");
  yajl_gen_integer (g, status == HV_STATUS_STOPPED ? 0 : c->pid);
  jg_kv (g, "status", hv_status_name (status));
  jg_kv (g, "bundle", c->bundle);
  jg_kv (g, "rootfs", c->rootfs);
  jg_kv (g, "created", c->created);
  jg_str (g, "owner");
  cleanup_free char *owner = xasprintf ("%u", (unsigned) c->owner);
  jg_str (g, owner);
  gen_annotations (g, &c->annotations);
  yajl_gen_map_close (g);
  return jg_finish (g);
}

int
hv_container_save (const hv_container *c, hv_error **err)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  yajl_gen_map_open (g);
  jg_kv (g, "id", c->id);
  jg_str (g, "pid");
  yajl_gen_integer (g, c->pid);
  jg_str (g, "startTime");
  /* Unsigned, as it is read back (jw_as_u64): a start time above 2^63
   * written as a long long came back negative and the state no longer
   * loaded (found by tests/fuzz/fuzz_state). */
  char start[24];
  snprintf (start, sizeof (start), "%llu", c->start_time);
  yajl_gen_number (g, start, strlen (start));
  jg_kv (g, "bundle", c->bundle);
  jg_kv (g, "rootfs", c->rootfs);
  jg_kv (g, "created", c->created);
  jg_str (g, "owner");
  yajl_gen_integer (g, c->owner);
  jg_kv (g, "cgroupPath", c->cgroup_path);
  jg_str (g, "systemdCgroup");
  yajl_gen_bool (g, c->systemd_cgroup);
  gen_annotations (g, &c->annotations);
  yajl_gen_map_close (g);
  cleanup_free char *json = jg_finish (g);
  return write_file_atomic (c->dir, "state.json", json, strlen (json), err);
}

int
hv_container_load (const struct hv_runtime *rt, const char *id, hv_container **out, hv_error **err)
{
  cleanup_free char *dir = NULL;
  cleanup_free char *text = NULL;
  cleanup_error hv_error *tmp = NULL;
  struct stat st;
  if (hv_state_dir (rt, id, &dir, err) < 0)
    return -1;
  if (stat (dir, &st) < 0)
    return hv_error_set (err, 0, "container does not exist");
  cleanup_free char *path = xasprintf ("%s/state.json", dir);
  if (hv_read_file (path, &text, NULL, &tmp) < 0)
    {
      /* Directory without state.json: being created, or a create that
       * failed halfway and is being cleaned up. */
      hv_container *c = xmalloc0 (sizeof (*c));
      c->id = xstrdup (id);
      c->dir = steal_pointer (&dir);
      c->cgroup_path = xstrdup ("");
      *out = c;
      return 0;
    }
  json_walk w;
  yajl_val root;
  jw_init (&w, path, err);
  if (jw_parse (&w, text, &root) < 0)
    return -1;
  hv_container *c = xmalloc0 (sizeof (*c));
  uint64_t start_time = 0;
  oci_opt_i64 pid = { 0 }, owner = { 0 };
  yajl_val st_v = jw_lookup (root, "startTime");
  int r = 0;
  if (jw_field_string (&w, root, "bundle", &c->bundle) < 0 || jw_field_string (&w, root, "rootfs", &c->rootfs) < 0
      || jw_field_string (&w, root, "created", &c->created) < 0
      || jw_field_string (&w, root, "cgroupPath", &c->cgroup_path) < 0
      || jw_field_bool (&w, root, "systemdCgroup", &c->systemd_cgroup) < 0
      || jw_field_opt_i64 (&w, root, "pid", &pid) < 0 || jw_field_opt_i64 (&w, root, "owner", &owner) < 0
      || jw_field_string_map (&w, root, "annotations", &c->annotations) < 0
      || (st_v && jw_as_u64 (&w, st_v, &start_time) < 0))
    r = -1;
  /* pid_t and uid_t are narrower than the file's numbers: a pid of
   * 2^32 + 1 used to load as pid 1 (found by tests/fuzz/fuzz_state). */
  else if (pid.value < 0 || pid.value > INT32_MAX)
    r = jw_fail_key (&w, "pid", "%lld is not a pid", (long long) pid.value);
  else if (owner.value < 0 || owner.value >= UINT32_MAX)
    r = jw_fail_key (&w, "owner", "%lld is not a uid", (long long) owner.value);
  yajl_tree_free (root);
  c->id = xstrdup (id);
  c->dir = steal_pointer (&dir);
  c->pid = (pid_t) pid.value;
  c->owner = (uid_t) owner.value;
  c->start_time = start_time;
  if (c->cgroup_path == NULL)
    c->cgroup_path = xstrdup ("");
  if (r < 0)
    {
      hv_container_free (c);
      return -1;
    }
  *out = c;
  return 0;
}

void
hv_container_free (hv_container *c)
{
  if (c == NULL)
    return;
  free (c->id);
  free (c->dir);
  free (c->bundle);
  free (c->rootfs);
  free (c->created);
  free (c->cgroup_path);
  oci_kv_list_free (&c->annotations);
  free (c);
}

bool
hv_container_alive (const hv_container *c)
{
  unsigned long long st = 0;
  char state = 0;
  if (c->pid <= 0)
    return false;
  if (proc_start_time (c->pid, &st, &state) < 0 || st == 0)
    return false;
  /* A different start time means the pid was reused by another process. */
  if (st != c->start_time)
    return false;
  return state != 'Z' && state != 'X';
}

/* The hex mask after "Name:\t" in a /proc/PID/status text, 0 if absent. */
static unsigned long long
status_mask (const char *text, const char *name)
{
  const char *p = strstr (text, name);
  return p ? strtoull (p + strlen (name), NULL, 16) : 0;
}

/* PF_EXITING in /proc/PID/stat's flags (include/linux/sched.h). */
#define HV_PF_EXITING 0x4ULL

bool
hv_container_exiting (const hv_container *c)
{
  unsigned long long st = 0;
  char state = 0;
  if (c->pid <= 0 || proc_start_time (c->pid, &st, &state) < 0 || st == 0 || st != c->start_time)
    return false;
  char path[64], buf[2048];
  snprintf (path, sizeof (path), "/proc/%d/stat", c->pid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof (buf) - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  /* After comm (which may hold spaces and parentheses): state (field 3),
   * ppid, pgrp, session, tty_nr, tpgid, then flags (field 9); p ends on
   * the space before it. */
  char *p = strrchr (buf, ')');
  for (int field = 3; field <= 9 && p; field++)
    p = strchr (p + 1, ' ');
  if (p && (strtoull (p + 1, NULL, 10) & HV_PF_EXITING))
    return true;
  snprintf (path, sizeof (path), "/proc/%d/status", c->pid);
  close (fd);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  n = fd < 0 ? -1 : read (fd, buf, sizeof (buf) - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  unsigned long long kill_bit = 1ULL << (SIGKILL - 1);
  return ((status_mask (buf, "\nSigPnd:\t") | status_mask (buf, "\nShdPnd:\t")) & kill_bit) != 0;
}

enum hv_status
hv_container_status (const hv_container *c)
{
  if (c->bundle == NULL)
    return HV_STATUS_CREATING;
  if (!hv_container_alive (c))
    return HV_STATUS_STOPPED;
  cleanup_free char *fifo = xasprintf ("%s/exec.fifo", c->dir);
  if (access (fifo, F_OK) == 0)
    return HV_STATUS_CREATED;
  if (c->cgroup_path[0] && hv_cgroup_is_frozen (c->cgroup_path))
    return HV_STATUS_PAUSED;
  return HV_STATUS_RUNNING;
}

int
hv_state_lock_create (const char *dir, hv_error **err)
{
  cleanup_free char *path = xasprintf ("%s/.create.lock", dir);
  cleanup_close int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return hv_error_set (err, errno, "open %s", path);
  struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  if (fcntl (fd, F_SETLK, &l) < 0)
    return hv_error_set (err, errno, "lock %s", path);
  return steal_fd (&fd);
}

bool
hv_state_being_created (const char *dir)
{
  cleanup_free char *path = xasprintf ("%s/.create.lock", dir);
  cleanup_close int fd = open (path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return false;
  struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  return fcntl (fd, F_GETLK, &l) == 0 && l.l_type != F_UNLCK;
}

static int
remove_tree_at (int parentfd, const char *name)
{
  cleanup_close int fd = openat (parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return unlinkat (parentfd, name, 0);
  DIR *d = fdopendir (fd);
  if (d == NULL)
    return -1;
  fd = -1;
  struct dirent *de;
  while ((de = readdir (d)))
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (de->d_type == DT_DIR)
        remove_tree_at (dirfd (d), de->d_name);
      else
        unlinkat (dirfd (d), de->d_name, 0);
    }
  closedir (d);
  return unlinkat (parentfd, name, AT_REMOVEDIR);
}

int
hv_state_remove (const char *dir, hv_error **err)
{
  if (remove_tree_at (AT_FDCWD, dir) < 0 && errno != ENOENT)
    return hv_error_set (err, errno, "remove %s", dir);
  return 0;
}
