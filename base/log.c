#include "config.h"
#include "log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "error.h"
#include "utils.h"

static int log_fd = -1;
static bool log_json;
static bool log_debug;

static const char *const level_names[] = { "debug", "info", "warning", "error" };

int
hv_log_init (const char *path, bool json, bool debug)
{
  log_json = json;
  log_debug = debug;
  if (path == NULL)
    return 0;
  log_fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  return log_fd < 0 ? -1 : 0;
}

int
hv_log_fd (void)
{
  return log_fd;
}

size_t
hv_write_json_line (int fd, yajl_gen g)
{
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (g, &buf, &len);
  cleanup_free char *line = xmalloc0 (len + 2);
  memcpy (line, buf, len);
  line[len] = '\n';
  write_all (fd, line, len + 1);
  return len + 1;
}

static void
write_entry (int fd, enum hv_log_level level, const char *msg)
{
  cleanup_free char *time = now_rfc3339 ();
  if (log_json)
    {
      yajl_gen g = yajl_gen_alloc (NULL);
      yajl_gen_map_open (g);
      yajl_gen_string (g, (const unsigned char *) "level", 5);
      yajl_gen_string (g, (const unsigned char *) level_names[level], strlen (level_names[level]));
      yajl_gen_string (g, (const unsigned char *) "msg", 3);
      yajl_gen_string (g, (const unsigned char *) msg, strlen (msg));
      yajl_gen_string (g, (const unsigned char *) "time", 4);
      yajl_gen_string (g, (const unsigned char *) time, strlen (time));
      yajl_gen_map_close (g);
      hv_write_json_line (fd, g);
      yajl_gen_free (g);
    }
  else
    {
      cleanup_free char *line = xasprintf ("%s[%s] %s\n", time, level_names[level], msg);
      write_all (fd, line, strlen (line));
    }
}

void
hv_log (enum hv_log_level level, const char *fmt, ...)
{
  if (level == HV_LOG_DEBUG && !log_debug)
    return;
  va_list ap;
  va_start (ap, fmt);
  char *msg = xvasprintf (fmt, ap);
  va_end (ap);
  if (log_fd >= 0)
    write_entry (log_fd, level, msg);
  else if (level >= HV_LOG_WARNING || log_debug)
    {
      cleanup_free char *line = xasprintf ("haven-runc: %s: %s\n", level_names[level], msg);
      write_all (2, line, strlen (line));
    }
  free (msg);
}

void
hv_log_fatal (const char *msg)
{
  if (log_fd >= 0)
    write_entry (log_fd, HV_LOG_ERROR, msg);
  cleanup_free char *line = xasprintf ("haven-runc: %s\n", msg);
  write_all (2, line, strlen (line));
}
