#include "config.h"
#include "capabilities.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "file_read.h"
#include "log.h"
#include "oci_tables.h"
#include "utils.h"

int
hv_caps_last_cap (void)
{
  static int last = -1;
  if (last < 0)
    {
      cleanup_free char *text = NULL;
      if (read_file_at (AT_FDCWD, "/proc/sys/kernel/cap_last_cap", &text, NULL) == 0)
        last = atoi (text);
      else
        last = oci_capability_last ();
    }
  return last;
}

static bool
in_set (const oci_strv *set, int cap)
{
  const char *name = oci_capability_name (cap);
  if (name == NULL)
    return false;
  for (size_t i = 0; i < set->n; i++)
    if (strcmp (set->v[i], name) == 0)
      return true;
  return false;
}

int
hv_caps_drop_bounding (const oci_capabilities *caps, hv_error **err)
{
  static const oci_strv empty = { 0 };
  const oci_strv *bounding = caps->present ? &caps->bounding : &empty;
  for (int cap = 0; cap <= hv_caps_last_cap (); cap++)
    {
      if (in_set (bounding, cap))
        continue;
      if (prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
        return hv_error_set (err, errno, "drop %s from the bounding set",
                             oci_capability_name (cap) ? oci_capability_name (cap) : "capability");
    }
  return 0;
}

/* Only capabilities the runtime itself holds can be granted: a runtime
 * started without, say, CAP_SYS_RESOURCE (as in some CI sandboxes) gives
 * a "privileged" container everything it has rather than failing. */
static bool
grantable (cap_t own, cap_flag_t flag, cap_value_t v)
{
  cap_flag_value_t have = CAP_CLEAR;
  if (v < 0 || v > hv_caps_last_cap ())
    return false;
  if (flag == CAP_INHERITABLE)
    return prctl (PR_CAPBSET_READ, v, 0, 0, 0) == 1;
  return cap_get_flag (own, v, CAP_PERMITTED, &have) == 0 && have == CAP_SET;
}

void
hv_caps_warn_unavailable (const oci_capabilities *caps)
{
  if (!caps->present)
    return;
  const oci_strv *sets[] = { &caps->bounding, &caps->effective, &caps->permitted, &caps->inheritable,
                             &caps->ambient };
  oci_strv warned = { 0 };
  for (size_t s = 0; s < N_ELEMENTS (sets); s++)
    for (size_t i = 0; i < sets[s]->n; i++)
      {
        cap_value_t v = oci_capability_from_name (sets[s]->v[i]);
        if (v < 0 || prctl (PR_CAPBSET_READ, v, 0, 0, 0) == 1)
          continue;
        size_t before = warned.n;
        oci_strv_push_unique (&warned, sets[s]->v[i]);
        if (warned.n != before)
          hv_log (HV_LOG_WARNING, "capability %s is not available to the runtime; the container runs without it",
                  sets[s]->v[i]);
      }
  oci_strv_free (&warned);
}

static int
fill_flag (cap_t c, cap_t own, cap_flag_t flag, const oci_strv *set)
{
  for (size_t i = 0; i < set->n; i++)
    {
      cap_value_t v = oci_capability_from_name (set->v[i]);
      if (!grantable (own, flag, v))
        continue;
      if (cap_set_flag (c, flag, 1, &v, CAP_SET) < 0)
        return -1;
    }
  return 0;
}

int
hv_caps_apply (const oci_capabilities *caps, hv_error **err)
{
  static const oci_capabilities none = { 0 };
  if (!caps->present)
    caps = &none;
  cap_t c = cap_init ();
  cap_t own = cap_get_proc ();
  if (c == NULL || own == NULL)
    {
      cap_free (c);
      cap_free (own);
      return hv_error_set (err, errno, "cap_init");
    }
  int r = 0;
  if (fill_flag (c, own, CAP_EFFECTIVE, &caps->effective) < 0 || fill_flag (c, own, CAP_PERMITTED, &caps->permitted) < 0
      || fill_flag (c, own, CAP_INHERITABLE, &caps->inheritable) < 0)
    r = hv_error_set (err, errno, "build capability sets");
  else if (cap_set_proc (c) < 0)
    r = hv_error_set (err, errno, "set capabilities");
  cap_free (c);
  cap_free (own);
  if (r < 0)
    return r;
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return hv_error_set (err, errno, "clear ambient capabilities");
  for (size_t i = 0; i < caps->ambient.n; i++)
    {
      int v = oci_capability_from_name (caps->ambient.v[i]);
      if (v < 0 || v > hv_caps_last_cap ())
        continue;
      /* The kernel refuses ambient capabilities that are not both
       * permitted and inheritable; runc ignores those silently too. */
      if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, v, 0, 0) < 0 && errno != EPERM)
        return hv_error_set (err, errno, "raise ambient %s", caps->ambient.v[i]);
    }
  return 0;
}
