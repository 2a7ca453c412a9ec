/* Container state kept under <root>/<id>/:
 *   state.json   what `state` reports plus what later commands need
 *   config.json  the config as created (exec applies its seccomp etc.)
 *   exec.fifo    exists from create until start (status "created")
 * state.json is written atomically once create has succeeded; a directory
 * without it is a container still being created (or a failed create being
 * cleaned up). */
#ifndef HAVEN_STATE_H
#define HAVEN_STATE_H

#include <stdbool.h>
#include <sys/types.h>

#include "runtime.h"
#include "error.h"
#include "oci_spec.h"

enum hv_status
{
  HV_STATUS_CREATING,
  HV_STATUS_CREATED,
  HV_STATUS_RUNNING,
  HV_STATUS_PAUSED,
  HV_STATUS_STOPPED,
};

typedef struct
{
  char *id;
  char *dir; /* <root>/<id> */
  char *bundle;
  char *rootfs;
  char *created;
  uid_t owner;
  pid_t pid;
  unsigned long long start_time;
  char *cgroup_path; /* path inside each hierarchy, "" if none */
  bool systemd_cgroup;
  oci_kv_list annotations;
  /* Only in the record create hands to its caller (run goes on with it to
   * start and destroy): whether the config has poststart and poststop
   * hooks, so that start and destroy need not read and parse config.json
   * again (about 0.1-0.2 ms each) just to find none.  A record loaded from
   * state.json has hooks_known false: start and delete read the config. */
  bool hooks_known, has_poststart, has_poststop;
} hv_container;

const char *hv_status_name (enum hv_status s);

/* Validate the id (it becomes a path component) and compute the dir. */
int hv_state_dir (const struct hv_runtime *rt, const char *id, char **out, hv_error **err);
/* Load a container; "container does not exist" when there is none. */
int hv_container_load (const struct hv_runtime *rt, const char *id, hv_container **out, hv_error **err);
int hv_container_save (const hv_container *c, hv_error **err);
void hv_container_free (hv_container *c);
enum hv_status hv_container_status (const hv_container *c);
/* The OCI state document for `state` and for hooks' stdin. */
char *hv_container_state_json (const hv_container *c, enum hv_status status, bool pretty);
/* create holds a POSIX write lock on <dir>/.create.lock from the moment the
 * directory exists until it returns (fork children do not inherit it, and
 * it goes when the creating process dies).  Returns the fd to close. */
int hv_state_lock_create (const char *dir, hv_error **err);
/* A directory without state.json whose creator is still running. */
bool hv_state_being_created (const char *dir);
/* Remove the state directory and everything in it. */
int hv_state_remove (const char *dir, hv_error **err);
bool hv_container_alive (const hv_container *c);
/* init (the recorded process, start time checked) is on its way out and
 * never runs its own code again: a fatal signal was delivered (the kernel
 * turns it into a pending SIGKILL on every thread at once) or its exit
 * has begun (PF_EXITING).  It still counts as alive until the kernel has
 * made it a zombie: reaping its namespace's other processes and freeing
 * its memory come first. */
bool hv_container_exiting (const hv_container *c);

static inline void
cleanup_containerp (hv_container **c)
{
  hv_container_free (*c);
}
#define cleanup_container __attribute__ ((cleanup (cleanup_containerp)))
#endif
