/* Small file and process helpers shared by the runtime. */
#ifndef HAVEN_UTILS_H
#define HAVEN_UTILS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "array_size.h"
#include "error.h"

int write_all (int fd, const void *buf, size_t len);
/* What a child's report pipe holds: read until end of stream, an error,
 * or size - 1 bytes (the rest is dropped), NUL-terminated; returns the
 * length.  size > 0. */
size_t read_upto (int fd, char *buf, size_t size);
/* Write a whole file relative to dirfd (AT_FDCWD for a path). */
int write_file_at (int dirfd, const char *path, const char *data, size_t len, int flags, hv_error **err);
int write_file (const char *path, const char *data, hv_error **err);
/* Replace dir/name with data in one step: a temporary file of a unique
 * name (created, never opened through a planted link), renamed over the
 * target.  The one writer of whole files: state files and --pid-file
 * (mode 0600, not durable: they describe running processes) and engine
 * configuration (durable: fsync of the file and the directory). */
struct hv_replace_opts
{
  mode_t mode;
  bool set_owner; /* fchown the new file to uid:gid */
  uid_t uid;
  gid_t gid;
  bool durable;
};
int write_file_replace (const char *dir, const char *name, const char *data, size_t len,
                        const struct hv_replace_opts *o, hv_error **err);
/* write_file_replace with mode 0600, not durable. */
int write_file_atomic (const char *dir, const char *name, const char *data, size_t len, hv_error **err);
int mkdir_p (const char *path, mode_t mode, hv_error **err);
/* --pid-file: written atomically (relative paths from the cwd). */
int write_pid_file (const char *path, pid_t pid, hv_error **err);

/* Field 22 of /proc/<pid>/stat (start time in clock ticks), which tells a
 * live process from a reused pid; *out = 0 when the process is gone. */
int proc_start_time (pid_t pid, unsigned long long *out, char *state_char);

/* RFC 3339 timestamp with nanoseconds, UTC. */
char *now_rfc3339 (void);

/* Mark every fd >= from close-on-exec (or close it). */
int cloexec_from (int from);

/* In a child before it execs another program: no signal blocked, every
 * one at its default action (what a caller blocked or caught is not the
 * program's). */
void hv_default_signals (void);

bool str_has_prefix (const char *s, const char *prefix);
/* An environment variable's name as a shell takes it: [A-Za-z_][A-Za-z0-9_]*
 * (NULL: false). */
bool hv_env_name_valid (const char *s);
#endif
