#include "config.h"
#include "cgroup_devices.h"

#include <stdio.h>
#include <string.h>

#include "utils.h"

/* What every container may use whatever its rules say, as with runc and
 * crun: the nodes the runtime creates in /dev (null, zero, full, tty,
 * random, urandom), /dev/console, /dev/ptmx and the devpts ptys.  Also as
 * runc: mknod of any node (using it still needs a rule) and /dev/net/tun;
 * Docker's configs rely on these (a package that makes device nodes, a
 * VPN client). */
static const struct hv_dev_rule default_rules[] = {
  { true, 'c', -1, -1, HV_DEV_MKNOD }, { true, 'b', -1, -1, HV_DEV_MKNOD }, { true, 'c', 10, 200, HV_DEV_ALL },
  { true, 'c', 1, 3, HV_DEV_ALL }, { true, 'c', 1, 5, HV_DEV_ALL }, { true, 'c', 1, 7, HV_DEV_ALL },
  { true, 'c', 1, 8, HV_DEV_ALL }, { true, 'c', 1, 9, HV_DEV_ALL }, { true, 'c', 5, 0, HV_DEV_ALL },
  { true, 'c', 5, 1, HV_DEV_ALL }, { true, 'c', 5, 2, HV_DEV_ALL }, { true, 'c', 136, -1, HV_DEV_ALL },
};

unsigned
hv_dev_access_bits (const char *access)
{
  unsigned bits = 0;
  if (access == NULL)
    return HV_DEV_ALL;
  for (const char *p = access; *p; p++)
    bits |= *p == 'r' ? HV_DEV_READ : *p == 'w' ? HV_DEV_WRITE : *p == 'm' ? HV_DEV_MKNOD : 0;
  return bits;
}

size_t
hv_dev_rules_build (const oci_linux *l, struct hv_dev_rule **out)
{
  const oci_resources *r = &l->resources;
  *out = NULL;
  if (r->n_devices == 0)
    return 0;
  size_t n = 0, cap = r->n_devices + N_ELEMENTS (default_rules) + l->n_devices;
  struct hv_dev_rule *v = xmalloc0 ((cap + 1) * sizeof (*v));
  for (size_t i = 0; i < r->n_devices; i++)
    {
      const oci_device_rule *d = &r->devices[i];
      struct hv_dev_rule *o = &v[n++];
      o->allow = d->allow;
      o->type = d->type ? d->type[0] : 'a';
      /* A negative number is the wildcard, as runc reads it. */
      o->major = d->major.set && d->major.value >= 0 ? d->major.value : -1;
      o->minor = d->minor.set && d->minor.value >= 0 ? d->minor.value : -1;
      o->access = o->type == 'a' ? HV_DEV_ALL : hv_dev_access_bits (d->access);
      if (o->type == 'a')
        o->major = o->minor = -1;
    }
  for (size_t i = 0; i < N_ELEMENTS (default_rules); i++)
    v[n++] = default_rules[i];
  for (size_t i = 0; i < l->n_devices; i++)
    {
      const oci_device *d = &l->devices[i];
      if (d->type == 'p')
        continue;
      v[n++] = (struct hv_dev_rule){ true, d->type == 'u' ? 'c' : d->type, d->major, d->minor, HV_DEV_ALL };
    }
  *out = v;
  return n;
}

static bool
rule_matches (const struct hv_dev_rule *r, char type, uint32_t major, uint32_t minor)
{
  if (r->type == 'a')
    return true;
  return r->type == type && (r->major < 0 || (uint64_t) r->major == major)
         && (r->minor < 0 || (uint64_t) r->minor == minor);
}

bool
hv_dev_rules_allow (const struct hv_dev_rule *rules, size_t n, char type, uint32_t major, uint32_t minor,
                    unsigned access)
{
  for (unsigned bit = 1; bit <= HV_DEV_WRITE; bit <<= 1)
    {
      if (!(access & bit))
        continue;
      for (size_t i = n; i-- > 0;)
        if ((rules[i].access & bit) && rule_matches (&rules[i], type, major, minor))
          {
            if (!rules[i].allow)
              return false;
            break;
          }
    }
  return true;
}

void
hv_dev_rule_v1_line (const struct hv_dev_rule *r, char *buf, size_t n)
{
  char major[24] = "*", minor[24] = "*", access[4];
  size_t k = 0;
  if (r->type == 'a')
    {
      snprintf (buf, n, "a");
      return;
    }
  if (r->major >= 0)
    snprintf (major, sizeof (major), "%lld", (long long) r->major);
  if (r->minor >= 0)
    snprintf (minor, sizeof (minor), "%lld", (long long) r->minor);
  if (r->access & HV_DEV_READ)
    access[k++] = 'r';
  if (r->access & HV_DEV_WRITE)
    access[k++] = 'w';
  if (r->access & HV_DEV_MKNOD)
    access[k++] = 'm';
  access[k] = '\0';
  snprintf (buf, n, "%c %s:%s %s", r->type, major, minor, access);
}
