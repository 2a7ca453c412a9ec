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

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "oci_spec.h"
#include "policy.h"

/* One directory ~ stands for, and the tmpfs that hides it. */
struct hv_container_home
{
  char *path;
  uint32_t uid, gid;       /* the tmpfs's owner */
  size_t tmpfs_at;         /* mounts index its tmpfs goes before; SIZE_MAX: not hidden */
};

struct hv_container_plan
{
  char *rootfs;            /* host path of the container's root filesystem */
  struct hv_container_home *homes; /* [0]: the process user's, when it can be hidden */
  size_t n_homes;
  oci_strv projects;       /* container paths of the project directories */
  oci_strv project_sources; /* their host paths (same index) */
  oci_strv masked;         /* container paths hidden (maskedPaths) */
  /* Paths bound onto themselves (the runtime's x-haven.pin), sorted,
   * each once, after the engine's mounts: nothing in the container can
   * rename, remove or replace them.  The directories on the way from a
   * project to a path hidden in it, so that no container moves a parent
   * of a hidden file while another container or sandbox of the project
   * looks for it (policies/README.md, "Links in the project"); a writable
   * project's git directories and the directories on the way to what git
   * executes (container_git.h). */
  oci_strv pins;
  /* ... and read-only (rro, rnosuid, rnodev, rnoexec), after those: what
   * git executes there (hooks, config, commondir, a hook manager's files). */
  oci_strv pins_ro;
  oci_strv readonly;       /* container paths made read-only (readonlyPaths) */
  oci_strv guarded;        /* writable projects whose git the monitor checks (container paths) */
  oci_strv guarded_sources; /* ... their host paths (run.haven.git-guard) */
  oci_strv notes;          /* what the user should know, printed at create */
};

int hv_container_plan_make (const hv_policy *p, const oci_spec *spec, const char *config_path,
                            struct hv_container_plan *plan, hv_error **err);
void hv_container_plan_clear (struct hv_container_plan *plan);

/* Is the mount a bind mount (type "bind" or a bind/rbind option)? */
bool hv_mount_is_bind (const oci_mount *m);
#endif
