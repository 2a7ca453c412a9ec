#include "config.h"
#include "cgroup_systemd.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_values.h"
#include "log.h"
#include "sd_bus_lib.h"
#include "utils.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
/* How long a start or stop job may take before create or delete gives up:
 * a scope job only moves processes and writes a few files, so anything
 * close to this means systemd is stuck, and a container engine waiting on
 * us is better told so than left hanging. */
#define JOB_TIMEOUT_USEC (10ULL * 1000000ULL)

/* libsystemd's sd-bus, loaded by open_bus (sd_bus_lib.h: why not linked).
 * Every other function here runs only once open_bus has succeeded; the
 * cleanups run also when it has not, with nothing to free. */
static const struct hv_sd_bus_lib *sdb;

static void
bus_unrefp (sd_bus **b)
{
  if (*b)
    sdb->flush_close_unref (*b);
}
static void
msg_unrefp (sd_bus_message **m)
{
  if (*m)
    sdb->message_unref (*m);
}
static void
slot_unrefp (sd_bus_slot **s)
{
  if (*s)
    sdb->slot_unref (*s);
}
static void
bus_error_freep (sd_bus_error *e)
{
  if (sdb)
    sdb->error_free (e);
}
#define cleanup_bus __attribute__ ((cleanup (bus_unrefp)))
#define cleanup_msg __attribute__ ((cleanup (msg_unrefp)))
#define cleanup_slot __attribute__ ((cleanup (slot_unrefp)))
#define cleanup_bus_error __attribute__ ((cleanup (bus_error_freep)))

static const char not_running[]
    = "--systemd-cgroup: systemd is not running (no /run/systemd/system); use the cgroupfs driver";

int
hv_systemd_check (const char *cgroups_path, bool rootless, hv_error **err)
{
  /* sd_booted()'s test: the directory exists only while systemd is PID 1
   * (or a container's init that manages cgroups as systemd does). */
  if (access ("/run/systemd/system", F_OK) < 0)
    return hv_error_set (err, 0, "%s", not_running);
  if (rootless)
    return hv_error_set (err, 0,
                         "--systemd-cgroup: rootless containers (the systemd user manager) are not "
                         "supported yet; use the cgroupfs driver (Podman: cgroup_manager = \"cgroupfs\" in "
                         "containers.conf), with which a rootless container runs without a cgroup and so "
                         "without resource limits");
  if (cgroups_path == NULL || cgroups_path[0] == '\0')
    return 0;
  /* Slice, prefix and name become unit names and path components. */
  const char *c1 = strchr (cgroups_path, ':');
  const char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
  size_t slice_len = c1 ? (size_t) (c1 - cgroups_path) : 0;
  if (c1 == NULL || c2 == NULL || strchr (c2 + 1, ':') || strchr (cgroups_path, '/')
      || (slice_len > 0 && (slice_len < 6 || strncmp (c1 - 6, ".slice", 6) != 0)))
    return hv_error_set (err, 0, "--systemd-cgroup: cgroupsPath \"%s\" is not of the form slice:prefix:name",
                         cgroups_path);
  /* runc then creates a transient slice and joins it by hand; slices take
   * neither PIDs nor Delegate, and no engine asks for one. */
  size_t name_len = strlen (c2 + 1);
  if (name_len >= 6 && strcmp (c2 + 1 + name_len - 6, ".slice") == 0)
    return hv_error_set (err, 0, "--systemd-cgroup: cgroupsPath \"%s\": a name that is a slice is not supported",
                         cgroups_path);
  return 0;
}

/* The unit is the path's last component, its slice the one before (the
 * root slice "-.slice" when there is none). */
static void
unit_names (const char *path, char **unit, char **slice)
{
  const char *last = strrchr (path, '/');
  *unit = xstrdup (last ? last + 1 : path);
  const char *prev = last;
  while (prev && prev > path && prev[-1] != '/')
    prev--;
  if (prev && prev > path)
    *slice = xasprintf ("%.*s", (int) (last - prev), prev);
  else
    *slice = xstrdup ("-.slice");
}

