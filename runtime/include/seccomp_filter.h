/* Seccomp filters from linux.seccomp, compiled with libseccomp. */
#ifndef HAVEN_SECCOMP_FILTER_H
#define HAVEN_SECCOMP_FILTER_H

#include <seccomp.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci_spec.h"

/* Build the filter without loading it (unit tests inspect it). */
int hv_seccomp_build (const oci_seccomp *sc, scmp_filter_ctx *out, hv_error **err);
/* Build and load into the calling thread; *notify_fd is the listener fd
 * when an action is SCMP_ACT_NOTIFY, else -1. */
int hv_seccomp_load (const oci_seccomp *sc, int *notify_fd, hv_error **err);
/* Connect to linux.seccomp.listenerPath (done while the host path is
 * still reachable, before the root switch). */
int hv_seccomp_connect_listener (const char *path, hv_error **err);
/* Send the notify fd with the container process state (runtime-spec
 * seccomp listener protocol) over the connected socket. */
int hv_seccomp_send_notify_fd (const oci_seccomp *sc, int sock, const char *state_json, pid_t host_pid,
                               int notify_fd, hv_error **err);
#endif
