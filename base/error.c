#include "config.h"
#include "error.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int
hv_error_setv (hv_error **err, int errno_code, const char *fmt, va_list ap)
{
  char *msg = xvasprintf (fmt, ap);
  if (err == NULL)
    {
      free (msg);
      return -1;
    }
  hv_error_free (err);
  *err = xmalloc0 (sizeof (**err));
  (*err)->errno_code = errno_code;
  if (errno_code != 0)
    {
      /* Lower case, as Go's syscall errors read ("no such file or
       * directory"): Docker and Podman pick exit codes 126/127 by matching
       * those strings in the runtime's error message. */
      (*err)->msg = xasprintf ("%s: %s", msg, strerror (errno_code));
      char *text = (*err)->msg + strlen (msg) + 2;
      if (text[0] >= 'A' && text[0] <= 'Z' && !(text[1] >= 'A' && text[1] <= 'Z'))
        text[0] = (char) (text[0] - 'A' + 'a');
      free (msg);
    }
  else
    (*err)->msg = msg;
  return -1;
}

int
hv_error_set (hv_error **err, int errno_code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  hv_error_setv (err, errno_code, fmt, ap);
  va_end (ap);
  return -1;
}

/* *err's message with formatted text before it ("text: message") or
 * after it ("messagetext"); -1 always, nothing without an error. */
static int __attribute__ ((format (printf, 3, 0)))
error_add_text (hv_error **err, bool after, const char *fmt, va_list ap)
{
  if (err == NULL || *err == NULL)
    return -1;
  char *text = xvasprintf (fmt, ap);
  char *msg = after ? xasprintf ("%s%s", (*err)->msg, text) : xasprintf ("%s: %s", text, (*err)->msg);
  free (text);
  free ((*err)->msg);
  (*err)->msg = msg;
  return -1;
}

int
hv_error_wrap (hv_error **err, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  error_add_text (err, false, fmt, ap);
  va_end (ap);
  return -1;
}

int
hv_error_append (hv_error **err, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  error_add_text (err, true, fmt, ap);
  va_end (ap);
  return -1;
}

int
hv_error_set_exit_status (hv_error **err, int status)
{
  if (err && *err)
    (*err)->exit_status = status;
  return -1;
}

void
hv_error_free (hv_error **err)
{
  if (err == NULL || *err == NULL)
    return;
  free ((*err)->msg);
  free (*err);
  *err = NULL;
}

void *
xmalloc0 (size_t n)
{
  void *p = calloc (1, n ? n : 1);
  if (p == NULL)
    abort ();
  return p;
}

void *
xrealloc (void *p, size_t n)
{
  p = realloc (p, n ? n : 1);
  if (p == NULL)
    abort ();
  return p;
}

char *
xstrdup (const char *s)
{
  char *r;
  if (s == NULL)
    return NULL;
  r = strdup (s);
  if (r == NULL)
    abort ();
  return r;
}

char *
xvasprintf (const char *fmt, va_list ap)
{
  char *r = NULL;
  if (vasprintf (&r, fmt, ap) < 0)
    abort ();
  return r;
}

char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *r = xvasprintf (fmt, ap);
  va_end (ap);
  return r;
}
