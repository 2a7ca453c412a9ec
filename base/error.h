/* Error values returned up the stack.
 *
 * Every fallible function returns a negative int and fills *err; callers add
 * context with hv_error_wrap() on the way up, so the message that reaches the
 * user reads like "create: mount /proc: resolve "proc" in rootfs: ...".
 * Nothing below main() prints or exits. */
#ifndef HAVEN_ERROR_H
#define HAVEN_ERROR_H

#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct hv_error
{
  int errno_code; /* 0 when the error is not a system error */
  char *msg;      /* complete message, strerror() already appended */
  /* 126 or 127 when the error is that a command could not be executed
   * (denied, or not found), as a shell reports it (exit_status.h); 0
   * otherwise.  Kept by hv_error_wrap; set with hv_error_set_exit_status. */
  int exit_status;
} hv_error;

/* Set *err (freeing nothing: *err must be NULL) and return -1.
 * errno_code != 0 appends ": strerror(errno_code)". */
int hv_error_set (hv_error **err, int errno_code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
int hv_error_setv (hv_error **err, int errno_code, const char *fmt, va_list ap)
    __attribute__ ((format (printf, 3, 0)));

/* Prefix an existing error with context ("context: old message"), return -1. */
int hv_error_wrap (hv_error **err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* Append text to an existing error's message (a hint after the cause, as
 * it is: the text brings its own separator), return -1. */
int hv_error_append (hv_error **err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

void hv_error_free (hv_error **err);

/* Mark *err (if any) as a command that could not be executed: status 126
 * (found but not executable: EACCES, EPERM, ENOEXEC, a directory) or 127
 * (not found); returns -1. */
int hv_error_set_exit_status (hv_error **err, int status);

/* Ownership helpers: the variable owns the resource and releases it when it
 * goes out of scope; hand it over with steal_pointer()/steal_fd(). */
static inline void
cleanup_freep (void *p)
{
  free (*(void **) p);
}
static inline void
cleanup_closep (int *fd)
{
  if (*fd >= 0)
    close (*fd);
}
static inline void
cleanup_errorp (hv_error **e)
{
  hv_error_free (e);
}

#define cleanup_free __attribute__ ((cleanup (cleanup_freep)))
#define cleanup_close __attribute__ ((cleanup (cleanup_closep)))
#define cleanup_error __attribute__ ((cleanup (cleanup_errorp)))

static inline void *
steal_pointer_impl (void *pp)
{
  void **p = pp;
  void *r = *p;
  *p = NULL;
  return r;
}
#define steal_pointer(pp) steal_pointer_impl (pp)

static inline int
steal_fd (int *fd)
{
  int r = *fd;
  *fd = -1;
  return r;
}

/* Allocation failure is not recoverable in a short-lived runtime process. */
void *xmalloc0 (size_t n);
void *xrealloc (void *p, size_t n);
char *xstrdup (const char *s);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
char *xvasprintf (const char *fmt, va_list ap) __attribute__ ((format (printf, 1, 0)));

#endif
