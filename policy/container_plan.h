/* What a policy means inside a container an engine made (Docker, Podman).
 *
 * `haven run` builds its sandbox from the host; an engine's container
 * brings its own root filesystem, user and mounts.  The policy's paths
 * are read in the container's terms:
 *   ~          the home of the container process's user: its HOME, else
 *              the image's /etc/passwd (read inside the root filesystem,
 *              never through a link out of it), else /root or /;
 *   {project}  every directory the engine binds in from the host (a
 *              workspace, a compose volume, a named volume), outside the
 *              home and the kernel's and engine's own trees;
 *   /path      the same path in the container.
 * The plan lists, in container paths, what the config filter then writes
 * into the config: masks, read-only paths, where the hidden home's tmpfs
 * goes, and which engine mounts it hides. */
#ifndef HAVEN_CONTAINER_PLAN_H
#define HAVEN_CONTAINER_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "oci_spec.h"
#include "policy.h"

struct hv_container_plan
{
  char *rootfs;            /* host path of the container's root filesystem */
  char *home;              /* ~ in the container; NULL when it cannot be hidden (/) */
  uint32_t uid, gid;
  size_t home_tmpfs_at;    /* mounts index the hidden home's tmpfs goes before; SIZE_MAX: none */
  oci_strv projects;       /* container paths of the project directories */
  oci_strv project_sources; /* their host paths (same index) */
  oci_strv masked;         /* container paths hidden (maskedPaths) */
  oci_strv readonly;       /* container paths made read-only (readonlyPaths) */
  oci_strv notes;          /* what the user should know, printed at create */
};

int hv_container_plan_make (const hv_policy *p, const oci_spec *spec, const char *config_path,
                            struct hv_container_plan *plan, hv_error **err);
void hv_container_plan_clear (struct hv_container_plan *plan);

/* Is the mount a bind mount (type "bind" or a bind/rbind option)? */
bool hv_mount_is_bind (const oci_mount *m);
#endif
