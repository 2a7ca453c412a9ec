#ifndef HAVEN_POLICY_EXEC_H
#define HAVEN_POLICY_EXEC_H
#include "error.h"
#include "policy.h"
/* Paths (files or directories) that get Landlock's execute right. */
int hv_policy_exec_paths (const hv_policy *p, const char *path_env, oci_strv *exec, hv_error **err);
/* Under block_shell or allow_exec: the shells' files, to be masked so
 * that the dynamic loader cannot map them either: every name that is the
 * same inode as a shell in the system bin directories or an absolute PATH
 * entry, but a shell allow_exec names.  Nothing below a WRITABLE path is
 * looked at. */
int hv_policy_shell_masks (const hv_policy *p, const char *path_env, const oci_strv *writable, oci_strv *masked,
                           hv_error **err);
#endif
