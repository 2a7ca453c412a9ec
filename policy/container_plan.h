/* What a policy means inside a container an engine made (Docker, Podman).
 *
 * `haven run` builds its sandbox from the host; an engine's container
 * brings its own root filesystem, user and mounts.  The policy's paths
 * are read in the container's terms:
 *   ~          the home of the container process's user: its HOME, else
 *              the image's /etc/passwd (read inside the root filesystem,
 *              never through a link out of it), else /root or /; and
 *              also the home of every user of the image's /etc/passwd
 *              whose home is /root or /home/NAME, because `exec --user`
 *              (a devcontainer's remoteUser) runs as them;
 *   {project}  every directory the engine binds in from the host (a
 *              workspace, a compose volume, a named volume), outside the
 *              home and the kernel's and engine's own trees;
 *   /path      the same path in the container.
 * The plan lists, in container paths, what the config filter then writes
 * into the config: masks, read-only paths, where the hidden home's tmpfs
 * goes, and which engine mounts it hides. */
#ifndef HAVEN_CONTAINER_PLAN_H
#define HAVEN_CONTAINER_PLAN_H

#include "error.h"
#include "oci_spec.h"
#include "container_plan_result.h"
#include "policy.h"

int hv_container_plan_make (const hv_policy *p, const oci_spec *spec, const char *config_path,
                            struct hv_container_plan *plan, hv_error **err);
void hv_container_plan_clear (struct hv_container_plan *plan);

/* Is the mount a bind mount (type "bind" or a bind/rbind option)? */
bool hv_mount_is_bind (const oci_mount *m);
#endif