static int
bus_fail (hv_error **err, int r, const sd_bus_error *e, const char *what)
{
  if (e && sdb->error_is_set (e))
    return hv_error_set (err, 0, "--systemd-cgroup: %s: %s", what, e->message ? e->message : e->name);
  return hv_error_set (err, -r, "--systemd-cgroup: %s", what);
}

static int
open_bus (sd_bus **bus, hv_error **err)
{
  if (access ("/run/systemd/system", F_OK) < 0)
    return hv_error_set (err, 0, "%s", not_running);
  if (sdb == NULL && (sdb = hv_sd_bus_lib (err)) == NULL)
    return -1;
  int r = sdb->open_system (bus);
  if (r < 0)
    return hv_error_set (err, -r, "--systemd-cgroup: cannot connect to the system bus (is dbus running?); use "
                                  "the cgroupfs driver");
  return 0;
}

/* "0-3,8" into the byte array AllowedCPUs= takes: bit n of byte n/8. */
static int
append_bitmask (sd_bus_message *m, const char *prop, const char *list)
{
  uint8_t bits[1024] = { 0 };
  size_t used = 0;
  for (const char *p = list; *p;)
    {
      char *end;
      unsigned long a = strtoul (p, &end, 10), b = a;
      if (end == p)
        return -EINVAL;
      if (*end == '-')
        {
          p = end + 1;
          b = strtoul (p, &end, 10);
          if (end == p)
            return -EINVAL;
        }
      if (b < a || b >= sizeof (bits) * 8)
        return -EINVAL;
      for (unsigned long i = a; i <= b; i++)
        bits[i / 8] |= (uint8_t) (1u << (i % 8));
      if (b / 8 + 1 > used)
        used = b / 8 + 1;
      p = end;
      while (*p == ',' || *p == ' ' || *p == '\n')
        p++;
    }
  int r = sdb->message_open_container (m, 'r', "sv");
  if (r >= 0)
    r = sdb->message_append (m, "s", prop);
  if (r >= 0)
    r = sdb->message_open_container (m, 'v', "ay");
  if (r >= 0)
    r = sdb->message_append_array (m, 'y', bits, used);
  if (r >= 0)
    r = sdb->message_close_container (m);
  if (r >= 0)
    r = sdb->message_close_container (m);
  return r;
}

static int
append_u64 (sd_bus_message *m, const char *prop, uint64_t v)
{
  return sdb->message_append (m, "(sv)", prop, "t", v);
}

/* OCI's -1 (unlimited) is systemd's infinity, UINT64_MAX. */
static uint64_t
limit (int64_t v)
{
  return v < 0 ? UINT64_MAX : (uint64_t) v;
}

/* linux.resources as unit properties, where systemd has one.  The same
 * values are written to the cgroup files afterwards, which also covers
 * what has no property (hugetlb, rdma, unified keys, device rules). */
