/* update: new resource limits for a running container, written into its
 * cgroup (and its systemd unit) and then into its saved config. */
#include "config.h"

#include <string.h>

#include "cgroup_resources.h"
#include "cgroup_systemd.h"
#include "container.h"
#include "file_read.h"
#include "json_merge.h"
#include "utils.h"

/* The container, if it runs (or is paused) in a cgroup. */
static int
check_running (const hv_container *c, hv_error **err)
{
  enum hv_status st = hv_container_status (c);
  if (st == HV_STATUS_STOPPED || st == HV_STATUS_CREATING)
    return hv_error_set (err, 0, "container not running");
  if (c->cgroup_path[0] == '\0')
    return hv_error_set (err, 0, "update: container %s has no cgroup", c->id);
  return 0;
}

/* PATCH merged into the saved config, written into the cgroup (and the
 * systemd unit), and only then saved. */
static int
apply_patch (const hv_container *c, const char *patch, const char *patch_name, bool devices, hv_error **err)
{
  const char *id = c->id;
  cleanup_free char *config_path = xasprintf ("%s/config.json", c->dir);
  cleanup_free char *saved = NULL;
  cleanup_free char *merged = NULL;
  static const char *const at[] = { "linux", "resources" };
  if (hv_read_file (config_path, &saved, NULL, err) < 0
      || jm_merge_at (saved, config_path, at, N_ELEMENTS (at), patch, patch_name, &merged, err) < 0)
    return hv_error_wrap (err, "update %s", id);
  cleanup_spec oci_spec *spec = NULL;
  if (oci_spec_parse (merged, strlen (merged), config_path, &spec, err) < 0)
    return hv_error_wrap (err, "update %s", id);
  /* Device rules change only when the update brings some: a Docker or
   * Podman update without them keeps the rules the container has. */
  unsigned flags = HV_CG_UPDATE | (devices ? HV_CG_DEVICES : 0);
  /* Under the systemd driver the unit's properties change too, or the
   * next daemon-reload would put the old limits back. */
  if (c->systemd_cgroup && hv_systemd_update (c->cgroup_path, &spec->linux_cfg, err) < 0)
    return hv_error_wrap (err, "update %s", id);
  if (hv_cgroup_apply_resources (c->cgroup_path, &spec->linux_cfg, flags, err) < 0)
    return hv_error_wrap (err, "update %s", id);
  if (write_file_atomic (c->dir, "config.json", merged, strlen (merged), err) < 0)
    return hv_error_wrap (err, "update %s", id);
  return 0;
}

int
hv_container_update (const struct hv_runtime *rt, const hv_container *c, const char *patch, const char *patch_name,
                     bool devices, hv_error **err)
{
  (void) rt;
  if (check_running (c, err) < 0)
    return -1;
  return apply_patch (c, patch, patch_name, devices, err);
}
