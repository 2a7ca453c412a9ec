/* What a create that dies before state.json exists leaves for delete. */
#ifndef HAVEN_CREATE_RECORD_H
#define HAVEN_CREATE_RECORD_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

#define HV_CREATE_RECORD_FILE "creating"

/* Record init (pid and start time; pid 0: not cloned yet) and the cgroup
 * create is about to make, in the state directory DIR. */
int hv_create_record_write (const char *dir, pid_t pid, bool systemd, const char *cgroup_path, hv_error **err);

/* Undo what DIR's record names: SIGKILL the recorded init if it still is
 * that process, and remove the cgroup with whatever it holds.  For a
 * create that is gone (hv_state_being_created is false); 0 without a
 * record (create died before it cloned init). */
int hv_create_record_undo (const char *dir, hv_error **err);

#endif
