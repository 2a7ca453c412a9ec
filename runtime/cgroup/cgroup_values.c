#include "config.h"
#include "cgroup_values.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "utils.h"

uint64_t
hv_cg_shares_to_weight (uint64_t shares)
{
  if (shares == 0)
    return 0;
  if (shares <= 2)
    return 1;
  if (shares >= 262144)
    return 10000;
  /* A quadratic in log2(shares) through (2, 1), (1024, 100) and
   * (262144, 10000): runc's (and crun's) mapping, so a container gets the
   * same weight whichever runtime started it. */
  double l = log2 ((double) shares);
  double exponent = (l * l + 125 * l) / 612.0 - 7.0 / 34.0;
  return (uint64_t) ceil (pow (10, exponent));
}

uint64_t
hv_cg_blkio_to_io_weight (uint64_t weight)
{
  if (weight == 0)
    return 0;
  if (weight < 10)
    weight = 10;
  if (weight > 1000)
    weight = 1000;
  return 1 + (weight - 10) * 9999 / 990;
}

int
hv_cg_check_memory (const oci_resources *r, hv_error **err)
{
  int64_t limit = r->memory.limit.set ? r->memory.limit.value : 0;
  int64_t swap = r->memory.swap.set ? r->memory.swap.value : 0;
  if (limit < -1)
    return hv_error_set (err, 0, "memory.limit %lld is invalid (-1 means unlimited)", (long long) limit);
  if (swap < -1)
    return hv_error_set (err, 0, "memory.swap %lld is invalid (-1 means unlimited)", (long long) swap);
  if (swap > 0 && limit > 0 && swap < limit)
    return hv_error_set (err, 0, "memory.swap %lld is below memory.limit %lld (swap counts memory+swap)",
                         (long long) swap, (long long) limit);
  if (r->memory.swappiness.set && r->memory.swappiness.value > 100)
    return hv_error_set (err, 0, "memory.swappiness %llu is out of range 0-100",
                         (unsigned long long) r->memory.swappiness.value);
  return 0;
}

int
hv_cg_swap_v2 (const oci_resources *r, char *out, size_t n, hv_error **err)
{
  int64_t limit = r->memory.limit.set ? r->memory.limit.value : 0;
  int64_t swap = r->memory.swap.set ? r->memory.swap.value : 0;
  out[0] = '\0';
  if (hv_cg_check_memory (r, err) < 0)
    return -1;
  /* As runc: 0 means unset, except that an unlimited memory without a swap
   * value makes swap unlimited too (what v1 does with memsw). */
  if (limit == -1 && swap == 0)
    swap = -1;
  if (swap == 0)
    return 0;
  if (swap == -1)
    {
      snprintf (out, n, "max");
      return 0;
    }
  if (limit == -1)
    {
      snprintf (out, n, "%lld", (long long) swap);
      return 0;
    }
  if (limit == 0)
    return hv_error_set (err, 0, "memory.swap %lld needs a memory.limit (v2 limits swap apart from memory)",
                         (long long) swap);
  snprintf (out, n, "%lld", (long long) (swap - limit));
  return 0;
}

char *
hv_cg_cpu_max (const oci_resources *r)
{
  bool quota = r->cpu.quota.set && r->cpu.quota.value != 0;
  bool period = r->cpu.period.set && r->cpu.period.value != 0;
  if (!quota && !period)
    return NULL;
  /* 100000 us is the kernel's default period (cgroup-v2.rst, cpu.max). */
  unsigned long long p = period ? (unsigned long long) r->cpu.period.value : 100000ULL;
  if (quota && r->cpu.quota.value > 0)
    return xasprintf ("%lld %llu", (long long) r->cpu.quota.value, p);
  return xasprintf ("max %llu", p);
}

struct io_line
{
  int64_t major, minor;
  char *keys[4];
};

