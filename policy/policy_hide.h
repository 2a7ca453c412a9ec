/* What `haven run` hides beyond the policy's own lists: the caller's
 * homes whatever $HOME says, the other users' homes, and the Unix sockets
 * host daemons have bound outside /run.  Each function produces a list of
 * host paths; policy_compile.c turns them into mounts and masks. */
#ifndef HAVEN_POLICY_HIDE_H
#define HAVEN_POLICY_HIDE_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci_spec.h"

/* Other users' homes hidden one by one up to this many; past it, /home as
 * a whole (still hidden, only coarser). */
#define HV_MAX_OTHER_HOMES 1024
/* Distinct socket paths masked at most; more fails the start. */
#define HV_MAX_HOST_SOCKETS 4096

/* The caller's homes, as real paths, each once: $HOME (home_env, when it
 * is an absolute path) and the password database's home of uid.  A child
 * process can unset or change $HOME; the password database it cannot.
 * "/" and paths that do not exist are left out (nothing to hide). */
void hv_own_homes (const char *home_env, uid_t uid, oci_strv *out);

/* Every other user's home: the password database's homes under /home,
 * every directory directly in /home (users the database cannot list), and
 * /root; never one of own, never /home itself. */
void hv_other_homes (const oci_strv *own, oci_strv *out);

/* The container engines' data and state roots that exist (real paths):
 * /var/lib/docker, /var/lib/containerd, /run/containerd,
 * /var/lib/containers, /run/containers, CRI-O's, kubelet's, LXC/LXD/Incus,
 * systemd-nspawn's machines, runc's state; never one of own.  Hidden
 * like other users' homes, whatever hide_home says (they are no one's
 * home).  Not /run/haven: haven's own state. */
void hv_engine_roots (const oci_strv *own, oci_strv *out);

/* Refuse a project that is "/", is one of the homes, or contains one: its
 * writable bind would put the hidden home (~/.bashrc, ~/.ssh) back. */
int hv_check_project_homes (const char *project, const oci_strv *own, const oci_strv *others, hv_error **err);

/* The paths of the Unix sockets bound in this network namespace, read
 * from proc_net_unix (/proc/net/unix), each once, except abstract ones
 * and those under a directory in skip. */
int hv_host_unix_sockets (const char *proc_net_unix, const oci_strv *skip, oci_strv *out, hv_error **err);

/* Is path dir itself or below it? */
bool hv_path_is_under (const char *path, const char *dir);
#endif
