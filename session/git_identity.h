/* Git's identity inside the sandbox (policies/README.md, "Git in the
 * sandbox").
 * The hidden home hides ~/.gitconfig, so commits failed with "unable to
 * auto-detect email address".  The whole file is not shown: it can hold
 * tokens (url.<x>.insteadOf with a password, http.extraHeader) and
 * programs.  Instead haven writes a config holding only user.name and
 * user.email, read from the host's global config, into the run's bundle,
 * and the compiler binds it read-only at HV_GIT_IDENTITY_PATH and points
 * GIT_CONFIG_SYSTEM at it (policy/git_identity_mount.h): the system level is
 * git's lowest, so a repository's own identity and `git config --global`
 * in the sandbox's scratch home still win.  It includes /etc/gitconfig,
 * which GIT_CONFIG_SYSTEM would otherwise replace. */
#ifndef HAVEN_SESSION_GIT_IDENTITY_H
#define HAVEN_SESSION_GIT_IDENTITY_H

#include "error.h"
#include "policy.h"
#include "run_ctx.h"

/* <bundle>/git-config with the host's identity (when the policy hides
 * the home and does not show the global config itself: a home_allow
 * entry ~/.gitconfig, ~/.config or ~/.config/git) and the policy's block
 * entries in the project as excludes (<bundle>/git-ignore, see
 * excludes()); their paths in *path and *excludes_path, NULL (and 0)
 * when there is nothing to write. */
int hv_git_identity_write (const hv_policy *p, const struct hv_run_ctx *ctx, const char *bundle, char **path,
                           char **excludes_path, hv_error **err);
#endif
