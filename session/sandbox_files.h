/* The files API of a sandbox's workspace, from the host's side.  The
 * workspace is hostile (the sandbox writes it): every path is relative,
 * resolved beneath the workspace's fd with no symbolic link followed, no
 * "..", no mount crossed (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV); a link, a fifo or a device is
 * refused, never opened. */
#ifndef HAVEN_SANDBOX_FILES_H
#define HAVEN_SANDBOX_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* A relative path as the API takes it: not empty, not absolute, no NUL,
 * no ".", ".." or empty component, at most HV_RELATIVE_PATH_MAX bytes
 * (hv_relative_path_check, base/safe_path.h). */
bool hv_workspace_path_ok (const char *rel);

/* Write data to rel (made, or replaced atomically: a temporary beside it,
 * renamed), mode 0644 unless mode is nonzero; missing directories are
 * made (0755) when mkdirs. */
int hv_workspace_write (int ws_fd, const char *rel, const void *data, size_t len, mode_t mode, bool mkdirs,
                        hv_error **err);
/* Read a regular file, at most max bytes: *truncated says there was more. */
int hv_workspace_read (int ws_fd, const char *rel, size_t max, char **data, size_t *len, bool *truncated,
                       hv_error **err);

struct hv_workspace_entry
{
  char *name;
  char type; /* 'f' file, 'd' directory, 'l' link, 'o' other */
  off_t size;
};
/* List a directory ("" or NULL: the workspace itself), sorted by name, at
 * most max entries (*truncated says there were more). */
int hv_workspace_list (int ws_fd, const char *rel, size_t max, struct hv_workspace_entry **entries, size_t *n,
                       bool *truncated, hv_error **err);
void hv_workspace_entries_free (struct hv_workspace_entry *entries, size_t n);

#endif
