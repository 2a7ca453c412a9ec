/* The OCI runtime-spec 1.2 data model for Linux, as parsed from config.json
 * (and process.json for exec).  Strings and arrays are owned by the
 * enclosing struct and released by oci_spec_free().  Optional scalars carry
 * an explicit "set" flag because "absent" and "zero" mean different things
 * in the spec (an absent memory limit is not a zero limit). */
#ifndef HAVEN_OCI_SPEC_H
#define HAVEN_OCI_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct
{
  bool set;
  int64_t value;
} oci_opt_i64;

typedef struct
{
  bool set;
  uint64_t value;
} oci_opt_u64;

typedef struct
{
  bool set;
  bool value;
} oci_opt_bool;

/* A NULL-terminated list.  cap is the slots v holds when oci_strv_push
 * grew it; a list built by hand (v set, cap 0) holds exactly n + 1, its
 * items and the NULL.  Whoever sets v by hand sets cap to 0 with it. */
typedef struct
{
  size_t n;
  char **v;
  size_t cap;
} oci_strv;

typedef struct
{
  char *key;
  char *value;
} oci_kv;

typedef struct
{
  size_t n;
  oci_kv *v;
} oci_kv_list;

typedef struct
{
  int resource; /* RLIMIT_* */
  char *type;   /* "RLIMIT_NOFILE" as written */
  uint64_t hard;
  uint64_t soft;
} oci_rlimit;

typedef struct
{
  bool present;
  oci_strv bounding, effective, inheritable, permitted, ambient;
} oci_capabilities;

typedef struct
{
  uint32_t uid;
  uint32_t gid;
  oci_opt_u64 umask;
  size_t n_additional_gids;
  uint32_t *additional_gids;
  char *username;
} oci_user;

typedef struct
{
  bool present;
  int policy; /* SCHED_* */
  int nice;
  int priority;
  oci_strv flags;
  uint64_t runtime, deadline, period;
} oci_scheduler;

typedef struct
{
  bool present;
  int klass; /* IOPRIO_CLASS_* */
  int priority;
} oci_io_priority;

typedef struct
{
  bool terminal;
  bool has_console_size;
  uint32_t console_height, console_width;
  oci_user user;
  oci_strv args;
  char *command_line;
  oci_strv env;
  char *cwd;
  oci_capabilities capabilities;
  size_t n_rlimits;
  oci_rlimit *rlimits;
  bool no_new_privileges;
  char *apparmor_profile;
  oci_opt_i64 oom_score_adj;
  char *selinux_label;
  oci_scheduler scheduler;
  oci_io_priority io_priority;
  char *exec_cpu_affinity_initial;
  char *exec_cpu_affinity_final;
} oci_process;

typedef struct
{
  uint32_t container_id;
  uint32_t host_id;
  uint32_t size;
} oci_id_mapping;

typedef struct
{
  size_t n;
  oci_id_mapping *v;
} oci_id_mappings;

typedef struct
{
  char *destination;
  char *type;
  char *source;
  oci_strv options;
  oci_id_mappings uid_mappings, gid_mappings;
} oci_mount;

typedef struct
{
  char *path;
  oci_strv args;
  oci_strv env;
  oci_opt_i64 timeout;
} oci_hook;

typedef struct
{
  size_t n;
  oci_hook *v;
} oci_hook_list;

typedef struct
{
  oci_hook_list prestart, create_runtime, create_container, start_container, poststart, poststop;
} oci_hooks;

typedef struct
{
  int type;   /* CLONE_NEW* */
  char *path; /* join this namespace instead of creating one */
} oci_namespace;

typedef struct
{
  char *path;
  char type; /* 'c', 'u', 'b', 'p' */
  int64_t major, minor;
  oci_opt_u64 file_mode;
  oci_opt_u64 uid, gid;
} oci_device;

typedef struct
{
  bool allow;
  char *type;
  oci_opt_i64 major, minor;
  char *access;
} oci_device_rule;

typedef struct
{
  int64_t major, minor;
  oci_opt_u64 weight, leaf_weight; /* weight device entries */
  uint64_t rate;                   /* throttle entries */
} oci_blkio_device;

typedef struct
{
  size_t n;
  oci_blkio_device *v;
} oci_blkio_devices;

typedef struct
{
  char *page_size;
  uint64_t limit;
} oci_hugepage_limit;

typedef struct
{
  char *name;
  uint32_t priority;
} oci_net_priority;

typedef struct
{
  char *device;
  oci_opt_u64 hca_handles, hca_objects;
} oci_rdma_limit;

typedef struct
{
  bool present;
  struct
  {
    bool present;
    oci_opt_i64 limit, reservation, swap, kernel, kernel_tcp;
    oci_opt_u64 swappiness;
    oci_opt_bool disable_oom_killer, use_hierarchy, check_before_update;
  } memory;
  struct
  {
    bool present;
    oci_opt_u64 shares, period, realtime_period, burst;
    oci_opt_i64 quota, realtime_runtime, idle;
    char *cpus, *mems;
  } cpu;
  struct
  {
    bool present;
    oci_opt_i64 limit;
  } pids;
  struct
  {
    bool present;
    oci_opt_u64 weight, leaf_weight;
    oci_blkio_devices weight_device, throttle_read_bps, throttle_write_bps, throttle_read_iops,
        throttle_write_iops;
  } block_io;
  size_t n_hugepage_limits;
  oci_hugepage_limit *hugepage_limits;
  struct
  {
    bool present;
    oci_opt_u64 class_id;
    size_t n_priorities;
    oci_net_priority *priorities;
  } network;
  size_t n_rdma;
  oci_rdma_limit *rdma;
  oci_kv_list unified;
  size_t n_devices;
  oci_device_rule *devices;
} oci_resources;