char **
hv_cg_io_max_lines (const oci_resources *r)
{
  static const char *const names[4] = { "rbps", "wbps", "riops", "wiops" };
  const oci_blkio_devices *lists[4] = { &r->block_io.throttle_read_bps, &r->block_io.throttle_write_bps,
                                        &r->block_io.throttle_read_iops, &r->block_io.throttle_write_iops };
  size_t total = 0, n = 0;
  for (size_t k = 0; k < 4; k++)
    total += lists[k]->n;
  struct io_line *lines = xmalloc0 ((total + 1) * sizeof (*lines));
  for (size_t k = 0; k < 4; k++)
    for (size_t i = 0; i < lists[k]->n; i++)
      {
        const oci_blkio_device *d = &lists[k]->v[i];
        size_t j;
        for (j = 0; j < n; j++)
          if (lines[j].major == d->major && lines[j].minor == d->minor)
            break;
        if (j == n)
          {
            lines[n].major = d->major;
            lines[n].minor = d->minor;
            n++;
          }
        /* A later entry for the same device and key wins. */
        free (lines[j].keys[k]);
        lines[j].keys[k] = d->rate ? xasprintf ("%s=%llu", names[k], (unsigned long long) d->rate)
                                   : xasprintf ("%s=max", names[k]);
      }
  char **out = xmalloc0 ((n + 1) * sizeof (*out));
  for (size_t j = 0; j < n; j++)
    {
      char *s = xasprintf ("%lld:%lld", (long long) lines[j].major, (long long) lines[j].minor);
      for (size_t k = 0; k < 4; k++)
        if (lines[j].keys[k])
          {
            char *t = xasprintf ("%s %s", s, lines[j].keys[k]);
            free (s);
            free (lines[j].keys[k]);
            s = t;
          }
      out[j] = s;
    }
  free (lines);
  return out;
}

int
hv_cg_check_page_size (const char *size, hv_error **err)
{
  const char *p = size;
  while (isdigit ((unsigned char) *p))
    p++;
  if (p == size || p - size > 10 || p[0] == '\0' || strchr ("KMGT", p[0]) == NULL || strcmp (p + 1, "B") != 0)
    return hv_error_set (err, 0, "page size \"%s\" is not of the form 2MB, 1GB or 64KB", size);
  return 0;
}

int
hv_cg_check_unified_key (const char *key, hv_error **err)
{
  /* Interface files of the cgroup core that a container config may set;
   * every other cgroup.* file moves processes, changes the tree or
   * freezes/kills it: the runtime's business. */
  static const char *const core_allowed[] = { "cgroup.max.depth", "cgroup.max.descendants" };
  const char *dot = strchr (key, '.');
  if (key[0] == '\0' || strchr (key, '/') || strcmp (key, ".") == 0 || strcmp (key, "..") == 0)
    return hv_error_set (err, 0, "unified key \"%s\" must be a file name (no slashes)", key);
  for (const char *p = key; *p; p++)
    if (!isalnum ((unsigned char) *p) && *p != '.' && *p != '_' && *p != '-')
      return hv_error_set (err, 0, "unified key \"%s\" contains a character no cgroup file name has", key);
  if (dot == NULL || dot == key || dot[1] == '\0')
    return hv_error_set (err, 0, "unified key \"%s\" must be in the form CONTROLLER.PARAMETER", key);
  if (str_has_prefix (key, "cgroup."))
    {
      for (size_t i = 0; i < N_ELEMENTS (core_allowed); i++)
        if (strcmp (key, core_allowed[i]) == 0)
          return 0;
      return hv_error_set (err, 0, "unified key \"%s\" is managed by the runtime and cannot be set", key);
    }
  return 0;
}

int
hv_cg_check_name (const char *what, const char *name, hv_error **err)
{
  if (name[0] == '\0')
    return hv_error_set (err, 0, "%s name is empty", what);
  for (const char *p = name; *p; p++)
    if (isspace ((unsigned char) *p) || iscntrl ((unsigned char) *p))
      return hv_error_set (err, 0, "%s name \"%s\" contains whitespace or control characters", what, name);
  return 0;
}