static int
append_resources (sd_bus_message *m, const oci_linux *l, hv_error **err)
{
  const oci_resources *res = &l->resources;
  bool v2 = hv_cgroup_mode () == HV_CGROUP_V2;
  int r = 0;
  if (res->memory.limit.set && res->memory.limit.value != 0 && r >= 0)
    r = append_u64 (m, v2 ? "MemoryMax" : "MemoryLimit", limit (res->memory.limit.value));
  if (v2 && res->memory.reservation.set && res->memory.reservation.value != 0 && r >= 0)
    r = append_u64 (m, "MemoryLow", limit (res->memory.reservation.value));
  if (v2 && r >= 0)
    {
      char swap[32];
      if (hv_cg_swap_v2 (res, swap, sizeof (swap), err) < 0)
        return hv_error_wrap (err, "--systemd-cgroup");
      if (strcmp (swap, "max") == 0)
        r = append_u64 (m, "MemorySwapMax", UINT64_MAX);
      else if (swap[0])
        r = append_u64 (m, "MemorySwapMax", strtoull (swap, NULL, 10));
    }
  if (res->cpu.shares.set && res->cpu.shares.value != 0 && r >= 0)
    r = v2 ? append_u64 (m, "CPUWeight", hv_cg_shares_to_weight (res->cpu.shares.value))
           : append_u64 (m, "CPUShares", res->cpu.shares.value);
  if ((res->cpu.quota.set || res->cpu.period.set) && r >= 0)
    {
      uint64_t period = res->cpu.period.set && res->cpu.period.value ? res->cpu.period.value : 100000;
      if (res->cpu.quota.set && res->cpu.quota.value > 0)
        {
          /* systemd keeps the quota per second in 10 ms steps and rounds
           * down; round up instead, as runc does, so that the cpu.max
           * written next is never above what systemd would write back. */
          uint64_t per_sec = (uint64_t) res->cpu.quota.value * 1000000ULL / period;
          if (per_sec % 10000)
            per_sec = (per_sec / 10000 + 1) * 10000;
          r = append_u64 (m, "CPUQuotaPerSecUSec", per_sec);
        }
      else if (res->cpu.quota.set && res->cpu.quota.value < 0)
        r = append_u64 (m, "CPUQuotaPerSecUSec", UINT64_MAX);
      /* CPUQuotaPeriodUSec: systemd 242 and later; Debian 11 has 247. */
      if (r >= 0 && v2 && res->cpu.period.set && res->cpu.period.value)
        r = append_u64 (m, "CPUQuotaPeriodUSec", period);
    }
  if (res->pids.limit.set && res->pids.limit.value != 0 && r >= 0)
    r = append_u64 (m, "TasksMax", limit (res->pids.limit.value));
  /* cpuset properties exist on the unified hierarchy only (systemd 244). */
  if (v2 && res->cpu.cpus && res->cpu.cpus[0] && r >= 0)
    {
      r = append_bitmask (m, "AllowedCPUs", res->cpu.cpus);
      if (r == -EINVAL)
        return hv_error_set (err, 0, "--systemd-cgroup: cpu.cpus \"%s\" is not a CPU list", res->cpu.cpus);
    }
  if (v2 && res->cpu.mems && res->cpu.mems[0] && r >= 0)
    {
      r = append_bitmask (m, "AllowedMemoryNodes", res->cpu.mems);
      if (r == -EINVAL)
        return hv_error_set (err, 0, "--systemd-cgroup: cpu.mems \"%s\" is not a node list", res->cpu.mems);
    }
  if (r < 0)
    return hv_error_set (err, -r, "--systemd-cgroup: build unit properties");
  return 0;
}

struct job_wait
{
  char *path;   /* the job's object path */
  char *result; /* JobRemoved's result once seen */
};

static int
on_job_removed (sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
  (void) ret_error;
  struct job_wait *w = userdata;
  uint32_t id;
  const char *path, *unit, *result;
  if (sdb->message_read (m, "uoss", &id, &path, &unit, &result) < 0)
    return 0;
  if (w->path && w->result == NULL && strcmp (path, w->path) == 0)
    w->result = xstrdup (result);
  return 0;
}

static uint64_t
now_usec (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000;
}

/* Subscribe to JobRemoved before the call that queues the job: a signal
 * that arrives with (or before) the reply is queued by sd-bus and only
 * dispatched by sd_bus_process(), once the job path is known. */
static int
watch_jobs (sd_bus *bus, sd_bus_slot **slot, struct job_wait *w, hv_error **err)
{
  int r = sdb->match_signal (bus, slot, SD_DEST, SD_PATH, SD_MANAGER, "JobRemoved", on_job_removed, w);
  if (r < 0)
    return bus_fail (err, r, NULL, "watch systemd jobs");
  /* systemd only emits job signals to clients that subscribed (or that
   * queued the job); subscribing is per connection and harmless. */
  sdb->call_method (bus, SD_DEST, SD_PATH, SD_MANAGER, "Subscribe", NULL, NULL, "");
  return 0;
}

