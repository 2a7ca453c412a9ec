/* Whole-file readers. */
#ifndef HAVEN_FILE_READ_H
#define HAVEN_FILE_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* Read a whole file (NUL-terminated) for parsing. */
int hv_read_file (const char *path, char **out, size_t *len, hv_error **err);
/* The one bounded reader every whole-descriptor read goes through: fd
 * to its end into a NUL-terminated buffer that starts at size_hint
 * bytes (0: unknown, as procfs says) and grows, never past max bytes.
 * A descriptor with more than max: with more NULL, -1 and errno EFBIG;
 * else the first max bytes and *more set.  -1 with read's errno on a
 * failed read.  No hv_error: each caller words its own. */
int hv_read_fd_max (int fd, size_t size_hint, size_t max, char **out, size_t *len, bool *more);
/* Read fd to its end (at most 64 MiB); name is for errors. */
int hv_read_fd (int fd, const char *name, size_t size_hint, char **out, size_t *len, hv_error **err);
/* Read fd, which must be a regular file of at most max bytes (open it
 * O_NONBLOCK: a FIFO put in its place must not block the open). */
int hv_read_regular_fd (int fd, const char *name, size_t max, char **out, size_t *len, hv_error **err);
int hv_read_file_at (int dirfd, const char *path, char **out, size_t *len, hv_error **err);
/* hv_read_file_at without the length. */
int read_file_at (int dirfd, const char *path, char **out, hv_error **err);

#endif
