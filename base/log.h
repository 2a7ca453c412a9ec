/* Runtime log: --log FILE, --log-format text|json, --debug.
 *
 * Docker's shim reads the log as a stream of {"level","msg","time"} objects
 * and shows the last "error" one to the user, so every fatal error is
 * written there as well as to stderr. */
#ifndef HAVEN_LOG_H
#define HAVEN_LOG_H

#include <stdbool.h>
#include <yajl/yajl_gen.h>

enum hv_log_level
{
  HV_LOG_DEBUG,
  HV_LOG_INFO,
  HV_LOG_WARNING,
  HV_LOG_ERROR,
};

int hv_log_init (const char *path, bool json, bool debug);
void hv_log (enum hv_log_level level, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* Report a fatal error: log file (if any) and stderr. */
void hv_log_fatal (const char *msg);
/* fd of the log file, -1 if none (kept open across the container's fork so
 * the child can log its own failures). */
int hv_log_fd (void);
/* The generated JSON document plus a newline, in one write(2): appended
 * to an O_APPEND file, lines of concurrent writers never interleave.
 * Returns the bytes written (the line with its newline). */
size_t hv_write_json_line (int fd, yajl_gen g);
#endif