static int
wait_job (sd_bus *bus, struct job_wait *w, const char *what, hv_error **err)
{
  uint64_t deadline = now_usec () + JOB_TIMEOUT_USEC;
  while (w->result == NULL)
    {
      int r = sdb->process (bus, NULL);
      if (r < 0)
        return bus_fail (err, r, NULL, what);
      if (r > 0)
        continue;
      uint64_t now = now_usec ();
      if (now >= deadline)
        return hv_error_set (err, 0, "--systemd-cgroup: %s: job %s not finished after %llu s", what, w->path,
                             JOB_TIMEOUT_USEC / 1000000ULL);
      r = sdb->wait (bus, deadline - now);
      if (r < 0 && r != -EINTR)
        return bus_fail (err, r, NULL, what);
    }
  if (strcmp (w->result, "done") != 0)
    return hv_error_set (err, 0, "--systemd-cgroup: %s: job %s", what, w->result);
  return 0;
}

/* The job a StartTransientUnit/StopUnit reply names, waited for. */
static int
wait_reply_job (sd_bus *bus, sd_bus_message *reply, struct job_wait *w, const char *what, hv_error **err)
{
  const char *job;
  int r = sdb->message_read (reply, "o", &job);
  if (r < 0)
    return bus_fail (err, r, NULL, what);
  w->path = xstrdup (job);
  r = wait_job (bus, w, what, err);
  free (w->path);
  free (w->result);
  w->path = w->result = NULL;
  return r;
}

static int
start_unit (sd_bus *bus, const char *unit, const char *slice, pid_t pid, const oci_linux *l, bool *exists,
            hv_error **err)
{
  cleanup_msg sd_bus_message *m = NULL;
  cleanup_msg sd_bus_message *reply = NULL;
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  cleanup_slot sd_bus_slot *slot = NULL;
  struct job_wait w = { 0 };
  cleanup_free char *what = xasprintf ("start %s", unit);
  cleanup_free char *desc = xasprintf ("haven container %s", unit);
  bool v2 = hv_cgroup_mode () == HV_CGROUP_V2;
  *exists = false;
  if (watch_jobs (bus, &slot, &w, err) < 0)
    return -1;
  int r = sdb->message_new_method_call (bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "StartTransientUnit");
  if (r >= 0)
    r = sdb->message_append (m, "ss", unit, "fail");
  if (r >= 0)
    r = sdb->message_open_container (m, 'a', "(sv)");
  if (r >= 0)
    r = sdb->message_append (m, "(sv)(sv)(sv)(sv)", "Description", "s", desc, "Slice", "s", slice,
                               "Delegate", "b", 1, "DefaultDependencies", "b", 0);
  if (r >= 0)
    r = sdb->message_append (m, "(sv)", "PIDs", "au", 1, (uint32_t) pid);
  /* Accounting on, so that systemd enables the controllers on the slices
   * above (Docker and Podman read the container's stats from them). */
  if (r >= 0)
    r = sdb->message_append (m, "(sv)(sv)(sv)", "MemoryAccounting", "b", 1, "CPUAccounting", "b", 1,
                               "TasksAccounting", "b", 1);
  if (r >= 0 && v2)
    r = sdb->message_append (m, "(sv)", "IOAccounting", "b", 1);
  if (r < 0)
    return bus_fail (err, r, NULL, what);
  if (append_resources (m, l, err) < 0)
    return -1;
  r = sdb->message_close_container (m);
  if (r >= 0)
    r = sdb->message_append (m, "a(sa(sv))", 0);
  if (r < 0)
    return bus_fail (err, r, NULL, what);
  r = sdb->call (bus, m, 0, &e, &reply);
  if (r < 0)
    {
      *exists = sdb->error_has_name (&e, "org.freedesktop.systemd1.UnitExists");
      return bus_fail (err, r, &e, what);
    }
  return wait_reply_job (bus, reply, &w, what, err);
}

