/* What a container plan holds (container_plan.h makes it; container_git.c
 * adds git's part to it): in container paths, what the config filter
 * writes into an engine's config. */
#ifndef HAVEN_CONTAINER_PLAN_RESULT_H
#define HAVEN_CONTAINER_PLAN_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "oci_spec.h"

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
#endif
