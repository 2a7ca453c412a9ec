/* The one line a `haven run` prints on its stderr at the first name the
 * egress resolver refused (without it, `npm install` under an allowlist
 * failed with a lookup error and nothing said that haven refused the
 * name, nor which policy key would allow it).  Written by the per-
 * container monitor, which runs outside the sandbox, to an fd haven run
 * handed it (hv_create_opts.notice_fd); engine containers get none (the
 * trail's dns-refused records say it there).
 *
 * The name is the sandbox's text: as the resolver shows it (\DDD for a
 * byte outside printable ASCII in a label), then every byte outside
 * [a-z0-9.-_\] as \xHH, and the name is cut at HV_EGRESS_NOTICE_NAME_MAX bytes,
 * so the line carries no terminal control sequence and stays short.  It
 * is written once, without blocking: the fd's own file description is
 * non-blocking (session/run_notice.h) or a regular file, a socket is
 * written with MSG_DONTWAIT; a line that cannot be written at once is
 * dropped (the DNS answer and the trail still say it). */
#ifndef HAVEN_EGRESS_NOTICE_H
#define HAVEN_EGRESS_NOTICE_H

#include <stdbool.h>
#include <stddef.h>

#define HV_EGRESS_NOTICE_NAME_MAX 100
#define HV_EGRESS_NOTICE_MAX 2048 /* below PIPE_BUF: one write, whole or not at all */

/* The line, newline included (cr: "\r\n", for a terminal in raw mode),
 * into buf (HV_EGRESS_NOTICE_MAX bytes); why is one of
 * HV_EGRESS_WHY_UNLISTED, HV_EGRESS_WHY_DENIED; audit: the run keeps a
 * trail (the line points at `haven audit`). */
void hv_egress_notice_format (char *buf, const char *policy, const char *qname, const char *why, bool audit,
                              bool cr);
/* Write it to fd as said above; false when it was not written. */
bool hv_egress_notice_write (int fd, const char *policy, const char *qname, const char *why, bool audit);
#endif
