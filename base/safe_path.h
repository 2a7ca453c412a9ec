/* Path resolution inside a hostile rootfs.
 *
 * Every path the config names inside the container (mount destinations,
 * devices, masked paths, cwd) is resolved with openat2(RESOLVE_IN_ROOT) from
 * an fd of the rootfs: symlinks and ".." are followed as the container would
 * see them, but can never leave the rootfs (CVE-2021-30465 and friends).
 * Mounts then go onto the returned O_PATH fd, never onto a path string that
 * could be swapped between check and use. */
#ifndef HAVEN_SAFE_PATH_H
#define HAVEN_SAFE_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* mkdir -p of rel beneath dirfd, one component at a time, never through
 * a link (O_NOFOLLOW): each missing directory is made with mode.  With
 * owned, every component must belong to the effective uid (a directory
 * in a shared place must be ours, not planted).  A ".." component is
 * refused; "." is skipped.  Returns an fd of the
 * last directory (a new fd of dirfd for an empty rel), or -1 with *err. */
int hv_mkdirs_beneath (int dirfd, const char *rel, mode_t mode, bool owned, hv_error **err);

/* openat2(rootfd, path, flags, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS). */
int hv_open_in_root (int rootfd, const char *path, int flags, mode_t mode);
/* Resolve `path`, creating missing components: directories, and when
 * !is_dir an empty regular file as the last component.  Returns an O_PATH
 * fd of the target. */
int hv_create_in_root (int rootfd, const char *path, bool is_dir, mode_t mode, hv_error **err);
/* The same refusing every symbolic link on the way (ELOOP), for paths
 * that a sandbox may have written: with O_PATH, a link as the last
 * component is opened as the link itself (O_NOFOLLOW), never followed. */
int hv_open_in_root_nofollow (int rootfd, const char *path, int flags);
int hv_create_in_root_nofollow (int rootfd, const char *path, bool is_dir, mode_t mode, hv_error **err);
/* Split "a/b/c" into an O_PATH fd of "a/b" (created) and the name "c". */
int hv_open_parent_in_root (int rootfd, const char *path, char **basename, hv_error **err);
/* Open procfs path "sys/net/..." beneath a trusted procfs fd refusing any
 * symlink or mount crossing (CVE-2025-52881). */
int hv_open_in_proc (int procfd, const char *path, int flags);

/* openat2 with O_CLOEXEC, retried on EAGAIN: the one wrapper of it. */
int hv_openat2 (int dirfd, const char *path, int flags, mode_t mode, unsigned long long resolve);
/* `path` beneath dirfd (never above it) without following any symbolic
 * link: with O_PATH a link as the last component is opened as itself
 * (O_NOFOLLOW), any other one fails with ELOOP. */
int hv_open_beneath_nofollow (int dirfd, const char *path, int flags);
/* An absolute host path from "/" without following any symbolic link, the
 * last component included (a link there: -1 with ELOOP); EINVAL when the
 * path is not absolute. */
int hv_open_host_nofollow (const char *path, int flags);
/* A path beneath a directory as a caller outside the sandbox names it
 * (the service's file paths and a command's relative cwd): len bytes,
 * not empty, relative (no leading '/'), no empty, "." or ".." component,
 * no NUL, at most HV_RELATIVE_PATH_MAX bytes with components of at most
 * HV_RELATIVE_NAME_MAX (what the kernel would refuse anyway, refused
 * with a message that says which).  what names the path in the message
 * (err may be NULL: a yes or no). */
#define HV_RELATIVE_PATH_MAX 4095
#define HV_RELATIVE_NAME_MAX 255
int hv_relative_path_check (const char *p, size_t len, const char *what, hv_error **err);

#endif
