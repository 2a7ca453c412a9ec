/* Resolving the paths a policy names without following symbolic links.
 *
 * Everything the sandbox could have written is hostile, and a previous run
 * could have written the project and the home's allowed directories: a
 * link planted there (".envrc -> /tmp") must never turn a bind of the
 * policy's path into a bind of the link's target.  So each path is walked
 * one component at a time from a trusted anchor fd, with openat2
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS and O_PATH|O_NOFOLLOW, and the walk
 * stops at the first link:
 *   - paths in the project: beneath an fd of the project (a real path,
 *     taken with realpath at start);
 *   - paths in the home: beneath an fd of the home's real path;
 *   - any other absolute path: from "/".
 * The caller learns whether the path exists, is missing, or is or crosses a
 * link (and which component is the link), and gets the path spelled from
 * the anchor's real path, with no link in it, for the mount entries. */
#ifndef HAVEN_POLICY_PATHS_H
#define HAVEN_POLICY_PATHS_H

#include <stdbool.h>
#include <sys/stat.h>

#include "error.h"
#include "run_ctx.h"

enum hv_path_status
{
  HV_PATH_FOUND = 0,   /* exists, no link on the way */
  HV_PATH_MISSING = 1, /* a component does not exist (or is not a directory, or cannot be reached) */
  HV_PATH_LINK = 2,    /* the path is a symbolic link, or crosses one */
};

struct hv_policy_path
{
  int fd;          /* O_PATH|O_NOFOLLOW: the object (FOUND) or the first link (LINK); -1 when MISSING */
  struct stat st;  /* fstat of fd */
  char *real;      /* the path from the anchor's real path, "." and "//" removed */
  char *link;      /* LINK: the first component that is a link, as an absolute path */
  bool link_last;  /* LINK: that link is the path itself (not a directory on the way) */
  bool in_sandbox_writable; /* under the project or the home, which a run may have written */
};

/* Resolve an absolute, expanded policy path (no "~", no "{project}").
 * Returns an hv_path_status, or -1 with *err set (".." in the path, an
 * anchor that cannot be opened, an unexpected error). */
int hv_policy_path_resolve (const struct hv_run_ctx *ctx, const char *path, struct hv_policy_path *out,
                            hv_error **err);
void hv_policy_path_clear (struct hv_policy_path *p);

/* The same for callers that only need the fd and its stat: *fd_out is an
 * O_PATH|O_NOFOLLOW fd of the object (FOUND) or of the first link (LINK),
 * -1 when MISSING; the caller closes it. */
int hv_policy_path_open (const struct hv_run_ctx *ctx, const char *path, int *fd_out, struct stat *st_out,
                         hv_error **err);

/* The real path of the home (ctx->home with its links resolved once at
 * start; the home itself is not something the sandbox can replace), or
 * NULL when there is none. */
char *hv_policy_home_real (const struct hv_run_ctx *ctx);
#endif
