/* The nameservers of a resolv.conf, for the egress resolver's upstreams.
 * The file may have been written by the sandbox (an
 * engine's /etc/resolv.conf is a read-write bind of a file in the
 * engine's container directory), so it is read as hostile input: opened
 * without following a final symbolic link and only when it is a regular
 * file, at most HV_RESOLV_CONF_MAX bytes (more: an error, not a
 * truncated list), and only `nameserver` lines whose argument is one IP
 * literal (no scope id, no port, no name) are taken, at most
 * HV_RESOLV_CONF_MAX_NS of them in file order, as glibc does.  Other
 * lines (search, options, comments) are ignored; a `nameserver` line
 * that is not one IP literal is skipped and counted. */
#ifndef HAVEN_RESOLV_CONF_H
#define HAVEN_RESOLV_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "error.h"

#define HV_RESOLV_CONF_MAX (64 * 1024)
#define HV_RESOLV_CONF_MAX_NS 3 /* glibc's MAXNS */

typedef struct hv_resolv_conf
{
  struct sockaddr_storage ns[HV_RESOLV_CONF_MAX_NS]; /* port 53 */
  size_t n_ns;
  size_t skipped; /* nameserver lines that were not one IP literal, or past the limit */
} hv_resolv_conf;

/* Parse len bytes of text (no NUL needed). */
void hv_resolv_conf_parse (const char *text, size_t len, hv_resolv_conf *out);
/* Read and parse path; follow_final_link false: O_NOFOLLOW (a link
 * there is an error). */
int hv_resolv_conf_read (const char *path, bool follow_final_link, hv_resolv_conf *out, hv_error **err);
#endif