typedef struct
{
  size_t n;
  char **names;
  int action; /* SCMP_ACT_* without errno */
  char *action_name;
  oci_opt_u64 errno_ret;
  size_t n_args;
  struct oci_seccomp_arg
  {
    uint32_t index;
    uint64_t value, value_two;
    int op; /* enum scmp_compare */
  } *args;
} oci_seccomp_syscall;

typedef struct
{
  bool present;
  int default_action;
  char *default_action_name;
  oci_opt_u64 default_errno_ret;
  oci_strv architectures;
  oci_strv flags;
  char *listener_path;
  char *listener_metadata;
  size_t n_syscalls;
  oci_seccomp_syscall *syscalls;
} oci_seccomp;

typedef struct
{
  int64_t secs;
  uint32_t nanosecs;
} oci_time_offset;

typedef struct
{
  bool present;
  size_t n_namespaces;
  oci_namespace *namespaces;
  oci_id_mappings uid_mappings, gid_mappings;
  bool has_time_monotonic, has_time_boottime;
  oci_time_offset time_monotonic, time_boottime;
  size_t n_devices;
  oci_device *devices;
  char *cgroups_path;
  oci_resources resources;
  char *rootfs_propagation;
  oci_seccomp seccomp;
  oci_kv_list sysctl;
  bool has_masked_paths, has_readonly_paths;
  oci_strv masked_paths;
  oci_strv readonly_paths;
  char *mount_label;
  struct
  {
    bool present;
    char *domain; /* LINUX or LINUX32 */
    oci_strv flags;
  } personality;
  struct
  {
    bool present;
    char *clos_id, *l3_cache_schema, *mem_bw_schema;
    bool enable_cmt, enable_mbm;
  } intel_rdt;
  struct
  {
    size_t n;
    struct oci_net_device
    {
      char *host_name; /* key */
      char *name;
    } *v;
  } net_devices;
} oci_linux;

typedef struct
{
  char *oci_version;
  struct
  {
    char *path;
    bool readonly;
  } root;
  bool has_process;
  oci_process process;
  char *hostname;
  char *domainname;
  size_t n_mounts;
  oci_mount *mounts;
  oci_hooks hooks;
  oci_kv_list annotations;
  oci_linux linux_cfg; /* "linux" is a predefined macro in GNU C */
} oci_spec;

/* Parse a config.json document.  `name` is used in messages
 * ("config.json: .process.rlimits[2].hard: expected an unsigned integer"). */
int oci_spec_parse (const char *json, size_t len, const char *name, oci_spec **out, hv_error **err);
int oci_spec_load (const char *path, const char *name, oci_spec **out, hv_error **err);
void oci_spec_free (oci_spec *spec);

/* process.json for `exec --process`: a bare process object. */
int oci_process_parse (const char *json, size_t len, const char *name, oci_process **out, hv_error **err);
void oci_process_free (oci_process *p);
/* A bare LinuxResources object (`update --resources`): errors name the
 * JSON path inside it (".memory.limit"). */
int oci_resources_parse (const char *json, size_t len, const char *name, oci_resources **out, hv_error **err);
void oci_resources_free (oci_resources *r);
/* {"seccomp": {...}}: a LinuxSeccomp object under that key (errors name
 * its JSON path). */
int oci_seccomp_parse (const char *json, size_t len, const char *name, oci_seccomp **out, hv_error **err);
void oci_seccomp_free (oci_seccomp *s);
void oci_resources_free_fields (oci_resources *r);
/* Free what a process owns, not the struct itself. */
void oci_spec_free_process_fields (oci_process *p);
void oci_strv_free (oci_strv *s);
/* Append a copy of str (the array stays NULL-terminated). */
void oci_strv_push (oci_strv *v, const char *str);
/* oci_strv_push of a formatted line; v NULL: nothing kept (a list of
 * notes its caller did not ask for). */
void oci_strv_pushf (oci_strv *v, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* Append unless an equal string is already there. */
bool oci_strv_contains (const oci_strv *v, const char *str);
void oci_strv_push_unique (oci_strv *v, const char *str);
/* Removes every later copy of a string, keeping the first in place:
 * what pushing each with oci_strv_push_unique gives, in O(n log n). */
void oci_strv_dedup (oci_strv *v);
void oci_kv_list_free (oci_kv_list *l);

const char *oci_kv_get (const oci_kv_list *l, const char *key);
int oci_namespace_type_from_name (const char *name);
const char *oci_namespace_name (int type);
const oci_namespace *oci_spec_find_namespace (const oci_spec *spec, int type);


static inline void
cleanup_specp (oci_spec **s)
{
  oci_spec_free (*s);
}
#define cleanup_spec __attribute__ ((cleanup (cleanup_specp)))
#define cleanup_strv __attribute__ ((cleanup (oci_strv_free)))

#endif
