/* config.json / process.json parser: yajl tree -> oci_spec.
 *
 * Unknown fields are ignored (runtime-spec: "implementations MUST ignore
 * unknown properties"); known fields with the wrong type or value are
 * rejected with their JSON path. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "file_read.h"
#include "json_walk.h"
#include "oci_json.h"
#include "oci_spec.h"
#include "oci_tables.h"

/* Iterate over an array field, pushing "[i]" for each element. */
#define FOR_EACH_ELEMENT(w, arr, i, elem)                                                          \
  for (size_t i = 0, i##_saved = 0; i < (arr)->u.array.len && ((i##_saved = jw_push_index (w, i)), 1); \
       jw_pop (w, i##_saved), i++)                                                                    \
    for (yajl_val elem = (arr)->u.array.values[i]; elem; elem = NULL)

/* Fetch obj[key] as an array (NULL if absent) after pushing the key. */
static int
enter_array (json_walk *w, yajl_val obj, const char *key, yajl_val *arr, size_t *saved)
{
  *arr = jw_lookup (obj, key);
  *saved = jw_push_key (w, key);
  if (jw_absent (*arr))
    {
      *arr = NULL;
      return 0;
    }
  return jw_expect_array (w, *arr);
}

static int
enter_object (json_walk *w, yajl_val obj, const char *key, yajl_val *out, size_t *saved)
{
  *out = jw_lookup (obj, key);
  *saved = jw_push_key (w, key);
  if (jw_absent (*out))
    {
      *out = NULL;
      return 0;
    }
  return jw_expect_object (w, *out);
}

/* obj[key] as a 32-bit signed integer, if present. */
static int
field_int (json_walk *w, yajl_val obj, const char *key, int *out)
{
  yajl_val v = jw_lookup (obj, key);
  if (jw_absent (v))
    return 0;
  size_t saved = jw_push_key (w, key);
  if (jw_as_int (w, v, out) < 0)
    return -1;
  jw_pop (w, saved);
  return 0;
}

static int
parse_id_mappings (json_walk *w, yajl_val obj, const char *key, oci_id_mappings *out)
{
  yajl_val arr;
  size_t saved;
  if (enter_array (w, obj, key, &arr, &saved) < 0)
    return -1;
  if (arr)
    {
      out->v = xmalloc0 ((arr->u.array.len + 1) * sizeof (*out->v));
      FOR_EACH_ELEMENT (w, arr, i, e)
      {
        oci_id_mapping *m = &out->v[i];
        if (jw_expect_object (w, e) < 0 || jw_field_u32 (w, e, "containerID", &m->container_id) < 0
            || jw_field_u32 (w, e, "hostID", &m->host_id) < 0 || jw_field_u32 (w, e, "size", &m->size) < 0)
          return -1;
        out->n++;
      }
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_capabilities (json_walk *w, yajl_val obj, oci_capabilities *caps)
{
  yajl_val c;
  size_t saved;
  if (enter_object (w, obj, "capabilities", &c, &saved) < 0)
    return -1;
  if (c)
    {
      caps->present = true;
      struct
      {
        const char *key;
        oci_strv *set;
      } sets[] = { { "bounding", &caps->bounding },       { "effective", &caps->effective },
                   { "inheritable", &caps->inheritable }, { "permitted", &caps->permitted },
                   { "ambient", &caps->ambient } };
      for (size_t i = 0; i < sizeof (sets) / sizeof (sets[0]); i++)
        {
          if (jw_field_strv (w, c, sets[i].key, sets[i].set) < 0)
            return -1;
          for (size_t j = 0; j < sets[i].set->n; j++)
            if (oci_capability_from_name (sets[i].set->v[j]) < 0)
              {
                size_t s2 = jw_push_key (w, sets[i].key);
                size_t s3 = jw_push_index (w, j);
                jw_fail (w, "unknown capability \"%s\"", sets[i].set->v[j]);
                jw_pop (w, s3);
                jw_pop (w, s2);
                return -1;
              }
        }
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_rlimits (json_walk *w, yajl_val obj, oci_process *p)
{
  yajl_val arr;
  size_t saved;
  if (enter_array (w, obj, "rlimits", &arr, &saved) < 0)
    return -1;
  if (arr)
    {
      p->rlimits = xmalloc0 ((arr->u.array.len + 1) * sizeof (*p->rlimits));
      FOR_EACH_ELEMENT (w, arr, i, e)
      {
        oci_rlimit *r = &p->rlimits[i];
        p->n_rlimits++;
        if (jw_expect_object (w, e) < 0 || jw_field_required_string (w, e, "type", &r->type) < 0)
          return -1;
        r->resource = oci_rlimit_from_name (r->type);
        if (r->resource < 0)
          {
            jw_fail_key (w, "type", "unknown rlimit \"%s\"", r->type);
            return -1;
          }
        for (size_t j = 0; j < i; j++)
          if (p->rlimits[j].resource == r->resource)
            return jw_fail (w, "duplicate rlimit \"%s\"", r->type);
        oci_opt_u64 hard = { 0 }, soft = { 0 };
        if (jw_field_opt_u64 (w, e, "hard", &hard) < 0 || jw_field_opt_u64 (w, e, "soft", &soft) < 0)
          return -1;
        if (!hard.set || !soft.set)
          return jw_fail (w, "rlimit needs both \"soft\" and \"hard\"");
        r->hard = hard.value;
        r->soft = soft.value;
        if (r->soft > r->hard)
          return jw_fail (w, "soft limit %llu is above hard limit %llu", (unsigned long long) r->soft,
                          (unsigned long long) r->hard);
      }
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_user (json_walk *w, yajl_val obj, oci_user *u)
{
  yajl_val uo;
  size_t saved;
  if (enter_object (w, obj, "user", &uo, &saved) < 0)
    return -1;
  if (uo)
    {
      if (jw_field_u32 (w, uo, "uid", &u->uid) < 0 || jw_field_u32 (w, uo, "gid", &u->gid) < 0
          || jw_field_opt_u64 (w, uo, "umask", &u->umask) < 0
          || jw_field_string (w, uo, "username", &u->username) < 0)
        return -1;
      if (u->umask.set && u->umask.value > 0777)
        {
          jw_fail_key (w, "umask", "umask %llo is not a file mode mask", (unsigned long long) u->umask.value);
          return -1;
        }
      yajl_val arr;
      size_t s2;
      if (enter_array (w, uo, "additionalGids", &arr, &s2) < 0)
        return -1;
      if (arr)
        {
          u->additional_gids = xmalloc0 ((arr->u.array.len + 1) * sizeof (uint32_t));
          FOR_EACH_ELEMENT (w, arr, i, e)
          {
            if (jw_as_u32 (w, e, &u->additional_gids[i]) < 0)
              return -1;
            u->n_additional_gids++;
          }
        }
      jw_pop (w, s2);
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_console_size (json_walk *w, yajl_val po, oci_process *p)
{
  yajl_val cs;
  size_t saved;
  if (enter_object (w, po, "consoleSize", &cs, &saved) < 0)
    return -1;
  if (cs)
    {
      p->has_console_size = true;
      if (jw_field_u32 (w, cs, "height", &p->console_height) < 0
          || jw_field_u32 (w, cs, "width", &p->console_width) < 0)
        return -1;
    }
  jw_pop (w, saved);
  return 0;
}

/* Checks that need several fields, or the whole of one: after they are all
 * read, so that a type error is reported before a value error. */
static int
check_process_fields (json_walk *w, const oci_process *p, bool require_args)
{
  if (p->cwd == NULL)
    {
      jw_fail_key (w, "cwd", "required field is missing");
      return -1;
    }
  if (p->cwd[0] != '/')
    {
      jw_fail_key (w, "cwd", "\"%s\" is not an absolute path", p->cwd);
      return -1;
    }
  if (require_args && p->args.n == 0 && p->command_line == NULL)
    {
      jw_fail_key (w, "args", "at least one argument is required");
      return -1;
    }
  for (size_t i = 0; i < p->env.n; i++)
    if (strchr (p->env.v[i], '=') == NULL)
      {
        size_t s = jw_push_key (w, "env");
        size_t s2 = jw_push_index (w, i);
        jw_fail (w, "\"%s\" is not of the form KEY=value", p->env.v[i]);
        jw_pop (w, s2);
        jw_pop (w, s);
        return -1;
      }
  if (p->oom_score_adj.set && (p->oom_score_adj.value < -1000 || p->oom_score_adj.value > 1000))
    {
      jw_fail_key (w, "oomScoreAdj", "%lld is outside -1000..1000", (long long) p->oom_score_adj.value);
      return -1;
    }
  return 0;
}

static int
parse_scheduler (json_walk *w, yajl_val po, oci_process *p)
{
  yajl_val so;
  size_t saved;
  if (enter_object (w, po, "scheduler", &so, &saved) < 0)
    return -1;
  if (so)
    {
      char *policy = NULL;
      p->scheduler.present = true;
      if (jw_field_required_string (w, so, "policy", &policy) < 0)
        return -1;
      p->scheduler.policy = oci_sched_policy_from_name (policy);
      if (p->scheduler.policy < 0)
        {
          jw_fail_key (w, "policy", "unknown scheduler policy \"%s\"", policy);
          free (policy);
          return -1;
        }
      free (policy);
      oci_opt_u64 rt = { 0 }, dl = { 0 }, per = { 0 };
      /* int32 in the spec: out-of-range values are refused, not wrapped. */
      if (field_int (w, so, "nice", &p->scheduler.nice) < 0
          || field_int (w, so, "priority", &p->scheduler.priority) < 0
          || jw_field_strv (w, so, "flags", &p->scheduler.flags) < 0
          || jw_field_opt_u64 (w, so, "runtime", &rt) < 0 || jw_field_opt_u64 (w, so, "deadline", &dl) < 0
          || jw_field_opt_u64 (w, so, "period", &per) < 0)
        return -1;
      p->scheduler.runtime = rt.value;
      p->scheduler.deadline = dl.value;
      p->scheduler.period = per.value;
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_io_priority (json_walk *w, yajl_val po, oci_process *p)
{
  yajl_val io;
  size_t saved;
  if (enter_object (w, po, "ioPriority", &io, &saved) < 0)
    return -1;
  if (io)
    {
      char *klass = NULL;
      oci_opt_i64 prio = { 0 };
      p->io_priority.present = true;
      if (jw_field_required_string (w, io, "class", &klass) < 0
          || jw_field_opt_i64 (w, io, "priority", &prio) < 0)
        {
          free (klass);
          return -1;
        }
      p->io_priority.klass = oci_ioprio_class_from_name (klass);
      if (p->io_priority.klass < 0)
        {
          jw_fail_key (w, "class", "unknown I/O priority class \"%s\"", klass);
          free (klass);
          return -1;
        }
      free (klass);
      if (prio.value < 0 || prio.value > 7)
        {
          jw_fail_key (w, "priority", "I/O priority %lld is outside 0..7", (long long) prio.value);
          return -1;
        }
      p->io_priority.priority = (int) prio.value;
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_exec_cpu_affinity (json_walk *w, yajl_val po, oci_process *p)
{
  yajl_val aff;
  size_t saved;
  if (enter_object (w, po, "execCPUAffinity", &aff, &saved) < 0)
    return -1;
  if (aff
      && (jw_field_string (w, aff, "initial", &p->exec_cpu_affinity_initial) < 0
          || jw_field_string (w, aff, "final", &p->exec_cpu_affinity_final) < 0))
    return -1;
  jw_pop (w, saved);
  return 0;
}

/* A Process object: .process of a config, or what `exec --process` reads. */
static int
parse_process_fields (json_walk *w, yajl_val po, oci_process *p, bool require_args)
{
  if (jw_field_bool (w, po, "terminal", &p->terminal) < 0 || parse_console_size (w, po, p) < 0)
    return -1;
  if (parse_user (w, po, &p->user) < 0 || jw_field_strv (w, po, "args", &p->args) < 0
      || jw_field_string (w, po, "commandLine", &p->command_line) < 0
      || jw_field_strv (w, po, "env", &p->env) < 0 || jw_field_string (w, po, "cwd", &p->cwd) < 0
      || parse_capabilities (w, po, &p->capabilities) < 0 || parse_rlimits (w, po, p) < 0
      || jw_field_bool (w, po, "noNewPrivileges", &p->no_new_privileges) < 0
      || jw_field_string (w, po, "apparmorProfile", &p->apparmor_profile) < 0
      || jw_field_opt_i64 (w, po, "oomScoreAdj", &p->oom_score_adj) < 0
      || jw_field_string (w, po, "selinuxLabel", &p->selinux_label) < 0)
    return -1;
  if (check_process_fields (w, p, require_args) < 0)
    return -1;
  if (parse_scheduler (w, po, p) < 0 || parse_io_priority (w, po, p) < 0 || parse_exec_cpu_affinity (w, po, p) < 0)
    return -1;
  return 0;
}

static int
parse_mounts (json_walk *w, yajl_val root, oci_spec *s)
{
  yajl_val arr;
  size_t saved;
  if (enter_array (w, root, "mounts", &arr, &saved) < 0)
    return -1;
  if (arr)
    {
      s->mounts = xmalloc0 ((arr->u.array.len + 1) * sizeof (*s->mounts));
      FOR_EACH_ELEMENT (w, arr, i, e)
      {
        oci_mount *m = &s->mounts[i];
        s->n_mounts++;
        if (jw_expect_object (w, e) < 0 || jw_field_required_string (w, e, "destination", &m->destination) < 0
            || jw_field_string (w, e, "type", &m->type) < 0 || jw_field_string (w, e, "source", &m->source) < 0
            || jw_field_strv (w, e, "options", &m->options) < 0
            || parse_id_mappings (w, e, "uidMappings", &m->uid_mappings) < 0
            || parse_id_mappings (w, e, "gidMappings", &m->gid_mappings) < 0)
          return -1;
        if (m->destination[0] != '/')
          {
            jw_fail_key (w, "destination", "\"%s\" is not an absolute path", m->destination);
            return -1;
          }
      }
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_hook_list (json_walk *w, yajl_val hooks, const char *key, oci_hook_list *out)
{
  yajl_val arr;
  size_t saved;
  if (enter_array (w, hooks, key, &arr, &saved) < 0)
    return -1;
  if (arr)
    {
      out->v = xmalloc0 ((arr->u.array.len + 1) * sizeof (*out->v));
      FOR_EACH_ELEMENT (w, arr, i, e)
      {
        oci_hook *h = &out->v[i];
        out->n++;
        if (jw_expect_object (w, e) < 0 || jw_field_required_string (w, e, "path", &h->path) < 0
            || jw_field_strv (w, e, "args", &h->args) < 0 || jw_field_strv (w, e, "env", &h->env) < 0
            || jw_field_opt_i64 (w, e, "timeout", &h->timeout) < 0)
          return -1;
        if (h->path[0] != '/')
          {
            jw_fail_key (w, "path", "\"%s\" is not an absolute path", h->path);
            return -1;
          }
        if (h->timeout.set && h->timeout.value <= 0)
          {
            jw_fail_key (w, "timeout", "timeout must be greater than zero");
            return -1;
          }
      }
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_hooks (json_walk *w, yajl_val root, oci_hooks *h)
{
  yajl_val ho;
  size_t saved;
  if (enter_object (w, root, "hooks", &ho, &saved) < 0)
    return -1;
  if (ho
      && (parse_hook_list (w, ho, "prestart", &h->prestart) < 0
          || parse_hook_list (w, ho, "createRuntime", &h->create_runtime) < 0
          || parse_hook_list (w, ho, "createContainer", &h->create_container) < 0
          || parse_hook_list (w, ho, "startContainer", &h->start_container) < 0
          || parse_hook_list (w, ho, "poststart", &h->poststart) < 0
          || parse_hook_list (w, ho, "poststop", &h->poststop) < 0))
    return -1;
  jw_pop (w, saved);
  return 0;
}

static int
parse_namespaces (json_walk *w, yajl_val lo, oci_linux *l)
{
  yajl_val arr;
  size_t saved;
  if (enter_array (w, lo, "namespaces", &arr, &saved) < 0)
    return -1;
  if (arr)
    {
      l->namespaces = xmalloc0 ((arr->u.array.len + 1) * sizeof (*l->namespaces));
      FOR_EACH_ELEMENT (w, arr, i, e)
      {
        char *type = NULL;
        oci_namespace *ns = &l->namespaces[i];
        l->n_namespaces++;
        if (jw_expect_object (w, e) < 0 || jw_field_required_string (w, e, "type", &type) < 0
            || jw_field_string (w, e, "path", &ns->path) < 0)
          {
            free (type);
            return -1;
          }
        ns->type = oci_namespace_type_from_name (type);
        if (ns->type < 0)
          {
            jw_fail_key (w, "type", "unknown namespace type \"%s\"", type);
            free (type);
            return -1;
          }
        for (size_t j = 0; j < i; j++)
          if (l->namespaces[j].type == ns->type)
            {
              jw_fail (w, "duplicate namespace \"%s\"", type);
              free (type);
              return -1;
            }
        free (type);
        if (ns->path && ns->path[0] != '/')
          {
            jw_fail_key (w, "path", "\"%s\" is not an absolute path", ns->path);
            return -1;
          }
      }
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_devices (json_walk *w, yajl_val lo, oci_linux *l)
{
  yajl_val arr;
  size_t saved;
  if (enter_array (w, lo, "devices", &arr, &saved) < 0)
    return -1;
  if (arr)
    {
      l->devices = xmalloc0 ((arr->u.array.len + 1) * sizeof (*l->devices));
      FOR_EACH_ELEMENT (w, arr, i, e)
      {
        oci_device *d = &l->devices[i];
        char *type = NULL;
        l->n_devices++;
        if (jw_expect_object (w, e) < 0 || jw_field_required_string (w, e, "path", &d->path) < 0
            || jw_field_required_string (w, e, "type", &type) < 0)
          {
            free (type);
            return -1;
          }
        bool ok = strlen (type) == 1 && strchr ("cubp", type[0]) != NULL;
        d->type = type[0];
        if (!ok)
          {
            jw_fail_key (w, "type", "device type \"%s\" is not one of c, u, b, p", type);
            free (type);
            return -1;
          }
        free (type);
        oci_opt_i64 major = { 0 }, minor = { 0 };
        if (jw_field_opt_i64 (w, e, "major", &major) < 0 || jw_field_opt_i64 (w, e, "minor", &minor) < 0
            || jw_field_opt_u64 (w, e, "fileMode", &d->file_mode) < 0 || jw_field_opt_u64 (w, e, "uid", &d->uid) < 0
            || jw_field_opt_u64 (w, e, "gid", &d->gid) < 0)
          return -1;
        if (d->type != 'p' && (!major.set || !minor.set))
          return jw_fail (w, "device \"%s\" needs major and minor numbers", d->path);
        d->major = major.value;
        d->minor = minor.value;
        if (d->path[0] != '/')
          return jw_fail (w, "device path \"%s\" is not absolute", d->path);
      }
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_blkio_devices (json_walk *w, yajl_val obj, const char *key, bool is_weight, oci_blkio_devices *out)
{
  yajl_val arr;
  size_t saved;
  if (enter_array (w, obj, key, &arr, &saved) < 0)
    return -1;
  if (arr)
    {
      out->v = xmalloc0 ((arr->u.array.len + 1) * sizeof (*out->v));
      FOR_EACH_ELEMENT (w, arr, i, e)
      {
        oci_blkio_device *d = &out->v[i];
        oci_opt_i64 major = { 0 }, minor = { 0 };
        oci_opt_u64 rate = { 0 };
        out->n++;
        if (jw_expect_object (w, e) < 0 || jw_field_opt_i64 (w, e, "major", &major) < 0
            || jw_field_opt_i64 (w, e, "minor", &minor) < 0)
          return -1;
        if (!major.set || !minor.set)
          return jw_fail (w, "major and minor are required");
        d->major = major.value;
        d->minor = minor.value;
        if (is_weight)
          {
            if (jw_field_opt_u64 (w, e, "weight", &d->weight) < 0
                || jw_field_opt_u64 (w, e, "leafWeight", &d->leaf_weight) < 0)
              return -1;
          }
        else
          {
            if (jw_field_opt_u64 (w, e, "rate", &rate) < 0)
              return -1;
            d->rate = rate.value;
          }
      }
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_memory (json_walk *w, yajl_val ro, oci_resources *r)
{
  yajl_val o;
  size_t saved;
  if (enter_object (w, ro, "memory", &o, &saved) < 0)
    return -1;
  if (o)
    {
      r->memory.present = true;
      if (jw_field_opt_i64 (w, o, "limit", &r->memory.limit) < 0
          || jw_field_opt_i64 (w, o, "reservation", &r->memory.reservation) < 0
          || jw_field_opt_i64 (w, o, "swap", &r->memory.swap) < 0
          || jw_field_opt_i64 (w, o, "kernel", &r->memory.kernel) < 0
          || jw_field_opt_i64 (w, o, "kernelTCP", &r->memory.kernel_tcp) < 0
          || jw_field_opt_u64 (w, o, "swappiness", &r->memory.swappiness) < 0
          || jw_field_opt_bool (w, o, "disableOOMKiller", &r->memory.disable_oom_killer) < 0
          || jw_field_opt_bool (w, o, "useHierarchy", &r->memory.use_hierarchy) < 0
          || jw_field_opt_bool (w, o, "checkBeforeUpdate", &r->memory.check_before_update) < 0)
        return -1;
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_cpu (json_walk *w, yajl_val ro, oci_resources *r)
{
  yajl_val o;
  size_t saved;
  if (enter_object (w, ro, "cpu", &o, &saved) < 0)
    return -1;
  if (o)
    {
      r->cpu.present = true;
      if (jw_field_opt_u64 (w, o, "shares", &r->cpu.shares) < 0 || jw_field_opt_i64 (w, o, "quota", &r->cpu.quota) < 0
          || jw_field_opt_u64 (w, o, "burst", &r->cpu.burst) < 0 || jw_field_opt_u64 (w, o, "period", &r->cpu.period) < 0
          || jw_field_opt_i64 (w, o, "realtimeRuntime", &r->cpu.realtime_runtime) < 0
          || jw_field_opt_u64 (w, o, "realtimePeriod", &r->cpu.realtime_period) < 0
          || jw_field_string (w, o, "cpus", &r->cpu.cpus) < 0 || jw_field_string (w, o, "mems", &r->cpu.mems) < 0
          || jw_field_opt_i64 (w, o, "idle", &r->cpu.idle) < 0)
        return -1;
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_pids (json_walk *w, yajl_val ro, oci_resources *r)
{
  yajl_val o;
  size_t saved;
  if (enter_object (w, ro, "pids", &o, &saved) < 0)
    return -1;
  if (o)
    {
      r->pids.present = true;
      if (jw_field_opt_i64 (w, o, "limit", &r->pids.limit) < 0)
        return -1;
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_block_io (json_walk *w, yajl_val ro, oci_resources *r)
{
  yajl_val o;
  size_t saved;
  if (enter_object (w, ro, "blockIO", &o, &saved) < 0)
    return -1;
  if (o)
    {
      r->block_io.present = true;
      if (jw_field_opt_u64 (w, o, "weight", &r->block_io.weight) < 0
          || jw_field_opt_u64 (w, o, "leafWeight", &r->block_io.leaf_weight) < 0
          || parse_blkio_devices (w, o, "weightDevice", true, &r->block_io.weight_device) < 0
          || parse_blkio_devices (w, o, "throttleReadBpsDevice", false, &r->block_io.throttle_read_bps) < 0
          || parse_blkio_devices (w, o, "throttleWriteBpsDevice", false, &r->block_io.throttle_write_bps) < 0
          || parse_blkio_devices (w, o, "throttleReadIOPSDevice", false, &r->block_io.throttle_read_iops) < 0
          || parse_blkio_devices (w, o, "throttleWriteIOPSDevice", false, &r->block_io.throttle_write_iops) < 0)
        return -1;
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_hugepage_limits (json_walk *w, yajl_val ro, oci_resources *r)
{
  yajl_val arr;
  size_t saved;
  if (enter_array (w, ro, "hugepageLimits", &arr, &saved) < 0)
    return -1;
  if (arr)
    {
      r->hugepage_limits = xmalloc0 ((arr->u.array.len + 1) * sizeof (*r->hugepage_limits));
      FOR_EACH_ELEMENT (w, arr, i, e)
      {
        oci_opt_u64 limit = { 0 };
        r->n_hugepage_limits++;
        if (jw_expect_object (w, e) < 0
            || jw_field_required_string (w, e, "pageSize", &r->hugepage_limits[i].page_size) < 0
            || jw_field_opt_u64 (w, e, "limit", &limit) < 0)
          return -1;
        r->hugepage_limits[i].limit = limit.value;
      }
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_network (json_walk *w, yajl_val ro, oci_resources *r)
{
  yajl_val o, arr;
  size_t saved, s2;
  if (enter_object (w, ro, "network", &o, &saved) < 0)
    return -1;
  if (o)
    {
      r->network.present = true;
      if (jw_field_opt_u64 (w, o, "classID", &r->network.class_id) < 0
          || enter_array (w, o, "priorities", &arr, &s2) < 0)
        return -1;
      if (arr)
        {
          r->network.priorities = xmalloc0 ((arr->u.array.len + 1) * sizeof (*r->network.priorities));
          FOR_EACH_ELEMENT (w, arr, i, e)
          {
            r->network.n_priorities++;
            if (jw_expect_object (w, e) < 0
                || jw_field_required_string (w, e, "name", &r->network.priorities[i].name) < 0
                || jw_field_u32 (w, e, "priority", &r->network.priorities[i].priority) < 0)
              return -1;
          }
        }
      jw_pop (w, s2);
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_rdma (json_walk *w, yajl_val ro, oci_resources *r)
{
  yajl_val o;
  size_t saved;
  if (enter_object (w, ro, "rdma", &o, &saved) < 0)
    return -1;
  if (o)
    {
      r->rdma = xmalloc0 ((o->u.object.len + 1) * sizeof (*r->rdma));
      for (size_t i = 0; i < o->u.object.len; i++)
        {
          size_t s2 = jw_push_key (w, o->u.object.keys[i]);
          yajl_val e = o->u.object.values[i];
          r->rdma[i].device = xstrdup (o->u.object.keys[i]);
          r->n_rdma++;
          if (jw_expect_object (w, e) < 0 || jw_field_opt_u64 (w, e, "hcaHandles", &r->rdma[i].hca_handles) < 0
              || jw_field_opt_u64 (w, e, "hcaObjects", &r->rdma[i].hca_objects) < 0)
            return -1;
          jw_pop (w, s2);
        }
    }
  jw_pop (w, saved);
  return 0;
}

/* linux.resources.devices: the device cgroup's rules (not linux.devices,
 * the nodes to create). */
static int
parse_device_rules (json_walk *w, yajl_val ro, oci_resources *r)
{
  yajl_val arr;
  size_t saved;
  if (enter_array (w, ro, "devices", &arr, &saved) < 0)
    return -1;
  if (arr)
    {
      r->devices = xmalloc0 ((arr->u.array.len + 1) * sizeof (*r->devices));
      FOR_EACH_ELEMENT (w, arr, i, e)
      {
        oci_device_rule *d = &r->devices[i];
        r->n_devices++;
        if (jw_expect_object (w, e) < 0 || jw_field_bool (w, e, "allow", &d->allow) < 0
            || jw_field_string (w, e, "type", &d->type) < 0 || jw_field_opt_i64 (w, e, "major", &d->major) < 0
            || jw_field_opt_i64 (w, e, "minor", &d->minor) < 0 || jw_field_string (w, e, "access", &d->access) < 0)
          return -1;
        if (d->type && (strlen (d->type) != 1 || strchr ("acb", d->type[0]) == NULL))
          return jw_fail (w, "device rule type \"%s\" is not one of a, c, b", d->type);
        if (d->access && d->access[strspn (d->access, "rwm")] != '\0')
          return jw_fail (w, "device access \"%s\" may only contain r, w, m", d->access);
      }
    }
  jw_pop (w, saved);
  return 0;
}

/* A LinuxResources object: linux.resources of a config, or what `update
 * --resources` reads. */
static int
parse_resources_object (json_walk *w, yajl_val ro, oci_resources *r)
{
  r->present = true;
  if (parse_memory (w, ro, r) < 0 || parse_cpu (w, ro, r) < 0 || parse_pids (w, ro, r) < 0
      || parse_block_io (w, ro, r) < 0 || parse_hugepage_limits (w, ro, r) < 0 || parse_network (w, ro, r) < 0
      || parse_rdma (w, ro, r) < 0 || jw_field_string_map (w, ro, "unified", &r->unified) < 0
      || parse_device_rules (w, ro, r) < 0)
    return -1;
  return 0;
}

static int
parse_resources (json_walk *w, yajl_val lo, oci_resources *r)
{
  yajl_val ro;
  size_t saved;
  if (enter_object (w, lo, "resources", &ro, &saved) < 0)
    return -1;
  if (ro && parse_resources_object (w, ro, r) < 0)
    return -1;
  jw_pop (w, saved);
  return 0;
}

/* The names in .seccomp that must be ones this runtime knows. */
static int
check_seccomp_names (json_walk *w, oci_seccomp *sc)
{
  sc->default_action = oci_seccomp_action_from_name (sc->default_action_name);
  if (sc->default_action < 0)
    {
      jw_fail_key (w, "defaultAction", "unknown seccomp action \"%s\"", sc->default_action_name);
      return -1;
    }
  for (size_t i = 0; i < sc->architectures.n; i++)
    if (oci_seccomp_arch_known (sc->architectures.v[i]) < 0)
      {
        size_t s = jw_push_key (w, "architectures");
        size_t s3 = jw_push_index (w, i);
        jw_fail (w, "unknown seccomp architecture \"%s\"", sc->architectures.v[i]);
        jw_pop (w, s3);
        jw_pop (w, s);
        return -1;
      }
  for (size_t i = 0; i < sc->flags.n; i++)
    if (oci_seccomp_flag_from_name (sc->flags.v[i]) < 0)
      {
        size_t s = jw_push_key (w, "flags");
        size_t s3 = jw_push_index (w, i);
        jw_fail (w, "unknown seccomp flag \"%s\"", sc->flags.v[i]);
        jw_pop (w, s3);
        jw_pop (w, s);
        return -1;
      }
  return 0;
}

static int
parse_seccomp_args (json_walk *w, yajl_val e, oci_seccomp_syscall *sys)
{
  yajl_val args;
  size_t saved;
  if (enter_array (w, e, "args", &args, &saved) < 0)
    return -1;
  if (args)
    {
      sys->args = xmalloc0 ((args->u.array.len + 1) * sizeof (*sys->args));
      FOR_EACH_ELEMENT (w, args, j, a)
      {
        struct oci_seccomp_arg *arg = &sys->args[j];
        char *op = NULL;
        oci_opt_u64 value = { 0 }, value_two = { 0 };
        sys->n_args++;
        if (jw_expect_object (w, a) < 0 || jw_field_u32 (w, a, "index", &arg->index) < 0
            || jw_field_opt_u64 (w, a, "value", &value) < 0 || jw_field_opt_u64 (w, a, "valueTwo", &value_two) < 0
            || jw_field_required_string (w, a, "op", &op) < 0)
          {
            free (op);
            return -1;
          }
        arg->value = value.value;
        arg->value_two = value_two.value;
        arg->op = oci_seccomp_operator_from_name (op);
        if (arg->op < 0)
          {
            jw_fail_key (w, "op", "unknown seccomp operator \"%s\"", op);
            free (op);
            return -1;
          }
        free (op);
        if (arg->index > 5)
          return jw_fail (w, "argument index %u is above 5", arg->index);
      }
    }
  jw_pop (w, saved);
  return 0;
}

/* One element of .seccomp.syscalls. */
static int
parse_seccomp_syscall (json_walk *w, yajl_val e, oci_seccomp_syscall *sys)
{
  oci_strv names = { 0 };
  if (jw_expect_object (w, e) < 0)
    return -1;
  int r = jw_field_strv (w, e, "names", &names);
  /* Owned by sys even when a later name is rejected. */
  sys->names = names.v;
  sys->n = names.n;
  if (r < 0)
    return -1;
  if (jw_field_required_string (w, e, "action", &sys->action_name) < 0
      || jw_field_opt_u64 (w, e, "errnoRet", &sys->errno_ret) < 0)
    return -1;
  sys->action = oci_seccomp_action_from_name (sys->action_name);
  if (sys->action < 0)
    {
      jw_fail_key (w, "action", "unknown seccomp action \"%s\"", sys->action_name);
      return -1;
    }
  return parse_seccomp_args (w, e, sys);
}

static int
parse_seccomp_syscalls (json_walk *w, yajl_val so, oci_seccomp *sc)
{
  yajl_val arr;
  size_t saved;
  if (enter_array (w, so, "syscalls", &arr, &saved) < 0)
    return -1;
  if (arr)
    {
      sc->syscalls = xmalloc0 ((arr->u.array.len + 1) * sizeof (*sc->syscalls));
      FOR_EACH_ELEMENT (w, arr, i, e)
      {
        sc->n_syscalls++;
        if (parse_seccomp_syscall (w, e, &sc->syscalls[i]) < 0)
          return -1;
      }
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_seccomp (json_walk *w, yajl_val lo, oci_seccomp *sc)
{
  yajl_val so;
  size_t saved;
  if (enter_object (w, lo, "seccomp", &so, &saved) < 0)
    return -1;
  if (so == NULL)
    {
      jw_pop (w, saved);
      return 0;
    }
  sc->present = true;
  if (jw_field_required_string (w, so, "defaultAction", &sc->default_action_name) < 0
      || jw_field_opt_u64 (w, so, "defaultErrnoRet", &sc->default_errno_ret) < 0
      || jw_field_strv (w, so, "architectures", &sc->architectures) < 0
      || jw_field_strv (w, so, "flags", &sc->flags) < 0
      || jw_field_string (w, so, "listenerPath", &sc->listener_path) < 0
      || jw_field_string (w, so, "listenerMetadata", &sc->listener_metadata) < 0)
    return -1;
  if (check_seccomp_names (w, sc) < 0 || parse_seccomp_syscalls (w, so, sc) < 0)
    return -1;
  jw_pop (w, saved);
  return 0;
}

static int
parse_time_offset (json_walk *w, yajl_val to, const char *key, bool *has, oci_time_offset *out)
{
  yajl_val o;
  size_t saved;
  if (enter_object (w, to, key, &o, &saved) < 0)
    return -1;
  if (o)
    {
      oci_opt_i64 secs = { 0 };
      *has = true;
      if (jw_field_opt_i64 (w, o, "secs", &secs) < 0 || jw_field_u32 (w, o, "nanosecs", &out->nanosecs) < 0)
        return -1;
      out->secs = secs.value;
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_time_offsets (json_walk *w, yajl_val lo, oci_linux *l)
{
  yajl_val o;
  size_t saved;
  if (enter_object (w, lo, "timeOffsets", &o, &saved) < 0)
    return -1;
  if (o
      && (parse_time_offset (w, o, "monotonic", &l->has_time_monotonic, &l->time_monotonic) < 0
          || parse_time_offset (w, o, "boottime", &l->has_time_boottime, &l->time_boottime) < 0))
    return -1;
  jw_pop (w, saved);
  return 0;
}

static int
parse_personality (json_walk *w, yajl_val lo, oci_linux *l)
{
  yajl_val o;
  size_t saved;
  if (enter_object (w, lo, "personality", &o, &saved) < 0)
    return -1;
  if (o)
    {
      l->personality.present = true;
      if (jw_field_required_string (w, o, "domain", &l->personality.domain) < 0
          || jw_field_strv (w, o, "flags", &l->personality.flags) < 0)
        return -1;
      if (strcmp (l->personality.domain, "LINUX") != 0 && strcmp (l->personality.domain, "LINUX32") != 0)
        {
          jw_fail_key (w, "domain", "unknown personality domain \"%s\"", l->personality.domain);
          return -1;
        }
    }
  jw_pop (w, saved);
  return 0;
}

/* Read so that create can refuse it: this runtime does not support it. */
static int
parse_intel_rdt (json_walk *w, yajl_val lo, oci_linux *l)
{
  yajl_val o;
  size_t saved;
  if (enter_object (w, lo, "intelRdt", &o, &saved) < 0)
    return -1;
  if (o)
    {
      l->intel_rdt.present = true;
      if (jw_field_string (w, o, "closID", &l->intel_rdt.clos_id) < 0
          || jw_field_string (w, o, "l3CacheSchema", &l->intel_rdt.l3_cache_schema) < 0
          || jw_field_string (w, o, "memBwSchema", &l->intel_rdt.mem_bw_schema) < 0
          || jw_field_bool (w, o, "enableCMT", &l->intel_rdt.enable_cmt) < 0
          || jw_field_bool (w, o, "enableMBM", &l->intel_rdt.enable_mbm) < 0)
        return -1;
    }
  jw_pop (w, saved);
  return 0;
}

/* Read so that create can refuse it: this runtime does not support it. */
static int
parse_net_devices (json_walk *w, yajl_val lo, oci_linux *l)
{
  yajl_val o;
  size_t saved;
  if (enter_object (w, lo, "netDevices", &o, &saved) < 0)
    return -1;
  if (o)
    {
      l->net_devices.v = xmalloc0 ((o->u.object.len + 1) * sizeof (*l->net_devices.v));
      for (size_t i = 0; i < o->u.object.len; i++)
        {
          size_t s2 = jw_push_key (w, o->u.object.keys[i]);
          l->net_devices.v[i].host_name = xstrdup (o->u.object.keys[i]);
          l->net_devices.n++;
          if (jw_expect_object (w, o->u.object.values[i]) < 0
              || jw_field_string (w, o->u.object.values[i], "name", &l->net_devices.v[i].name) < 0)
            return -1;
          jw_pop (w, s2);
        }
    }
  jw_pop (w, saved);
  return 0;
}

static int
parse_linux (json_walk *w, yajl_val root, oci_linux *l)
{
  yajl_val lo;
  size_t saved;
  if (enter_object (w, root, "linux", &lo, &saved) < 0)
    return -1;
  if (lo == NULL)
    {
      jw_pop (w, saved);
      return 0;
    }
  l->present = true;
  if (parse_namespaces (w, lo, l) < 0 || parse_id_mappings (w, lo, "uidMappings", &l->uid_mappings) < 0
      || parse_id_mappings (w, lo, "gidMappings", &l->gid_mappings) < 0 || parse_devices (w, lo, l) < 0
      || jw_field_string (w, lo, "cgroupsPath", &l->cgroups_path) < 0 || parse_resources (w, lo, &l->resources) < 0
      || jw_field_string (w, lo, "rootfsPropagation", &l->rootfs_propagation) < 0
      || parse_seccomp (w, lo, &l->seccomp) < 0 || jw_field_string_map (w, lo, "sysctl", &l->sysctl) < 0
      || jw_field_string (w, lo, "mountLabel", &l->mount_label) < 0)
    return -1;
  l->has_masked_paths = !jw_absent (jw_lookup (lo, "maskedPaths"));
  l->has_readonly_paths = !jw_absent (jw_lookup (lo, "readonlyPaths"));
  if (jw_field_strv (w, lo, "maskedPaths", &l->masked_paths) < 0
      || jw_field_strv (w, lo, "readonlyPaths", &l->readonly_paths) < 0)
    return -1;
  if (l->rootfs_propagation && oci_propagation_from_name (l->rootfs_propagation) < 0)
    {
      jw_fail_key (w, "rootfsPropagation", "unknown propagation \"%s\"", l->rootfs_propagation);
      return -1;
    }
  if (parse_time_offsets (w, lo, l) < 0 || parse_personality (w, lo, l) < 0 || parse_intel_rdt (w, lo, l) < 0
      || parse_net_devices (w, lo, l) < 0)
    return -1;
  jw_pop (w, saved);
  return 0;
}

static int
parse_spec_tree (json_walk *w, yajl_val root, oci_spec *s)
{
  yajl_val o;
  size_t saved;
  if (jw_expect_object (w, root) < 0)
    return -1;
  if (jw_field_required_string (w, root, "ociVersion", &s->oci_version) < 0)
    return -1;
  if (strncmp (s->oci_version, "1.", 2) != 0)
    {
      jw_fail_key (w, "ociVersion", "unsupported version \"%s\" (this runtime implements 1.x)", s->oci_version);
      return -1;
    }
  if (enter_object (w, root, "root", &o, &saved) < 0)
    return -1;
  if (o
      && (jw_field_required_string (w, o, "path", &s->root.path) < 0
          || jw_field_bool (w, o, "readonly", &s->root.readonly) < 0))
    return -1;
  jw_pop (w, saved);

  if (enter_object (w, root, "process", &o, &saved) < 0)
    return -1;
  if (o)
    {
      s->has_process = true;
      if (parse_process_fields (w, o, &s->process, false) < 0)
        return -1;
    }
  jw_pop (w, saved);

  if (jw_field_string (w, root, "hostname", &s->hostname) < 0
      || jw_field_string (w, root, "domainname", &s->domainname) < 0 || parse_mounts (w, root, s) < 0
      || parse_hooks (w, root, &s->hooks) < 0 || jw_field_string_map (w, root, "annotations", &s->annotations) < 0
      || parse_linux (w, root, &s->linux_cfg) < 0)
    return -1;
  return 0;
}

/* yajl_tree_parse() reads a C string: hand it exactly the len bytes the
 * caller gave, and refuse a NUL byte inside them rather than silently
 * ignoring whatever follows it. */
static int
parse_text (json_walk *w, const char *json, size_t len, yajl_val *root)
{
  const char *nul = memchr (json, '\0', len);
  if (nul)
    return hv_error_set (w->err, 0, "%s: invalid JSON: NUL byte at offset %zu", w->name, (size_t) (nul - json));
  char *text = xmalloc0 (len + 1);
  memcpy (text, json, len);
  int r = jw_parse (w, text, root);
  free (text);
  return r;
}

int
oci_spec_parse (const char *json, size_t len, const char *name, oci_spec **out, hv_error **err)
{
  json_walk w;
  yajl_val root = NULL;
  jw_init (&w, name, err);
  if (parse_text (&w, json, len, &root) < 0)
    return -1;
  oci_spec *s = xmalloc0 (sizeof (*s));
  int r = parse_spec_tree (&w, root, s);
  yajl_tree_free (root);
  if (r < 0)
    {
      oci_spec_free (s);
      return -1;
    }
  *out = s;
  return 0;
}

int
oci_process_parse (const char *json, size_t len, const char *name, oci_process **out, hv_error **err)
{
  json_walk w;
  yajl_val root = NULL;
  jw_init (&w, name, err);
  if (parse_text (&w, json, len, &root) < 0)
    return -1;
  oci_process *p = xmalloc0 (sizeof (*p));
  int r = jw_expect_object (&w, root);
  if (r == 0)
    r = parse_process_fields (&w, root, p, true);
  yajl_tree_free (root);
  if (r < 0)
    {
      oci_process_free (p);
      return -1;
    }
  *out = p;
  return 0;
}

int
oci_resources_parse (const char *json, size_t len, const char *name, oci_resources **out, hv_error **err)
{
  json_walk w;
  yajl_val root = NULL;
  jw_init (&w, name, err);
  if (parse_text (&w, json, len, &root) < 0)
    return -1;
  oci_resources *r = xmalloc0 (sizeof (*r));
  int ret = jw_expect_object (&w, root);
  if (ret == 0)
    ret = parse_resources_object (&w, root, r);
  yajl_tree_free (root);
  if (ret < 0)
    {
      oci_resources_free (r);
      return -1;
    }
  *out = r;
  return 0;
}

int
oci_seccomp_parse (const char *json, size_t len, const char *name, oci_seccomp **out, hv_error **err)
{
  json_walk w;
  yajl_val root = NULL;
  jw_init (&w, name, err);
  if (parse_text (&w, json, len, &root) < 0)
    return -1;
  oci_seccomp *sc = xmalloc0 (sizeof (*sc));
  int ret = jw_expect_object (&w, root);
  if (ret == 0)
    ret = parse_seccomp (&w, root, sc);
  yajl_tree_free (root);
  if (ret == 0 && !sc->present)
    ret = hv_error_set (err, 0, "%s: no \"seccomp\" object", name);
  if (ret < 0)
    {
      oci_seccomp_free (sc);
      return -1;
    }
  *out = sc;
  return 0;
}


int
oci_spec_load (const char *path, const char *name, oci_spec **out, hv_error **err)
{
  cleanup_free char *buf = NULL;
  size_t len;
  if (hv_read_file (path, &buf, &len, err) < 0)
    return -1;
  return oci_spec_parse (buf, len, name, out, err);
}