char *
hv_cg_rdma_line (const oci_rdma_limit *l)
{
  if (!l->hca_handles.set && !l->hca_objects.set)
    return NULL;
  cleanup_free char *h = l->hca_handles.set
                             ? xasprintf (" hca_handle=%llu", (unsigned long long) l->hca_handles.value)
                             : xstrdup ("");
  cleanup_free char *o = l->hca_objects.set
                             ? xasprintf (" hca_object=%llu", (unsigned long long) l->hca_objects.value)
                             : xstrdup ("");
  return xasprintf ("%s%s%s", l->device, h, o);
}

static void
push_unique (char ***v, size_t *n, const char *name)
{
  for (size_t i = 0; i < *n; i++)
    if (strcmp ((*v)[i], name) == 0)
      return;
  *v = xrealloc (*v, (*n + 2) * sizeof (**v));
  (*v)[(*n)++] = xstrdup (name);
  (*v)[*n] = NULL;
}

char **
hv_cg_wanted_controllers (const oci_resources *r)
{
  char **v = xmalloc0 (sizeof (*v));
  size_t n = 0;
  static const char *const always[] = { "cpu", "io", "memory", "pids" };
  for (size_t i = 0; i < N_ELEMENTS (always); i++)
    push_unique (&v, &n, always[i]);
  if ((r->cpu.cpus && r->cpu.cpus[0]) || (r->cpu.mems && r->cpu.mems[0]))
    push_unique (&v, &n, "cpuset");
  if (r->n_hugepage_limits)
    push_unique (&v, &n, "hugetlb");
  if (r->n_rdma)
    push_unique (&v, &n, "rdma");
  for (size_t i = 0; i < r->unified.n; i++)
    {
      const char *key = r->unified.v[i].key;
      const char *dot = strchr (key, '.');
      if (dot == NULL || dot == key)
        continue;
      cleanup_free char *ctrl = xasprintf ("%.*s", (int) (dot - key), key);
      if (strcmp (ctrl, "cgroup") != 0)
        push_unique (&v, &n, ctrl);
    }
  return v;
}

void
hv_cg_controllers_free (char **v)
{
  if (v == NULL)
    return;
  for (size_t i = 0; v[i]; i++)
    free (v[i]);
  free (v);
}

int
hv_cg_parse_size (const char *s, int64_t *out)
{
  if (strcmp (s, "-1") == 0)
    {
      *out = -1;
      return 0;
    }
  const char *p = s;
  uint64_t whole = 0, frac = 0, frac_div = 1;
  if (!isdigit ((unsigned char) *p))
    return -1;
  for (; isdigit ((unsigned char) *p); p++)
    {
      if (whole > (UINT64_MAX - 9) / 10)
        return -1;
      whole = whole * 10 + (uint64_t) (*p - '0');
    }
  if (*p == '.')
    {
      p++;
      if (!isdigit ((unsigned char) *p))
        return -1;
      for (; isdigit ((unsigned char) *p); p++)
        if (frac_div < 1000000000ULL)
          {
            frac = frac * 10 + (uint64_t) (*p - '0');
            frac_div *= 10;
          }
    }
  if (*p == ' ')
    p++;
  uint64_t mult = 1;
  const char *units = "kmgtp";
  const char *u = *p ? strchr (units, tolower ((unsigned char) *p)) : NULL;
  if (u)
    {
      for (const char *q = units; q <= u; q++)
        mult *= 1024;
      p++;
      if (*p == 'i' || *p == 'I')
        p++;
    }
  if (*p == 'b' || *p == 'B')
    p++;
  if (*p != '\0')
    return -1;
  if (whole > (uint64_t) INT64_MAX / mult)
    return -1;
  uint64_t v = whole * mult + (uint64_t) ((long double) frac * (long double) mult / (long double) frac_div);
  if (v > (uint64_t) INT64_MAX)
    return -1;
  *out = (int64_t) v;
  return 0;
}