int
hv_systemd_start (const char *path, pid_t pid, const oci_linux *l, hv_error **err)
{
  cleanup_bus sd_bus *bus = NULL;
  cleanup_free char *unit = NULL;
  cleanup_free char *slice = NULL;
  if (open_bus (&bus, err) < 0)
    return -1;
  unit_names (path, &unit, &slice);
  bool exists;
  if (start_unit (bus, unit, slice, pid, l, &exists, err) == 0)
    return 0;
  if (!exists)
    return -1;
  /* A unit of that name left failed by an earlier container with the same
   * id (systemd keeps failed transient units until reset): reset it and
   * try once more.  An active one is a real conflict, reported as such. */
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  if (sdb->call_method (bus, SD_DEST, SD_PATH, SD_MANAGER, "ResetFailedUnit", &e, NULL, "s", unit) < 0)
    return -1;
  hv_error_free (err);
  return start_unit (bus, unit, slice, pid, l, &exists, err);
}

int
hv_systemd_update (const char *path, const oci_linux *l, hv_error **err)
{
  cleanup_bus sd_bus *bus = NULL;
  cleanup_free char *unit = NULL;
  cleanup_free char *slice = NULL;
  cleanup_msg sd_bus_message *m = NULL;
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  if (open_bus (&bus, err) < 0)
    return -1;
  unit_names (path, &unit, &slice);
  cleanup_free char *what = xasprintf ("set properties of %s", unit);
  int r = sdb->message_new_method_call (bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "SetUnitProperties");
  if (r >= 0)
    r = sdb->message_append (m, "sb", unit, 1);
  if (r >= 0)
    r = sdb->message_open_container (m, 'a', "(sv)");
  if (r < 0)
    return bus_fail (err, r, NULL, what);
  if (append_resources (m, l, err) < 0)
    return -1;
  r = sdb->message_close_container (m);
  if (r < 0)
    return bus_fail (err, r, NULL, what);
  r = sdb->call (bus, m, 0, &e, NULL);
  if (r < 0)
    return bus_fail (err, r, &e, what);
  return 0;
}

int
hv_systemd_destroy (const char *path, hv_error **err)
{
  if (hv_cgroup_check_path (path, err) < 0)
    return -1;
  /* SIGKILL first: StopUnit would send SIGTERM and wait up to the scope's
   * stop timeout (90 s) for processes a deleted container has no use for. */
  hv_cgroup_kill (path);
  cleanup_bus sd_bus *bus = NULL;
  cleanup_free char *unit = NULL;
  cleanup_free char *slice = NULL;
  cleanup_error hv_error *bus_err = NULL;
  if (open_bus (&bus, &bus_err) < 0)
    {
      /* systemd gone (or never there: a state from before the driver
       * existed): the cgroup can still be removed by hand. */
      hv_log (HV_LOG_DEBUG, "%s", bus_err->msg);
      return hv_cgroup_destroy (path, err);
    }
  unit_names (path, &unit, &slice);
  {
    cleanup_msg sd_bus_message *reply = NULL;
    cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
    cleanup_slot sd_bus_slot *slot = NULL;
    struct job_wait w = { 0 };
    cleanup_free char *what = xasprintf ("stop %s", unit);
    if (watch_jobs (bus, &slot, &w, err) < 0)
      return -1;
    int r = sdb->call_method (bus, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit", &e, &reply, "ss", unit, "replace");
    if (r < 0)
      {
        /* An empty scope stops by itself and a stopped transient unit is
         * garbage-collected: nothing to stop is the usual case after the
         * container exited. */
        if (!sdb->error_has_name (&e, "org.freedesktop.systemd1.NoSuchUnit"))
          return bus_fail (err, r, &e, what);
      }
    else if (wait_reply_job (bus, reply, &w, what, err) < 0)
      return -1;
  }
  /* A unit that failed (OOM kill, say) stays loaded until reset, and would
   * make the next container with this id fail with "already exists". */
  sdb->call_method (bus, SD_DEST, SD_PATH, SD_MANAGER, "ResetFailedUnit", NULL, NULL, "s", unit);
  return hv_cgroup_destroy (path, err);
}
