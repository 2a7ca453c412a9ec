/* A person's git identity in an engine container whose home a policy
 * hides (without this, under --policy default a container could not read
 * its image's ~/.gitconfig, and commits failed with "Please tell me who
 * you are").  The whole file stays hidden: it can hold tokens
 * (url.<x>.insteadOf with a password, http.extraHeader) and programs.
 * As `haven run` does for the host's (session/git_identity.h), only
 * user.name and user.email are kept: read from the image's
 * ~/.config/git/config then ~/.gitconfig of that home (the last value
 * winning; includes not followed), inside the container's root
 * filesystem (links resolved in it, never out of it), and written as the
 * hidden home's own ~/.gitconfig (the tmpfs's x-haven.file, runtime/mounts.h):
 * an ordinary file the user may change (`git config --global` works) and
 * a repository's own identity still wins. */
#ifndef HAVEN_IMAGE_GIT_IDENTITY_H
#define HAVEN_IMAGE_GIT_IDENTITY_H

#include <stddef.h>

#define HV_IMAGE_GITCONFIG ".gitconfig"

/* The config text for the home `home` (a path in the container) of the
 * root filesystem `rootfs` (a host path), or NULL when the image sets
 * neither user.name nor user.email there. */
char *hv_image_git_identity (const char *rootfs, const char *home);

/* user.name and user.email of a git config text (malloc'd, NULL when
 * unset); for the tests too. */
void hv_git_identity_parse (const char *text, size_t len, char **name, char **email);
#endif
