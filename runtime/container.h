/* Container lifecycle: create (parent side in container_create.c, the
 * init process's side in container_init.c), start, exec. */
#ifndef HAVEN_CONTAINER_H
#define HAVEN_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "cli.h"
#include "error.h"
#include "namespaces.h"
#include "oci_spec.h"
#include "state.h"

struct hv_create_opts
{
  const char *id;
  const char *bundle;
  const char *pid_file;
  const char *console_socket;
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;
  bool keep_child_reapable; /* run in the foreground: we wait for init */
  int *console_master;      /* run without --console-socket: keep the pty master here */
  bool die_with_runtime;    /* haven run: init keeps PR_SET_PDEATHSIG after ready */
};

/* What the init process needs; built by the parent before clone (the child
 * gets its own copy of the address space). */
struct hv_init_ctx
{
  const oci_spec *spec;
  const struct hv_create_opts *opts;
  struct hv_ns_plan *ns;
  const char *bundle;
  const char *rootfs;
  const char *state_dir;
  const char *cgroup_path;
  int sync_fd;        /* child's end */
  int fifo_fd;        /* exec fifo, read end (blocks until start) */
  int parent_sync_fd; /* closed by the child */
  bool terminal;      /* process.terminal and a console socket */
};

/* The init process: never returns. */
__attribute__ ((noreturn)) void hv_container_init (struct hv_init_ctx *ctx);

/* Create the container; on success *out is its saved state and *pidfd
 * (if non-NULL) a pidfd of init.  On failure nothing is left behind. */
int hv_container_create (struct hv_global *g, const struct hv_create_opts *opts, hv_container **out, int *pidfd,
                         hv_error **err);
/* Release a created container (start). */
int hv_container_start (struct hv_global *g, hv_container *c, hv_error **err);
/* Remove a stopped container: poststop hooks, cgroup, state. */
int hv_container_destroy (struct hv_global *g, hv_container *c, hv_error **err);
/* Load the config saved at create time. */
int hv_container_load_config (const hv_container *c, oci_spec **out, hv_error **err);
#endif
